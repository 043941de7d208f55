"""Stage 9, native: a generated function compiled with Numba for the types of a call.

Assumes: a `backend.assemble.Compiled` (its source, and the namespace its function
runs in); Numba installed.
Guarantees: `native_function(entry, strict).function` has the signature of
`entry.function` and runs the generated code compiled by Numba in nopython mode,
specialized by Numba on the types of each call (dtype, number of dimensions,
scalar or array) and kept per type signature; on disk too (Numba's cache, beside
a copy of the source under the cache directory), when everything the code reads
from its namespace is a module or one of ssad's helpers. The generated code of the
user's functions it calls (through `Handle`s) is compiled with it. What Numba cannot compile
(a construct, a helper with no compiled form, an argument such as a dict) leaves
the NumPy code running, after one `NativeWarning` naming it and the user's line;
with `strict`, an `SsadError` saying the same.
"""

import ast
import builtins
import functools
import hashlib
import importlib.metadata
import inspect
import os
import re
import sys
import types
import warnings

import numpy as np

from ..errors import NativeWarning, SsadError
from ..runtime import locations, unspent
from ..runtime.callables import function_label
from ..runtime.handles import Handle
from .lower import NotNative, for_numba


class Native:
    """The compiled form of one generated function: `function` runs it (the NumPy code
    once Numba has refused it), `dispatcher` is Numba's, `source` what Numba compiles."""

    def __init__(self, function, dispatcher=None, source=None):
        self.function, self.dispatcher, self.source = function, dispatcher, source


def native_function(entry, strict=False):
    """The `Native` of `entry.function` (see the module docstring); made once per entry."""
    key = bool(strict)
    made = entry.natives.get(key)
    if made is None:
        made = entry.natives.setdefault(key, _make(entry, strict))
    return made


def native_halves(entry, strict=False):
    """`(forward, backward)` for a vjp `entry`: its two halves compiled with Numba, or
    its NumPy halves after one warning (an SsadError when `strict`); made once per entry.

    The compiled halves hand each other typed lists, not the NumPy code's tape, so they
    run as a pair: `backward(d_value, residuals, again)` runs the NumPy backward half on
    `again()`'s residuals (the NumPy forward half run anew) when Numba refuses it."""
    key = ("halves", bool(strict))
    made = entry.natives.get(key)
    if made is None:
        made = entry.natives.setdefault(key, _make_halves(entry, strict))
    return made


def vjp_halves(entry, strict, args, kwargs):
    """`(forward, backward)` of `native_halves` for one call's `args`: `backward(d_value,
    residuals)` runs the NumPy forward half on them again if it must fall back."""
    forward, backward = native_halves(entry, strict)
    return forward, lambda d_value, residuals: backward(d_value, residuals, lambda: entry.function(*args, **kwargs))


def _make_halves(entry, strict):
    forward, backward = entry.function, entry.backward
    numpy_halves = (forward, lambda d_value, residuals, again: backward(d_value, residuals))
    try:
        import numba
        from numba.core.errors import NumbaError

        from .overloads import REDUCTIONS  # noqa: F401  (registers the compiled forms of the helpers)
    except ImportError:
        _refused(entry, strict, "Numba is not installed (pip install 'ssad[numba]')", None)
        return numpy_halves
    try:
        dispatchers, _, path = _compiled_module(entry, numba, top_level=True)
    except NotNative as error:
        _refused(entry, strict, error.message, error.line)
        return numpy_halves
    compiled_forward, compiled_backward = dispatchers[forward.__name__], dispatchers[backward.__name__]
    state = {"numpy": False}

    def refused(error, dispatcher, args):
        if state["numpy"] or (not isinstance(error, NumbaError) and _ran(dispatcher, args, {})):
            return False  # raised by the code itself, not by Numba compiling it
        _refused(entry, strict, *_numba_reason(error, path))
        state["numpy"] = True
        return True

    def run_forward(*args, **kwargs):
        if state["numpy"]:
            return forward(*args, **kwargs)
        try:
            return compiled_forward(*args, **kwargs)
        except Exception as error:
            if not refused(error, compiled_forward, args):
                raise
            return forward(*args, **kwargs)

    def run_backward(d_value, residuals, again):
        if not isinstance(residuals, _Typed):  # made by the NumPy forward half
            return backward(d_value, residuals)
        if not state["numpy"]:
            try:
                return compiled_backward(d_value, unspent(residuals.values))  # a copy of the stacks it pops
            except Exception as error:
                if not refused(error, compiled_backward, (d_value, residuals.values)):
                    raise
        return backward(d_value, again()[1])  # compiled residuals, NumPy backward half: the forward anew

    def typed_forward(*args, **kwargs):
        value, residuals = run_forward(*args, **kwargs)
        return value, (residuals if state["numpy"] else _Typed(residuals))

    return typed_forward, run_backward


