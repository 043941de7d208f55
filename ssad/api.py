"""The public API: the pipeline composed in straight-line code, and its cache.

    parse -> fence -> anf -> activity -> reverse -> optimize -> emit

`_build` runs the stages top to bottom; `stages(f)` prints the source after each
one, which is how the compiler itself is debugged. Transformed functions are
cached per (function, wrt, variant, optimize, rule-registry version), so a second
`grad(f)` is a dictionary lookup.
"""

import copy
import functools
import inspect
import linecache
import threading
import weakref
from dataclasses import dataclass

import gast
import numpy as np

from . import activity as activity_pass
from . import anf, cse, display, emit, fence, parse
from .calls import function_label, vjp_name
from .errors import MissingRuleError, SsadError
from .optimize import optimize as optimize_pass
from .registry import REGISTRY
from .forward import forward as forward_pass
from .forward import tangent_parameter
from .reverse import reverse
from .runtime import Tape, copy_adjoint
from .runtime import seed as seed_helper
from .structure import fit_gradient

GRAD = "grad"
VALUE_AND_GRAD = "value_and_grad"
VJP = "vjp"
JVP = "jvp"

STAGES = ("parse", "anf", "activity", "reverse", "optimized")


@dataclass
class Compiled:
    """A generated module: its source, its entry function(s), what it differentiates."""

    source: str
    function: object  # grad_f / value_and_grad_f / forward_f
    backward: object  # backward_f for the vjp variant, else None
    wrt: tuple  # parameter names differentiated
    positions: tuple  # their positions among the positional parameters (None if keyword-only)
    writes_in_place: bool = False  # x[i] = v restores arrays in place: a pullback runs once
    tape_index: int = None  # position of the tape among the residuals (vjp), if any
    callees: list = None  # (function, wrt) of the user functions the code calls


# ----- wrt -----


def _parameters(f):
    code = f.__code__
    positional = list(code.co_varnames[: code.co_argcount])
    keyword_only = list(code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount])
    return positional, keyword_only


def _varargs(f):
    """The name of f's `*args` parameter, or None."""
    code = f.__code__
    if code.co_flags & inspect.CO_VARARGS:
        return code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    return None


def normalize_wrt(f, wrt):
    """(names, is_tuple) for `wrt`: an int, a parameter name, or a tuple of them."""
    if f.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) and REGISTRY.adjoint_rule(f) is None:
        fence.check(parse.parse_function(f))  # reports `**kwargs` where it stands
    positional, keyword_only = _parameters(f)
    is_tuple = isinstance(wrt, (tuple, list))
    items = list(wrt) if is_tuple else [wrt]
    if not items:
        raise SsadError("wrt is empty: name at least one parameter to differentiate")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise SsadError(f"wrt must be a parameter index or name, or a tuple of them; got {item!r}")
        if isinstance(item, int):
            if not -len(positional) <= item < len(positional):
                raise SsadError(
                    f"wrt={item} is out of range: {f.__qualname__} has {len(positional)} positional "
                    f"parameter{'' if len(positional) == 1 else 's'} ({', '.join(positional)})"
                )
            names.append(positional[item])
        else:
            if item not in positional and item not in keyword_only and item != _varargs(f):
                raise SsadError(
                    f"wrt={item!r} is not a parameter of {f.__qualname__}; its parameters are "
                    f"{', '.join(positional + keyword_only)}"
                )
            names.append(item)
    if len(set(names)) != len(names):
        raise SsadError(f"wrt names a parameter twice: {wrt!r}")
    return tuple(names), is_tuple


# ----- the pipeline -----


def _name(identifier):
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def _signature(program, name, extra_first=()):
    """A FunctionDef header with the user's parameters (defaults are set after exec)."""
    args = copy.deepcopy(program.node.args)
    # Literal defaults stay visible in the source; others are set from f after exec.
    if not all(isinstance(d, gast.Constant) for d in args.defaults):
        args.defaults = []
    args.kw_defaults = [d if isinstance(d, gast.Constant) else None for d in args.kw_defaults]
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        arg.annotation = None
    for extra in reversed(extra_first):
        args.args.insert(0, gast.Name(id=extra, ctx=gast.Param(), annotation=None, type_comment=None))
    return gast.FunctionDef(
        name=name, args=args, body=[], decorator_list=[], returns=None, type_comment=None, type_params=[]
    )


