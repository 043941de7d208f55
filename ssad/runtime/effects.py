"""Whether running a function again would repeat something the user can see.

A checkpointed loop, or a function under `ssad.checkpoint`, runs again in the backward
sweep. That is sound only for code whose effects stay inside the values it computes: a
`print` would print twice, and a random draw would draw other numbers, so the
derivative would belong to another computation. `effect_of(f)` reads the source of
one of the user's functions, and of the functions it calls, and names the first such
effect: a call to an impure callable (`print`, `input`, `open`, everything in
`numpy.random` and `random`, see `registry`), a method call that draws random numbers
on a generator (`rng.normal(...)`), a list, dict or set method that changes a value
from outside the function (`log.append(x)` on a global or captured `log`), or a
`global` or `nonlocal` statement.

Assumes: functions whose source `inspect` can read; anything else is judged by the
registry alone.
Guarantees: `effect_of` returns None or a message naming the construct, its file and
line; the result is cached per code object. `check_replayable(f)`, which generated
code calls before a call through a function value it runs again, raises SsadError
with that message.
"""

import ast
import builtins
import functools
import inspect
import random
import textwrap

import numpy as np

from ..errors import SsadError
from ..registry import REGISTRY
from .callables import transformable
from .item_guards import held_values

# Methods of NumPy's and Python's generators that draw numbers, for calls on a local
# value whose type the source does not show (`rng.normal(size=3)`).
DRAWING_METHODS = frozenset(
    name
    for kind in (np.random.Generator, np.random.RandomState, __import__("random").Random)
    for name in dir(kind)
    if not name.startswith("_") and name not in ("bit_generator", "get_state", "getstate", "seed", "spawn")
)

_cache = {}  # (code object, values_only) -> message or None

# Methods that change a list, dict or set in place: on a value from outside the function
# (a global, a captured name), an effect that outlives the call.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
                       "discard", "popitem", "sort", "reverse"})


def effect_of(function, seen=None, values_only=False):
    """A message naming the first effect running `function` again would repeat, or None.
    With `values_only`, the first that may make another run compute other values (a random
    draw, input read): a `print`, or a log appended to, shows twice and changes no value."""
    function = _target(function)
    if not REGISTRY.is_pure(function) and not (values_only and function is print):
        return f"{getattr(function, '__qualname__', function)!s} is not pure (it prints, reads input or draws random numbers)"
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    key = (code, values_only)
    if key in _cache:
        return _cache[key]
    seen = set() if seen is None else seen
    if key in seen:
        return None  # recursion: the rest of the function is being read already
    seen.add(key)
    first = code.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(function)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        tree = None
    if tree is not None and code.co_name == "<lambda>":  # the lambdas of the lines that hold it
        lambdas = [ast.Expr(value=node.body, lineno=node.lineno, col_offset=0)
                   for node in ast.walk(tree) if isinstance(node, ast.Lambda)]
        tree = ast.Module(body=lambdas, type_ignores=[]) if lambdas else None
    if tree is None:  # no source to read: judge the names its code calls, as functions and methods
        unknown = ast.Name(id=" unknown", ctx=ast.Load())
        calls = [ast.Expr(value=ast.Call(func=func, args=[], keywords=[]))
                 for n in code.co_names
                 for func in (ast.Name(id=n, ctx=ast.Load()), ast.Attribute(value=unknown, attr=n, ctx=ast.Load()))]
        tree = ast.fix_missing_locations(ast.Module(body=calls, type_ignores=[]))
    found = _Reader(function, seen, values_only).first_effect(tree)
    if found is not None:
        message, line = found
        found = message if line is None else f"{message} at {code.co_filename}, line {first + line - 1}"
    _cache[key] = found
    return found


def check_one_run(function, api, arguments=None):
    """Raise SsadError where `function` may compute other values when run again (a random
    draw): `api` (a Jacobian or Hessian) runs it once per row or column, each of which
    would then be the derivative of another function. Without `arguments` (when the matrix
    function is made), what its source calls; with them (at each call), a random generator
    among what they hold, which a method call may draw on (`rng.normal(...)`: a method's
    name alone does not tell a draw, `o.power(3)` of an object of the user's is none)."""
    if arguments is None:
        message = effect_of(function, values_only=True)
    else:
        message = _generator_among(arguments)
    if message is not None:
        raise SsadError(
            f"{api} runs {getattr(function, '__qualname__', function)} once per row or column of the matrix, and "
            f"each run would compute other values: {message}; the rows would belong to different draws. Draw the "
            "numbers outside and pass them in as an argument, or use ssad.grad, ssad.jvp, ssad.vjp or ssad.hvp "
            "(one run of the function per call)"
        )


