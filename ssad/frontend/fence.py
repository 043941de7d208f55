"""Stage 2, fence: reject what ssad does not differentiate, early and precisely.

Assumes: a `Parsed` function (stage 1).
Guarantees: after `check(parsed)` returns, the body uses only the constructs the
later passes handle: assignments to names, tuples of names and subscripts of a
named array (`=`, augmented `+= -= *= /= **= //= %= @=`, annotated
assignments), `if`/`elif`/`else`, `for` over any expression (no `else`), `while`
(no `else`), `break`, `continue`, `return` with a value anywhere as long as every
path returns, `pass`, expression statements that call a function (`print(x)`),
and the expressions: names, constants, arithmetic, unary and boolean operators,
comparisons, conditional expressions, calls with positional and keyword
arguments, attribute reads, subscripts with slices, tuple and list displays.
Every free name resolves to a live object. Anything else raises `UnsupportedSyntaxError`
with file, line, column and the source line, saying what to write instead.
"""

import builtins
import functools
import inspect

import gast
import numpy as np

from ..runtime.callables import callable_instance
from ..errors import SourceError
from .namespace import named_object
from .outputs import check_no_output_argument
from .parse import local_names
from .builders import constant_key, walk

# Statements and expressions a later issue of the project will add are rejected
# with a message that says what to write instead today.
_STATEMENT_MESSAGES = {
    gast.AsyncFunctionDef: "`async def` cannot be differentiated; define a plain `def` function",
    gast.ClassDef: "a class definition inside a differentiated function is not supported; "
    "define the class outside the function",
    gast.Delete: "`del` is supported for names and for one item of a list or dict held in a name (`del xs[i]`, `del d[k]`); assign the value you want instead",
    gast.Try: "`try` statements are not supported; move error handling outside the differentiated function",
    gast.With: "`with` statements are not supported; move the context manager outside the differentiated function",
    gast.AsyncWith: "`async with` cannot be differentiated; use a plain `def` function",
    gast.AsyncFor: "`async for` cannot be differentiated; use a plain `def` function",
    gast.Raise: "a bare `raise` is not supported (nor is `try`); raise the exception by name",
    gast.Assert: "`assert` is not supported yet; check inputs before calling the differentiated function",
    gast.Global: "`global` is not supported; pass the value as an argument",
    gast.Nonlocal: "`nonlocal` is not supported; pass the value as an argument and return the new value",
    gast.Import: "`import` inside a differentiated function is not supported; import at module level",
    gast.ImportFrom: "`from ... import` inside a differentiated function is not supported; import at module level",
}
if hasattr(gast, "Match"):
    _STATEMENT_MESSAGES[gast.Match] = "`match` statements are not supported; use array operations"
if hasattr(gast, "TryStar"):  # `try` ... `except*`
    _STATEMENT_MESSAGES[gast.TryStar] = _STATEMENT_MESSAGES[gast.Try]

_EXPRESSION_MESSAGES = {
    gast.SetComp: "set comprehensions are not supported; use a list comprehension",
    gast.Set: "set displays are not supported; use a tuple or a list",
    gast.NamedExpr: "assignment expressions (`:=`) are not supported; assign in a separate statement",
    gast.Yield: "generators (`yield`) cannot be differentiated; build a list and return it",
    gast.YieldFrom: "generators (`yield from`) cannot be differentiated; build a list and return it",
    gast.Await: "`await` cannot be differentiated; await the values outside and pass them in",
}

# Builtins that run code or read variables by name, where ssad cannot see the
# values flow: their gradient would silently be lost.
_HIDDEN_FLOW = {
    builtins.eval: "`eval` runs code ssad cannot read, so gradients through it would be lost; "
    "write the expression out in the function",
    builtins.exec: "`exec` runs code ssad cannot read, so gradients through it would be lost; "
    "write the statements out in the function",
    builtins.locals: "`locals()` reads variables by name, which ssad cannot follow; use the variables directly",
    builtins.globals: "`globals()` reads variables by name, which ssad cannot follow; use the variables directly",
}

