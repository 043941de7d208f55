"""Rank facts: how many dimensions each value has, given the ranks of the arguments.

A gradient is made for a *shape class* of its arguments (`driver.Variants`): each
argument is a real scalar, a real NumPy array of a given number of dimensions, or
something else. From those facts this pass finds, for every name of the function,
the rank its every assignment produces, or no rank when the assignments disagree or
the analysis cannot tell. The adjoint transform then picks the plain NumPy form of a
rule for those ranks (`rules.specialized`), drops `unbroadcast` where both sides
are scalars, and the tape recomputes what it would otherwise record.

It is a greatest fixed point: every assigned name starts unknown-but-possible
(`_ANY`), each assignment narrows it, and a name whose assignments give two
ranks, or an operation this pass has no rule for, gets none. A loop
`h = np.tanh(W @ h)` keeps h's rank because every assignment agrees with it.

What gives a rank:

- a number literal is 0, a parameter the rank of its class;
- `range(...)` makes a range, and a `for` target over a range is an integer of rank 0;
  integer arithmetic (`+ - * // %`) of integers is an integer;
- `a[i]` drops one dimension per integer index and keeps one per slice;
- an elementwise operation (operators, ufuncs, `math`) has the largest rank of
  its operands; a comparison too;
- `np.dot`, `@` and `np.matmul` of vectors and matrices follow their definitions;
- a full reduction is 0, a reduction over one `axis` loses it (keeps it with
  `keepdims=True`);
- `.T`, `np.transpose`, `np.*_like`, copies and `x.shape[k]` (an integer).

Beside the rank, each dimension may be known to have length 1 (a *unit* dimension,
the only kind NumPy broadcasts) or known not to: the shape class records which
dimensions of each array argument are units. `x + b` with x's dimensions all non-unit
has x's shape whatever b is, so the adjoint of x needs no `unbroadcast`
(`unbroadcast_is_identity`). An elementwise result's dimension is non-unit when an
operand's is; a reduction with `keepdims=True` makes a unit; a slice other than `:`
forgets.

A rank is a claim about every value a name may hold, so it is used only where a
wrong claim could not arise: arrays of complex dtype are given no rank, and a
program that may make complex values from real ones gets no facts at all
(`shapes.may_be_complex`).
"""

import gast

from ..runtime import Tape
from .activity import simple_statements
from ..frontend.builders import walk
from .rank_rules import _ANY, _NONE, _RANGE, Fact, Shape, fact_of, meet, value_fact

__all__ = ["Fact", "Shape", "rank_facts", "unbroadcast_axes", "unbroadcast_is_identity"]





def rank_facts(program, param_facts):
    """{name: Fact} for the names whose every value has a known rank.

    `param_facts` maps parameters to their Fact (from the argument classes); a
    parameter missing there has no rank, whatever is assigned to it later.
    """
    statements = list(simple_statements(program.body))
    loops = [s for s in _compound(program.body) if isinstance(s, gast.For)]
    facts = {}
    for statement in statements:
        if isinstance(statement, gast.Assign):
            for target in statement.targets:
                if isinstance(target, gast.Name):
                    facts[target.id] = _ANY
                elif not isinstance(target, gast.Subscript):  # unpacking: make no claim
                    for n in walk(target):
                        if isinstance(n, gast.Name):
                            facts[n.id] = _NONE
    for loop in loops:
        facts[loop.target.id] = _ANY if isinstance(loop.target, gast.Name) else _NONE
        for n in walk(loop.target):
            if isinstance(n, gast.Name) and n is not loop.target:
                facts[n.id] = _NONE
    for param in program.params:
        facts[param] = param_facts.get(param, _NONE)
    fixed = set(program.params)
    pushed = _pushed_on_tapes(program, [s for s in statements if isinstance(s, gast.Assign)])
    changed = True
    while changed:
        changed = False
        for statement in statements:
            if not isinstance(statement, gast.Assign) or not isinstance(statement.targets[0], gast.Name):
                continue
            target = statement.targets[0].id
            value = statement.value
            tape = _popped_tape(value)
            if tape is not None:
                found = _meet_all([fact_of(v, facts) for v in pushed.get(tape, [None])])
            else:
                found = value_fact(value, program, facts)
            changed |= _narrow(facts, target, found, fixed)
        for loop in loops:
            if isinstance(loop.target, gast.Name):
                found = Fact(0, True) if fact_of(loop.iter, facts) == _RANGE else _NONE
                changed |= _narrow(facts, loop.target.id, found, fixed)
    return {n: f for n, f in facts.items() if isinstance(f, Fact)}