def _returned(names, as_tuple=False):
    if len(names) == 1 and not as_tuple:
        return _name(names[0])
    return gast.Tuple(elts=[_name(n) for n in names], ctx=gast.Load())


def _rule_caller(f, variant):
    """`def f(x, y): return f(x, y)` when `f` has a registered rule for `variant`, else None.

    A rule wins over transforming the body, at the top level as in a call: the one
    call of this stand-in is differentiated by the rule.
    """
    has_rule = REGISTRY.tangent_rule(f) if variant == JVP else REGISTRY.adjoint_rule(f)
    if has_rule is None or f.__code__.co_flags & inspect.CO_VARKEYWORDS:
        return None
    label = function_label(f)
    parameters = inspect.signature(f).parameters.values()
    header, passed, keyword_only = [], [], False
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            header.append(f"*{parameter.name}")
            passed.append(f"*{parameter.name}")
            keyword_only = True
        elif parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            if not keyword_only:
                header.append("*")
                keyword_only = True
            header.append(parameter.name)
            passed.append(f"{parameter.name}={parameter.name}")
        else:
            header.append(parameter.name)
            passed.append(parameter.name)
    source = f"def {label}({', '.join(header)}):\n    return {label}({', '.join(passed)})\n"
    node = gast.parse(source).body[0]
    # Defaults come from f when the generated function is made (`_with_defaults`).
    filename = f.__code__.co_filename
    lines = linecache.getlines(filename)
    if len(lines) >= f.__code__.co_firstlineno:  # messages and comments point at f's `def` line
        return parse.Parsed(f, node, filename, f.__code__.co_firstlineno - 2, 0, lines, {label: f})
    return parse.Parsed(f, node, filename, 0, 0, source.splitlines(True), {label: f})


def _parse_or_missing_rule(f, variant):
    """`f` parsed; a function that has a rule only for the other mode and no source it can
    be differentiated from raises MissingRuleError naming the rule to register."""
    try:
        return parse.parse_function(f)
    except SsadError as error:
        forward = variant == JVP
        other = REGISTRY.adjoint_rule(f) if forward else REGISTRY.tangent_rule(f)
        if other is None:
            raise
        have, need, mode = ("an adjoint", "tangent", "forward") if forward else ("a tangent", "adjoint", "reverse")
        raise MissingRuleError(
            f"{f.__qualname__} has {have} rule but no {need} rule, and ssad cannot differentiate it in "
            f"{mode} mode from its source ({error}). Register one with @ssad.{need}({f.__name__})"
        ) from None