def check_replayable(function):
    """Raise SsadError when a call of `function` run again would repeat an effect (see module)."""
    message = effect_of(function)
    if message is not None:
        raise SsadError(
            f"checkpointed code runs again in the backward sweep, and this call would repeat an effect: "
            f"{message}. Move the effect out of the checkpointed loop or function, or do not checkpoint it"
        )


def _target(function):
    """The Python function a call of `function` runs (through partials, methods, ssad's wrappers)."""
    for _ in range(8):
        inner = getattr(function, "ssad_checkpointed", None)
        if inner is not None:
            function = inner
        elif isinstance(function, functools.partial):
            function = function.func
        elif inspect.ismethod(function):
            function = function.__func__
        elif getattr(function, "template", None) is not None and inspect.isfunction(function.template):
            function = function.template  # a closure made by generated code
        elif inspect.isfunction(getattr(getattr(function, "_ssad_variants", None), "f", None)):
            function = function._ssad_variants.f  # generated code runs what the function it differentiates runs
        else:
            break
    return function


class _Reader(ast.NodeVisitor):
    def __init__(self, function, seen, values_only=False):
        self.function = function
        self.seen = seen
        self.values_only = values_only
        self.globals = getattr(function, "__globals__", {})
        code = function.__code__
        self.locals = set(code.co_varnames)
        cells = function.__closure__ or ()
        self.cells = {}
        for name, cell in zip(code.co_freevars, cells, strict=False):
            try:
                self.cells[name] = cell.cell_contents
            except ValueError:
                pass
        self.found = None

    def first_effect(self, tree):
        self.visit(tree)
        return self.found

    def _note(self, message, node):
        if self.found is None:
            self.found = (message, node.lineno)

    def visit_Global(self, node):
        self._note("a `global` statement", node)

    def visit_Nonlocal(self, node):
        self._note("a `nonlocal` statement", node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if self.found is not None:
            return
        func = node.func
        if (not self.values_only and isinstance(func, ast.Attribute) and func.attr in _MUTATORS
                and isinstance(func.value, ast.Name) and isinstance(self._resolve(func.value), (list, dict, set, bytearray))):
            self._note(f"`{ast.unparse(func)}(...)`, which changes `{func.value.id}`, a value from outside the call", node)
            return
        callee = self._resolve(func)
        if callee is not _UNKNOWN and not callable(callee):  # a name its code reads, not a call (no source)
            return
        if callee is _UNKNOWN:  # by its name: a draw on a generator passed in, or a method of the user's
            if not self.values_only and isinstance(node.func, ast.Attribute) and node.func.attr in DRAWING_METHODS:
                self._note(f"`.{node.func.attr}(...)`, which draws random numbers on a generator", node)
            return
        if not REGISTRY.is_pure(callee) and not (self.values_only and callee is print):
            self._note(f"`{ast.unparse(node.func)}(...)`, which is not pure", node)
            return
        inner = _target(callee)
        if transformable(inner) and not REGISTRY.is_primitive(inner):
            message = effect_of(inner, self.seen, self.values_only)
            if message is not None:
                self.found = (message, None)

    def _resolve(self, expr):
        """The live object a name or a dotted path of globals denotes, or _UNKNOWN."""
        if isinstance(expr, ast.Name):
            if expr.id in self.locals:
                return _UNKNOWN
            for scope in (self.cells, self.globals, vars(builtins)):
                if expr.id in scope:
                    return scope[expr.id]
            return _UNKNOWN
        if isinstance(expr, ast.Attribute):
            base = self._resolve(expr.value)
            if base is _UNKNOWN or isinstance(base, np.ndarray):
                return _UNKNOWN
            return getattr(base, expr.attr, _UNKNOWN)
        return _UNKNOWN


_UNKNOWN = object()


_GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)


def _generator_among(arguments):
    """A message naming a random generator `arguments` hold (an argument, an item, a field), or None."""
    seen, stack = set(), list(arguments)
    while stack:
        value = stack.pop()
        if isinstance(value, _GENERATORS):
            return f"it is given a random generator ({type(value).__name__}), whose draws differ each run"
        if not isinstance(value, (np.ndarray, float, int, str)) and id(value) not in seen:
            seen.add(id(value))
            stack.extend(held_values(value))
    return None
