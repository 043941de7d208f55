"""Operators on objects of the user's: `u * x` is a call of the user's `__mul__` (or `__rmul__`).

Where the compiler knows an operand may be an object of the user's (`analysis.kinds`),
the generated code computes `u * x` as `operator_forward(u, "__mul__", x)` in reverse
mode and `operator_jvp(u, d_u, "__mul__", (x,), (d_x,), {}, {})` in forward mode, with
the layouts of `dynamic.method_forward` and `dynamic.method_jvp` (the left operand
first). Both follow Python's protocol: the right operand's reflected method first when
its class is a subclass of the left's that overrides it, then the left's method, then
the right's reflected one, each skipped when it returns `NotImplemented`. A method of
the user's is differentiated like any function of theirs; Python's or NumPy's own
operation (numbers, arrays, a namedtuple repeated) takes the operator's rule, unless
it would compute with an object of the user's (an array times a model makes an array
of objects), which is refused.
"""

import operator

from ..errors import MissingRuleError
from .callables import transformable
from .dynamic import call_forward, call_jvp
from .locations import caller_location
from .receivers import is_object

SYMBOLS = {
    "__add__": ("+", operator.add), "__sub__": ("-", operator.sub), "__mul__": ("*", operator.mul),
    "__truediv__": ("/", operator.truediv), "__floordiv__": ("//", operator.floordiv), "__mod__": ("%", operator.mod),
    "__pow__": ("**", operator.pow), "__matmul__": ("@", operator.matmul), "__lshift__": ("<<", operator.lshift),
    "__rshift__": (">>", operator.rshift), "__or__": ("|", operator.or_), "__and__": ("&", operator.and_),
    "__xor__": ("^", operator.xor), "__neg__": ("-", operator.neg), "__pos__": ("+", operator.pos),
    "__invert__": ("~", operator.invert),
}


def operator_forward(left, method, *rest):
    """(the value of the operator `method` on `left` and `rest`, its pullback): the pullback
    gives (left's adjoint, the right operand's, {})."""
    for function, operands, swapped in _candidates(left, method, rest):
        if transformable(function):  # the user's own method, differentiated
            value, pullback = call_forward(function, *operands)
            if value is NotImplemented:
                continue
            return value, _in_order(pullback, swapped)
        if function(*operands) is NotImplemented:
            continue
        _refuse_objects(left, method, rest)
        value, pullback = call_forward(SYMBOLS[method][1], left, *rest)
        return value, _in_order(pullback, False)  # the rule's layout is a function's too
    return SYMBOLS[method][1](left, *rest), None  # raises Python's TypeError, as the function does


def operator_jvp(left, d_left, method, primals, tangents, keywords=None, keyword_tangents=None):
    """(the value of the operator `method` on `left` and `primals`, its tangent)."""
    rest, d_rest = tuple(primals), tuple(tangents)
    for function, operands, swapped in _candidates(left, method, rest):
        if transformable(function):
            given = (d_rest[0], d_left) if swapped else (d_left,) + d_rest
            value, tangent = call_jvp(function, None, operands, given)
            if value is NotImplemented:
                continue
            return value, tangent
        if function(*operands) is NotImplemented:
            continue
        _refuse_objects(left, method, rest)
        return call_jvp(SYMBOLS[method][1], None, (left,) + rest, (d_left,) + d_rest)
    return SYMBOLS[method][1](left, *rest), None


def chosen(left, method, rest):
    """(function, swapped): the method Python's protocol calls for the operator, as
    `operator_forward` finds it; the operator itself (`operator.mul`) for Python's or
    NumPy's own operation."""
    for function, operands, swapped in _candidates(left, method, rest):
        if function(*operands) is NotImplemented:
            continue
        if transformable(function):
            return function, swapped
        _refuse_objects(left, method, rest)
        return SYMBOLS[method][1], False
    return SYMBOLS[method][1], False  # unsupported operands: calling it raises Python's TypeError


def _candidates(left, method, rest):
    """[(function, operands, swapped)] in the order Python tries them for the operator."""
    first = getattr(type(left), method, None)
    if not rest:
        return [(first, (left,), False)] if first is not None else []
    right = rest[0]
    name = "__r" + method[2:]
    reflected = getattr(type(right), name, None) if type(right) is not type(left) else None
    found = [(first, (left, right), False)] if first is not None else []
    if reflected is not None:
        overrides = issubclass(type(right), type(left)) and reflected is not getattr(type(left), name, None)
        found.insert(0 if overrides else len(found), (reflected, (right, left), True))
    return found


def _in_order(pullback, swapped):
    """A pullback of `call_forward` of the method (its function's adjoint, its operands', {})
    as the operator's: (left's, right's, {})."""
    if swapped:
        return lambda d_value: (lambda a: (a[2], a[1], a[3]))(pullback(d_value))
    return lambda d_value: pullback(d_value)[1:]


def _refuse_objects(left, method, rest):
    """MissingRuleError where Python's or NumPy's own operation takes an object of the user's."""
    found = next((v for v in (left, *rest) if is_object(v) and not isinstance(v, tuple)), None)
    if found is not None:
        raise MissingRuleError(
            f"`{SYMBOLS[method][0]}` here is NumPy's or Python's own operation on a {type(found).__name__} "
            f"(its class defines no `{method}` or reflected method that takes the other operand, or an array "
            "makes an array of objects), which ssad does not differentiate; give the class the method, or "
            "compute with its fields",
            *caller_location(),
        )
