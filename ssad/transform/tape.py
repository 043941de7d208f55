"""Stage 6, the tape: what the forward sweep records so the adjoint sweep can replay it.

Assumes: a forward sweep and an adjoint sweep from `reverse`, holding `Save` and
`Restore` markers around every statement that overwrites a name or writes into an
array in place inside control flow.
Guarantees: each marker pair becomes pushes and pops only for what the adjoint
sweep actually reads (a name it never reads, or that a loop recomputes to the
same value each iteration, records nothing); an in-place write `x[i] = v`
records the elements it overwrites (a copy: the array changes afterwards) and
restores them in place. The tape is a local `Tape()` created only when something
is recorded; values that may be saved before their first assignment are set to
None first. Code that runs once and overwrites nothing records nothing.
"""

import ast

import gast

from ..frontend import primitives
from ..analysis.activity import list_mutation
from .adjoints import index_value
from ..frontend.builders import clone, comment, is_marker, walk
from .recompute import insert_recomputations
from .liveness import Restore, Save, _all_statements, _loads, _popped, _read_only_for_shape
from ..frontend.builders import name as _name
from ..frontend.builders import store as _store
from ..registry import REGISTRY
from ..runtime import Tape, restore_part, saved_part, shape_only, zeros_like_value


def _method(owner, method, *args):
    func = gast.Attribute(value=_name(owner), attr=method, ctx=gast.Load())
    return gast.Call(func=func, args=list(args), keywords=[])


def _stores(block, writes=False):
    """Names assigned in `block`; with `writes`, also arrays written in place (`x[i] = v`)."""
    names = set()
    for statement in _all_statements(block):
        if isinstance(statement, gast.Assign):
            for target in statement.targets:
                if isinstance(target, gast.Subscript):
                    if writes:
                        names.add(target.value.id)
                    continue
                names |= {n.id for n in walk(target) if isinstance(n, gast.Name)}
        elif isinstance(statement, gast.For):
            names.add(statement.target.id)
    return names


def loop_invariants(program, forward):
    """Names a loop assigns the same value in every iteration (nothing to record for them).

    A name counts only when it is invariant in every loop whose body assigns it: a
    temporary an inner loop recomputes identically may still change between iterations
    of an outer loop.
    """
    # A name with a value before the loop (a parameter, an earlier assignment) must be
    # restored to it after the loop's first iteration: never exempt.
    outside = _stores_outside_loops(forward) | set(program.params)
    found_in = []  # (names the loop assigns, names invariant in it) for every loop
    for loop in _all_statements(forward):
        if not isinstance(loop, (gast.For, gast.While)):
            continue
        assigned = _stores(loop.body, writes=True) | ({loop.target.id} if isinstance(loop, gast.For) else set())
        assigned |= {m[0] for m in map(list_mutation, _all_statements(loop.body)) if m is not None}
        assigned |= {
            s.value.func.value.id
            for s in _all_statements(loop.body)
            if isinstance(s, gast.Assign)
            and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "pop"
            and isinstance(s.value.func.value, gast.Name)
        }
        counts = {}  # how many statements bind each name: `t, t_saved = forward_g(...)` binds t too
        for statement in _all_statements(loop.body):
            if isinstance(statement, gast.Assign):
                targets = statement.targets
            elif isinstance(statement, gast.For):
                targets = [statement.target]
            else:
                continue
            for n in walk(gast.Tuple(elts=list(targets), ctx=gast.Store())):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
        # An array written in place in the loop (or one sharing its memory) holds another
        # value after the write than its assignment gave it: never invariant.
        written = {
            s.targets[0].value.id
            for s in _all_statements(loop.body)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)
        } | {m[0] for m in map(list_mutation, _all_statements(loop.body)) if m is not None}
        written |= {other for n in written for other in program.shares.get(n, ())}
        candidates = {}
        for statement in _all_statements(loop.body):
            if not isinstance(statement, gast.Assign) or not isinstance(statement.targets[0], gast.Name):
                continue
            target = statement.targets[0].id
            if counts[target] != 1 or target in outside or target in written or not _pure(statement.value, program):
                continue
            candidates[target] = _loads(statement)
        changed = True
        found = set()
        while changed:
            changed = False
            for target, reads in candidates.items():
                if target not in found and all(r not in assigned or r in found for r in reads):
                    found.add(target)
                    changed = True
        found_in.append((assigned, found))
    invariant = set()
    for _, found in found_in:
        invariant |= found
    for assigned, found in found_in:
        invariant -= assigned - found  # assigned by a loop in which it changes
    return invariant


