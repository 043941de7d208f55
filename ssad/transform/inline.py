"""Applying an adjoint rule at a call site: inline its body, or call it.

A rule is inlined when its body is only assignments to names followed by
``return (e1, e2, ...)`` and its parameter defaults are literals; the generated
code then reads like the rule itself with the call's names substituted
(`d_x = d_sin_x * np.cos(x)`). The rule's own globals (`np`, `unbroadcast`) are
bound into the generated namespace under names that collide with nothing in the
user's function. Any other rule is called, and its result indexed.
"""

import builtins
import inspect
import textwrap
import threading
from dataclasses import dataclass, replace

import gast
import numpy as np

from ..errors import SourceError
from .fold import fold
from ..frontend.builders import clone, walk

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

    def __post_init__(self):
        # what `instantiate` asks at every call site, answered once per rule
        self.locals = [s.targets[0].id for s in self.body]
        self.statement_reads = [_loaded_list(s.value) for s in self.body]
        self.output_reads = [_loaded_list(output) for output in self.outputs]
        reads = {n for names in self.statement_reads + self.output_reads for n in names}
        self.free = sorted(reads - set(self.params) - set(self.locals))


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
    if not isinstance(node, gast.FunctionDef) or node.name != rule.__name__:
        return None  # not the rule's own source (its file changed since it was imported): call it
    args = node.args
    if args.posonlyargs:
        return None
    # `*shape` / `**kwargs` parameters the body never reads (method signatures such
    # as `x.reshape(*shape)`) do not stop inlining: their arguments are dropped.
    ignored = {a.id for a in (args.vararg, args.kwarg) if a is not None}
    if ignored & {n.id for n in walk(gast.Module(body=node.body, type_ignores=[])) if isinstance(n, gast.Name)}:
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
    for child in walk(node):
        if isinstance(child, (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp, gast.NamedExpr)):
            return None
    outputs = [body[-1].value] if single else list(body[-1].value.elts)
    return Template(params, defaults, body[:-1], outputs, rule.__globals__, ignored)


def bind_arguments(rule, primitive_name, arg_count, keyword_names, first="dy", where=()):
    """Map the rule's parameters to the call: {param: (first|"y"|index|keyword)}; a call the
    rule cannot take is refused at `where`, the user's (filename, line, column, text)."""
    signature = inspect.signature(rule)
    placeholders = [first, "y"] + list(range(arg_count))
    try:
        bound = signature.bind(*placeholders, **{k: ("kw", k) for k in keyword_names})
    except TypeError as error:
        kind = "tangent" if first == "t" else "adjoint"
        shown = primitive_name.replace("numpy.", "np.", 1)
        unknown = [k for k in keyword_names if f"keyword argument '{k}'" in str(error)]
        if unknown:
            message = (
                f"ssad's {kind} rule for {shown} does not take the keyword argument `{unknown[0]}=`: "
                f"{_KEYWORD_ADVICE.get(unknown[0], 'leave it out')}; or register a rule that takes it "
                f"with @ssad.{kind}({shown})"
            )
        else:
            message = (
                f"ssad's {kind} rule for {shown} cannot take this call's arguments ({error}); pass them as "
                f"{shown} documents them, or register a rule that takes them with @ssad.{kind}({shown})"
            )
        raise SourceError(message, *where) from None
    return bound.arguments


# what to write instead of a keyword argument the rules do not take
_KEYWORD_ADVICE = {
    "where": "mask the operand instead, `np.sum(np.where(mask, x, 0.0))` for `np.sum(x, where=mask)` "
             "(`np.max(np.where(mask, x, -np.inf))` for a maximum, `np.min(np.where(mask, x, np.inf))` for a "
             "minimum, `np.prod(np.where(mask, x, 1.0))` for a product)",
}


def active_keyword_refusal(primitive, rule, op_name, keyword, kind):
    """What to say of the keyword argument `keyword=` of a call of `op_name` (`primitive`),
    which carries a gradient (`kind`: "gradient" or "tangent") that `rule` does not take by
    keyword: pass it positionally, where both the function and the rule take it so."""
    if _takes_positionally(primitive, rule, keyword):
        return (f"the keyword argument `{keyword}=` of {op_name} depends on the differentiated inputs; pass it "
                f"positionally so its {kind} can flow")
    try:
        advice = _ACTIVE_KEYWORD_ADVICE.get((primitive, keyword))
    except TypeError:  # an unhashable callable
        advice = None
    return (
        f"the keyword argument `{keyword}=` of {op_name} depends on the differentiated inputs, and ssad's rule "
        f"for {op_name} gives that keyword no {kind}; "
        + (advice or "compute it from values that carry none (wrap it with ssad.stop_gradient if its "
                     "derivative is not wanted), or register a rule that takes it positionally")
    )


