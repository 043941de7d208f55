"""Kinds of values: NumPy values, objects of the user's, and values that may be either.

`t = v.sum(axis=0)`, `t = v.T` and `t = a * b` are NumPy's method, attribute and operator
on an array or a number, and the value's own on an object of the user's (a model whose
method is named `sum`, a dataclass with `__mul__`, a module passed in). Which one a name
holds is found here, once per compilation, from what the function computes and from
the facts about its parameters (`runtime.receivers`: the kinds of the arguments a
gradient is called with).

Assumes: a Program in A-normal form (stage 3, after cse), and the facts about its
parameters: (name, Fact) pairs and bare names (real arrays and scalars, see `ranks`),
(name, ARRAY) and (name, OBJECT) pairs.
Guarantees: `settle` sets `program.objects`, the names that may hold an object (a
parameter with an OBJECT fact, a namedtuple or dataclass the function builds, what an
object's operator returns, and copies of these); `primitives.operation` then reads a
member named like NumPy's, or an operator, on one of them as the object's own
(METHOD_CALL, ATTRIBUTE), which the generated code dispatches when it runs. It sets
`program.arrays`, the names whose every value is a NumPy value (a parameter with a
NumPy fact, what NumPy functions and NumPy members of NumPy values compute, numbers,
operators on these). `guard` puts `numpy_member(v, ...)` before each statement that
takes NumPy's meaning of a method or a differentiable attribute of a value `v` of
neither kind (an attribute of an object, an item of a container, a call's result)
where a derivative depends on it: an object there is refused when the code runs.
Operators on values of neither kind keep NumPy's meaning unchecked (see
docs/functions-and-data.md).
"""

import functools
import inspect
import math
import numbers
import textwrap

import gast
import numpy as np

from ..frontend import primitives
from ..frontend.builders import call, constant, name
from ..registry import REGISTRY
from ..runtime.receivers import ARRAY, OBJECT, argument_kind, is_numpy_value, numpy_member
from ..runtime import owned
from ..runtime.scatter import copy_adjoint
from ..runtime.structure import zeros_like_value
from . import activity, protocols
from .activity import simple_statements
from .rank_rules import Fact


def activity_of(program, facts, wrt, seeds=()):
    """`settle` the kinds, then the activity of `program` with respect to `wrt`. A name the
    code calls a method named like NumPy's on whose NumPy meaning cannot be differentiated
    (`m.sum(x)`: NumPy's sum takes x for an axis) and that carries no derivative itself may
    hold an object of the user's (a model, a module): it joins `seeds`, its calls dispatched
    when the code runs. For an array the call would be wrong either way."""
    _settled(program, facts, seeds)
    analysis = activity.analyze(program, wrt)
    more = _numpy_meaning_fails(program, analysis)
    if more:
        _settled(program, facts, seeds, more)
        analysis = activity.analyze(program, wrt)
    return analysis


def _settled(program, facts, seeds, widened=()):
    """`settle`, the protocols run on objects made explicit (`protocols.lower`) and the kinds
    settled again where that made new names."""
    settle(program, facts, seeds, widened)
    if protocols.lower(program):
        settle(program, facts, seeds, widened)


def settle(program, facts, seeds=(), widened=()):
    """Set `program.objects` and `program.arrays` for parameters with `facts`. The names in
    `seeds` without a fact are assumed to hold objects for their members (`program.assumed`),
    not their operators: the pipeline's early check, made before any argument is seen, names
    the parameters not differentiated, so that nothing is refused there that an object
    argument (a model passed in, `m.sum(x)`) would not make wrong. The names in `widened`
    may hold objects whatever their facts (see `activity_of`)."""
    given = {n: kind for n, kind in _parameter_kinds(facts) if n not in widened}
    params = set(program.params)
    program.assumed = {n for n in seeds if n not in given}
    program.objects = set()
    objects = {p for p in params if given.get(p) == OBJECT} | set(widened)
    assignments = list(_assignments(program.body))
    changed = True
    while changed:
        changed = False
        program.objects = objects
        for target, value in assignments:
            if target not in objects and value is not None and _makes_object(value, program):
                objects.add(target)
                changed = True
    program.given_kinds = given
    program.arrays = _numpy_names(program, given, assignments)