def _build(f, wrt, variant, optimize, stage=None, scalars=frozenset(), as_tuple=False):
    """Run the pipeline; return a Compiled, or the source at `stage` when one is named.

    `as_tuple`: the gradient function returns a tuple of gradients even for one `wrt`
    (as `grad(f, wrt=(0,))` does), so code that differentiates it sees that structure."""
    parsed = _rule_caller(f, variant) or _parse_or_missing_rule(f, variant)
    if stage == "parse":
        return emit.to_source([parsed.node])
    fence.check(parsed)
    program = anf.to_anf(parsed)
    program.mode = "forward" if variant == JVP else "reverse"  # which rules make a callee a primitive
    program = cse.eliminate_common_subexpressions(program)
    if stage == "anf":
        return emit.to_source([program.node])
    analysis = activity_pass.analyze(program, wrt)
    if stage == "activity":
        return _activity_report(program, analysis)
    if variant == JVP:
        return _build_jvp(f, program, wrt, analysis, optimize, stage)
    namespace = program.namespace
    gradient = reverse(program, analysis, wrt, scalars)
    result = program.result
    adjoint_names = [gradient.adjoints[p] for p in wrt]
    backward = list(gradient.backward)
    if gradient.result_active and variant != VJP:
        seed_name = namespace.bind("seed", seed_helper)
        backward.insert(0, gast.Assign(
            targets=[gast.Name(id=gradient.seed, ctx=gast.Store(), annotation=None, type_comment=None)],
            value=gast.Call(func=_name(seed_name), args=[copy.deepcopy(result)], keywords=[]),
            type_comment=None,
        ))
    do_optimize = optimize and stage != "reverse"
    backward_names = {
        n.id for s in backward for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }

    def finish(statements):
        return optimize_pass(statements, namespace, backward_names) if do_optimize else statements

    base = function_label(f)
    if variant in (GRAD, VALUE_AND_GRAD):
        name = program.namer.fresh(f"{variant}_{base}")
        function = _signature(program, name)
        returned = _returned(adjoint_names, as_tuple)
        forward = list(gradient.forward)
        if variant == VALUE_AND_GRAD:
            # The adjoint sweep restores overwritten values: keep the result as it is now.
            value = program.namer.fresh("value")
            forward.append(gast.Assign(
                targets=[gast.Name(id=value, ctx=gast.Store(), annotation=None, type_comment=None)],
                value=_snapshot(copy.deepcopy(result), program),
                type_comment=None,
            ))
            returned = gast.Tuple(elts=[_name(value), returned], ctx=gast.Load())
        body = forward + [emit.blank()] + backward + [gast.Return(value=returned)]
        function.body = finish(body)
        source = emit.to_source([function])
        if stage is not None:
            return source
        scope = emit.compile_module(name, source, namespace.values)
        entry = _with_defaults(scope[name], f)
        return Compiled(source, entry, None, wrt, _positions(f, wrt), program.writes_in_place, None, gradient.callees)

    # vjp: a forward function that returns the value and what the backward one reads.
    base = vjp_name(f, wrt)
    backward_name = program.namer.fresh(f"backward_{base}")
    backward_function = gast.FunctionDef(
        name=backward_name,
        args=gast.arguments(
            args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=finish(backward + [gast.Return(value=gast.Tuple(elts=[_name(n) for n in adjoint_names], ctx=gast.Load()))]),
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    # The backward function reads these values of the forward sweep (the tape among them).
    primal = set(program.params) | {
        n.id for s in gradient.forward for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    read = {
        n.id
        for s in backward_function.body
        if not emit.is_marker(s)
        for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
    order = list(program.params) + [
        n.id for s in gradient.forward for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    ]
    saved = sorted(read & primal, key=order.index)
    # backward_f(d_result, saved) unpacks what the forward half saved (one tuple, no *args,
    # so generated code stays code ssad can differentiate again).
    saved_name = program.namer.fresh("saved")
    backward_function.args.args = [
        gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None) for n in (gradient.seed, saved_name)
    ]
    if saved:
        unpack = gast.Assign(
            targets=[gast.Tuple(elts=[gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None) for n in saved], ctx=gast.Store())],
            value=_name(saved_name),
            type_comment=None,
        )
        backward_function.body.insert(0, unpack)
    forward_name = program.namer.fresh(f"forward_{base}")
    forward_function = _signature(program, forward_name)
    residuals = gast.Tuple(elts=[_name(n) for n in saved], ctx=gast.Load())
    # A residual assigned only in some branch or loop may be unbound: start it at None.
    bound = set(program.params) | {
        n.id
        for s in gradient.forward
        if isinstance(s, gast.Assign)
        for n in gast.walk(s.targets[0])
        if isinstance(n, gast.Name)
    }
    unbound = [
        gast.Assign(targets=[gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)],
                    value=gast.Constant(value=None, kind=None), type_comment=None)
        for n in saved
        if n not in bound
    ]
    forward_function.body = finish(
        unbound
        + gradient.forward
        + [gast.Return(value=gast.Tuple(elts=[_snapshot(copy.deepcopy(result), program), residuals], ctx=gast.Load()))]
    )
    source = emit.to_source([forward_function, backward_function])
    if stage is not None:
        return source
    scope = emit.compile_module(f"vjp_{base}", source, namespace.values)
    entry = _with_defaults(scope[forward_name], f)
    tape_index = saved.index(gradient.tape) if gradient.tape in saved else None
    return Compiled(
        source, entry, scope[backward_name], wrt, _positions(f, wrt), program.writes_in_place, tape_index,
        gradient.callees,
    )


def _build_jvp(f, program, wrt, analysis, optimize, stage):
    """`jvp_f(<f's parameters>, *, d_x=...)` returning `(value, tangent of the value)`."""
    tangents = forward_pass(program, wrt, analysis.active)
    namespace = program.namespace
    name = program.namer.fresh(f"jvp_{vjp_name(f, wrt) if wrt else function_label(f)}")
    function = _signature(program, name)
    prologue = []
    taken = set(program.params)
    for param in wrt:
        keyword = tangent_parameter(param)
        if keyword in taken:
            raise SsadError(
                f"{f.__qualname__} has a parameter named {keyword}, which forward mode needs for the "
                f"tangent of {param}; rename it"
            )
        function.args.kwonlyargs.append(gast.Name(id=keyword, ctx=gast.Param(), annotation=None, type_comment=None))
        function.args.kw_defaults.append(None)
        variable = tangents.names[param]
        if variable != keyword:  # the user's code has a variable named like the keyword
            prologue.append(gast.Assign(
                targets=[gast.Name(id=variable, ctx=gast.Store(), annotation=None, type_comment=None)],
                value=_name(keyword),
                type_comment=None,
            ))
    returned = gast.Tuple(elts=[_snapshot(copy.deepcopy(program.result), program), tangents.result_tangent], ctx=gast.Load())
    body = prologue + tangents.body + [gast.Return(value=returned)]
    tangent_names = {
        n.id for s in tangents.body for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    function.body = optimize_pass(body, namespace, tangent_names) if optimize and stage != "reverse" else body
    source = emit.to_source([function])
    if stage is not None:
        return source
    scope = emit.compile_module(name, source, namespace.values)
    entry = _with_defaults(scope[name], f)
    return Compiled(source, entry, None, wrt, _positions(f, wrt), program.writes_in_place, None, tangents.callees)


def _snapshot(result, program):
    """The result itself, or a copy when the adjoint sweep restores arrays in place."""
    if not program.writes_in_place:
        return result
    helper = program.namespace.bind("copy_adjoint", copy_adjoint)
    return gast.Call(func=_name(helper), args=[result], keywords=[])


def _positions(f, wrt):
    positional, _ = _parameters(f)
    return tuple(positional.index(n) if n in positional else None for n in wrt)


def _with_defaults(function, f):
    function.__defaults__ = f.__defaults__
    function.__kwdefaults__ = f.__kwdefaults__
    return function


def _activity_report(program, analysis):
    lines = [emit.to_source([program.node]).rstrip(), "", "# active:  " + ", ".join(sorted(analysis.active))]
    inactive = sorted((analysis.varied | analysis.useful) - analysis.active)
    lines.append("# inactive (varied or useful, not both):  " + ", ".join(inactive))
    return "\n".join(lines) + "\n"


# ----- the cache -----

_cache = weakref.WeakKeyDictionary()  # function -> {key: Compiled}
_cache_lock = threading.RLock()


_in_progress = threading.local()


def compile_unless_in_progress(f, wrt, variant):
    """Compile now, unless this very compilation is already under way (recursion)."""
    building = getattr(_in_progress, "keys", set())
    if (f, wrt, variant) in building:
        return None
    return compiled(f, wrt, variant)


def compiled(f, wrt, variant, optimize=True, scalars=frozenset(), as_tuple=False):
    """The cached Compiled for (f, wrt names, variant, optimize, scalar parameters, tuple result)."""
    key = (wrt, variant, optimize, scalars, REGISTRY.version, f.__code__, as_tuple, _globals_read(f))
    try:
        return _cache[f][key]
    except KeyError:
        pass
    with _cache_lock:
        entries = _cache.setdefault(f, {})
        if key not in entries:
            building = getattr(_in_progress, "keys", None)
            if building is None:
                building = _in_progress.keys = set()
            building.add((f, wrt, variant))
            try:
                entries[key] = _build(f, wrt, variant, optimize, scalars=scalars, as_tuple=as_tuple)
            finally:
                building.discard((f, wrt, variant))
        return entries[key]


def _globals_read(f):
    """The identities of the module globals `f` reads (nested functions included).

    Generated code holds the objects its free names had when it was made; a global
    rebound since (`K = np.cos` where it was `np.sin`) makes a new entry.
    """
    module = getattr(f, "__globals__", None)
    if module is None:
        return ()
    return tuple(id(module[n]) for n in _names_read(f.__code__) if n in module)


def _names_read(code):
    names = code.co_names
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names = names + _names_read(const)
    return names


# Types whose values are scalars: arguments of these types get code specialized on it.
_SCALAR_TYPES = frozenset({
    float, int, bool, complex, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_, np.complex128,
})


class _Variants:
    """The generated functions of one (f, wrt, variant), specialized per scalar arguments.

    `for_args(args)` costs one type test per positional argument and a dict lookup.
    """

    def __init__(self, f, wrt, variant, optimize, as_tuple=False):
        self.f, self.wrt, self.variant, self.optimize, self.as_tuple = f, wrt, variant, optimize, as_tuple
        self.positional = _parameters(f)[0]
        self.general = compiled(f, wrt, variant, optimize, as_tuple=as_tuple)
        self.by_mask = {}

    def for_args(self, args):
        mask = tuple([type(a) in _SCALAR_TYPES for a in args])
        entry = self.by_mask.get(mask)
        if entry is None:
            scalars = frozenset(name for name, is_scalar in zip(self.positional, mask, strict=False) if is_scalar)
            entry = (
                compiled(self.f, self.wrt, self.variant, self.optimize, scalars, self.as_tuple) if scalars else self.general
            )
            self.by_mask[mask] = entry
        return entry


def _check_function(f, api):
    parse.require_python_function(f)


def _unwrap(f):
    """A gradient function made by ssad stands for its generated code (for grad(grad(f)))."""
    generated = getattr(f, "generated", None)
    if getattr(f, "_ssad_wrapped", None) is not None and generated is not None:
        return generated
    return f


def _argument_getter(f, name, position):
    """A fast accessor for one parameter's value from (args, kwargs)."""
    signature = inspect.signature(f)
    parameter = signature.parameters[name]
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        count = len(_parameters(f)[0])
        return lambda args, kwargs: tuple(args[count:])
    default = parameter.default

    def get(args, kwargs):
        if position is not None and position < len(args):
            return args[position]
        return kwargs.get(name, default)

    return get


# ----- public functions -----


def grad(f, wrt=0, *, optimize=True):
    """The gradient of scalar-valued `f` with respect to `wrt`, as a function with f's signature.

    `wrt` is a parameter index or name (the gradient is returned alone) or a tuple
    of them (a tuple of gradients is returned). Each gradient has the structure
    of its input: a float for a float, an array of the same shape and dtype for an
    array. Raises SsadError at call time when `f` returns a non-scalar; use `vjp`.
    """
    return _wrapper(f, wrt, optimize, with_value=False)


def value_and_grad(f, wrt=0, *, optimize=True):
    """Like `grad`, but the function returns `(f(...), gradient)`."""
    return _wrapper(f, wrt, optimize, with_value=True)


_wrappers = weakref.WeakKeyDictionary()  # function -> {(wrt, optimize, with_value, version): wrapper}


def _wrapper(f, wrt, optimize, with_value):
    """The gradient function of `f`, made once: a second `grad(f)` is a dictionary lookup."""
    f = _unwrap(f)
    key = (wrt if not isinstance(wrt, list) else tuple(wrt), optimize, with_value, REGISTRY.version, _globals_read(f))
    try:
        return _wrappers[f][key]
    except (KeyError, TypeError):
        pass
    _check_function(f, "value_and_grad" if with_value else "grad")
    names, is_tuple = normalize_wrt(f, wrt)
    variant = VALUE_AND_GRAD if with_value else GRAD
    made = _gradient_wrapper(f, _Variants(f, names, variant, optimize, is_tuple), is_tuple, with_value=with_value)
    # Threads that asked for the same gradient at once each made one; the first kept
    # wins, so every caller gets the same function (and the same variants).
    with _cache_lock:
        return _wrappers.setdefault(f, {}).setdefault(key, made)


def _gradient_wrapper(f, variants, is_tuple, with_value):
    entry = variants.general
    for_args = variants.for_args
    getters = [_argument_getter(f, n, p) for n, p in zip(entry.wrt, entry.positions, strict=True)]
    if not is_tuple:
        (get,) = getters
        if with_value:

            def wrapper(*args, **kwargs):
                value, gradient = for_args(args).function(*args, **kwargs)
                return value, fit_gradient(gradient, get(args, kwargs))

        else:

            def wrapper(*args, **kwargs):
                return fit_gradient(for_args(args).function(*args, **kwargs), get(args, kwargs))

    else:

        def fit_all(gradients, args, kwargs):
            return tuple(fit_gradient(g, get(args, kwargs)) for g, get in zip(gradients, getters, strict=True))

        if with_value:

            def wrapper(*args, **kwargs):
                value, gradients = for_args(args).function(*args, **kwargs)
                return value, fit_all(gradients, args, kwargs)

        else:

            def wrapper(*args, **kwargs):
                return fit_all(for_args(args).function(*args, **kwargs), args, kwargs)

    functools.update_wrapper(wrapper, f)
    wrapper.__name__ = entry.function.__name__
    wrapper.__qualname__ = entry.function.__name__
    wrapper._ssad_wrapped = VALUE_AND_GRAD if with_value else GRAD
    wrapper.generated = entry.function  # the general variant (no argument is assumed scalar)
    wrapper.variants = variants
    return wrapper


def vjp(f, *args, **kwargs):
    """`(f(*args, **kwargs), pullback)`; `pullback(d_value)` returns one adjoint per positional argument."""
    f = _unwrap(f)
    _check_function(f, "vjp")
    positional, _ = _parameters(f)
    rest = _varargs(f)
    if len(args) > len(positional) and rest is None:
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(args)}")
    names = tuple(positional[: len(args)]) + ((rest,) if rest is not None and len(args) > len(positional) else ())
    if not names:
        raise SsadError("vjp needs at least one positional argument to differentiate")
    mask = [type(a) in _SCALAR_TYPES for a in args]
    scalars = frozenset(n for n, m in zip(positional, mask, strict=False) if m)
    entry = compiled(f, names, VJP, True, scalars)
    value, residuals = entry.function(*args, **kwargs)
    backward = entry.backward
    runs = []

    once = _writes_in_place_anywhere(entry)

    def pullback(d_value):
        if runs and once:
            raise SsadError(
                f"this pullback of {f.__qualname__} was already called: {f.__qualname__} (or a function "
                "it calls) writes into arrays in place, which the backward sweep restores, so it can run once. Call "
                "ssad.vjp again for another output adjoint"
            )
        runs.append(True)
        if entry.callees:  # callees keep tapes of their own inside the residuals
            saved = _unspent(residuals)
        else:
            saved = list(residuals)
            if entry.tape_index is not None:  # each run pops from its own copy of the tape
                saved[entry.tape_index] = saved[entry.tape_index].copy()
            saved = tuple(saved)
        adjoints = backward(d_value, saved)
        if rest is not None and len(args) > len(positional):  # one adjoint per argument *args took
            adjoints = tuple(adjoints[:-1]) + tuple(adjoints[-1])
        return tuple(fit_gradient(g, x) for g, x in zip(adjoints, args, strict=True))

    return value, pullback


def _writes_in_place_anywhere(entry):
    """Whether `entry`'s code or any user function it calls, transitively, writes into an
    array in place (its backward sweep then restores it, so a pullback can run once)."""
    if entry.writes_in_place:
        return True
    seen = set()
    pending = list(entry.callees or [])
    while pending:
        function, wrt = pending.pop()
        if (function, wrt) in seen:
            continue
        seen.add((function, wrt))
        callee = compiled(function, wrt, VJP)
        if callee.writes_in_place:
            return True
        pending.extend(callee.callees or [])
    return False


def _unspent(residuals, copies=None):
    """`residuals` with every tape in it copied, however deep (a callee's saved values sit
    in a tuple, on the caller's tape when it was called in a loop): the backward sweep
    pops what it reads, and a pullback may run more than once.

    A tape reachable from several places (code that differentiates generated code saves
    the tape it pushes on, and also the values that hold it) is copied once, so every
    place still holds the same tape."""
    if copies is None:
        copies = {}
    if isinstance(residuals, Tape):
        copied = copies.get(id(residuals))
        if copied is None:
            copied = copies[id(residuals)] = Tape()
            copied.extend(_unspent(entry, copies) for entry in residuals)
        return copied
    if type(residuals) is tuple:
        return tuple(_unspent(entry, copies) for entry in residuals)
    return residuals


def jvp(f, primals, tangents):
    """`(f(*primals), tangent of the output)` by forward mode (not by reverse mode).

    `tangents` has one tangent per primal, shaped like it (None for an argument
    that carries none).
    """
    f = _unwrap(f)
    _check_function(f, "jvp")
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise SsadError(f"jvp needs one tangent per primal: got {len(primals)} primals and {len(tangents)} tangents")
    positional, _ = _parameters(f)
    if len(primals) > len(positional):
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(primals)}")
    wrt = tuple(n for n, t in zip(positional, tangents, strict=False) if t is not None)
    entry = compiled(f, wrt, JVP)
    keywords = {tangent_parameter(n): t for n, t in zip(positional, tangents, strict=False) if t is not None}
    value, tangent = entry.function(*primals, **keywords)
    return value, tangent


