"""The tape's records, and which of the values they restore the adjoint sweep reads.

`Save` and `Restore` mark, in the forward and adjoint sweeps, where a value is pushed
before it is overwritten and where it is popped back; `tape.insert_tape` turns the
markers that matter into pushes and pops. A restore matters when the adjoint sweep
reads the value after it (a liveness analysis over the adjoint sweep, `_popped`), and
a value read only for its shape is saved as its shape (`_read_only_for_shape`).
"""

from dataclasses import dataclass

import gast

from ..frontend.builders import is_marker, walk
from ..runtime import unbroadcast


@dataclass(eq=False)
class Save:
    names: list
    depth: int
    write: object = None  # the Subscript target of an in-place write


@dataclass(eq=False)
class Restore:
    names: list
    depth: int
    write: object = None


def _children(statement):
    return [getattr(statement, f, None) or [] for f in ("body", "orelse")]


def _all_statements(block):
    for statement in block:
        yield statement
        if isinstance(statement, (Save, Restore)):
            continue
        for child in _children(statement):
            yield from _all_statements(child)


def _read_only_for_shape(backward, namespace):
    """Names the adjoint sweep reads only as `unbroadcast(g, name)`: only their shape.

    The tape keeps just the shape of such a value (`shape_only`), not the array: the
    operands of a broadcasting `+` in a loop are the common case.
    """
    shape_reads, other_reads = set(), set()
    for statement in _all_statements(backward):
        if isinstance(statement, Restore):
            if statement.write is not None:
                other_reads.add(statement.names[0])  # restoring contents reads the array
            continue
        if isinstance(statement, Save) or is_marker(statement):
            continue
        nodes = [statement]
        if isinstance(statement, (gast.If, gast.While)):
            nodes = [statement.test]
        elif isinstance(statement, gast.For):
            nodes = [statement.iter]
        for node in nodes:
            for n in walk(node):
                if (
                    isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Name)
                    and namespace.values.get(n.func.id) is unbroadcast
                    and len(n.args) == 2
                    and isinstance(n.args[1], gast.Name)
                ):
                    shape_reads.add(id(n.args[1]))
            for n in walk(node):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in shape_reads:
                    other_reads.add(n.id)
    return {n for n in _names_loaded(backward) if n not in other_reads}


def _names_loaded(block):
    return {
        n.id
        for statement in _all_statements(block)
        if not isinstance(statement, (Save, Restore)) and not is_marker(statement)
        for n in walk(statement)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _popped(backward, primal, invariant, shares):
    """The (Restore marker, name) pairs whose value the adjoint sweep reads after the pop.

    A liveness analysis of the adjoint sweep, where a pop assigns its names: a pop
    is needed when its name is read later in the sweep (around loops too). An
    `if` or loop left with no code and no needed pop disappears, so its test or
    range is not a read; the analysis repeats until nothing changes.
    """
    analysis = _PopLiveness(primal, invariant, shares)
    while True:
        analysis.found = set()
        analysis.live_in(backward, set())
        if analysis.found <= analysis.popped:
            return analysis.popped
        analysis.popped |= analysis.found


class _PopLiveness:
    def __init__(self, primal, invariant, shares):
        self.primal = primal
        self.invariant = invariant
        self.shares = shares
        self.popped = set()  # decided in earlier rounds
        self.found = set()  # found needed in this round

    def has_work(self, block):
        """Whether `block` keeps any code or needed pop (else it is pruned)."""
        for statement in block:
            if isinstance(statement, Restore):
                if any((id(statement), n) in self.popped for n in statement.names):
                    return True
            elif isinstance(statement, Save) or is_marker(statement):
                continue
            elif isinstance(statement, (gast.If, gast.For, gast.While)):
                if any(self.has_work(child) for child in _children(statement)):
                    return True
            else:
                return True
        return False

    def live_in(self, block, live_out):
        live = set(live_out)
        for statement in reversed(block):
            if isinstance(statement, Restore):
                self.restore(statement, live)
            elif isinstance(statement, Save) or is_marker(statement):
                continue
            elif isinstance(statement, gast.If):
                # Look inside even an `if` with no work yet: a pop in it may be needed, which
                # gives it work (its test then is a read).
                branches = self.live_in(statement.body, live) | self.live_in(statement.orelse, live)
                if self.has_work(statement.body) or self.has_work(statement.orelse):
                    live = branches | (_loads(statement) & self.primal)
            elif isinstance(statement, (gast.For, gast.While)):
                loop_live = set(live)
                while True:
                    inner = self.live_in(statement.body, loop_live)
                    if inner <= loop_live:
                        break
                    loop_live |= inner
                if self.has_work(statement.body):
                    live = loop_live | (_loads(statement) & self.primal)
            else:
                for target in getattr(statement, "targets", []):
                    if isinstance(target, gast.Name):
                        live.discard(target.id)
                live |= _loads(statement) & self.primal
        return live

    def restore(self, marker, live):
        if marker.write is not None:
            # Restoring contents matters to every name that views the same memory; the
            # restore itself reads the array, so the name must hold the right array then.
            array = marker.names[0]
            if live & (self.shares.get(array, set()) | {array}):
                self.found.add((id(marker), array))
            if (id(marker), array) in self.popped or (id(marker), array) in self.found:
                live.add(array)
                # ... and the index it restores at (`i` of `x[i] = v`) must be the one it had
                live |= {n.id for n in walk(marker.write.slice) if isinstance(n, gast.Name)} & self.primal
            return
        for n in marker.names:
            if n in live and n not in self.invariant:
                self.found.add((id(marker), n))
                live.discard(n)


def _loads(statement):
    if isinstance(statement, (Save, Restore)) or is_marker(statement):
        return set()
    nodes = [statement]
    if isinstance(statement, (gast.If, gast.While)):
        nodes = [statement.test]
    elif isinstance(statement, gast.For):
        nodes = [statement.iter]
    return {
        n.id for node in nodes for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