def unbroadcast_is_identity(operand, others, facts):
    """Whether an elementwise operation's result has the shape of `operand` (so the sum of
    its adjoint back to that shape, `unbroadcast`, is the adjoint itself), from the facts of
    the operand and of the `others` (expressions: names or number literals)."""
    x = fact_of(operand, facts)
    found = [fact_of(o, facts) for o in others]
    if not isinstance(x, Fact) or not all(isinstance(f, Fact) for f in found):
        return False
    for f in found:
        if f.rank > x.rank:
            return False
        for k in range(f.rank):
            mine, theirs = x.units[x.rank - f.rank + k], f.units[k]
            if mine is False or theirs is True:
                continue  # x's length there is the result's
            return False
    return True


def unbroadcast_axes(operand, result, facts):
    """`(leading, units, rank)`: the axes over which `unbroadcast(g, operand)` sums an adjoint
    `g` of an elementwise result of fact `result` (the leading axes the operand lacks, then
    its unit dimensions the result may not share, kept), and the operand's rank; None when
    the facts cannot tell."""
    x = fact_of(operand, facts)
    if not isinstance(x, Fact) or not isinstance(result, Fact) or x.rank > result.rank:
        return None
    extra = result.rank - x.rank
    units = []
    for k, unit in enumerate(x.units):
        if unit is None:
            return None
        if unit and result.units[extra + k] is not True:
            units.append(k)
    return tuple(range(extra)), tuple(units), x.rank


def _narrow(facts, target, found, fixed):
    old = facts.get(target, _ANY)
    new = meet(old, found)
    if target in fixed and new != old:
        new = _NONE
    if new != old:
        facts[target] = new
        return True
    return False


def _meet_all(found):
    result = _ANY
    for f in found:
        result = meet(result, f)
    return result


def _compound(block):
    for statement in block:
        if isinstance(statement, (gast.For, gast.While)):
            yield statement
            yield from _compound(statement.body)
        elif isinstance(statement, gast.If):
            yield from _compound(statement.body)
            yield from _compound(statement.orelse)


def _popped_tape(value):
    if isinstance(value, gast.Call) and not value.args and isinstance(value.func, gast.Attribute):
        if value.func.attr == "pop" and isinstance(value.func.value, gast.Name):
            return value.func.value.id
    return None


def _pushed_on_tapes(program, statements):
    """{tape: [the values pushed on it]} for each name bound to a `Tape()` made here and
    used for nothing but pushes, pops and being handed back as a residual."""
    tapes = {
        s.targets[0].id for s in statements
        if isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call) and not s.value.args
        and isinstance(s.value.func, gast.Name) and program.namespace.values.get(s.value.func.id) is Tape
    }
    pushed = {tape: [] for tape in tapes}
    module = gast.Module(body=program.body, type_ignores=[])
    for parent in walk(module):
        for child in gast.iter_child_nodes(parent):
            if not (isinstance(child, gast.Name) and child.id in pushed):
                continue
            if isinstance(parent, gast.Attribute) and parent.attr in ("push", "pop"):
                continue
            if isinstance(parent, (gast.Tuple, gast.Return)) or isinstance(child.ctx, gast.Store):
                continue  # the residuals handed back, or the `Tape()` it is bound to
            pushed.pop(child.id)  # some other use: make no claim
    for statement in simple_statements(program.body):
        call = statement.value if isinstance(statement, gast.Expr) else None
        tape = _method_of(call, "push")
        if tape in pushed:
            pushed[tape] += call.args
    return {tape: values for tape, values in pushed.items() if values}


def _method_of(call, method):
    """The name `t` of a call `t.method(...)`, else None."""
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == method:
        if isinstance(call.func.value, gast.Name):
            return call.func.value.id
    return None
