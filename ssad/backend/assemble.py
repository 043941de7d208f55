"""Assembling generated functions: the sweeps of a transformation become Python functions.

Assumes: the statements of a transformation (`transform.reverse.Gradient`,
`transform.forward.Tangents`) of a Program.
Guarantees: a function with `f`'s signature — `grad_f` / `value_and_grad_f`, the
pair `forward_f` (returning the value and the residuals) and `backward_f(d_result,
saved)` of a vjp, or `jvp_f(..., *, d_x=...)` — optimized (stage 7), emitted and
compiled (stage 8) into a `Compiled`, or its source when a stage is named.
"""

import inspect
import linecache
from dataclasses import dataclass, field

import gast

from ..errors import MissingRuleError, SsadError
from ..frontend import parse
from ..frontend.builders import blank, clone, is_marker, param, store, stored_names, walk
from ..frontend.builders import name as _name
from ..optimize.cleanup import optimize as optimize_pass
from ..optimize.release import release_dead_values
from ..registry import REGISTRY
from ..runtime import copy_adjoint
from ..optimize.unit_seed import fold_unit_seed
from ..runtime import seed as seed_helper
from ..runtime.callables import function_label, positions, tangent_parameter, vjp_name
from ..runtime.handles import GRAD, JVP, VALUE_AND_GRAD, VJP
from . import emit


@dataclass
class Compiled:
    """A generated module: its source, its entry function(s), what it differentiates."""

    source: str
    function: object  # grad_f / value_and_grad_f / forward_f
    backward: object  # backward_f for the vjp variant, else None
    wrt: tuple  # parameter names differentiated
    positions: tuple  # their positions among the positional parameters (None if keyword-only)
    writes_in_place: bool = False  # x[i] = v restores arrays in place: a pullback runs once
    callees: list = None  # (function, wrt) of the user functions the code calls
    natives: dict = field(default_factory=dict)  # its code compiled by Numba (`ssad.native`), once asked for


