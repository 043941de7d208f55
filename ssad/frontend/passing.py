"""Where a statement calls a function of the user's, and what it reads after the call
(see `AliasingLowering.check_calls_keep_arguments`).

A function that changes its parameter in place (`v /= s`, `t = v[0]; t *= s`) changes
the caller's argument when that is an array. The caller sees the change wherever it
reads the argument after the call: later in the same statement, in the body an `if`,
`while` or `for` header leads to, in the statements after, and in every repetition of a
call inside a comprehension, a lambda or a `while` test.
"""

import inspect
import weakref

import gast

from ..runtime.passed import keeps_arguments, keeps_globals, output_is_none
from ..runtime.refusals import elements_unchanged_by_call, items_unchanged_by_call, unchanged_by_call
from .builders import clone, walk
from .builders import name as _name
from .expressions import reads_name
from .outputs import is_library, passed_on_outputs
from .view_names import CHANGING_METHODS, VALUE_METHODS
from .views import effects, expression_sharers

_REPEATED = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Lambda)


def evaluated(statement):
    """(the expressions `statement` evaluates itself, the code that runs after them within
    it), or None for a statement that calls nothing of its own."""
    if isinstance(statement, (gast.Assign, gast.AnnAssign)):
        return ([statement.value], [statement.value]) if statement.value is not None else None
    if isinstance(statement, gast.AugAssign):
        return [statement.value], [statement.target, statement.value]  # `t[k] += v`: t[k] is changed after
    if isinstance(statement, (gast.Return, gast.Expr)):
        return ([statement.value], [statement.value]) if statement.value is not None else None
    if isinstance(statement, (gast.If, gast.While)):
        return [statement.test], [statement.test, *statement.body, *statement.orelse]
    if isinstance(statement, gast.For):
        return [statement.iter], [statement.iter, *statement.body, *statement.orelse]
    return None


def calls(expressions):
    """(call, the outermost comprehension or lambda holding it, which may run it more than
    once, or None) for each call in `expressions`."""
    inside = {}
    for expression in expressions:
        for repeats in walk(expression):
            if isinstance(repeats, _REPEATED) and id(repeats) not in inside:
                for n in walk(repeats):
                    inside.setdefault(id(n), repeats)
    return [(n, inside.get(id(n))) for e in expressions for n in walk(e) if isinstance(n, gast.Call)]


def reads(nodes, user_name):
    """How many times `nodes` read the name `user_name`."""
    return sum(1 for node in nodes for n in walk(node)
               if isinstance(n, gast.Name) and n.id == user_name and not isinstance(n.ctx, gast.Store))


def read_outside(nodes, inside):
    """The names `nodes` read outside the node `inside`."""
    skipped = {id(n) for n in walk(inside)}
    return {n.id for node in nodes for n in walk(node)
            if isinstance(n, gast.Name) and id(n) not in skipped and not isinstance(n.ctx, gast.Store)}


def changed_parameters(function):
    """{parameter: (line, what of it changes)} of the parameters the user's `function`
    changes by an augmented assignment: "itself", "items" (what it holds, at any depth) or
    "elements" (an element of it: `t = v[0]; t /= s`, nothing of the caller's for a 1-D
    array of numbers) (see `runtime.passed`, where the compile driver installs it)."""
    found = effects(function) if inspect.isfunction(function) and not is_library(function) else None
    if found is None or not (found.changed or found.changed_items or found.changed_elements):
        return {}
    arguments = inspect.getfullargspec(function)
    named = {"*": arguments.varargs, "**": arguments.varkw}
    changes = {}
    for kind, places in (("elements", found.changed_elements), ("items", found.changed_items), ("itself", found.changed)):
        changes.update({named.get(p, p): (line, kind) for p, line in places.items()})  # the widest last
    return changes