def jacobian(f, wrt=0, *, mode=None):
    """A function returning the Jacobian of `f` with respect to `wrt`.

    The result has shape ``np.shape(output) + np.shape(input)`` (a tuple of them for
    a tuple `wrt`). It is built by forward mode, one jvp per input element, when the
    inputs are smaller than the output, else by reverse mode, one pullback per
    output element; `mode="forward"` or `"reverse"` chooses.
    """
    f = _unwrap(f)
    _check_function(f, "jacobian")
    names, is_tuple = normalize_wrt(f, wrt)
    positions = _positions(f, names)
    getters = [_argument_getter(f, n, p) for n, p in zip(names, positions, strict=True)]

    @functools.wraps(f)
    def jacobian_function(*args, **kwargs):
        inputs = [get(args, kwargs) for get in getters]
        value = np.asarray(f(*args, **kwargs), dtype=np.float64)
        size_in = sum(int(np.size(x)) for x in inputs)
        chosen = mode or ("forward" if size_in < value.size else "reverse")
        if chosen == "forward":
            blocks = _jacobian_forward(f, names, args, kwargs, inputs, value)
        else:
            blocks = _jacobian_reverse(f, names, args, kwargs, inputs, value)
        return blocks if is_tuple else blocks[0]

    return jacobian_function