def reverse_functions(f, program, gradient, wrt, variant, optimize, stage=None, as_tuple=False):
    """The gradient function (`grad`, `value_and_grad`) or the two halves of the vjp of `f`,
    from the sweeps of `gradient`; their source when `stage` is named, else a Compiled."""
    namespace = program.namespace
    result = program.result
    adjoint_names = [gradient.adjoints[p] for p in wrt]
    backward = list(gradient.backward)
    if gradient.result_active and variant != VJP:
        if gradient.result_is_scalar:
            # a real scalar: its seed is 1.0 whatever its value, so code computing only the
            # value (not read by the adjoint sweep) can go, and products with the seed too
            value = gast.Constant(value=1.0, kind=None)
        else:
            value = gast.Call(func=_name(namespace.bind("seed", seed_helper)), args=[clone(result)], keywords=[])
        backward.insert(0, gast.Assign(targets=[store(gradient.seed)], value=value, type_comment=None))
    do_optimize = optimize and stage not in ("reverse", "tape")
    backward_names = stored_names(backward)
    unit_seed = gradient.result_active and gradient.result_is_scalar and variant in (GRAD, VALUE_AND_GRAD)

    def finish(statements):
        if not do_optimize:
            return statements
        statements = optimize_pass(statements, namespace, backward_names)
        if unit_seed:  # the seed's reassignments are gone now: fold it, then clean up after it
            folded = fold_unit_seed(statements, gradient.seed, gradient.scalar_adjoints)
            if folded is not None:
                statements = optimize_pass(folded, namespace, backward_names)
        return statements

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
                targets=[store(value)],
                value=_snapshot(clone(result), program),
                type_comment=None,
            ))
            returned = gast.Tuple(elts=[_name(value), returned], ctx=gast.Load())
        body = forward + [blank()] + backward + [gast.Return(value=returned)]
        function.body = finish(body)
        source = emit.to_source([function])
        if stage is not None:
            return source
        origins = emit.line_origins([function], source, program.parsed.where)
        scope = emit.compile_module(name, source, namespace.values, origins)
        entry = _with_defaults(scope[name], f)
        return Compiled(source, entry, None, wrt, positions(f, wrt), program.writes_in_place, gradient.callees)

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
    primal = set(program.params) | stored_names(gradient.forward)
    read = {
        n.id
        for s in backward_function.body
        if not is_marker(s)
        for n in walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
    order = list(program.params) + [
        n.id for s in gradient.forward for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    ]
    saved = sorted(read & primal, key=order.index)
    # backward_f(d_result, saved) unpacks what the forward half saved (one tuple, no *args,
    # so generated code stays code ssad can differentiate again).
    saved_name = program.namer.fresh("saved")
    backward_function.args.args = [
        param(n) for n in (gradient.seed, saved_name)
    ]
    if saved:
        unpack = gast.Assign(
            targets=[gast.Tuple(elts=[store(n) for n in saved], ctx=gast.Store())],
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
        for n in walk(s.targets[0])
        if isinstance(n, gast.Name)
    }
    unbound = [
        gast.Assign(targets=[store(n)],
                    value=gast.Constant(value=None, kind=None), type_comment=None)
        for n in saved
        if n not in bound
    ]
    forward_function.body = finish(
        unbound
        + gradient.forward
        + [gast.Return(value=gast.Tuple(elts=[_snapshot(clone(result), program), residuals], ctx=gast.Load()))]
    )
    source = emit.to_source([forward_function, backward_function])
    if stage is not None:
        return source
    origins = emit.line_origins([forward_function, backward_function], source, program.parsed.where)
    scope = emit.compile_module(f"vjp_{base}", source, namespace.values, origins)
    entry = _with_defaults(scope[forward_name], f)
    return Compiled(
        source, entry, scope[backward_name], wrt, positions(f, wrt), program.writes_in_place,
        gradient.callees,
    )




def jvp_function(f, program, tangents, wrt, optimize, stage=None):
    """`jvp_f(<f's parameters>, *, d_x=...)` returning `(value, tangent of the value)`;
    its source when `stage` is named, else a Compiled."""
    namespace = program.namespace
    name = program.namer.fresh(f"jvp_{vjp_name(f, wrt) if wrt else function_label(f)}")
    function = _signature(program, name)
    prologue = []
    taken = set(program.params)
    for parameter in wrt:
        keyword = tangent_parameter(parameter)
        if keyword in taken:
            raise SsadError(
                f"{f.__qualname__} has a parameter named {keyword}, which forward mode needs for the "
                f"tangent of {parameter}; rename it"
            )
        function.args.kwonlyargs.append(param(keyword))
        function.args.kw_defaults.append(None)
        variable = tangents.names[parameter]
        if variable != keyword:  # the user's code has a variable named like the keyword
            prologue.append(gast.Assign(
                targets=[store(variable)],
                value=_name(keyword),
                type_comment=None,
            ))
    returned = gast.Tuple(elts=[_snapshot(clone(program.result), program), tangents.result_tangent], ctx=gast.Load())
    body = prologue + tangents.body + [gast.Return(value=returned)]
    tangent_names = stored_names(tangents.body)
    function.body = optimize_pass(body, namespace, tangent_names) if optimize and stage != "reverse" else body
    if optimize and stage != "reverse":
        parameters = [a.id for a in function.args.args + function.args.kwonlyargs]
        function.body = release_dead_values(function.body, parameters)
    source = emit.to_source([function])
    if stage is not None:
        return source
    origins = emit.line_origins([function], source, program.parsed.where)
    scope = emit.compile_module(name, source, namespace.values, origins)
    entry = _with_defaults(scope[name], f)
    return Compiled(source, entry, None, wrt, positions(f, wrt), program.writes_in_place, tangents.callees)


def _snapshot(result, program):
    """The result itself, or a copy when the adjoint sweep restores arrays in place."""
    if not program.writes_in_place:
        return result
    helper = program.namespace.bind("copy_adjoint", copy_adjoint)
    return gast.Call(func=_name(helper), args=[result], keywords=[])


def _with_defaults(function, f):
    function.__defaults__ = f.__defaults__
    function.__kwdefaults__ = f.__kwdefaults__
    return function


def _signature(program, name, extra_first=()):
    """A FunctionDef header with the user's parameters (defaults are set after exec)."""
    args = clone(program.node.args)
    # Literal defaults stay visible in the source; others are set from f after exec.
    if not all(isinstance(d, gast.Constant) for d in args.defaults):
        args.defaults = []
    args.kw_defaults = [d if isinstance(d, gast.Constant) else None for d in args.kw_defaults]
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        arg.annotation = None
    for extra in reversed(extra_first):
        args.args.insert(0, param(extra))
    return gast.FunctionDef(
        name=name, args=args, body=[], decorator_list=[], returns=None, type_comment=None, type_params=[]
    )


def _returned(names, as_tuple=False):
    if len(names) == 1 and not as_tuple:
        return _name(names[0])
    return gast.Tuple(elts=[_name(n) for n in names], ctx=gast.Load())


def rule_caller(f, variant):
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


def parse_or_missing_rule(f, variant):
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