def written_parameters(function):
    """{parameter: line} of the parameters the user's `function` writes into in place, by their
    own name (`v[i] = e`, `v.w = e`, `v[i] += e`, `v.append(e)`, `v.fill(0)`, `del v[i]`), where
    it never binds the name anew (`v = v.copy()` first makes the writes its own)."""
    if not inspect.isfunction(function) or is_library(function):
        return {}
    known = _WRITTEN.get(function)
    if known is None or known[0] is not function.__code__:  # asked before each call through a function value
        known = _WRITTEN[function] = (function.__code__, _written_by_name(function))
    return known[1]


_WRITTEN = weakref.WeakKeyDictionary()  # function -> (its code, what `written_parameters` found)


def _written_by_name(function):
    from .parse import parsed_to_read

    try:
        parsed = parsed_to_read(function)
    except Exception:  # noqa: BLE001 - no source: a function made at run time
        return {}
    node = parsed.node
    parameters = set(inspect.getfullargspec(function).args) | set(inspect.getfullargspec(function).kwonlyargs)
    parameters -= {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    found = {}
    for current in walk(node):
        root = current.func.value if isinstance(current, gast.Call) and isinstance(
            current.func, gast.Attribute) and current.func.attr in CHANGING_METHODS else (
            current.value if isinstance(current, (gast.Subscript, gast.Attribute)) and isinstance(
                current.ctx, (gast.Store, gast.Del)) else None)
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        if isinstance(root, gast.Name) and root.id in parameters:
            found.setdefault(root.id, parsed.line_offset + current.lineno)
    return found


def changed_or_written(function):
    """`changed_parameters`, with each parameter written into otherwise (`v[0] = e`) as changed
    itself: what a call through a function value, known only where it runs, may change of
    what it is given (`runtime.passed`), an object's method its object too."""
    return {**{p: (line, "itself") for p, line in written_parameters(function).items()}, **changed_parameters(function)}


# the check of a value passed to a parameter changed in place, by what of it changes
UNCHANGED = {"itself": unchanged_by_call, "items": items_unchanged_by_call, "elements": elements_unchanged_by_call}


class CallArgumentChecks:
    """Mixin of `anf._Lowering` (through `aliasing.AliasingLowering`): the checks of
    arguments a function of the user's changes in place. `guarded_arguments` maps the id
    of an argument to the check of the value it passes; `read_in_rest` the id of a statement
    to the names it reads outside its comprehensions."""

    def check_calls_keep_arguments(self, statement):
        """`helper(z)`, `helper(z[0])` (any value that may be `z`, a part or a view of it),
        anywhere in a statement, where `helper` changes its parameter by an augmented
        assignment (`v /= s`, or `t = v[0]; t *= s`) and `z` (or a name sharing it) is read
        elsewhere (see `passing`). For a number Python rebinds `v`; for an array it writes
        into the caller's. Where ssad differentiates the call, its lowering (`v = v / s`)
        does not, and a read afterwards would not see the change; where nothing passed
        carries a gradient, the function itself runs and does, and a value read before,
        kept for the gradient, would change. Which one the argument holds is known when the
        code runs: `unchanged_by_call` on the value passed, where it is passed, raises for an
        array (see `guard_argument`). A call whose value is unused (`helper(z)`) runs the
        function itself (the activity analysis refuses it where `z` carries gradients): only
        a read before counts there."""
        self.check_calls_keep_walks(statement)
        parts = evaluated(statement)
        if self.is_generated() or parts is None:
            return
        expressions, region = parts
        targets = set() if not isinstance(statement, (gast.Assign, gast.AnnAssign)) else {
            n.id for n in walk(statement) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        for call, inside in calls(expressions):
            callee = self.resolve_static(call.func) if self.is_static(call.func) else None
            self._guard_outputs(call, callee)
            if not self.is_static(call.func):
                if inside is None:
                    self._guard_dynamic_call(call, region, statement, targets)
                continue
            found = changed_parameters(callee)
            written = {p: line for p, line in written_parameters(callee).items() if p not in found}
            if not found and not written:
                continue
            code = callee.__code__
            positional = code.co_varnames[: code.co_argcount]
            passed = list(zip(positional, call.args, strict=False))
            rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & inspect.CO_VARARGS else None
            passed += [(rest, a) for a in call.args[len(positional):]] if rest is not None else []
            passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            for parameter, arg in passed:
                if parameter in written and parameter != rest:
                    self._guard_written_argument(callee, parameter, written[parameter], call, arg, statement)
                line, kind = found.get(parameter, (None, None))
                kind = "itself" if parameter == rest else kind  # an item of `*rest` is the argument itself
                # the names whose value, a part of it or a view of it the argument may be:
                # `z`, `z[0]`, `z.w[k]`, `z[0] if c else w`, `list(z)`, `np.ravel(z)`, `first(z)`
                bases = expression_sharers(arg, lambda n: {n}, self.is_static, self.resolve_static) if line else ()
                if not bases:
                    continue
                # the value passed itself (`v /= s`), what it holds (`t = v[1:]; t *= s`), an element
                test = UNCHANGED[kind]
                if inside is not None:  # the loop the comprehension is lowered to checks it, and this
                    self.read_in_rest.setdefault(id(statement), set()).update(read_outside(region, inside))
                    continue
                later = [u for user_name in sorted(bases)
                         for u in self._read_elsewhere(user_name, call, statement, region, targets, kind != "itself")]
                if later:
                    self._guard_argument(callee, parameter, line, call, test, arg, later[0])

    def _guard_written_argument(self, callee, parameter, line, call, arg, statement):
        """`helper(z)` where `helper` writes into its parameter in place (`v[0] = e`, `v.fill(e)`)
        and runs as Python (passed nothing that carries a gradient: else its own lowering
        refuses the write), after the function read `z`: the backward sweep reads `z` again
        for the derivative of that read, after the change. `unchanged_by_call` raises for an
        array (or a list, or a value holding one) passed there."""
        if self.is_generated():
            return
        users = {ssa: user for user, ssa in self.current.items()}
        for user_name in sorted(expression_sharers(arg, lambda n: {n}, self.is_static, self.resolve_static)):
            name = self.current.get(user_name)
            if name is None or name in self.numbers:
                continue
            readers = [user_name] + [users[n] for n in sorted(self.sharing.others(name)) if n in users]
            before = [u for u in readers if self.read_before(u) or any(  # or in a pass of a loop before
                reads([loop], u) > reads([call], u) for loop in self.loops) or reads([statement], u) > reads([call], u)]
            if before:
                label, arg_text = callee.__name__, self.spelled_as_written(arg)
                message = (
                    f"{label} writes into its argument `{arg_text}` in place (line {line}, its parameter "
                    f"`{parameter}`), and `{before[0]}` is read before the call: the derivative of that read reads "
                    f"it again after the call, changed; pass a copy (`{arg_text}.copy()`), or in {label} write "
                    f"into a copy (`{parameter} = {parameter}.copy()`)")
                self.guarded_arguments.setdefault(id(arg), [unchanged_by_call, message, call, False])
                return

    def _read_elsewhere(self, user_name, call, statement, region, targets, held=True):
        """The names sharing the value of `user_name` (it first), or with `held` what it holds
        (`xs = [v, w]`: a change of an item of `xs` is one of `v`), that `statement`'s function
        reads elsewhere than in `call`: before the statement; after it (not a target of the
        statement itself: `z = helper(z)`); elsewhere in the statement (`region`: the code
        that runs after the call's arguments within it); anywhere, for a `while` test, which
        runs again. A call alone, `helper(z)`, counts only a read before."""
        name = self.current.get(user_name)
        if name is None or name in self.numbers:
            return []
        alone = isinstance(statement, gast.Expr) and statement.value is call
        again = isinstance(statement, gast.While)
        users = {ssa: user for user, ssa in self.current.items()}
        sharing = set(self.sharing.others(name)) | (self._held(name) if held else set())
        readers = [user_name] + [users[n] for n in sorted(sharing) if n in users and users[n] != user_name]
        return [u for u in readers if self.read_before(u) or (not alone and (u != user_name or u not in targets) and (
            again or self.read_later(u) or reads(region, u) > reads([call], u)))]

    def _held(self, name):
        """The names the container `name` may hold, at any depth, and the names sharing those."""
        found, todo = set(), [name]
        while todo:
            for item in self.sharing.items_of(todo.pop()) or ():
                for n in [item, *self.sharing.others(item)]:
                    if n not in found and n != name:
                        found.add(n)
                        todo.append(n)
        return found

    def _guard_argument(self, callee, parameter, line, call, test, arg, reader):
        """Ask for `test` on the value `arg` passes to `callee`'s `parameter` (see `guard_argument`)."""
        label, arg_text = callee.__name__, self.spelled_as_written(arg)
        copied = f"`{arg_text}.copy()`" if isinstance(arg, (gast.Name, gast.Subscript, gast.Attribute)) else "a copy"
        message = (
            f"{label} changes its argument `{arg_text}` (an array, or an array it holds) in place (the "
            f"augmented assignment at line {line}, to its parameter `{parameter}` or a part of it), and "
            f"`{reader}` is read elsewhere, where ssad would see the change where Python does not, or "
            f"the other way round; in {label} assign a new array (`{parameter} = {parameter} * s` for "
            f"`{parameter} *= s`), or pass a copy ({copied})"
        )
        self.guarded_arguments[id(arg)] = [test, message, call, False]

    def _guard_dynamic_call(self, call, region, statement, targets):
        """A call through a function value (`g(z)`, `obj.scale(z)`), whose function is known
        only when the code runs, passing a value that may share a name read elsewhere:
        `keeps_arguments` checks it there (see `runtime.passed`)."""
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr in VALUE_METHODS:
            return  # a method of a list, dict, array or string
        if self.global_reads():  # the function called may change one of them: `keeps_globals` there
            self.guarded_globals[id(call)] = [self.spelled_as_written(call), False]
        if isinstance(func, gast.Name) and self._keeps_what_it_is_given(func.id):
            return
        # `m.bump(v)` may change m (a method named like a list's change, `m.append(v)`, is checked
        # where it is lowered; a namedtuple's `p._replace(...)` makes a new one)
        receiver = [func.value] if isinstance(func, gast.Attribute) and func.attr not in CHANGING_METHODS and not \
            func.attr.startswith("_") else []
        for arg in [*receiver, *call.args, *(k.value for k in call.keywords)]:
            for user_name in expression_sharers(arg, lambda n: {n}, self.is_static, self.resolve_static):
                name = self.current.get(user_name)
                # a parameter's value is the caller's, who may read it again (see `changed_parameters`)
                if (name in self.callers and name not in self.numbers) or self._read_elsewhere(
                        user_name, call, statement, region, targets):
                    self.guarded_calls[id(call)] = [self.spelled_as_written(call), False]
                    return

    def _keeps_what_it_is_given(self, user_name):
        """Whether `user_name` is bound once in the function, to a nested `def` or a `lambda`
        that changes nothing in place by an augmented assignment, itself or through a function
        it calls by name (a call through a function value there is checked there)."""
        node = self.parsed.node
        bindings = [n for n in walk(node) if n is not node and (
            isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == user_name
            or isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef)) and n.name == user_name)]
        if len(bindings) != 1:
            return False
        made = bindings[0]
        if isinstance(made, gast.Name):
            made = next((a.value for a in walk(node) if isinstance(a, gast.Assign) and a.targets == [made]), None)
        choices = [made]
        while any(isinstance(c, (gast.IfExp, gast.BoolOp)) for c in choices):  # `np.tanh if smooth else np.abs`
            choices = [part for c in choices for part in (
                [c.body, c.orelse] if isinstance(c, gast.IfExp) else c.values if isinstance(c, gast.BoolOp) else [c])]
        if choices and all(c is not None and self.is_static(c) for c in choices):
            return not any(changed_parameters(self.resolve_static(c)) for c in choices)
        if not isinstance(made, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            return False
        return not any(isinstance(n, gast.AugAssign) or isinstance(n, gast.Call) and self.is_static(n.func)
                       and changed_parameters(self.resolve_static(n.func)) for n in walk(made))

    def guard_call(self, call, func, args, keywords):
        """Where the call `call` is lowered to `func(*args, **keywords)`: the check
        `_guard_dynamic_call` asked for."""
        guard, changes = self.guarded_calls.get(id(call)), self.guarded_globals.get(id(call))
        if guard is None and changes is None:
            return
        filename, lineno, col, _ = self.parsed.where(call)
        # a method's receiver and name: the bound method is made where the call runs
        called = [func.value, gast.Constant(value=func.attr, kind=None)] if isinstance(func, gast.Attribute) else [
            func, gast.Constant(value=None, kind=None)]
        if changes is not None:  # what the function reads outside itself: their keys (`object_effects`)
            read = _name(self.namespace.bind("global_reads", frozenset(self.global_reads())))
            constants = [gast.Constant(value=v, kind=None) for v in (changes[0], filename, lineno, col)]
            self.emit(gast.Expr(value=gast.Call(func=_name(self.namespace.bind(keeps_globals.__name__, keeps_globals)),
                                                args=constants + [clone(c) for c in called] + [read], keywords=[])))
            changes[-1] = True
        if guard is not None:
            constants = [gast.Constant(value=v, kind=None) for v in (guard[0], filename, lineno, col)]
            check = gast.Call(func=_name(self.namespace.bind(keeps_arguments.__name__, keeps_arguments)),
                              args=constants + called + list(args), keywords=list(keywords))
            self.emit(gast.Expr(value=check))
            guard[-1] = True

    def _guard_outputs(self, call, callee):
        """`np.sin(x, out=out)` with `out` a parameter: None passes (see `outputs`); an array
        given there would be written into, which ssad cannot differentiate (`callee`: the
        function `call` names, or None)."""
        for user_name in passed_on_outputs(call, callee, self.parsed.node):
            name = self.current.get(user_name)
            if name is not None:
                message = (f"`{gast.unparse(call.func)}` writes its result into `{user_name}` in place (its `out` "
                           f"argument), which ssad cannot differentiate, where `{user_name}` is an array; assign the "
                           f"result instead (`{user_name} = {gast.unparse(call.func)}(...)` without `out`)")
                self.emit_guard(output_is_none, [_name(name)], message, call)

    def read_before(self, user_name):
        """Whether `user_name` is read before the current statement: in the statements before
        it in each enclosing block, or in the header of an enclosing `if`, `while` or `for`."""
        for depth, (statements, position) in enumerate(self.context):
            if any(reads_name(statement, user_name) for statement in statements[:position]):
                return True
            header = evaluated(statements[position]) if depth < len(self.context) - 1 else None
            if header is not None and any(reads_name(e, user_name) for e in header[0]):
                return True
        return False

    def guard_argument(self, argument, atom):
        """Where `argument` of a call is lowered to `atom`: the check `check_calls_keep_arguments`
        asked for, on the value passed."""
        guard = self.guarded_arguments.get(id(argument))
        if guard is not None:
            test, message, call, _ = guard
            self.emit_guard(test, [atom], message, call)
            guard[-1] = True
        return atom

    def check_arguments_guarded(self):
        """Every check asked for was emitted (an argument lowered from a copy of the user's
        node would not be): otherwise refuse rather than leave a change unchecked."""
        for _, message, call, emitted in self.guarded_arguments.values():
            if not emitted:
                raise self.parsed.unsupported(call, message)
        for text, emitted in [*self.guarded_calls.values(), *self.guarded_globals.values()]:
            if not emitted:
                raise self.parsed.unsupported(
                    self.parsed.node, f"ssad could not check the call `{text}` of a function value, which may change "
                    "what it is passed in place; call the function by its name")

    def spelled_as_written(self, expr):
        """`expr` with a comprehension's variables as the user wrote them (see `spelled`)."""
        return gast.unparse(expr) if not any(isinstance(n, gast.Name) and n.id in self.spelled for n in walk(expr)) else (
            gast.unparse(_Spelled(self.spelled).visit(clone(expr))))


class _Spelled(gast.NodeTransformer):
    def __init__(self, spelled):
        self.spelled = spelled

    def visit_Name(self, node):
        node.id = self.spelled.get(node.id, node.id)
        return node
