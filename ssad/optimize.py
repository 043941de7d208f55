"""Stage 7, optimize: make the generated code read and run like code written by hand.

Assumes: a flat list of generated statements (forward sweep, then adjoint sweep)
in which every name is assigned before it is read.
Guarantees, for `optimize(statements, namespace, copies_of)`:
- copy propagation: after `d_x = d_y` (a copy among the names in `copies_of`),
  later reads of `d_x` read `d_y` until either is assigned again; `return`
  statements keep their names, so the returned adjoints stay named after
  their parameters;
- dead code elimination: an assignment whose targets are never read later is
  dropped when its value is pure (operators, subscripts, registered primitives,
  ssad's runtime helpers, adjoint rules); calls with unknown effects, such as
  `print`, always stay;
- a `# grad of:` comment left with no code under it is dropped.
Constant folding happens where rules are inlined (`inline.fold`); zeros are never
materialized in the first place (`reverse`).
"""

import gast
import numpy as np

from . import runtime
from .emit import is_marker
from .registry import REGISTRY

_PURE_HELPERS = (
    runtime.unbroadcast,
    runtime.getitem_adjoint,
    runtime.pack_like,
    runtime.zeros_like_value,
    runtime.add_adjoint,
)


def optimize(statements, namespace, copies_of=frozenset()):
    statements = propagate_copies(statements, copies_of)
    statements = eliminate_dead_code(statements, namespace)
    return drop_empty_comments(statements)


# ----- copy propagation -----


class _Rename(gast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.mapping:
            return gast.Name(id=self.mapping[node.id], ctx=node.ctx, annotation=None, type_comment=None)
        return node


def propagate_copies(statements, candidates):
    copies = {}
    out = []
    for statement in statements:
        if copies and not isinstance(statement, gast.Return) and not is_marker(statement):
            if isinstance(statement, gast.Assign):
                statement.value = _Rename(copies).visit(statement.value)
            else:
                statement = _Rename(copies).visit(statement)
        for target in assigned_names(statement):
            for key in [k for k, v in copies.items() if k == target or v == target]:
                del copies[key]
        if (
            isinstance(statement, gast.Assign)
            and isinstance(statement.targets[0], gast.Name)
            and isinstance(statement.value, gast.Name)
            and statement.targets[0].id in candidates
            and statement.targets[0].id != statement.value.id
        ):
            copies[statement.targets[0].id] = statement.value.id
        out.append(statement)
    return out


# ----- dead code elimination -----


def assigned_names(statement):
    if isinstance(statement, gast.Assign):
        return [n.id for t in statement.targets for n in gast.walk(t) if isinstance(n, gast.Name)]
    return []


def loaded_names(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


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
    for node in gast.walk(value):
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
            if not REGISTRY.is_primitive(callee):
                return False
    return True


def eliminate_dead_code(statements, namespace):
    live = set()
    kept = []
    for statement in reversed(statements):
        if is_marker(statement):
            kept.append(statement)
            continue
        targets = assigned_names(statement)
        if targets and not live.intersection(targets) and is_pure(statement.value, namespace):
            continue
        live.difference_update(targets)
        live |= loaded_names(statement.value if isinstance(statement, gast.Assign) else statement)
        kept.append(statement)
    kept.reverse()
    return kept


def drop_empty_comments(statements):
    out = []
    for position, statement in enumerate(statements):
        if is_marker(statement) and _is_comment(statement):
            following = statements[position + 1] if position + 1 < len(statements) else None
            if following is None or is_marker(following) or isinstance(following, gast.Return):
                continue
        out.append(statement)
    return out


def _is_comment(statement):
    return bool(statement.value.args)