def _stores_outside_loops(block):
    names = set()
    for statement in block:
        if isinstance(statement, (gast.For, gast.While)):
            continue
        if isinstance(statement, gast.If):
            names |= _stores_outside_loops(statement.body) | _stores_outside_loops(statement.orelse)
        elif isinstance(statement, gast.Assign):
            names |= {n.id for t in statement.targets for n in walk(t) if isinstance(n, gast.Name)}
    return names


def _pure(value, program):
    if isinstance(value, (gast.List, gast.Dict)):
        return False  # a new mutable container each iteration: not the same value
    op = primitives.operation(value, program)
    if op.primitive is not None and not REGISTRY.is_pure(op.primitive):
        return False  # a random draw differs every time, derivative or not
    if op.kind in (primitives.COPY, primitives.CONSTANT, primitives.INACTIVE, primitives.PACK, primitives.GETITEM):
        return True
    return op.primitive is not None and REGISTRY.is_primitive(op.primitive)


def insert_tape(reverse, forward, backward):
    """Turn the markers into pushes and pops; returns (forward, backward, tape name or None)."""
    program = reverse.program
    forward, backward = insert_recomputations(reverse, forward, backward)
    primal = set(program.params) | _stores(forward)
    invariant = loop_invariants(program, forward)
    shares = _with_call_residuals(program.shares, reverse.calls)
    popped = _popped(backward, primal, invariant, shares)  # (id(Restore), name) to restore
    partner = {id(pair[0]): pair[1] for pair in reverse.sites.values() if isinstance(pair, tuple)}

    def recorded(marker):
        restore = partner.get(id(marker), marker)
        return [n for n in marker.names if (id(restore), n) in popped]

    shapes_only = _read_only_for_shape(backward, program.namespace)
    markers = [s for s in _all_statements(forward) if isinstance(s, Save)]
    tape = program.namer.fresh("tape") if any(recorded(m) for m in markers) else None
    def index(marker):
        return index_value(clone(marker.write.slice), program.namespace)

    def save(marker):
        if marker.write is not None:
            if not recorded(marker):
                return []
            saver = reverse.helper("saved_part", saved_part)
            part = gast.Call(func=_name(saver), args=[_name(marker.names[0]), index(marker)], keywords=[])
            return [gast.Expr(value=_method(tape, "push", part))]
        pushes = []
        for n in recorded(marker):
            value = _name(n)
            if n in shapes_only:
                value = gast.Call(func=_name(reverse.helper("shape_only", shape_only)), args=[value], keywords=[])
            pushes.append(gast.Expr(value=_method(tape, "push", value)))
        return pushes

    def restore(marker):
        if marker.write is not None:
            if not recorded(marker):
                return []
            restorer = reverse.helper("restore_part", restore_part)
            args = [_name(marker.names[0]), index(marker), _method(tape, "pop")]
            return [gast.Expr(value=gast.Call(func=_name(restorer), args=args, keywords=[]))]
        return [
            gast.Assign(targets=[_store(n)], value=_method(tape, "pop"), type_comment=None)
            for n in reversed(recorded(marker))
        ]

    forward = _replace(forward, Save, save)
    backward = _prune(_replace(backward, Restore, restore))
    prologue = []
    if tape is not None:
        tape_class = reverse.helper("Tape", Tape)
        prologue.append(gast.Assign(targets=[_store(tape)], value=gast.Call(func=_name(tape_class), args=[], keywords=[]), type_comment=None))
        for unbound in _maybe_unbound(program, markers, recorded):
            prologue.append(gast.Assign(targets=[_store(unbound)], value=gast.Constant(value=None, kind=None), type_comment=None))
    return prologue + forward, backward, tape


