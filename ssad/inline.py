"""Applying an adjoint rule at a call site: inline its body, or call it.

A rule is inlined when its body is only assignments to names followed by
``return (e1, e2, ...)`` and its parameter defaults are literals; the generated
code then reads like the rule itself with the call's names substituted
(`d_x = d_sin_x * np.cos(x)`). The rule's own globals (`np`, `unbroadcast`) are
bound into the generated namespace under names that collide with nothing in the
user's function. Any other rule is called, and its result indexed.
"""

import builtins
import copy
import inspect
import keyword
import operator
import re
import textwrap
import threading
from dataclasses import dataclass

import gast

from .errors import SsadError

_templates = {}
_templates_lock = threading.Lock()


@dataclass
class Template:
    """An inlinable rule: its parameters, body statements and returned expressions."""

    params: list  # parameter names, in order
    defaults: dict  # parameter name -> gast.Constant
    body: list  # gast.Assign statements
    outputs: list  # returned expressions
    globals: dict
    ignored: set  # *args / **kwargs parameters the body never reads


class Namespace:
    """The generated function's globals: each free name bound to exactly one object."""

    def __init__(self, namer, initial):
        self.namer = namer
        self.values = dict(initial)
        self.pure = []  # callables bound here that have no side effects (adjoint rules)

    def bind(self, preferred, value):
        """A name for `value` in generated code.

        The name already bound to that very object when there is one (so rules
        read numpy through the user's own alias, `xp.cos`), else `preferred` when
        it is free, else a fresh variant of it (`np_1`).
        """
        preferred = _identifier(preferred)
        if self.values.get(preferred, _MISSING) is value:
            return preferred
        for name, bound in self.values.items():
            if bound is value:
                return name
        if getattr(builtins, preferred, None) is value and not self.namer.is_user_name(preferred):
            self.values[preferred] = value  # a builtin the user's code does not shadow
            return preferred
        if preferred not in self.values and not self.namer.is_taken(preferred):
            self.namer.reserve(preferred)
            self.values[preferred] = value
            return preferred
        name = self.namer.fresh(preferred)
        while name in self.values:  # a pass that restored the namer (a loop's fixpoint) freed a bound name
            name = self.namer.fresh(preferred)
        self.values[name] = value
        return name


_MISSING = object()


def template_of(rule, single=False):
    """The rule's Template, or None when the rule must be called instead of inlined.

    An adjoint rule returns a tuple literal (one output per argument); a tangent rule
    (`single`) returns one expression, its only output.
    """
    key = (rule, single)
    with _templates_lock:
        if key in _templates:
            return _templates[key]
    template = _build_template(rule, single)
    with _templates_lock:
        _templates[key] = template
    return template


def _build_template(rule, single=False):
    try:
        source = textwrap.dedent(inspect.getsource(rule))
        node = gast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    if not isinstance(node, gast.FunctionDef):
        return None
    args = node.args
    if args.posonlyargs:
        return None
    # `*shape` / `**kwargs` parameters the body never reads (method signatures such
    # as `x.reshape(*shape)`) do not stop inlining: their arguments are dropped.
    ignored = {a.id for a in (args.vararg, args.kwarg) if a is not None}
    if ignored & {n.id for n in gast.walk(gast.Module(body=node.body, type_ignores=[])) if isinstance(n, gast.Name)}:
        return None
    params = [a.id for a in args.args + args.kwonlyargs]
    defaults = {}
    positional_defaults = args.defaults
    for arg, default in zip(args.args[len(args.args) - len(positional_defaults):], positional_defaults, strict=True):
        defaults[arg.id] = default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            defaults[arg.id] = default
    for key, default in list(defaults.items()):
        if (
            isinstance(default, gast.UnaryOp)
            and isinstance(default.op, gast.USub)
            and isinstance(default.operand, gast.Constant)
            and isinstance(default.operand.value, (int, float))
        ):
            defaults[key] = gast.Constant(value=-default.operand.value, kind=None)  # `axis=-1`
    if any(not isinstance(d, gast.Constant) for d in defaults.values()):
        return None
    body = list(node.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    if not single and not isinstance(body[-1].value, gast.Tuple):
        return None
    for statement in body[:-1]:
        if not (
            isinstance(statement, gast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], gast.Name)
        ):
            return None
    for child in gast.walk(node):
        if isinstance(child, (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp, gast.NamedExpr)):
            return None
    outputs = [body[-1].value] if single else list(body[-1].value.elts)
    return Template(params, defaults, body[:-1], outputs, rule.__globals__, ignored)


