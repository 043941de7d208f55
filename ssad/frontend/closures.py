"""Functions made inside a differentiated function: nested `def` and `lambda`.

A nested function becomes a *template*, a module-level function of its own whose
free variables are extra keyword-only parameters, and a `Closure` value that holds
the template and the captured values:

    def f(x):                             def f(x):
        def g(y):                 ->          g = closure(g_template, x=x)
            return y * x                      ...
        return g(2.0)

Calling the closure calls the template with the captured values, so the template
is differentiated like any function, with respect to its parameters *and* its
captured values. The adjoint of a closure is a dict of the adjoints of what it
captured; the statement that made it hands each entry back to the captured
variable. Values are captured when the function is made; a variable the
enclosing function assigns again afterwards is refused at the fence of the
transformation (late binding would read the new value).
"""

import builtins
import itertools
import linecache
import threading

import astor
import gast

from ..runtime import closures as closures_module
from ..runtime.closures import closure
from .builders import assign, clone, param, walk
from .builders import name as _name
from .expressions import assigns_name

_counter = itertools.count()
_lock = threading.Lock()
# template filename -> (its FunctionDef with the user's positions, the enclosing `Parsed`):
# parsing a template reads these, so messages about it point into the user's file
ORIGINS = {}


class ClosureLowering:
    """Mixin of `anf._Lowering`: a nested `def` or `lambda` as the value `closure(template, ...)`."""

    def function_value(self, node, name):
        """`closure(g_template, x=x)` for a nested `def g` or a `lambda` (see `closures`)."""
        inner_locals = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                inner_locals.add(extra.id)
        body = [node.body] if isinstance(node, gast.Lambda) else node.body
        for statement in body:
            for child in walk(statement):
                if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
                    inner_locals.add(child.id)
        loaded = []
        for statement in body:
            for child in walk(statement):
                if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and child.id not in loaded:
                    loaded.append(child.id)
        captured = [n for n in loaded if n not in inner_locals and (n in self.current or n == name)]
        for captured_name in captured:
            if captured_name != name and self.assigned_later(captured_name):
                if isinstance(node, gast.Lambda):
                    label = "the lambda" if name == "function" else f"the lambda {name}"
                else:
                    label = f"the nested function {name}"
                raise self.parsed.unsupported(
                    node,
                    f"{label} reads `{captured_name}`, which is assigned again later; ssad "
                    "captures values when the function is made: pass the value as an argument instead",
                )
        computed_defaults, default_values = self.computed_defaults(node.args)
        template_name = self.namer.fresh(f"{name}_template")  # unique in this generated module
        template = make_template(node, template_name, captured + list(computed_defaults.values()),
                                 self.namespace.values, self.parsed.filename, self.parsed, computed_defaults,
                                 self.namespace.bind("UNSET", closures_module.UNSET))
        self.namespace.values[template_name] = template
        if not self.is_generated():
            self.refuse_changing_captured(node, name, template, [c for c in captured if c != name])
            held = [self.current[c] for c in captured if c != name and c in self.current]
            self.keep_captured(node, name, held + [v.id for v in default_values if isinstance(v, gast.Name)])
        keywords = []
        for captured_name in captured:
            if captured_name == name and (name not in self.current):
                value = gast.Attribute(value=_name(self.namespace.bind("closures", closures_module)), attr="SELF", ctx=gast.Load())
            else:
                value = self.load(captured_name)
            keywords.append(gast.keyword(arg=captured_name, value=value))
        keywords += [gast.keyword(arg=k, value=v) for k, v in zip(computed_defaults.values(), default_values, strict=True)]
        helper = self.namespace.bind("closure", closure)
        return gast.Call(func=_name(helper), args=[_name(template.__name__)], keywords=keywords)

    def computed_defaults(self, args):
        """The parameters of a nested function or lambda whose default values read the
        enclosing function's variables (`lambda v, k=k: v ** k` in a loop), each with the
        name that carries the value into the template, and those values as atoms, computed
        now, when the function is made, as Python computes them."""
        positional = list(args.posonlyargs) + list(args.args)
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
        pairs += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        names, values = {}, []
        for parameter, default in pairs:
            if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.current
                   for n in walk(default)):
                names[parameter.id] = self.namer.fresh(f"{parameter.id}_default")
                values.append(self.atom(default))
        return names, values

    def assigned_later(self, user_name):
        """Whether `user_name` is assigned after the current statement (or by an enclosing
        loop's body, which may run again), see `AliasingLowering.statements_after`."""
        return any(assigns_name(statement, user_name) for statement in [*self.statements_after(), *self.loops])


def make_template(node, name, captured, namespace, filename, enclosing=None, computed_defaults=None, unset=None):
    """A real function named `name` for the nested function `node` (a gast FunctionDef or Lambda).

    Its source is registered in linecache under a filename of its own, so ssad can run
    it; `captured` names become keyword-only parameters. `enclosing` (the `Parsed`
    function it is nested in) is where its nodes' positions come from.

    `computed_defaults` maps a parameter whose default reads the enclosing function's
    variables to the captured name that holds the default's value, computed when the
    function is made as Python does: the parameter's default becomes `unset` (the name
    of `UNSET` in `namespace`), and the body starts `if k is UNSET: k = k_default`.
    """
    computed_defaults = computed_defaults or {}
    if isinstance(node, gast.Lambda):
        body = [gast.copy_location(gast.Return(value=node.body), node.body)]
        args = node.args
    else:
        body = node.body
        args = node.args
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [
        _unset(unset, default) if positional[len(positional) - len(args.defaults) + i].id in computed_defaults
        else default
        for i, default in enumerate(args.defaults)
    ]
    kw_defaults = [
        _unset(unset, default) if default is not None and parameter.id in computed_defaults else default
        for parameter, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    fills = [
        gast.If(test=gast.Compare(left=_name(parameter), ops=[gast.Is()], comparators=[_name(unset)]),
                body=[assign(parameter, _name(value))], orelse=[])
        for parameter, value in computed_defaults.items()
    ]
    for fill in fills:
        for made in gast.walk(fill):
            gast.copy_location(made, body[0])
    body = fills + list(body)
    kwonly = list(args.kwonlyargs) + [param(c) for c in captured]
    arguments = gast.arguments(
        args=list(args.args),
        posonlyargs=list(args.posonlyargs),
        vararg=args.vararg,
        kwonlyargs=kwonly,
        kw_defaults=kw_defaults + [None] * len(captured),
        kwarg=args.kwarg,
        defaults=defaults,
    )
    function = gast.FunctionDef(
        name=name, args=arguments, body=body, decorator_list=[], returns=None,
        type_comment=None, type_params=[],
    )
    gast.copy_location(function, node)
    module = gast.Module(body=[function], type_ignores=[])
    positioned = clone(function) if enclosing is not None else None
    source = astor.to_source(gast.gast_to_ast(gast.fix_missing_locations(module)))
    with _lock:
        label = f"<ssad closure {name} from {filename} #{next(_counter)}>"
        linecache.cache[label] = (len(source), None, source.splitlines(True), label)
        if positioned is not None:
            ORIGINS[label] = (positioned, enclosing)
    scope = dict(namespace)
    scope.setdefault("__builtins__", builtins)
    exec(compile(source, label, "exec"), scope)  # noqa: S102 - source ssad generated itself
    return scope[name]


def _unset(unset, default):
    return gast.copy_location(gast.Name(id=unset, ctx=gast.Load(), annotation=None, type_comment=None), default)