def _jacobian_reverse(f, names, args, kwargs, inputs, value):
    entry = compiled(f, names, VJP)
    rows = [[] for _ in inputs]
    for index in np.ndindex(value.shape):
        _, residuals = entry.function(*args, **kwargs)  # a fresh forward sweep per row
        seed = np.zeros_like(value)
        seed[index] = 1.0
        adjoints = entry.backward(seed if value.shape else 1.0, residuals)
        for row, adjoint, x in zip(rows, adjoints, inputs, strict=True):
            row.append(np.asarray(fit_gradient(adjoint, x), dtype=np.float64))
    return tuple(np.stack(row).reshape(value.shape + np.shape(x)) for row, x in zip(rows, inputs, strict=True))


def _jacobian_forward(f, names, args, kwargs, inputs, value):
    entry = compiled(f, names, JVP)
    blocks = []
    for name, x in zip(names, inputs, strict=True):
        columns = []
        for index in np.ndindex(np.shape(x)):
            tangents = {tangent_parameter(n): np.zeros(np.shape(v)) if np.ndim(v) else 0.0 for n, v in zip(names, inputs, strict=True)}
            direction = np.zeros(np.shape(x))
            direction[index] = 1.0
            tangents[tangent_parameter(name)] = direction if np.ndim(x) else 1.0
            _, tangent = entry.function(*args, **kwargs, **tangents)
            columns.append(np.broadcast_to(np.asarray(tangent, dtype=np.float64), value.shape))
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(value.shape + (0,))
        blocks.append(stacked.reshape(value.shape + np.shape(x)))
    return tuple(blocks)