def _identifier(preferred):
    """`preferred` as a name generated code can use (`<lambda>` becomes `lambda_`)."""
    if preferred.isidentifier() and not keyword.iskeyword(preferred):
        return preferred
    cleaned = re.sub(r"\W", "_", preferred).strip("_") or "value"
    if not cleaned[0].isalpha():
        cleaned = f"value_{cleaned}"
    return f"{cleaned}_" if keyword.iskeyword(cleaned) else cleaned


def bind_arguments(rule, primitive_name, arg_count, keyword_names, first="dy"):
    """Map the rule's parameters to the call: {param: (first|"y"|index|keyword)}."""
    signature = inspect.signature(rule)
    placeholders = [first, "y"] + list(range(arg_count))
    try:
        bound = signature.bind(*placeholders, **{k: ("kw", k) for k in keyword_names})
    except TypeError as error:
        raise SsadError(
            f"the adjoint rule of {primitive_name} ({rule.__qualname__}) cannot take this call's "
            f"arguments: {error}"
        ) from None
    return bound.arguments


class _Substitute(gast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            replacement = self.mapping[node.id]
            if isinstance(replacement, str):
                return gast.Name(id=replacement, ctx=node.ctx, annotation=None, type_comment=None)
            return copy.deepcopy(replacement)
        return node


def instantiate(template, call, namespace, namer, needed):
    """The rule's body and the `needed` outputs with the call's operands substituted.

    `call` maps each rule parameter to the gast expression it takes at this call
    site (parameters left out take their defaults). A rule local used once is
    substituted into its use, one used several times becomes a statement under a
    fresh name, one not used by a needed output is dropped. Returns
    (statements, outputs) with None for outputs not needed.
    """
    mapping = {}
    for param in template.params:
        if param in template.ignored:
            continue
        mapping[param] = call[param] if param in call else template.defaults[param]
    locals_ = [s.targets[0].id for s in template.body]
    loaded = set()
    for statement in template.body:
        loaded |= _loaded(statement.value)
    for output in template.outputs:
        loaded |= _loaded(output)
    for name in sorted(loaded - set(template.params) - set(locals_)):
        value = template.globals[name] if name in template.globals else getattr(builtins, name)
        mapping[name] = namespace.bind(name, value)

    uses = dict.fromkeys(locals_, 0)
    for position in needed:
        for name in _loaded_list(template.outputs[position]):
            if name in uses:
                uses[name] += 1
    for statement in reversed(template.body):
        if uses[statement.targets[0].id]:
            for name in _loaded_list(statement.value):
                if name in uses:
                    uses[name] += 1

    statements = []
    for statement in template.body:
        local = statement.targets[0].id
        if not uses[local]:
            continue
        value = fold(_Substitute(mapping).visit(copy.deepcopy(statement.value)))
        if uses[local] == 1:
            mapping[local] = value
        else:
            fresh = namer.fresh(local)
            statements.append(gast.Assign(targets=[gast.Name(id=fresh, ctx=gast.Store(), annotation=None, type_comment=None)], value=value, type_comment=None))
            mapping[local] = fresh
    outputs = [
        fold(_Substitute(mapping).visit(copy.deepcopy(output))) if position in needed else None
        for position, output in enumerate(template.outputs)
    ]
    return statements, outputs


def _loaded_list(expr):
    return [n.id for n in gast.walk(expr) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def _loaded(expr):
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


# ----- constant folding of substituted expressions -----


ZERO = "__ssad_zero__"  # the symbolic zero tangent, substituted into inlined tangent rules

# Functions linear in their first argument: a zero there makes the result zero.
_LINEAR_IN_FIRST = {
    "broadcast_like", "broadcast_to", "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "ravel", "sum", "mean", "cumsum", "flip", "fliplr", "flipud", "roll", "take", "diag", "diagonal", "triu",
    "tril", "real", "conj", "conjugate", "negative", "positive", "copy", "atleast_1d", "atleast_2d",
    "atleast_3d", "tile", "repeat", "pad", "trace", "unbroadcast", "rot90", "asarray", "array", "sort",
}
# Functions linear in every array argument (bilinear products): a zero anywhere makes zero.
_PRODUCTS = {"dot", "matmul", "outer", "inner", "tensordot", "kron", "vdot", "multiply", "cross"}


def is_zero(node):
    return isinstance(node, gast.Name) and node.id == ZERO


def _zero():
    return gast.Name(id=ZERO, ctx=gast.Load(), annotation=None, type_comment=None)


def _called_name(func):
    if isinstance(func, gast.Attribute):
        return func.attr
    if isinstance(func, gast.Name):
        return func.id
    return None


class _Fold(gast.NodeTransformer):
    """Fold arithmetic on literals, the identities x*1, 1*x, x**1, x+0, 0+x, x-0, x/1, and
    the symbolic zero tangent: 0*x, x@0, 0/x, -0, linear functions of 0 are 0; x+0 is x."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        value, index = node.value, node.slice
        if isinstance(value, gast.Tuple) and isinstance(index, gast.Constant) and isinstance(index.value, int):
            if -len(value.elts) <= index.value < len(value.elts):
                return value.elts[index.value]  # (a, b)[0] is a
        if is_zero(value):
            return _zero()
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        called = _called_name(node.func)
        if node.args and is_zero(node.args[0]) and called in _LINEAR_IN_FIRST:
            return _zero()
        if called in _PRODUCTS and any(is_zero(a) for a in node.args):
            return _zero()
        if called == "einsum" and any(is_zero(a) for a in node.args[1:]):
            return _zero()
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if is_zero(left) or is_zero(right):
            if isinstance(node.op, (gast.Mult, gast.MatMult)):
                return _zero()
            if isinstance(node.op, gast.Div) and is_zero(left):
                return _zero()
            if isinstance(node.op, gast.Add):
                return right if is_zero(left) else left
            if isinstance(node.op, gast.Sub):
                if is_zero(right):
                    return left
                return gast.UnaryOp(op=gast.USub(), operand=right)
        if _number(left) and _number(right):
            try:
                value = _apply(node.op, left.value, right.value)
            except (ArithmeticError, ValueError):
                return node
            if isinstance(value, bool):
                value = int(value)
            return gast.Constant(value=value, kind=None)
        if isinstance(node.op, gast.Mult):
            if _is(right, 1):
                return left
            if _is(left, 1):
                return right
        if isinstance(node.op, gast.Pow) and _is(right, 1):
            return left
        if isinstance(node.op, gast.Add):
            if _is(right, 0):
                return left
            if _is(left, 0):
                return right
        if isinstance(node.op, gast.Sub) and _is(right, 0):
            return left
        if isinstance(node.op, gast.Div) and _is(right, 1):
            return left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if is_zero(node.operand) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return _zero()
        if isinstance(node.op, gast.USub) and _number(node.operand):
            return gast.Constant(value=-node.operand.value, kind=None)
        if isinstance(node.op, gast.Not) and isinstance(node.operand, gast.Constant):
            return gast.Constant(value=not node.operand.value, kind=None)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and _literal(node.left) and _literal(node.comparators[0]):
            left, right = node.left.value, node.comparators[0].value
            compare = _COMPARISONS.get(type(node.ops[0]))
            if compare is not None:
                try:
                    return gast.Constant(value=bool(compare(left, right)), kind=None)
                except TypeError:
                    return node
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, gast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_BoolOp(self, node):
        # Leading literals decide or drop out: `True or k` is True, `False or k` is k.
        self.generic_visit(node)
        values = list(node.values)
        deciding = (lambda v: bool(v)) if isinstance(node.op, gast.Or) else (lambda v: not v)
        while values and isinstance(values[0], gast.Constant):
            if deciding(values[0].value) or len(values) == 1:
                return values[0]
            values.pop(0)
        if len(values) == 1:
            return values[0]
        node.values = values
        return node


_COMPARISONS = {
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
    gast.Is: operator.is_,
    gast.IsNot: operator.is_not,
}


def _literal(node):
    return isinstance(node, gast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str)))


def _number(node):
    # bool counts as a number here: `1 + (p == 0)` folds to 1 once `p == 0` is False.
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float))


def _is(node, number):
    # Only exact Python ints: folding `x * 1.0` could change an integer result's type.
    return _number(node) and type(node.value) is int and node.value == number


def _apply(op, a, b):
    if isinstance(op, gast.Add):
        return a + b
    if isinstance(op, gast.Sub):
        return a - b
    if isinstance(op, gast.Mult):
        return a * b
    if isinstance(op, gast.Div):
        return a / b
    if isinstance(op, gast.Pow):
        if abs(b) > 64:
            raise ValueError("too large to fold")
        return a**b
    raise ValueError("not folded")


def fold(node):
    return _Fold().visit(node)


class _Materialize(gast.NodeTransformer):
    def visit_Name(self, node):
        return gast.Constant(value=0.0, kind=None) if node.id == ZERO else node


def materialize_zeros(node):
    """Symbolic zeros left where they cannot fold away become the literal 0.0."""
    return _Materialize().visit(node)