# Methods of a named list that ssad replays in reverse (`items.append(v)`).
LIST_MUTATIONS = {"append", "extend", "insert", "pop", "push"}  # push: the Tape of generated code

_ALLOWED_EXPRESSIONS = (
    gast.Starred,
    gast.Lambda,
    gast.ListComp,
    gast.GeneratorExp,
    gast.DictComp,
    gast.comprehension,
    gast.Dict,
    gast.BoolOp,
    gast.IfExp,
    gast.Name,
    gast.Constant,
    gast.BinOp,
    gast.UnaryOp,
    gast.Compare,
    gast.Call,
    gast.Attribute,
    gast.Subscript,
    gast.Slice,
    gast.Tuple,
    gast.List,
)


def check(parsed):
    """Raise UnsupportedSyntaxError at the first construct ssad cannot differentiate."""
    _Fence(parsed).check()


class _Fence:
    def __init__(self, parsed):
        self.parsed = parsed
        self.node = parsed.node
        self.bound = local_names(parsed.node)

    def check(self):
        self._check_signature()
        body = self.node.body
        if body and _is_docstring(body[0]):
            body = body[1:]
        # An unsupported statement first: a `return` inside `try` is not a missing `return`.
        self._check_block(body)
        if not body or not _always_returns(body):
            anchor = body[-1] if body else self.node
            raise self.parsed.unsupported(
                anchor,
                f"{self.node.name} can reach its end without a `return`; end it with `return value` "
                "(every path must return the value to differentiate)",
            )

    def _check_block(self, statements):
        for statement in statements:
            self._check_statement(statement)

    def _check_signature(self):
        """`*args` and `**kwargs` of the function itself hold a tuple and a dict: nothing to refuse."""

    def _check_statement(self, statement):
        kind = type(statement)
        if kind in _STATEMENT_MESSAGES:
            raise self.parsed.unsupported(statement, _STATEMENT_MESSAGES[kind])
        if isinstance(statement, gast.FunctionDef):
            self._check_nested(statement)
        elif isinstance(statement, gast.If):
            self._check_expression(statement.test)
            self._check_block(statement.body)
            self._check_block(statement.orelse)
        elif isinstance(statement, (gast.For, gast.While)):
            self._check_loop(statement)
        elif isinstance(statement, (gast.Break, gast.Continue)):
            return
        elif isinstance(statement, gast.Return):
            if statement.value is None:
                raise self.parsed.unsupported(statement, "`return` needs a value to differentiate; write `return value`")
            self._check_expression(statement.value)
        elif isinstance(statement, gast.Assign):
            for target in statement.targets:
                self._check_target(target)
            self._check_expression(statement.value)
        elif isinstance(statement, gast.AnnAssign):
            self._check_target(statement.target)
            if statement.value is None:
                raise self.parsed.unsupported(statement, "an annotation without a value is not supported; give it a value or drop it")
            self._check_expression(statement.value)
        elif isinstance(statement, gast.AugAssign):
            self._check_target(statement.target)
            self._check_expression(statement.value)
        elif isinstance(statement, gast.Expr):
            if _is_docstring(statement):
                return
            if not isinstance(statement.value, gast.Call):
                self._check_expression(statement.value)  # `yield x`, `(y := e)`: say what they are
                raise self.parsed.unsupported(statement, _effects_message(statement.value))
            func = statement.value.func
            self._check_not_in_place(statement, self._static_callee(func))
            if isinstance(func, gast.Attribute) and not self._is_static(func):
                if func.attr not in LIST_MUTATIONS or not isinstance(func.value, gast.Name):
                    raise self.parsed.unsupported(
                        statement,
                        f"calling the method `{func.attr}` for its side effect is not supported; the "
                        f"supported in-place methods are {', '.join(sorted(LIST_MUTATIONS))} on a named list",
                    )
            self._check_expression(statement.value)
        elif isinstance(statement, gast.Pass):
            return
        else:
            raise self.parsed.unsupported(
                statement,
                f"`{kind.__name__}` statements are not supported; see docs/supported-python.md for what is",
            )

    def _check_nested(self, function):
        """A nested `def`: no decorators, and a body ssad can differentiate."""
        if function.decorator_list:
            raise self.parsed.unsupported(function.decorator_list[0], "decorators on a nested `def` are not supported; define the decorated function at module level")
        body = function.body
        if body and _is_docstring(body[0]):
            body = body[1:]
        self._check_block(body)
        if not body or not _always_returns(body):
            raise self.parsed.unsupported(
                body[-1] if body else function,
                f"the nested function {function.name} can reach its end without a `return`; end it with "
                "`return value`",
            )

    def _check_loop(self, loop):
        if isinstance(loop, gast.For):
            self._check_loop_target(loop.target)
            iterable = loop.iter
            if (
                isinstance(iterable, gast.Call)
                and isinstance(iterable.func, gast.Attribute)
                and not self._is_static(iterable.func)
                and iterable.func.attr not in ("items", "values", "keys")
            ):
                raise self.parsed.unsupported(
                    iterable,
                    f"looping over `.{iterable.func.attr}()` is not supported; loop over a list, a tuple, "
                    "an array, range(...), enumerate(...), zip(...) or reversed(...)",
                )
            self._check_expression(iterable)
        else:
            self._check_expression(loop.test)
        self._check_block(loop.body)

    def _check_loop_target(self, target):
        if isinstance(target, gast.Name):
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                self._check_loop_target(element)
            return
        raise self.parsed.unsupported(target, "a loop variable must be a name or a tuple of names; assign other targets in the loop body")

    def _check_target(self, target):
        if isinstance(target, gast.Name):
            return
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            self._check_expression(target.slice)
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                if isinstance(element, gast.Starred):
                    raise self.parsed.unsupported(
                        element,
                        "starred assignment targets are not supported yet; index instead (`first, rest = xs[0], xs[1:]`)",
                    )
                self._check_target(element)
            return
        if isinstance(target, gast.Subscript):
            raise self.parsed.unsupported(
                target,
                "assignment into an expression's result is not supported; assign into a named array "
                "(`y[i] = v`, `y[0, 1] = v`)",
            )
        raise self.parsed.unsupported(
            target,
            "assignment to an attribute is not supported yet; build a new object instead",
        )

    def _check_expression(self, expression):
        # `*t` is allowed as the last argument of a call (passing *args through), nowhere else.
        passed_through = {
            id(node.args[-1])
            for node in walk(expression)
            if isinstance(node, gast.Call) and node.args and isinstance(node.args[-1], gast.Starred)
        }
        for node in walk(expression):
            kind = type(node)
            if kind in _EXPRESSION_MESSAGES:
                raise self.parsed.unsupported(node, _EXPRESSION_MESSAGES[kind])
            if isinstance(node, gast.expr) and not isinstance(node, _ALLOWED_EXPRESSIONS):
                raise self.parsed.unsupported(
                    node, f"`{kind.__name__}` expressions are not supported; see docs/supported-python.md for what is"
                )
            if isinstance(node, gast.Dict):
                for key in node.keys:
                    if key is not None and constant_key(key) is None:  # None: `**d`
                        raise self.parsed.unsupported(
                            key, "a dict display needs constant keys (`{'W': W}`, `{(0, 1): v}`); build other "
                                 "dicts with d[k] = v",
                        )
            if isinstance(node, gast.Starred) and id(node) not in passed_through:
                raise self.parsed.unsupported(
                    node, "`*` is supported only as the last argument of a call (`g(a, *args)`); pass values one by one"
                )
            if isinstance(node, gast.Call):
                self._check_call(node, passed_through)
                # `f(**options)`: spread by the lowering where the dict's keys are known (see anf)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                self._check_defined(node)

    def _check_call(self, call, passed_through):
        func = call.func
        value = self.parsed.namespace.get(func.id) if isinstance(func, gast.Name) else None
        for hidden, message in _HIDDEN_FLOW.items():
            if value is hidden:
                raise self.parsed.unsupported(call, message)
        callee = self._static_callee(func)
        check_no_output_argument(self.parsed, self.node, self.bound, call, callee)
        if not any(id(a) in passed_through for a in call.args):
            return
        # `g(a, *rest)` passes a tuple on to the `*args` of a function ssad knows when it
        # transforms the code; a function value (a parameter, a nested function, a
        # partial) is known only when the call runs.
        if not isinstance(func, gast.Name):
            return  # a method: `x.reshape(*shape)`
        if func.id in self.parsed.namespace and not (
            isinstance(value, functools.partial) or inspect.ismethod(value) or callable_instance(value) is not None
        ):
            return
        raise self.parsed.unsupported(
            call.args[-1],
            "`*` in a call of a function value (a parameter, a nested function or lambda, a "
            "partial, a callable object) is not supported; pass the values one by one",
        )

    def _check_defined(self, name):
        if name.id in self.parsed.namespace or name.id in self.bound:
            return
        raise SourceError(
            f"name `{name.id}` is not defined where {self.node.name} can see it (locals, closure, "
            "globals or builtins); define it before calling ssad",
            *self.parsed.where(name),
        )

    def _static_callee(self, func):
        """The live object a call's function expression names when it starts from a free
        name (`np.put_along_axis`, `np.add.at`), else None."""
        if not self._is_static(func):
            return None
        return named_object(func, self.parsed.namespace)

    def _check_not_in_place(self, statement, callee):
        """NumPy functions that write into an argument change an array ssad cannot follow:
        the gradient would silently miss the change."""
        if callee is None:
            return
        label = None
        if any(callee is f for f in _IN_PLACE_NUMPY):
            label = f"np.{callee.__name__}"
        elif getattr(callee, "__name__", None) == "at" and isinstance(getattr(callee, "__self__", None), np.ufunc):
            label = f"np.{callee.__self__.__name__}.at"
        if label is not None:
            raise self.parsed.unsupported(
                statement,
                f"{label} writes into its argument in place, which ssad cannot differentiate; "
                "compute a new array instead (for example with an indexed assignment `y[i] = v` "
                "on a copy, or np.where)",
            )

    def _is_static(self, func):
        """True when an attribute chain starts from a free name (`np.random.seed`)."""
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        return isinstance(root, gast.Name) and root.id in self.parsed.namespace


