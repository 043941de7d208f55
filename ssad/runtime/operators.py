"""Operators and protocols on objects of the user's: `u * x` is a call of the user's `__mul__`
(or `__rmul__`), `abs(u)` of its `__abs__`, `for v in p` of its `__iter__`.

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

The protocols of Python's builtins take the same way: `abs(u)` (`__abs__`), `float(u)`
(`__float__`), `complex(u)` (`__complex__`), `p[i]` (`__getitem__`) and what a loop, a
`list(p)` or an unpacking walks (`__iter__`, see `analysis.protocols`). `a += v` tries
`__iadd__` first, as Python does, then `__add__` and the right operand's `__radd__`.
"""

import operator

import numpy as np

from ..errors import MissingRuleError, SourceError
from . import iterated, saved_part
from .callables import transformable
from .dynamic import call_forward, call_jvp
from .locations import caller_location
from .receivers import is_object
from .structure import is_other_array

_IN_PLACE = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "ilshift", "irshift", "ior",
             "iand", "ixor"}
_BINARY = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "or", "and", "xor"}

SYMBOLS = {
    "__add__": ("+", operator.add), "__sub__": ("-", operator.sub), "__mul__": ("*", operator.mul),
    "__truediv__": ("/", operator.truediv), "__floordiv__": ("//", operator.floordiv), "__mod__": ("%", operator.mod),
    "__pow__": ("**", operator.pow), "__matmul__": ("@", operator.matmul), "__lshift__": ("<<", operator.lshift),
    "__rshift__": (">>", operator.rshift), "__or__": ("|", operator.or_), "__and__": ("&", operator.and_),
    "__xor__": ("^", operator.xor), "__neg__": ("-", operator.neg), "__pos__": ("+", operator.pos),
    "__invert__": ("~", operator.invert),
    # builtins that call a method of their operand; Python's own meaning on other values
    "__abs__": ("abs", abs), "__float__": ("float", float), "__complex__": ("complex", complex),
    "__getitem__": ("[]", saved_part), "__iter__": ("iter", iterated),
}
# `a += v`: the in-place method first (`__iadd__`), then the operator's
SYMBOLS.update({f"__i{m[2:]}": (f"{text}=", function) for m, (text, function) in list(SYMBOLS.items())
                if m[2:-2] in _BINARY})


def _augmented(method):
    """`left op= right` on an object of the user's, where no derivative is taken: the value
    Python's protocol gives (its `__iadd__`, else what `left + right` calls)."""

    def augmented(left, right):
        for function, operands, _ in _candidates(left, method, (right,)):
            value = function(*operands)
            if value is not NotImplemented:
                return value
        return SYMBOLS[method][1](left, right)  # raises Python's TypeError, as `+=` does

    augmented.__name__ = augmented.__qualname__ = method.strip("_")
    return augmented


# `a += v` where `a` may hold an object: `iadd(a, v)` (see `analysis.protocols`), which
# `operator_forward(a, "__iadd__", v)` differentiates
IN_PLACE = {f"__{m}__": _augmented(f"__{m}__") for m in sorted(_IN_PLACE)}


def operator_forward(left, method, *rest):
    """(the value of the operator `method` on `left` and `rest`, its pullback): the pullback
    gives (left's adjoint, the right operand's, {})."""
    for function, operands, swapped in _candidates(left, method, rest):
        if transformable(function):  # the user's own method, differentiated
            value, pullback = call_forward(function, *operands)
            if value is NotImplemented:
                continue
            return _walked(value, left, method), _in_order(pullback, swapped)
        if function(*operands) is NotImplemented:
            continue
        return _own_forward(left, method, rest)
    SYMBOLS[method][1](left, *rest)  # raises Python's TypeError, as the operator does
    return _own_forward(left, method, rest, defined=False)


def operator_jvp(left, d_left, method, primals, tangents, keywords=None, keyword_tangents=None):
    """(the value of the operator `method` on `left` and `primals`, its tangent)."""
    rest, d_rest = tuple(primals), tuple(tangents)
    for function, operands, swapped in _candidates(left, method, rest):
        if transformable(function):
            given = (d_rest[0], d_left) if swapped else (d_left,) + d_rest
            value, tangent = call_jvp(function, None, operands, given)
            if value is NotImplemented:
                continue
            return _walked(value, left, method), tangent
        if function(*operands) is NotImplemented:
            continue
        _refuse_objects(left, method, rest)
        return call_jvp(SYMBOLS[method][1], None, (left,) + rest, (d_left,) + d_rest)
    SYMBOLS[method][1](left, *rest)
    _refuse_objects(left, method, rest, defined=False)
    return call_jvp(SYMBOLS[method][1], None, (left,) + rest, (d_left,) + d_rest)


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
    SYMBOLS[method][1](left, *rest)
    _refuse_objects(left, method, rest, defined=False)
    return SYMBOLS[method][1], False