class _Typed:
    """Residuals made by a compiled forward half: only its compiled backward half reads them."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values


def native_source(entry):
    """The source Numba compiles for `entry` (what `show(..., compile=True)` prints)."""
    from .overloads import REDUCTIONS

    try:
        return for_numba(entry.source, entry.function.__globals__, REDUCTIONS)[0]
    except NotNative as error:  # what `grad(f, compile="strict")` raises, naming the user's line
        _refused(entry, True, error.message, error.line)


def _make(entry, strict):
    function = entry.function
    label = function.__name__
    try:
        import numba
        from numba.core.errors import NumbaError

        from .overloads import REDUCTIONS  # noqa: F401  (registers the compiled forms of the helpers)
    except ImportError:
        return Native(_refused(entry, strict, "Numba is not installed (pip install 'ssad[numba]')", None))
    try:
        dispatchers, source, path = _compiled_module(entry, numba, top_level=True)
    except NotNative as error:
        return Native(_refused(entry, strict, error.message, error.line))
    compiled = dispatchers[label]
    state = {"run": compiled}

    def run(*args, **kwargs):
        try:
            return state["run"](*args, **kwargs)
        except Exception as error:
            if state["run"] is function or (not isinstance(error, NumbaError) and _ran(compiled, args, kwargs)):
                raise  # raised by the code itself (or by the NumPy code), not by Numba compiling it
            reason, line = _numba_reason(error, path)
            fallback = _refused(entry, strict, reason, line)
            state["run"] = fallback
            return fallback(*args, **kwargs)

    run.__name__ = label
    run.__qualname__ = label
    return Native(run, compiled, source)


def _compiled_module(entry, numba, top_level):
    """({name: Numba's dispatcher} for each function of `entry`'s source, the source Numba
    compiles, its file); NotNative, with the generated line, for what cannot be compiled.
    Only a `top_level` entry that reads nothing but modules and ssad's helpers is kept on disk."""
    from .overloads import REDUCTIONS

    scope = entry.function.__globals__
    source, bindings = for_numba(entry.source, scope, REDUCTIONS)
    jitted = _compiled_reads(source, {**scope, **bindings}, numba)
    cacheable = top_level and not jitted and _cacheable(source, {**scope, **bindings})
    path, module_name = _source_file(entry.function.__name__, source, cacheable)
    locations.record(path, locations.ORIGINS.get(entry.function.__code__.co_filename))
    # a module of its own, importable by name: Numba's disk cache finds the globals there
    module = types.ModuleType(module_name)
    module.__dict__.update(scope)
    module.__dict__.update(bindings)
    module.__dict__.update(jitted, __name__=module_name, __file__=path)
    sys.modules[module_name] = module
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - source ssad generated itself
    names = [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    return {name: numba.njit(cache=cacheable)(module.__dict__[name]) for name in names}, source, path


_building = set()  # ids of the entries whose callees' compiled forms are being made (recursion)


def _callee(handle, numba, line):
    """Numba's compiled form of the generated code a `Handle` stands for: the code of a
    function of the user's that the code calls, compiled with it."""
    entry = handle.entry()
    made = entry.natives.get("callee")
    if made is None:
        label = function_label(handle.function)
        if id(entry) in _building:
            raise NotNative(f"`{label}` calls itself, which is not compiled", line)
        _building.add(id(entry))
        try:
            made = entry.natives.setdefault("callee", _compiled_module(entry, numba, top_level=False)[0])
        except NotNative as error:
            raise NotNative(f"it calls `{label}`, whose code cannot be compiled: {error.message}", line) from None
        finally:
            _building.discard(id(entry))
    return made[(entry.backward if handle.half == "backward" else entry.function).__name__]


def _ran(dispatcher, args, kwargs):
    """Whether `dispatcher` holds compiled code for these arguments (so what they raised,
    the code raised): a failed compilation leaves none."""
    if kwargs:
        return False
    try:
        signature = tuple(dispatcher.typeof_pyval(a) for a in args)
    except Exception:  # noqa: BLE001 - an argument Numba cannot type: nothing was compiled for it
        return False
    return signature in dispatcher.overloads


def _refused(entry, strict, reason, line):
    """The NumPy code, after a warning (an SsadError when `strict`) naming `reason`
    and the user's line standing for generated line `line`."""
    where = ""
    origins = locations.ORIGINS.get(entry.function.__code__.co_filename, {})
    place = origins.get(line) if line is not None else None
    if place is not None:
        filename, lineno, _, text = place
        where = f" at {filename}:{lineno} (`{text.strip()}`)"
    message = (
        f"{entry.function.__name__} cannot be compiled with Numba: {reason}{where}. "
        "It runs as NumPy code"
    )
    if strict:
        raise SsadError(message.replace(". It runs as NumPy code", "") + "; leave out compile='strict' to run it as NumPy code")
    warnings.warn(message, NativeWarning, stacklevel=4)
    return entry.function


# ----- what the compiled code reads -----


def _compiled_reads(source, scope, numba):
    """{name: Numba's compiled form} for the Python functions the code calls (a rule's
    helper, a function of the user's called on constants); NotNative, with its line,
    for a global it reads that Numba can neither call nor hold."""
    from .overloads import HELPERS

    module = ast.parse(source)
    local = {n.id for n in ast.walk(module) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {a.arg for a in ast.walk(module) if isinstance(a, ast.arg)}
    local |= {f.name for f in module.body if isinstance(f, ast.FunctionDef)}
    jitted = {}
    for node in ast.walk(module):
        if not isinstance(node, ast.Name) or node.id in local or node.id not in scope or node.id in jitted:
            continue
        value = scope[node.id]
        if value is None or isinstance(value, (types.ModuleType, bool, int, float, complex, np.ndarray, np.generic)):
            continue
        if any(value is h for h in HELPERS) or _is_dispatcher(value) or _is_builtin(node.id, value):
            continue
        if isinstance(value, Handle):
            jitted[node.id] = _callee(value, numba, node.lineno)
            continue
        if (isinstance(value, types.FunctionType) and not value.__code__.co_flags & inspect.CO_GENERATOR
                and not value.__module__.startswith("ssad.runtime")):
            jitted[node.id] = numba.njit(value)  # compiled when the code is typed; refused then if it cannot be
            continue
        raise NotNative(_no_compiled_form(value), node.lineno)
    return jitted


def _no_compiled_form(value):
    from ..runtime.dynamic import call_forward, call_jvp, method_forward, method_jvp
    from ..runtime.operators import operator_forward, operator_jvp
    from ..runtime.receivers import numpy_member

    if any(value is f for f in (call_forward, call_jvp, method_forward, method_jvp)):
        return "a call through a function value (a variable holding a function, a closure, a method) is not compiled"
    if value is operator_forward or value is operator_jvp:
        return "an operator of an object of yours (its `__mul__`, ...) is not compiled"
    if value is numpy_member:
        return ("a method or attribute named like NumPy's is used on a value ssad cannot tell is an array (an "
                "attribute, an item of a container): it is checked where it runs, which is not compiled")
    name = getattr(value, "__name__", type(value).__name__)
    return f"it calls `{name}`, which has no compiled form"


def _is_builtin(name, value):
    return getattr(builtins, name, None) is value


def _is_dispatcher(value):
    return type(value).__module__.startswith("numba")


def _cacheable(source, scope):
    """Whether the compiled code may be kept on disk: it reads from its namespace only
    modules and ssad's helpers, which are the same in every process."""
    function = ast.parse(source).body[0]
    read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and n.id in scope}
    return all(
        isinstance(scope[n], types.ModuleType)
        or _is_builtin(n, scope[n])
        or (getattr(scope[n], "__module__", None) or "").startswith("ssad.")
        for n in read
    )


def _source_file(label, source, cacheable):
    """(a file holding `source`, the name of its module): a real file when the code is
    kept on disk (Numba's cache keys on one), else a `<ssad native ...>` name."""
    digest = hashlib.sha256(f"{_versions()}\n{source}".encode()).hexdigest()[:20]
    module_name = f"ssad_native_{label}_{digest}"
    if not cacheable:
        return f"<ssad native {label}>", module_name
    directory = os.path.join(cache_directory(), "native")
    path = os.path.join(directory, f"{module_name}.py")
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        temporary = f"{path}.{os.getpid()}"
        with open(temporary, "w") as file:
            file.write(source)
        os.replace(temporary, path)  # whole, even when processes write it at once
    return path, module_name


def cache_directory():
    """Where compiled gradients are kept between processes: $SSAD_CACHE_DIR, else
    $XDG_CACHE_HOME/ssad, else ~/.cache/ssad."""
    explicit = os.environ.get("SSAD_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ssad")


@functools.cache
def _versions():
    """What the compiled code depends on besides its own source: the versions of ssad,
    Numba and NumPy, and the source of ssad's helpers and rules, whose compiled forms
    Numba's cache holds inlined (so an edited helper is never run in its old form)."""
    found = []
    for name in ("ssad", "numba", "numpy"):
        try:
            found.append(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            found.append("?")
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for folder in ("native", "rules", "runtime"):
        for name in sorted(os.listdir(os.path.join(package, folder))):
            if name.endswith(".py"):
                with open(os.path.join(package, folder, name), "rb") as file:
                    digest.update(file.read())
    return " ".join(found) + " " + digest.hexdigest()[:16]


_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _numba_reason(error, path):
    """(the first line of a Numba error, the generated line it names, or None)."""
    text = str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reason = next((line for line in lines if not line.startswith(("During:", "File", "Failed in"))), "")
    reason = _COLOUR.sub("", reason).rstrip(".")
    if reason.endswith("found for signature:"):  # the call's types follow, on a line of their own
        called = next((line for line in lines if line.startswith(">>>")), None)
        if called is not None:
            reason = f"{reason} {_COLOUR.sub('', called[3:]).strip()}"
    line = None
    for found, number in _LOCATION.findall(text):
        if found == path:
            line = int(number)
    return f"Numba reports: {reason}", line