def _numpy_names(program, given, assignments, checked=()):
    """The names whose every value is a NumPy value: a greatest fixed point over their
    assignments. The names in `checked` are assigned NumPy's member of a value that
    `numpy_member` checks first: a NumPy value, when the code goes on."""
    params = set(program.params)
    arrays = {p for p in params if given.get(p) == ARRAY} | {t for t, _ in assignments if t not in params}
    changed = True
    while changed:
        changed = False
        for target, value in assignments:
            numpy = target in checked or (value is not None and _is_numpy(value, program, arrays))
            if target in arrays and (target in program.objects or target in program.assumed or not numpy):
                arrays.discard(target)
                changed = True
    return arrays


def _parameter_kinds(facts):
    for item in facts:
        if isinstance(item, str):
            yield item, ARRAY  # a real scalar
        else:
            parameter, fact = item
            yield parameter, ARRAY if isinstance(fact, Fact) else fact


def _assignments(block):
    """(name, value) for every assignment of a name; value None where it is an item of an
    unpacking (a loop's target, over a range in A-normal form, gets an integer's)."""
    for statement in block:
        if isinstance(statement, gast.If):
            yield from _assignments(statement.body)
            yield from _assignments(statement.orelse)
        elif isinstance(statement, gast.For):
            if isinstance(statement.target, gast.Name):
                yield statement.target.id, constant(0)  # A-normal form loops over a range: an integer
            yield from _assignments(statement.body)
        elif isinstance(statement, gast.While):
            yield from _assignments(statement.body)
        elif isinstance(statement, gast.Assign):
            target = statement.targets[0]
            if isinstance(target, gast.Name):
                yield target.id, statement.value
            elif not isinstance(target, gast.Subscript):
                yield from ((n.id, None) for n in gast.walk(target) if isinstance(n, gast.Name))


def _makes_object(value, program):
    if isinstance(value, gast.Name):
        return value.id in program.objects
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Call)):
        op = primitives.operation(value, program)
        # what an object's operator returns is, as a rule, an object of its class; `super()` is the object
        return op.kind == primitives.CONSTRUCT or (
            op.kind == primitives.METHOD_CALL and op.primitive is not None and op.primitive not in primitives.NOT_OBJECTS
        ) or (op.kind == primitives.PRIMITIVE and op.primitive is super)
    return False


_NUMBER_BUILTINS = {float, int, abs, len, round, complex, bool, math.fsum}
# Run-time helpers of gradients whose value is a NumPy value when their operand is one: a
# private copy, a zero adjoint shaped like it
_LIKE_OPERAND = (copy_adjoint, zeros_like_value, owned)


def _is_numpy(value, program, arrays):
    """Whether `value` (an ANF right-hand side) computes a NumPy value or a number,
    given the names in `arrays` hold one."""
    if isinstance(value, gast.Constant):
        return isinstance(value.value, numbers.Number)
    if isinstance(value, gast.Name):
        if value.id in program.namespace.values:
            return is_numpy_value(program.namespace.values[value.id])
        return value.id in arrays
    if primitives.is_static(value, program) and not isinstance(value, gast.Call):
        try:
            return is_numpy_value(primitives.static_value(value, program))
        except Exception:  # noqa: BLE001 - no such attribute: the front end reports it
            return False
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        operands = [value.left, value.right] if isinstance(value, gast.BinOp) else [value.operand]
        return all(_is_numpy(o, program, arrays) for o in operands)
    if isinstance(value, gast.Compare):
        return True
    if isinstance(value, gast.Subscript):
        return isinstance(value.value, gast.Name) and _is_numpy(value.value, program, arrays)
    op = primitives.operation(value, program)
    if op.kind == primitives.METHOD_CALL and op.primitive in (float, complex):
        return True  # `float(u)`: Python's protocol makes `__float__` return a float
    if op.kind != primitives.PRIMITIVE or op.primitive is None:
        return False
    if any(op.primitive is f for f in _LIKE_OPERAND) and len(op.args) == 1:  # `d_y = zeros_like_value(y)`
        return _is_numpy(op.args[0], program, arrays)
    if isinstance(value, (gast.Attribute, gast.Call)) and not primitives.is_static(
            value.func if isinstance(value, gast.Call) else value, program):
        receiver = value.func.value if isinstance(value, gast.Call) else value.value
        return getattr(op.primitive, "__objclass__", None) is np.ndarray and _is_numpy(receiver, program, arrays)
    module = getattr(op.primitive, "__module__", None) or ""
    return module.split(".")[0] == "numpy" or op.primitive in _NUMBER_BUILTINS or isinstance(op.primitive, np.ufunc)


