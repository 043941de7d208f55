"""Where a statement calls a function of the user's, and what it reads after the call
(see `AliasingLowering.check_calls_keep_arguments`).

A function that changes its parameter in place (`v /= s`, `t = v[0]; t *= s`) changes
the caller's argument when that is an array. The caller sees the change wherever it
reads the argument after the call: later in the same statement, in the body an `if`,
`while` or `for` header leads to, in the statements after, and in every repetition of a
call inside a comprehension, a lambda or a `while` test.
"""

import inspect

import gast

from ..runtime.refusals import items_unchanged_by_call, unchanged_by_call
from .builders import clone, walk
from .outputs import is_library
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


class CallArgumentChecks:
    """Mixin of `anf._Lowering` (through `aliasing.AliasingLowering`): the checks of
    arguments a function of the user's changes in place. `guarded_arguments` maps the id
    of an argument to the check of the value it passes; `read_in_rest` the id of a statement
    to the names it reads outside its comprehensions."""

    def check_calls_keep_arguments(self, statement):
        """`helper(z)`, `helper(z[0])` (any value that may be `z`, a part or a view of it),
        anywhere in a statement, where `helper` changes its parameter by an augmented
        assignment (`v /= s`, or `t = v[0]; t *= s`) and `z` (or a name sharing it) is read
        afterwards (see `passing`). For a number Python rebinds `v`;
        for an array it writes into the caller's, which ssad's lowering (`v = v / s`) would not
        show. Which one the argument holds is known when the code runs: `unchanged_by_call`
        on the value passed, where it is passed, raises for an array (see `guard_argument`).
        (A call whose result is unused, `helper(z)`, is refused by the activity analysis
        where `z` carries gradients.)"""
        self.check_calls_keep_walks(statement)
        parts = evaluated(statement)
        if self.is_generated() or parts is None:
            return
        expressions, region = parts
        targets = set() if not isinstance(statement, (gast.Assign, gast.AnnAssign)) else {
            n.id for n in walk(statement) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        for call, inside in calls(expressions):
            if not self.is_static(call.func):
                continue
            callee = self.resolve_static(call.func)
            found = effects(callee) if inspect.isfunction(callee) and not is_library(callee) else None
            if found is None or not (found.changed or found.changed_items):
                continue
            passed = list(zip(callee.__code__.co_varnames[: callee.__code__.co_argcount], call.args, strict=False))
            passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            for parameter, arg in passed:
                line = found.changed.get(parameter, found.changed_items.get(parameter))
                # the names whose value, a part of it or a view of it the argument may be:
                # `z`, `z[0]`, `z.w[k]`, `z[0] if c else w`, `list(z)`, `np.ravel(z)`, `first(z)`
                bases = expression_sharers(arg, lambda n: {n}, self.is_static, self.resolve_static) if line else ()
                if not bases:
                    continue
                # the value passed itself (`v /= s`), or only what it holds (`t = v[0]; t *= s`)
                test = unchanged_by_call if parameter in found.changed else items_unchanged_by_call
                if inside is not None:  # the loop the comprehension is lowered to checks it, and this
                    self.read_in_rest.setdefault(id(statement), set()).update(read_outside(region, inside))
                    continue
                # in the same statement after the call, or anywhere in a `while` test, which runs again
                again = isinstance(statement, gast.While)
                def in_statement(user, call=call, again=again):
                    return again or reads(region, user) > reads([call], user)
                self._guard_if_read_later(callee, parameter, sorted(bases), line, targets, call, test, in_statement, arg)

    def _guard_if_read_later(self, callee, parameter, bases, line, targets, call, test, in_statement, arg):
        users = {ssa: user for user, ssa in self.current.items()}
        later = []
        for user_name in bases:
            name = self.current.get(user_name)
            if name is None or name in self.numbers:
                continue
            readers = [user_name] + [users[n] for n in self.sharing.others(name) if n in users]
            later += [u for u in readers
                      if (u != user_name or u not in targets) and (self.read_later(u) or in_statement(u))]
        if not later:
            return
        label, arg_text = callee.__name__, self.spelled_as_written(arg)
        copied = f"`{arg_text}.copy()`" if isinstance(arg, (gast.Name, gast.Subscript, gast.Attribute)) else "a copy"
        message = (
            f"{label} changes its argument `{arg_text}` (an array, or an array it holds) in place (the "
            f"augmented assignment at line {line}, to its parameter `{parameter}` or a part of it), and "
            f"`{later[0]}` is read afterwards, where ssad "
            f"would not see the change; in {label} assign a new array (`{parameter} = {parameter} * s` for "
            f"`{parameter} *= s`), or pass a copy ({copied})"
        )
        self.guarded_arguments[id(arg)] = [test, message, call, False]

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