def _takes_positionally(primitive, rule, keyword):
    if rule is None:
        return False
    parameters = list(inspect.signature(rule).parameters.values())[2:]
    if any(p.name == keyword and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
        return True
    if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return False
    try:  # the rule takes any positional argument (`np.clip(a, *bounds)`): does the function?
        own = inspect.signature(primitive).parameters.get(keyword)
    except (TypeError, ValueError):
        return True
    return own is not None and own.kind in (own.POSITIONAL_ONLY, own.POSITIONAL_OR_KEYWORD)


# what to write instead of a keyword argument that carries a gradient no rule takes
_ACTIVE_KEYWORD_ADVICE = {
    (np.pad, "constant_values"): "write the border from it instead, `np.pad(x, w) + c * np.pad(np.zeros_like(x), "
                                 "w, constant_values=1.0)` for a number c",
}


def keywords_as_positions(op, rule, carries):
    """`op` with each keyword argument for which `carries(value)` holds passed at the
    position the rule's parameter of that name has, so its derivative can flow: the
    call `norm.logpdf(x, scale=s)` as `norm.logpdf(x, 0.0, s)` for the rule
    `(dy, y, x, loc=0.0, scale=1.0)`. Positions skipped take the rule's defaults, which
    must be literals. `op` itself when a keyword has no such position."""
    moving = [k for k, v in op.keywords.items() if carries(v)]
    if not moving or op.passes_through:
        return op
    try:
        parameters = list(inspect.signature(rule).parameters.values())[2:]
    except (TypeError, ValueError):
        return op
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    places = {p.name: i for i, p in enumerate(positional)}
    if any(places.get(k, -1) < len(op.args) for k in moving):
        return op
    last = max(places[k] for k in moving)
    args = list(op.args)
    keywords = dict(op.keywords)
    for parameter in positional[len(args):last + 1]:
        if parameter.name in keywords:
            args.append(keywords.pop(parameter.name))
        elif parameter.default is not parameter.empty and _is_literal(parameter.default):
            args.append(gast.Constant(value=parameter.default, kind=None))
        else:
            return op
    return replace(op, args=args, keywords=keywords)


def _is_literal(value):
    return value is None or isinstance(value, (bool, int, float, complex, str))


_NAME = gast.Name


def _substituted(node, mapping):
    """A copy of the rule's expression `node` with each name in `mapping` replaced (by a
    copy of an expression, or by another name): `clone` and a substitution in one pass."""
    if node.__class__ is _NAME:
        replacement = mapping.get(node.id)
        if replacement is None:
            return clone(node)
        if isinstance(replacement, str):
            return gast.Name(id=replacement, ctx=node.ctx, annotation=None, type_comment=None)
        return clone(replacement)
    new = node.__class__.__new__(node.__class__)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, gast.AST):
            fields[key] = _substituted(value, mapping)
        elif value.__class__ is list:
            fields[key] = [_substituted(item, mapping) if isinstance(item, gast.AST) else item for item in value]
        else:
            fields[key] = value
    return new


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
    for name in template.free:
        value = template.globals[name] if name in template.globals else getattr(builtins, name)
        mapping[name] = namespace.bind(name, value)

    uses = dict.fromkeys(template.locals, 0)
    for position in needed:
        for name in template.output_reads[position]:
            if name in uses:
                uses[name] += 1
    for statement, reads in zip(reversed(template.body), reversed(template.statement_reads), strict=True):
        if uses[statement.targets[0].id]:
            for name in reads:
                if name in uses:
                    uses[name] += 1

    statements = []
    for statement in template.body:
        local = statement.targets[0].id
        if not uses[local]:
            continue
        value = fold(_substituted(statement.value, mapping))
        if uses[local] == 1:
            mapping[local] = value
        else:
            fresh = namer.fresh(local)
            statements.append(gast.Assign(targets=[gast.Name(id=fresh, ctx=gast.Store(), annotation=None, type_comment=None)], value=value, type_comment=None))
            mapping[local] = fresh
    outputs = [
        fold(_substituted(output, mapping)) if position in needed else None
        for position, output in enumerate(template.outputs)
    ]
    return statements, outputs


def _loaded_list(expr):
    return [n.id for n in walk(expr) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]

