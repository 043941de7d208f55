"""What each ANF statement computes: the primitive it applies, and to which operands.

`operation(value, program)` classifies the right-hand side of an ANF assignment
into an `Operation`. Operators map to the `operator` module (`a @ b` is
`operator.matmul`), calls to the live object their path names (`np.sin`), and
methods and attributes of local values to the `np.ndarray` member of that name
(`x.sum` is `np.ndarray.sum`, `x.T` is `np.ndarray.T`), so a method and its
function share one rule table. A name in `program.objects` (set by `analysis.kinds`:
it may hold an object of the user's) is read otherwise: its members and its operators
are its own, called when the code runs (METHOD_CALL, ATTRIBUTE).
"""

import collections.abc
import dataclasses
import functools
import inspect
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import MissingRuleError, SourceError
from ..runtime import iterated
from ..runtime.operators import IN_PLACE
from ..runtime.callables import callable_instance, transformable, unwrapped
from ..runtime.closures import Closure, closure
from ..registry import REGISTRY, primitive_name
from .builders import walk

BINARY = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.Pow: operator.pow,
    gast.MatMult: operator.matmul,
    gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
    gast.BitOr: operator.or_,
    gast.BitAnd: operator.and_,
    gast.BitXor: operator.xor,
}

UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_, gast.Invert: operator.invert}

