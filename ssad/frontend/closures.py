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
from ..runtime.closures import closure, joined
from .builders import assign, clone, constant, param, walk
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
        joining = self.closure_groups().get(name)
        if joining is not None:  # called by a function made before it, which it may call (see `joined`)
            return self.joined_value(node, name, *joining)
        free = free_names(node)
        members = self.called_before_made(node, name, free)
        captured = [n for n in free if n in self.current or n == name]
        if members:  # one dict of captured values for all: the names each reads, and the functions
            captured = list(dict.fromkeys(
                [n for member in (node, *members.values()) for n in free_names(member) if n in self.current]
                + [name, *members]))
            for member_name in members:
                self.closure_groups()[member_name] = (name, captured)
        self.refuse_read_before_assigned(node, name, free, members)
        for captured_name in captured:
            if captured_name != name and captured_name not in members and self.assigned_later(captured_name):
                raise self.parsed.unsupported(
                    node,
                    f"{_label(node, name)} reads `{self.spelled.get(captured_name, captured_name)}`, which is "
                    "assigned again later; ssad captures values when the function is made, Python reads them when "
                    f"it is called: bind the value as a default (`{self.spelled.get(captured_name, captured_name)}="
                    f"{self.spelled.get(captured_name, captured_name)}`) or pass it as an argument",
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
            if (captured_name == name and name not in self.current) or captured_name in members:
                # itself, or a function made after it (`joined` puts it there): none yet
                placeholder = "SELF" if captured_name == name else "LATER"
                value = gast.Attribute(value=_name(self.namespace.bind("closures", closures_module)), attr=placeholder,
                                       ctx=gast.Load())
            else:
                value = self.load(captured_name)
            keywords.append(gast.keyword(arg=captured_name, value=value))
        keywords += [gast.keyword(arg=k, value=v) for k, v in zip(computed_defaults.values(), default_values, strict=True)]
        helper = self.namespace.bind("closure", closure)
        return gast.Call(func=_name(helper), args=[_name(template.__name__)], keywords=keywords)

    def closure_groups(self):
        """{the name of a nested function made later: (the name of the one made before it that
        calls it, their captured names)}, see `called_before_made`."""
        return self.__dict__.setdefault("_closure_groups", {})

    def called_before_made(self, node, name, free):
        """{name: node} of the nested functions made later in this block (`def`, or a lambda
        assigned to a name) that the function `node` calls, directly or through one another:
        mutually recursive functions. Python reads them when the call runs; ssad makes them
        all over one dict of captured values, this function's, which `runtime.closures.joined`
        completes as each is made. Each must be made once only, as must this one."""
        if name == "function" or not self.context or self.definitions(name) != 1:
            return {}
        statements, position = self.context[-1]
        later = {}
        for statement in statements[position + 1 :]:
            made = _made_function(statement)
            if made is not None and made[0] not in later and made[0] != name and self.definitions(made[0]) == 1:
                later[made[0]] = made[1]
        members, todo = {}, [n for n in free if n not in self.current and n in later]
        while todo:
            member = todo.pop(0)
            if member not in members:
                members[member] = later[member]
                todo += [n for n in free_names(later[member]) if n not in self.current and n in later]
        return members

    def definitions(self, user_name):
        """How many statements of the enclosing function assign `user_name` (a `def` counts)."""
        return sum(_defines(statement, user_name) for statement in self.parsed.node.body)

    def refuse_read_before_assigned(self, node, name, free, members):
        """A nested function that reads a variable the enclosing function assigns only after it
        makes the function: Python reads the variable when the function is called, ssad when
        it is made."""
        for free_name in free:
            if free_name in self.current or free_name == name or free_name in members:
                continue
            later = next((s for s in [*self.statements_after(), *self.loops] if _defines(s, free_name)), None)
            if later is None:
                continue  # a global or a builtin
            read = next(n for n in walk(node) if isinstance(n, gast.Name) and n.id == free_name)
            definition = next((n for n in walk(later) if isinstance(n, gast.FunctionDef) and n.name == free_name), None)
            made = "assigned" if definition is None else "defined"
            mutual = "" if definition is None else (
                "; nested functions that call one another are made together when each is defined once, "
                "one after another in the same block")
            raise self.parsed.unsupported(
                read,
                f"{_label(node, name)} reads `{free_name}`, which is {made} only after it is made (line "
                f"{self.parsed.where(definition or later)[1]}); ssad captures values when a function is made: make "
                f"it after `{free_name}` is {made}, or pass `{free_name}` to it as an argument{mutual}",
            )

    def joined_value(self, node, name, first, captured):
        """`joined(g_template, f, "g")` for a nested function `g` that `f`, made before it, calls:
        `g` closes over `f`'s captured values, the dict `f` was made with (see `called_before_made`)."""
        free = free_names(node)
        for free_name in free:
            if free_name in self.current and free_name not in captured:
                raise self.parsed.unsupported(
                    next(n for n in walk(node) if isinstance(n, gast.Name) and n.id == free_name),
                    f"{_label(node, name)} is called by `{first}`, made before it, and reads `{free_name}`, "
                    f"which is assigned after `{first}` is made; ssad makes functions that call one another with "
                    f"the values of when the first is made: assign `{free_name}` before `{first}` is made, or "
                    "pass it as an argument",
                )
        self.refuse_read_before_assigned(node, name, [n for n in free if n not in captured], {})
        if self.computed_defaults(node.args)[0]:
            raise self.parsed.unsupported(
                node, f"{_label(node, name)}, called by `{first}` made before it, has a default value computed "
                "from the enclosing function's variables; pass the value as an argument instead")
        template_name = self.namer.fresh(f"{name}_template")
        template = make_template(node, template_name, captured, self.namespace.values, self.parsed.filename,
                                 self.parsed)
        self.namespace.values[template_name] = template
        if not self.is_generated():
            self.refuse_changing_captured(node, name, template, [c for c in captured if c != name])
        helper = self.namespace.bind("joined", joined)
        return gast.Call(func=_name(helper), args=[_name(template.__name__), self.load(first), constant(name)],
                         keywords=[])

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


def free_names(node):
    """The names a nested `def` or `lambda` reads and does not assign, in the order first read."""
    inner_locals = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    for extra in (node.args.vararg, node.args.kwarg):
        if extra is not None:
            inner_locals.add(extra.id)
    body = [node.body] if isinstance(node, gast.Lambda) else node.body
    loaded = []
    for statement in body:
        for child in walk(statement):
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
                inner_locals.add(child.id)
            elif isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and child.id not in loaded:
                loaded.append(child.id)
    return [n for n in loaded if n not in inner_locals]


def _made_function(statement):
    """(name, node) of a statement that makes a named function: `def g` or `g = lambda ...`."""
    if isinstance(statement, gast.FunctionDef):
        return statement.name, statement
    if (isinstance(statement, gast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], gast.Name) and isinstance(statement.value, gast.Lambda)):
        return statement.targets[0].id, statement.value
    return None


def _defines(statement, user_name):
    """Whether `statement` assigns `user_name` in the function it stands in (a `def` of that
    name does; what a nested function or a comprehension assigns is its own)."""
    todo = [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, gast.FunctionDef):
            if node.name == user_name:
                return True
            todo += node.decorator_list
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id == user_name:
            return True
        if not isinstance(node, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            todo += gast.iter_child_nodes(node)
    return False


def _label(node, name):
    """How a refusal names a nested function or lambda."""
    if isinstance(node, gast.Lambda):
        return "the lambda" if name == "function" else f"the lambda {name}"
    return f"the nested function {name}"


def _unset(unset, default):
    return gast.copy_location(gast.Name(id=unset, ctx=gast.Load(), annotation=None, type_comment=None), default)

