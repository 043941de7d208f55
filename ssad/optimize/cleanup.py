"""Stage 7, optimize: make the generated code read and run like code written by hand.

Assumes: generated statements (forward sweep, then adjoint sweep) in which every
name is assigned before it is read; `if`, `for` and `while` may nest.
Guarantees, for `optimize(statements, namespace, copies_of)`:
- copy propagation: after `d_x = d_y` (a copy among the names in `copies_of`),
  later reads of `d_x` in the same straight-line run read `d_y` until either is
  assigned again or written into; `return` statements keep their names, so the returned adjoints
  stay named after their parameters;
- dead code elimination: an assignment whose targets are not live afterwards is
  dropped when its value is pure (operators, subscripts, registered primitives,
  ssad's runtime helpers, adjoint rules); liveness goes through branches and
  around loops to a fixed point; calls with unknown effects (`print`), in-place
  writes and tape pops always stay; an `if` left empty is dropped, and so is a
  `for` loop over a name left empty whose variable is not read afterwards;
- broadcast folding (`broadcasts`): `b = np.broadcast_to(v, np.shape(w))` becomes
  `b = v` where every read of `b` is in an elementwise expression that has w's
  shape anyway;
- a `# grad of:` comment left with no code under it is dropped.
Constant folding happens where rules are inlined (`inline.fold`); zeros are never
materialized in the first place (`reverse`).
"""

import gast
import numpy as np

from .. import runtime
from .broadcasts import fold_broadcasts
from ..frontend.builders import is_marker, walk
from ..frontend.naming import RenameLoads
from ..registry import REGISTRY

_PURE_HELPERS = (
    runtime.unbroadcast,
    runtime.getitem_adjoint,
    runtime.pack_like,
    runtime.zeros_like_value,
    runtime.add_adjoint,
    runtime.copy_adjoint,
    runtime.zero_at,
    runtime.Tape,
)


def optimize(statements, namespace, copies_of=frozenset()):
    statements = fold_broadcasts(statements, namespace, _callee)
    # An array written into in place keeps one name: a copy of it read under another name
    # would be two names of one array to code that differentiates this code again.
    written = {n for statement in statements for n in walk(statement) for n in written_names(n)}
    statements = propagate_copies(statements, set(copies_of) - written, written)
    statements, _ = eliminate_dead_code(statements, namespace, set())
    return drop_empty_comments(statements)


def _blocks(statement):
    return [f for f in ("body", "orelse") if getattr(statement, f, None)]


def _is_compound(statement):
    return isinstance(statement, (gast.If, gast.For, gast.While))


# ----- copy propagation -----




def propagate_copies(statements, candidates, written=frozenset()):
    copies = {}
    out = []
    for statement in statements:
        if _is_compound(statement):
            copies = {}
            for field in _blocks(statement):
                setattr(statement, field, propagate_copies(getattr(statement, field), candidates, written))
            out.append(statement)
            continue
        if copies and not isinstance(statement, gast.Return) and not is_marker(statement):
            if isinstance(statement, gast.AugAssign):
                statement.value = RenameLoads(copies).visit(statement.value)
            elif isinstance(statement, gast.Assign):
                statement.value = RenameLoads(copies).visit(statement.value)
                for target in statement.targets:
                    if isinstance(target, gast.Subscript):
                        target.slice = RenameLoads(copies).visit(target.slice)
            else:
                statement = RenameLoads(copies).visit(statement)
        if (
            isinstance(statement, gast.Assign)
            and isinstance(statement.targets[0], gast.Name)
            and isinstance(statement.value, gast.Name)
            and statement.targets[0].id == statement.value.id
        ):
            continue  # `d_y = d_y` after renaming: nothing to do
        for target in assigned_names(statement) + written_names(statement):
            for key in [k for k, v in copies.items() if k == target or v == target]:
                del copies[key]
        if (
            isinstance(statement, gast.Assign)
            and isinstance(statement.targets[0], gast.Name)
            and isinstance(statement.value, gast.Name)
            and statement.targets[0].id in candidates
            and statement.targets[0].id != statement.value.id
            and statement.value.id not in written
        ):
            copies[statement.targets[0].id] = statement.value.id
        out.append(statement)
    return out


# ----- dead code elimination -----


def assigned_names(statement):
    if isinstance(statement, gast.AugAssign):
        return [statement.target.id]
    if isinstance(statement, gast.Assign):
        return [
            n.id
            for t in statement.targets
            if not isinstance(t, gast.Subscript)
            for n in walk(t)
            if isinstance(n, gast.Name)
        ]
    return []