def hessian(f, wrt=0):
    """A function returning the Hessian of scalar-valued `f` with respect to `wrt`.

    Forward over reverse: the forward mode of `f`'s generated gradient, one jvp per
    input element; the result has shape ``np.shape(x) + np.shape(x)``. For a
    Hessian-vector product without the full matrix, use
    ``ssad.jvp(ssad.grad(f), (x,), (v,))[1]``.
    """
    f = _unwrap(f)
    _check_function(f, "hessian")
    names, is_tuple = normalize_wrt(f, wrt)
    if is_tuple and len(names) != 1:
        raise SsadError("hessian takes one parameter in wrt; for several, take jacobian(grad(f, wrt=(...)))")
    gradient = grad(f, wrt=names[0])
    return jacobian(gradient.generated, wrt=names[0], mode="forward")


class Shown:
    """What `show` returns: `str()` and `.source` are the generated source, exactly.

    `.title` says what was differentiated; `.originals` holds the source of the
    function and of every function of yours the generated code differentiates too;
    `.original` is the function's own. In Jupyter, `_repr_html_()` shows the original
    beside the generated code, highlighted, each `# grad of:` comment pointing back to
    the line it differentiates.
    """

    def __init__(self, source, title="", sections=None):
        self.source = source
        self.title = title
        self._sections = list(sections) if sections is not None else [display.Section(source)]
        self.originals = list({id(s.original): s.original for s in self._sections if s.original}.values())
        self.original = self.originals[0].source if self.originals else None

    def __str__(self):
        return self.source

    def __repr__(self):
        return self.source

    def _repr_html_(self):
        return display.to_html(self.title or "generated source", self._sections)