def _numpy_meaning_fails(program, analysis):
    """The names not known to hold NumPy values whose methods named like NumPy's are called
    where NumPy's meaning has no derivative (see `activity_of`): with arguments that carry one
    where NumPy's rule gives them none, or, on a value that carries one, with no rule at all
    (but a parameter keeps NumPy's meaning there, refused where the gradient is made:
    `x.byteswap()`)."""
    found = set()
    for statement in simple_statements(program.body):
        value = getattr(statement, "value", None)
        if not (isinstance(statement, gast.Assign) and isinstance(value, gast.Call)
                and isinstance(value.func, gast.Attribute) and isinstance(value.func.value, gast.Name)):
            continue
        receiver = value.func.value.id
        # a parameter's NumPy kind may be assumed (`show` without arguments): what fails tells
        if (receiver in program.arrays and receiver not in program.params) or receiver in program.objects \
                or receiver in program.assumed or primitives.is_static(value.func.value, program):
            continue
        op = primitives.operation(value, program)
        if op.kind != primitives.PRIMITIVE or getattr(op.primitive, "__objclass__", None) is not np.ndarray:
            continue
        varied = analysis.varied
        carrying = [i for i, a in enumerate(op.args) if i and isinstance(a, gast.Name) and a.id in varied]
        keywords = [v for v in op.keywords.values() if isinstance(v, gast.Name) and v.id in varied]
        rule = REGISTRY.adjoint_rule(op.primitive)
        unruled = receiver in varied and rule is None and not REGISTRY.is_nondifferentiable(op.primitive)
        if (unruled and receiver not in program.params) or keywords or (
                carrying and not _differentiates(rule, max(carrying))):
            found.add(receiver)
    return found