def _own_forward(left, method, rest, defined=True):
    """Python's or NumPy's own operation, differentiated by its rule."""
    _refuse_objects(left, method, rest, defined)
    value, pullback = call_forward(SYMBOLS[method][1], left, *rest)
    return value, _in_order(pullback, False)  # the rule's layout is a function's too


def _candidates(left, method, rest):
    """[(function, operands, swapped)] in the order Python tries them for the operator."""
    if method[2:-2] in _IN_PLACE:  # `a += v`: a's `__iadd__`, then what `a + v` calls
        own = getattr(type(left), method, None)
        # another class's (an array's) would change `a` itself, where its value is `a + v`'s
        return ([(own, (left,) + rest, False)] if transformable(own) else []) + _candidates(
            left, f"__{method[3:]}", rest)
    first = getattr(type(left), method, None)
    if method[2:-2] not in _BINARY:
        return [(first, (left,) + rest, False)] if first is not None else []
    right = rest[0]
    name = "__r" + method[2:]
    reflected = getattr(type(right), name, None) if type(right) is not type(left) else None
    found = [(first, (left, right), False)] if first is not None else []
    if reflected is not None:
        overrides = issubclass(type(right), type(left)) and reflected is not getattr(type(left), name, None)
        found.insert(0 if overrides else len(found), (reflected, (right, left), True))
    return found


def _walked(value, left, method):
    """`value`, what the user's method returned; for `__iter__`, checked to be what a loop walks."""
    if method == "__iter__":
        walkable(value, left)
    return value


def walkable(items, walked):
    """Raise SourceError, at the user's line, unless `items` (what the `__iter__` of the
    user's object `walked` returned) is a list, a tuple, an array, a range or a string: ssad
    walks those by index. Another iterator (`self` with a `__next__`, an `iter(...)` held
    in a name) is not read ahead."""
    if isinstance(items, (list, tuple, np.ndarray, range, str)) or is_other_array(items):
        return
    kind = type(walked).__name__
    raise SourceError(
        f"the `__iter__` of {kind} returns a {type(items).__name__}, which ssad does not walk; make it a "
        f"generator (`yield from self.items`, or `for v in self.items: yield v`), or return "
        f"`iter(...)` of a list, a tuple or an array",
        *caller_location(),
    )


def _in_order(pullback, swapped):
    """A pullback of `call_forward` of the method (its function's adjoint, its operands', {})
    as the operator's: (left's, right's, {})."""
    if swapped:
        return lambda d_value: (lambda a: (a[2], a[1], a[3]))(pullback(d_value))
    return lambda d_value: pullback(d_value)[1:]


def _refuse_objects(left, method, rest, defined=True):
    """MissingRuleError where Python's or NumPy's own operation takes an object of the user's
    (`defined`: whether the object's class has the method, from a class not of the user's)."""
    if method == "__iter__" and not defined and is_object(left):  # Python walks its `__getitem__` from 0
        raise MissingRuleError(
            f"iterating a {type(left).__name__} walks its `__getitem__` from 0 until it raises IndexError (Python's "
            "old sequence protocol), which ssad does not differentiate; give the class an `__iter__` "
            "(`def __iter__(self): return iter(self.items)`)",
            *caller_location(),
        )
    found = next((v for v in (left, *rest) if is_object(v) and not isinstance(v, tuple)), None)
    kind = type(found)
    own = getattr(kind, method, None) or getattr(kind, "__r" + method[2:], None)
    if found is not None and defined and own is not None and not transformable(own):  # not the user's code
        raise MissingRuleError(
            f"`{SYMBOLS[method][0]}` here runs the operator method of a {kind.__name__} (from {kind.__module__}), "
            "which is not your code and has no rule, so ssad does not differentiate it; compute with its fields "
            "or NumPy arrays, or, for a constant such as a SciPy sparse matrix, read it as a global or a value the "
            "function captures (`A @ x` is then differentiated by the rule of `@`)",
            *caller_location(),
        )
    if found is not None:
        raise MissingRuleError(
            f"`{SYMBOLS[method][0]}` here is NumPy's or Python's own operation on a {type(found).__name__} "
            f"(its class defines no `{method}` or reflected method that takes the other operand, or an array "
            "makes an array of objects), which ssad does not differentiate; give the class the method, or "
            "compute with its fields",
            *caller_location(),
        )