def show(f, wrt=0, *, mode="reverse", optimize=True, stage=None):
    """The generated gradient source of `f` (what `grad(f, wrt)` runs).

    `mode="forward"` shows the jvp instead. `stage` (one of "parse", "anf",
    "activity", "reverse", "optimized") shows the code after that pipeline stage,
    for debugging the compiler. The result prints as the source and renders in
    Jupyter as the original function beside the generated code.
    """
    f = _unwrap(f)
    _check_function(f, "show")
    if mode not in ("reverse", "forward"):
        raise SsadError(f"show(mode={mode!r}): mode is 'reverse' or 'forward'")
    if stage is not None and stage not in STAGES:
        raise SsadError(f"stage must be one of {', '.join(STAGES)}; got {stage!r}")
    names, is_tuple = normalize_wrt(f, wrt)
    kind = "jvp" if mode == "forward" else "grad"
    title = f"{kind} of {f.__qualname__} with respect to {', '.join(names)}"
    if stage is not None:
        title += f", after the {stage} stage"
    originals = {}
    if mode == "forward":
        if stage is None:
            entry = compiled(f, names, JVP, optimize)
            return _shown(f, entry.source, _callee_sections(entry, JVP, originals), title, originals)
        return _shown(f, _build(f, names, JVP, optimize, stage), [], title, originals)
    if stage is None or stage == "optimized":
        entry = compiled(f, names, GRAD, optimize, as_tuple=is_tuple)
        source = entry.source if stage is None else _build(f, names, GRAD, True, stage, as_tuple=is_tuple)
        return _shown(f, source, _callee_sections(entry, None, originals), title, originals)
    return _shown(f, _build(f, names, GRAD, optimize, stage, as_tuple=is_tuple), [], title, originals)


def _shown(f, source, callee_sections, title, originals):
    main = display.Section(source, _original(f, originals))
    sections = [main] + callee_sections
    return Shown("".join(s.source for s in sections), title, sections)


def _original(function, originals):
    """The displayed source of `function`, read once per `show`."""
    if function not in originals:
        originals[function] = display.original_of(function)
    return originals[function]


def _callee_sections(entry, variant, originals):
    """The generated code of every user function `entry` calls, transitively, once each."""
    seen = set()
    pending = list(entry.callees or [])
    sections = []
    while pending:
        function, wrt = pending.pop(0)
        if (function, wrt) in seen:
            continue
        seen.add((function, wrt))
        callee = compiled(function, wrt, variant or VJP)
        header = f"# {function.__qualname__}, differentiated with respect to {', '.join(wrt)}"
        sections.append(display.Section(f"\n\n{header}\n{callee.source}", _original(function, originals)))
        pending.extend(callee.callees or [])
    return sections


def stages(f, wrt=0):
    """The source after every pipeline stage, as {stage: source}."""
    return {stage: str(show(f, wrt, stage=stage)) for stage in STAGES}