def written_names(statement):
    """The arrays `x[i] = v` writes into: after it, reads of x stay reads of x (not of a
    name x was a copy of, which holds the same array but would read as another value
    to code that differentiates this code again)."""
    if isinstance(statement, gast.Assign):
        return [t.value.id for t in statement.targets if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)]
    return []


def loaded_names(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _callee(func, namespace):
    """The live object a call's function expression names, if it is static."""
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name) or func.id not in namespace.values:
        return None, path
    value = namespace.values[func.id]
    for attr in reversed(path):
        value = getattr(value, attr, None)
    return value, path


def is_pure(value, namespace):
    for node in walk(value):
        if isinstance(node, gast.Call):
            callee, path = _callee(node.func, namespace)
            if callee is None:
                # A method of a local value: pure when it is a registered ndarray method.
                if not path:
                    return False
                member = getattr(np.ndarray, path[0], None)
                if member is None or not REGISTRY.is_primitive(member):
                    return False
                continue
            if any(callee is helper for helper in _PURE_HELPERS):
                continue
            if any(callee is known for known in namespace.pure):
                continue
            if not REGISTRY.is_primitive(callee) or not REGISTRY.is_pure(callee):
                return False
    return True


def eliminate_dead_code(statements, namespace, live_out, rewrite=True):
    """(statements without dead pure assignments, names live before them).

    With `rewrite=False` the statements are left as they are and only the names live
    before them are computed (as if the dead ones were gone): a loop's fixed point."""
    live = set(live_out)
    kept = []
    for statement in reversed(statements):
        if is_marker(statement):
            kept.append(statement)
            continue
        if isinstance(statement, gast.If):
            body, live_body = eliminate_dead_code(statement.body, namespace, live, rewrite)
            orelse, live_else = eliminate_dead_code(statement.orelse, namespace, live, rewrite)
            if not _has_code(body) and not _has_code(orelse):
                continue
            if rewrite:
                statement.body = body if _has_code(body) else [gast.Pass()]
                statement.orelse = orelse if _has_code(orelse) else []
            live = live_body | live_else | loaded_names(statement.test)
            kept.append(statement)
            continue
        if isinstance(statement, (gast.For, gast.While)):
            header = statement.iter if isinstance(statement, gast.For) else statement.test
            loop_live = set(live) | loaded_names(header)
            while True:
                _, live_body = eliminate_dead_code(statement.body, namespace, loop_live, rewrite=False)
                if live_body <= loop_live:
                    break
                loop_live |= live_body
            body, live_body = eliminate_dead_code(statement.body, namespace, loop_live, rewrite)
            if not _has_code(body) and _idle_header(statement, live):
                continue  # a loop left with nothing to do
            if rewrite:
                statement.body = body if _has_code(body) else [gast.Pass()]
            # a `for` assigns its variable before each run of the body: the body's reads of it
            # do not reach before the loop (a read after the loop still may: zero trips)
            assigned = {n.id for n in walk(statement.target) if isinstance(n, gast.Name)} if isinstance(statement, gast.For) else set()
            live = set(live) | loaded_names(header) | (live_body - assigned)
            kept.append(statement)
            continue
        targets = assigned_names(statement)
        if isinstance(statement, gast.AugAssign):  # `d_x += v` reads d_x and updates it in place
            if statement.target.id not in live:
                continue
            live |= loaded_names(statement.value)
            kept.append(statement)
            continue
        is_write = isinstance(statement, gast.Assign) and any(isinstance(t, gast.Subscript) for t in statement.targets)
        if (
            targets
            and not is_write
            and not live.intersection(targets)
            and is_pure(statement.value, namespace)
        ):
            continue
        live.difference_update(targets)
        live |= loaded_names(statement)
        kept.append(statement)
    kept.reverse()
    return kept, live


def _idle_header(loop, live):
    """Whether running `loop` with an empty body changes nothing that matters: a `for` over a
    name, its variable not read afterwards."""
    return (
        isinstance(loop, gast.For)
        and isinstance(loop.iter, gast.Name)
        and not any(isinstance(n, gast.Name) and n.id in live for n in walk(loop.target))
    )


def _has_code(block):
    return any(not is_marker(s) and not isinstance(s, gast.Pass) for s in block)


def drop_empty_comments(statements):
    out = []
    for position, statement in enumerate(statements):
        if _is_compound(statement):
            for field in _blocks(statement):
                setattr(statement, field, drop_empty_comments(getattr(statement, field)) or [gast.Pass()])
        if is_marker(statement) and _is_comment(statement):
            following = statements[position + 1] if position + 1 < len(statements) else None
            if following is None or is_marker(following) or isinstance(following, gast.Return):
                continue
        out.append(statement)
    return out


def _is_comment(statement):
    return bool(statement.value.args)