_IN_PLACE_NUMPY = (np.put_along_axis, np.put, np.place, np.putmask, np.copyto, np.fill_diagonal)


def _always_returns(statements):
    """True when every path through `statements` ends in a `return`."""
    for statement in statements:
        if isinstance(statement, gast.Return):
            return True
        if isinstance(statement, gast.If) and statement.orelse:
            if _always_returns(statement.body) and _always_returns(statement.orelse):
                return True
        if isinstance(statement, (gast.For, gast.While)) and _always_returns(statement.orelse):
            if not _breaks_out(statement.body):  # the `else` runs unless a `break` leaves the loop
                return True
    return False


def _breaks_out(statements):
    """True when a `break` in `statements` leaves the loop they are the body of."""
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Break):
            return True
        if not isinstance(node, (gast.For, gast.While, gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            todo.extend(gast.iter_child_nodes(node))
    return False


def _effects_message(value):
    """What to say of an expression statement that is not a call: it has no effect, or it
    is evaluated for the calls in it (`[out.append(v) for v in x]`)."""
    if not any(isinstance(node, gast.Call) for node in walk(value)):
        return "an expression statement that is not a call has no effect; remove it"
    if isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
        instead = "write a `for` loop whose body makes the calls"
    elif isinstance(value, (gast.IfExp, gast.BoolOp)):
        instead = "write an `if` statement whose branches make the calls"
    else:
        instead = "make each call a statement of its own"
    return (f"`{gast.unparse(value).strip()}` is evaluated for what its calls do, which ssad differentiates only "
            f"in a call that is a statement of its own; {instead}")


def _is_docstring(statement):
    return (
        isinstance(statement, gast.Expr)
        and isinstance(statement.value, gast.Constant)
        and isinstance(statement.value.value, str)
    )