# The methods Python calls for an operator on an object (`u * x` is `u.__mul__(x)`, or
# `x.__rmul__(u)`: see `runtime.operators`).
DUNDERS = {symbol: f"__{symbol.__name__.rstrip('_')}__" for symbol in BINARY.values()}
DUNDERS.update({operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__"})

# The builtins that call a method of their operand (`abs(u)` is `u.__abs__()`): on an
# object they are that method, dispatched as an operator is (see `runtime.operators`).
# `iterated(p)` is what `for v in p` walks (`__iter__`), `operator.getitem` stands for `p[i]`.
# `a += v` on an object is `iadd(a, v)`, a function of `runtime.operators.IN_PLACE` (see
# `analysis.protocols`).
PROTOCOLS = {abs: "__abs__", float: "__float__", complex: "__complex__", iterated: "__iter__",
             operator.getitem: "__getitem__", pow: "__pow__", operator.abs: "__abs__"}
PROTOCOLS.update((function, name) for function, name in DUNDERS.items())
PROTOCOLS.update((function, name) for name, function in IN_PLACE.items())
# ... whose value is, as a rule, not an object of the class (what `u * v` is)
NOT_OBJECTS = {float, complex, iterated, operator.getitem}

# Kinds of operation.
COPY = "copy"  # t = a
CONSTANT = "constant"  # t = 1.0, t = np.pi
PRIMITIVE = "primitive"  # t = f(a, b), t = a + b, t = a.T
GETITEM = "getitem"  # t = a[i]
PACK = "pack"  # t = (a, b)
INACTIVE = "inactive"  # comparisons: never carry a gradient
USER_CALL = "call"  # t = g(a, b) where g is the user's own function (see `calls`)
ATTRIBUTE = "attribute"  # t = p.W, an attribute of an object that is not an array
DICT = "dict"  # t = {"W": a, "b": b}
CONSTRUCT = "construct"  # t = Params(W=a, b=b), a namedtuple or dataclass
POP = "pop"  # t = items.pop() / items.pop(i)
CLOSURE = "closure"  # g = closure(g_template, x=x): a nested def or lambda (see `closures`)
DYNAMIC_CALL = "dynamic call"  # t = f(a) where f is a function value
METHOD_CALL = "method call"  # t = obj.method(a) on an object that is not an array; t = obj * a (`primitive`: *)
PARTIAL = "partial"  # p = functools.partial(f, a, k=b): its adjoint is (bound args, bound keywords)
INDEXED = "indexed"  # t = obj[a, b]: a global object's own __getitem__ (np.mgrid, np.s_, a user's class)


@dataclass
class Operation:
    kind: str
    primitive: object = None
    args: list = field(default_factory=list)  # positional operands; a method's receiver first
    keywords: dict = field(default_factory=dict)
    name: str = ""  # how the user wrote the callee, for messages
    keys: list = field(default_factory=list)  # dict keys, attribute names or constructor fields
    # a cast to integers or booleans (`x.astype(int)`, `np.sum(x, dtype=int)`): piecewise
    # constant, so its result carries no gradient
    to_integers: bool = False

    def operands(self):
        """Every operand, with `*t` passed through as t itself."""
        unwrapped = [a.value if isinstance(a, gast.Starred) else a for a in self.args]
        return unwrapped + list(self.keywords.values())

    @property
    def passes_through(self):
        """Whether the last positional operand is `*t`."""
        return bool(self.args) and isinstance(self.args[-1], gast.Starred)


def static_value(expr, program):
    """The live object a static path (`np.linalg.norm`) denotes."""
    parts = []
    while isinstance(expr, gast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    value = program.namespace.values[expr.id]
    path = expr.id
    for attr in reversed(parts):
        try:
            value = getattr(value, attr)
        except AttributeError:
            raise SourceError(
                f"`{path}` has no attribute `{attr}`", *program.parsed.where(expr)
            ) from None
        path = f"{path}.{attr}"
    return value


def is_static(expr, program):
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Name) and expr.id in program.namespace.values


def operation(value, program):
    """Classify the right-hand side `value` of an ANF assignment."""
    if isinstance(value, gast.Constant) or (not isinstance(value, gast.Name) and is_static(value, program)):
        return Operation(CONSTANT)
    if isinstance(value, gast.Name):
        if value.id in program.namespace.values:
            return Operation(CONSTANT)
        return Operation(COPY, args=[value])
    if isinstance(value, gast.BinOp):
        symbol = BINARY[type(value.op)]
        if _holds_object(value.left, program) or _holds_object(value.right, program):
            return Operation(METHOD_CALL, symbol, [value.left, value.right], name=gast.unparse(value).strip(),
                             keys=[DUNDERS[symbol]])
        return Operation(PRIMITIVE, symbol, [value.left, value.right], name=f"operator.{symbol.__name__}")
    if isinstance(value, gast.UnaryOp):
        symbol = UNARY[type(value.op)]
        if symbol in DUNDERS and _holds_object(value.operand, program):
            return Operation(METHOD_CALL, symbol, [value.operand], name=gast.unparse(value).strip(),
                             keys=[DUNDERS[symbol]])
        return Operation(PRIMITIVE, symbol, [value.operand], name=f"operator.{symbol.__name__}")
    if isinstance(value, gast.Compare):
        return Operation(INACTIVE, args=[value.left] + list(value.comparators))
    if isinstance(value, gast.Subscript):
        indexed = _indexed_object(value, program)
        if indexed is not None:
            return indexed
        if _holds_object(value.value, program) and isinstance(value.slice, (gast.Name, gast.Constant)):
            # `p[i]` on an object: its `__getitem__` (a slice or a tuple is made a name first, see
            # `analysis.protocols`)
            return Operation(METHOD_CALL, operator.getitem, [value.value, value.slice], name=gast.unparse(value).strip(),
                             keys=["__getitem__"])
        return Operation(GETITEM, args=[value.value])
    if isinstance(value, (gast.Tuple, gast.List)):
        return Operation(PACK, args=list(value.elts))
    if isinstance(value, gast.Dict):
        return Operation(DICT, args=list(value.values), keys=[k.value for k in value.keys])
    if isinstance(value, gast.Attribute):
        member = getattr(np.ndarray, value.attr, None)
        if member is None or not REGISTRY.is_primitive(member) or _holds_object(value.value, program, member=True):
            return Operation(ATTRIBUTE, args=[value.value], name=f".{value.attr}", keys=[value.attr])
        return Operation(PRIMITIVE, member, [value.value], name=f".{value.attr}")
    if isinstance(value, gast.Call):
        keywords = {k.arg: k.value for k in value.keywords}
        func = value.func
        if is_static(func, program):
            callee = unwrapped(static_value(func, program))
            resolve = getattr(callee, "resolve", None)
            if resolve is not None and callable(resolve):
                callee = resolve()  # a lazily compiled half of a vjp or jvp: its generated function
            if callee is closure:
                return Operation(CLOSURE, callee, [], keywords, name="closure", keys=list(keywords))
            if callee is functools.partial:
                return Operation(PARTIAL, callee, list(value.args), keywords, name=gast_path(func))
            kind = PRIMITIVE
            if not REGISTRY.has_rule(callee, getattr(program, "mode", "reverse")):
                if transformable(callee):
                    kind = USER_CALL
                elif record_fields(callee) is not None:
                    return Operation(
                        CONSTRUCT, callee, list(value.args), keywords, name=gast_path(func), keys=record_fields(callee)
                    )
                elif (
                    isinstance(callee, (functools.partial, Closure))
                    or inspect.ismethod(callee)
                    or callable_instance(callee) is not None
                    or hasattr(type(callee), "ssad_call_forward")  # differentiates its own calls (`ssad.checkpoint`)
                ):
                    # A function value held in a global: dispatched when it runs (see `dynamic`).
                    return Operation(DYNAMIC_CALL, None, [func] + list(value.args), keywords, name=gast_path(func))
            if callee in PROTOCOLS and _protocol_on_object(callee, value, program):
                return Operation(METHOD_CALL, callee, list(value.args), name=gast.unparse(value).strip(),
                                 keys=[PROTOCOLS[callee]])
            op = Operation(kind, callee, list(value.args), keywords, name=gast_path(func))
            op.to_integers = kind == PRIMITIVE and _casts_to_integers(op, program)
            return op
        if isinstance(func, gast.Name):
            return Operation(DYNAMIC_CALL, None, [func] + list(value.args), keywords, name=func.id)
        if func.attr in ("items", "values", "keys") and not value.args and not _holds_object(func.value, program):
            return Operation(PRIMITIVE, getattr(dict, func.attr), [func.value], name=f".{func.attr}()")
        if func.attr == "pop" and not _holds_object(func.value, program):
            return Operation(POP, args=[func.value] + list(value.args), name=".pop()")
        if getattr(np.ndarray, func.attr, None) is None or _holds_object(func.value, program, member=True):
            return Operation(
                METHOD_CALL, None, [func.value] + list(value.args), keywords, name=f".{func.attr}()", keys=[func.attr]
            )
        # A method of a local value: `x.sum(axis=0)` is np.ndarray.sum(x, axis=0).
        member = getattr(np.ndarray, func.attr, None)
        op = Operation(PRIMITIVE, member, [func.value] + list(value.args), keywords, name=f".{func.attr}()")
        op.to_integers = _casts_to_integers(op, program)
        return op
    raise AssertionError(f"not an ANF value: {gast.dump(value)}")


def _holds_object(atom, program, member=False):
    """Whether the local name `atom` may hold an object of the user's (see `analysis.kinds`);
    for a `member` named like NumPy's, also where that is only assumed (`program.assumed`)."""
    return isinstance(atom, gast.Name) and (
        atom.id in getattr(program, "objects", ()) or member and atom.id in getattr(program, "assumed", ()))


def _protocol_on_object(callee, call, program):
    """Whether the call of a builtin of PROTOCOLS calls a method of an object of the user's:
    an operand may hold one, and the call takes the operands the method does."""
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return False
    binary = callee is pow or callee in DUNDERS and callee not in UNARY.values() or PROTOCOLS[callee] in IN_PLACE
    if len(call.args) != (2 if binary or callee is operator.getitem else 1):
        return False
    return any(_holds_object(a, program) for a in (call.args if binary else call.args[:1]))


# Keyword arguments that only choose (`max(items, key=f)`): what they choose is piecewise
# constant in anything `f` captures, so they carry no gradient and no tangent.
SELECTING_KEYS = {(max, "key"), (min, "key"), (sorted, "key")}

# Casts that take the dtype as their second positional operand (a method's receiver first).
_CASTS = {np.ndarray.astype, np.astype, np.asarray, np.array, np.asanyarray, np.ascontiguousarray,
          np.asarray_chkfinite}


def _casts_to_integers(op, program):
    """Whether the call converts to an integer or boolean dtype named in the code (`dtype=int`,
    `x.astype(np.int64)`, `np.asarray(x, bool)`). A dtype ssad cannot read is left to the rule."""
    dtype = op.keywords.get("dtype")
    if dtype is None and op.primitive in _CASTS and len(op.args) > 1:
        dtype = op.args[1]
    if dtype is None or isinstance(dtype, gast.Constant) and dtype.value is None:
        return False
    try:
        value = dtype.value if isinstance(dtype, gast.Constant) else static_value(dtype, program)
        return np.dtype(value).kind in "iub"
    except Exception:  # noqa: BLE001 - not a static dtype: the rule decides when it runs
        return False


# What subscripting selects from: an index into one of these never carries a gradient.
_CONTAINERS = (np.ndarray, np.generic, collections.abc.Sequence, collections.abc.Mapping)
_INDEX_MAKER = type(np.s_)  # the class of np.s_ and np.index_exp, which return their index


def _names(node):
    return (n for n in walk(node) if isinstance(n, gast.Name))


def _names_outside_slices(index):
    """The names of `index` outside the bounds of its slices: `np.s_[x]` is x itself."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return [n for part in parts if not isinstance(part, gast.Slice) for n in _names(part)]


def _indexed_object(value, program):
    """INDEXED for `obj[...]` when `obj` is a global object that is not an array or a container
    and the index reads names: the object's `__getitem__` builds a value from them (as
    `np.mgrid[0:x:5j]` does), with no rule to differentiate it. Else None."""
    if not is_static(value.value, program):
        return None
    try:
        holder = static_value(value.value, program)
    except SourceError:
        return None
    if isinstance(holder, _CONTAINERS) or isinstance(holder, type):
        return None
    names = _names_outside_slices(value.slice) if isinstance(holder, _INDEX_MAKER) else list(_names(value.slice))
    if not names:  # `np.s_[i:j]` is slice(i, j): its bounds are indices, which carry no gradient
        return None
    return Operation(INDEXED, None, names, name=gast_path(value.value), keys=[type(holder).__name__])


def indexed_error(op, program, statement):
    """The MissingRuleError for an INDEXED operation whose index carries a gradient."""
    return MissingRuleError(
        f"`{op.name}[...]` builds a value from values that carry gradients, and ssad has no rule for "
        f"subscripting `{op.name}` (a {op.keys[0]} object). Build the value with NumPy functions that have "
        "rules (np.concatenate, np.stack, np.column_stack, np.linspace, ...), or wrap the subscript "
        "in a function of yours and register its rule with @ssad.adjoint and @ssad.tangent",
        *program.parsed.where(statement),
    )


def spread_label(op):
    """What the user called, for a refusal of `f(*items)`: `zip` for ssad's own `zipped`."""
    from ..runtime import zipped

    return "zip" if op.primitive is zipped else op.name


def spread_record_error(op, program, statement):
    """The SourceError for `Params(*items)` whose items carry gradients and whose number ssad
    does not see (a comprehension, a parameter): which field each one fills is known only
    where the code runs."""
    return SourceError(
        f"`{op.name}(*...)` fills the fields of {op.name} from a list or tuple that carries gradients and "
        "whose length ssad does not see (a comprehension, a parameter, a call's result); pass the fields "
        f"one by one or by name (`{op.name}(items[0], items[1])`), or spread a display (`{op.name}(*[a, b])`)",
        *program.parsed.where(statement),
    )


def spreads_carried(op, carries):
    """Whether a record's construction `op` spreads a value for which `carries` holds."""
    return any(isinstance(a, gast.Starred) and carries(a.value) for a in op.args)


def record_fields(callee):
    """The fields of a namedtuple class or dataclass (its constructor's parameters), else None.

    None too for one whose constructor computes (a `__post_init__`, an `__init__` or `__new__`
    of the user's): building it is not packing its arguments (see `record_refusal`)."""
    if record_refusal(callee) is not None:
        return None
    if isinstance(callee, type) and issubclass(callee, tuple) and hasattr(callee, "_fields"):
        return list(callee._fields)
    if isinstance(callee, type) and dataclasses.is_dataclass(callee):
        return [f.name for f in dataclasses.fields(callee) if f.init]
    return None


def record_refusal(callee):
    """Why constructing the namedtuple class or dataclass `callee` is more than storing its
    arguments as fields (a method of the user's runs on them), else None."""
    if not isinstance(callee, type):
        return None
    if issubclass(callee, tuple) and hasattr(callee, "_fields"):
        if not _generated(callee.__new__):
            return "its `__new__` computes from them"
    elif dataclasses.is_dataclass(callee):
        if hasattr(callee, "__post_init__"):
            return "its `__post_init__` computes from them"
        if not _generated(callee.__init__) or callee.__new__ is not object.__new__:
            return "its own `__init__` or `__new__` computes from them"
    return None


def _generated(method):
    """Whether `method` is the constructor `dataclass` or `namedtuple` wrote (from a string)."""
    return getattr(getattr(method, "__code__", None), "co_filename", None) == "<string>"


def rule_target(op):
    """How a user names `op`'s primitive in `@ssad.adjoint(...)`: `np.ndarray.argpartition` for a method."""
    if not op.name.startswith("."):
        return op.name
    owner = getattr(op.primitive, "__objclass__", None)
    attribute = op.name.strip(".()")
    if owner is np.ndarray:
        return f"np.ndarray.{attribute}"
    if owner is not None:
        return f"{owner.__name__}.{attribute}"
    return primitive_name(op.primitive) if op.primitive is not None else attribute


def gast_path(expr):
    if isinstance(expr, gast.Name):
        return expr.id
    if isinstance(expr, gast.Attribute):
        return f"{gast_path(expr.value)}.{expr.attr}"
    return "<expression>"


def is_differentiable(op):
    """False when the operation's result never carries a gradient."""
    if op.kind in (CONSTANT, INACTIVE):
        return False
    if op.kind == PRIMITIVE:
        return not REGISTRY.is_nondifferentiable(op.primitive) and not op.to_integers
    return True