@functools.lru_cache(maxsize=256)
def _differentiates(rule, position):
    """Whether the adjoint `rule` gives an adjoint to the argument at `position`: every tuple
    it returns is that long (a rule written otherwise is not read: taken as no)."""
    if rule is None:
        return False
    try:
        node = gast.parse(textwrap.dedent(inspect.getsource(rule))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    returns = [n.value for n in gast.walk(node) if isinstance(n, gast.Return)]
    return bool(returns) and all(isinstance(r, gast.Tuple) and len(r.elts) > position for r in returns)


# ----- the checks where the kind is known only when the code runs -----


def guard(program, activity):
    """Put `numpy_member(v, ...)` before each statement taking NumPy's meaning of a member
    of `v`, a name of neither kind, where a derivative depends on it (see the module); what
    such a statement assigns is then a NumPy value (`x.dot(y).sum()` checks x alone)."""
    if program.parsed.filename.startswith("<ssad ") and not program.parsed.filename.startswith("<ssad closure"):
        return  # generated code: its calls on the user's values were checked where it was made
    checked = {s.targets[0].id for s in simple_statements(program.body) if _checked(s, program, activity)}
    program.arrays = _numpy_names(program, program.given_kinds, list(_assignments(program.body)), checked)
    program.node.body = _guarded(program.node.body, program, activity, set())
    protocols.guard_list_changes(program)
    protocols.guard_shared_results(program)
    if program.mode == "forward":
        protocols.guard_walks(program, activity)


def _guarded(block, program, activity, known):
    """`block` with its checks; `known`: the names checked before it (and not assigned since)."""
    out = []
    for statement in block:
        if isinstance(statement, gast.If):
            statement.body = _guarded(statement.body, program, activity, set(known))
            statement.orelse = _guarded(statement.orelse, program, activity, set(known))
        elif isinstance(statement, (gast.For, gast.While)):
            known.difference_update(n.id for n in gast.walk(statement) if isinstance(n, gast.Name)
                                    and isinstance(n.ctx, gast.Store))
            statement.body = _guarded(statement.body, program, activity, set(known))
        elif isinstance(statement, gast.Assign):
            check = _check(statement, program, activity)
            if check is not None and check.value.args[0].id not in known:
                known.add(check.value.args[0].id)
                out.append(gast.copy_location(check, statement))
            known.difference_update(n.id for n in gast.walk(statement.targets[0]) if isinstance(n, gast.Name))
        out.append(statement)
    return out


def _member(statement):
    """(receiver, member, text) of `t = v.member(...)` or `t = v.member`, else None."""
    value = getattr(statement, "value", None)
    if not isinstance(statement, gast.Assign) or not isinstance(statement.targets[0], gast.Name):
        return None
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        return value.func.value, value.func.attr, f".{value.func.attr}(...)"
    if isinstance(value, gast.Attribute):
        return value.value, value.attr, f".{value.attr}"
    return None


def _checked(statement, program, activity):
    """Whether the statement takes NumPy's meaning of a member of a local value (not one
    known to be a NumPy value) where a derivative depends on that meaning."""
    found = _member(statement)
    if found is None or not isinstance(found[0], gast.Name) or primitives.is_static(found[0], program):
        return False
    receiver, value = found[0].id, statement.value
    op = primitives.operation(value, program)
    if op.kind != primitives.PRIMITIVE or getattr(op.primitive, "__objclass__", None) is not np.ndarray:
        return False
    if isinstance(value, gast.Attribute) and REGISTRY.is_nondifferentiable(op.primitive):
        return False  # `.shape`, `.ndim`, `.size`, `.dtype`: read as NumPy's, whatever holds them
    target = statement.targets[0].id
    # an object's own method may give a derivative where NumPy's gives none (`argmax`)
    return target in activity.active or (receiver in activity.varied and target in activity.useful)


def _check(statement, program, activity):
    if not _checked(statement, program, activity):
        return None
    receiver, member, text = _member(statement)
    if receiver.id in program.arrays:
        return None
    filename, lineno, col, _ = program.parsed.where(statement)
    helper = program.namespace.bind("numpy_member", numpy_member)
    arguments = [name(receiver.id)] + [constant(v) for v in (member, text, filename, lineno, col)]
    return gast.Expr(value=call(helper, *arguments))


# ----- what a call of the user's function tells its callee -----


def operand_kinds(bound, program):
    """frozenset of (parameter, kind) for the operands of a call of the user's function whose
    kind is known here (`bound`: [(parameter, operand)]): the callee's code is compiled
    knowing which of its parameters hold objects of the user's, and which NumPy values."""
    return frozenset(
        (param, kind) for param, operand in bound
        if isinstance(param, str) and (kind := _operand_kind(operand, program)) is not None
    )


def _operand_kind(operand, program):
    if isinstance(operand, gast.Constant):
        return ARRAY if isinstance(operand.value, numbers.Number) else None
    if primitives.is_static(operand, program):
        try:
            return argument_kind(primitives.static_value(operand, program))
        except Exception:  # noqa: BLE001 - no such attribute: the front end reports it
            return None
    if isinstance(operand, gast.Name):
        if operand.id in getattr(program, "objects", ()):
            return OBJECT
        if operand.id in getattr(program, "arrays", ()):
            return ARRAY
    return None
