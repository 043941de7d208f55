"""Which private tangents of the forward pass a statement's tangent code shares.

`forward` writes into a tangent in place (`d_x[i] = d_v`, `d_items.append(d_v)`) only
while it is private: made by this function (a zero, a copy) and held by no other name.
Tangent code that may make a value of it, a view of it or a container holding it ends
that: `c = a + 1.0` makes a new array, but its tangent is `d_a` itself, so a later
`a[i] = v` must write into a copy of `d_a`, or `d_c` would change with it.

Assumes: tangent statements in A-normal form, made by `forward` for one statement, and
the kinds of the program's names (`program.arrays`, see `analysis.kinds`).
Guarantees: `shared_tangents` names every private tangent those statements may share.
An operator makes a new value; a call may return any of its operands, except the
run-time helpers that copy a part of an array (`take_part`, `written_part`,
`saved_part`, `owned`): a backward loop's `written_part(d_d_y, i)` leaves `d_d_y` private, so it is
not copied once a pass.

A view carries its tangent's sharing too: `t = a[1:]` gives `d_t = d_a[1:]`, a view of
`d_a`, and `c = t + 1.0` gives `d_c = d_t`; a later `a[0] = v` writing into `d_a` in
place would change `d_c`, though `c` is a new array. `view_bases` names, for every name
that may hold a view or the same value as another (`t = a`, `t = a[i]`, not a known
scalar; an item unpacked, `p, q = m`), the names whose tangent it may view, so that
sharing it shares them.
"""

import gast

from ..analysis.activity import simple_statements
from ..frontend import primitives
from ..runtime import owned, saved_part
from ..runtime.scatter import take_part, written_part
from .forward_calls import Replace

_PART_COPIES = (saved_part, take_part, written_part, owned)  # of an array: `np.copy(d_y[i])`, or a number


def shared_tangents(generated, held, program):
    """The names of `held` (private tangent -> its primal) that the statements `generated` may share."""
    shared = set()
    for statement in generated:
        statement = statement.statement if isinstance(statement, Replace) else statement
        if isinstance(statement, gast.Assign):
            shared |= (may_be(statement.value) - _copied_part(statement.value, held, program)) & held.keys()
    return shared


def view_bases(program, scalars):
    """{name: the names whose tangents its tangent may view}, over every assignment of the
    function (flow-insensitive, so a loop's later iterations and either branch are covered)."""
    bases = {}
    for statement in simple_statements(program.body):
        if not isinstance(statement, gast.Assign):
            continue
        if isinstance(statement.targets[0], gast.Tuple) and isinstance(statement.value, gast.Name):
            for item in statement.targets[0].elts:  # `p, q = m`: rows of a matrix are views of it
                if isinstance(item, gast.Name) and item.id not in scalars:
                    bases.setdefault(item.id, set()).add(statement.value.id)
            continue
        if not isinstance(statement.targets[0], gast.Name):
            continue
        target = statement.targets[0].id
        op = primitives.operation(statement.value, program)
        if target not in scalars and op.kind in (primitives.COPY, primitives.GETITEM) \
                and isinstance(op.args[0], gast.Name):
            bases.setdefault(target, set()).add(op.args[0].id)
    changed = True
    while changed:  # a view of a view views the first array too
        changed = False
        for viewed in bases.values():
            more = set().union(*(bases.get(b, set()) for b in viewed)) - viewed
            viewed |= more
            changed |= bool(more)
    return bases


def _copied_part(value, held, program):
    """`{d_y}` for `take_part(d_y, i)` and its kin when y is a NumPy value: the part is a copy."""
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.args):
        return set()
    helper = program.namespace.values.get(value.func.id)
    operand = value.args[0]
    if not any(helper is f for f in _PART_COPIES) or not isinstance(operand, gast.Name) or operand.id not in held:
        return set()
    if held[operand.id] not in getattr(program, "arrays", ()) or any(operand.id in may_be(a) for a in value.args[1:]):
        return set()
    return {operand.id}


def may_be(expr):
    """The names whose value `expr` may be, view or hold: an operator makes a new value, a call
    may return any of its operands."""
    if isinstance(expr, gast.Name):
        return {expr.id}
    if isinstance(expr, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
        return set()
    return set().union(set(), *(may_be(child) for child in gast.iter_child_nodes(expr)))