def _with_call_residuals(shares, calls):
    """`shares`, with what a split call saves sharing memory with the arrays passed to it.

    `t, t_saved = forward_g(z)` may keep `z` itself in `t_saved` for `backward_g`; an
    in-place write into `z` after the call must then be undone before `backward_g`
    runs, as for any other name that views `z`.
    """
    widened = {name: set(others) for name, others in shares.items()}
    for entry in calls.values():
        if entry[0] == "dynamic":
            _, saved, args, keywords = entry
            operands = list(args) + list(keywords.values())
        else:
            saved, _, _, bound = entry
            operands = [operand for _, operand in bound]
        for operand in operands:
            if not isinstance(operand, gast.Name):
                continue
            for name in {operand.id} | widened.get(operand.id, set()):
                widened.setdefault(name, set()).add(saved)
                widened.setdefault(saved, set()).add(name)
    return widened


def _maybe_unbound(program, markers, recorded):
    """Recorded names that a push may meet before their first assignment."""
    bound = _bound_at_top(program.body, program.params)
    names = []
    for marker in markers:
        for n in recorded(marker):
            if marker.write is None and n not in bound and n not in names:
                names.append(n)
    return names


def _bound_at_top(statements, params):
    """The parameters and the names a top-level assignment of `statements` binds."""
    bound = set(params)
    for statement in statements:
        if isinstance(statement, gast.Assign):
            bound |= {n.id for t in statement.targets for n in walk(t) if isinstance(n, gast.Name)}
    return bound


def markers_as_comments(block):
    """`block` with each Save/Restore marker shown as a comment (`# save: x`, `# restore: x`)."""

    def say(marker):
        verb = "save" if isinstance(marker, Save) else "restore"
        what = ast.unparse(gast.gast_to_ast(marker.write)) if marker.write is not None else ", ".join(marker.names)
        return [comment(f"{verb}: {what}")] if marker.names else []

    return _replace(_replace(block, Save, say), Restore, say)


def unbound_zero_reads(statements, params, namespace):
    """`name = None` for each local a zero (`zeros_like_value(name)`) may read before it is bound.

    A branch not taken or a loop run zero times leaves the names it assigns unbound, yet
    the other path's join gives their adjoint (or tangent) an explicit zero shaped like
    them. `zeros_like_value(None)` is the zero of a value never computed.
    """
    bound = _bound_at_top(statements, params)
    stored = {n.id for s in statements for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    read = []
    for node in (n for statement in statements for n in walk(statement)):
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and namespace.values.get(node.func.id) is zeros_like_value
            and len(node.args) == 1
            and isinstance(node.args[0], gast.Name)
        ):
            name = node.args[0].id
            if name in stored and name not in bound and name not in read:
                read.append(name)
    return [
        gast.Assign(targets=[_store(n)], value=gast.Constant(value=None, kind=None), type_comment=None)
        for n in read
    ]


def _replace(block, kind, make):
    out = []
    for statement in block:
        if isinstance(statement, kind):
            out.extend(make(statement))
            continue
        if isinstance(statement, gast.If):
            statement.body = _replace(statement.body, kind, make)
            statement.orelse = _replace(statement.orelse, kind, make)
        elif isinstance(statement, (gast.For, gast.While)):
            statement.body = _replace(statement.body, kind, make)
        out.append(statement)
    return out


def _prune(block):
    """Drop `if`s and loops of the adjoint sweep left without code."""
    out = []
    for statement in block:
        if isinstance(statement, gast.If):
            statement.body = _prune(statement.body)
            statement.orelse = _prune(statement.orelse)
            if not _code(statement.body) and not _code(statement.orelse):
                continue
            if not _code(statement.body):
                statement.body = [gast.Pass()]
        elif isinstance(statement, (gast.For, gast.While)):
            statement.body = _prune(statement.body)
            if not _code(statement.body):
                continue
        out.append(statement)
    return out


def _code(block):
    return any(not is_marker(s) and not isinstance(s, gast.Pass) for s in block)
