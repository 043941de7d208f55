"""autograd as an independent oracle for ssad's first and second derivatives.

The same function runs twice: as written, for ssad, and with its globals translated
for autograd (`np` → `autograd.numpy`, every NumPy function imported by name → its
autograd counterpart, `ssad.stop_gradient` → autograd's `getval`, helper functions of the
same module rebound to the translated globals). No source is rewritten.

`compare(function, args)` returns a `Verdict` per check: ssad agrees, ssad disagrees
(a finding), ssad raised (a finding, unless a documented `ssad.SsadError` at second
order), or autograd itself cannot run the program (not ssad's failure: counted apart).

Checks, for each argument position holding floats:

- first order: `ssad.grad(f, wrt=p)` against `autograd.grad(f, p)`, leaf by leaf for
  structured arguments;
- second order, for float and float-array arguments: `ssad.jvp(ssad.grad(f, wrt=p), …)`
  (forward over reverse) and `ssad.grad` of `<ssad.grad(f, wrt=p), v>` (reverse over
  reverse), both against autograd's Hessian-vector product.
"""

import functools
import importlib.util
import itertools
import os
import tempfile
import traceback
import types
from dataclasses import dataclass

import autograd
import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

import ssad

RTOL, ATOL = 1e-6, 1e-9

# ----- translation of a function's globals -----


def _table():
    table = {id(np): anp, id(np.linalg): anp.linalg, id(np.fft): anp.fft, id(np.random): np.random}
    for plain, boxed in ((np, anp), (np.linalg, anp.linalg), (np.fft, anp.fft)):
        for name in dir(boxed):
            original, new = getattr(plain, name, None), getattr(boxed, name)
            if original is not None and original is not new and callable(new) and not isinstance(original, type):
                table.setdefault(id(original), new)
    return table


_TABLE = _table()


def _scipy_table():
    """SciPy's modules, functions and distributions → autograd.scipy's, where autograd has them:
    {id(module or function): translated}, and {(id(distribution), method name): translated}."""
    import autograd.scipy.integrate
    import autograd.scipy.linalg
    import autograd.scipy.signal
    import autograd.scipy.special
    import autograd.scipy.stats
    import scipy.integrate
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats

    table, methods = {}, {}
    for plain, boxed in (
        (scipy.special, autograd.scipy.special), (scipy.linalg, autograd.scipy.linalg),
        (scipy.signal, autograd.scipy.signal), (scipy.integrate, autograd.scipy.integrate),
    ):
        for name in dir(boxed):
            original, new = getattr(plain, name, None), getattr(boxed, name)
            if original is not None and original is not new and callable(new) and not isinstance(original, type):
                table.setdefault(id(original), new)
    for name in dir(autograd.scipy.stats):
        distribution, boxed = getattr(scipy.stats, name, None), getattr(autograd.scipy.stats, name)
        if isinstance(boxed, types.ModuleType) and distribution is not None:
            table[id(distribution)] = boxed
            for method in dir(boxed):
                if callable(getattr(boxed, method)) and hasattr(distribution, method):
                    methods[(id(distribution), method)] = getattr(boxed, method)
    import autograd.scipy
    import scipy

    table[id(scipy)] = autograd.scipy  # `scipy.special.gammaln` read through the package
    for plain, boxed in ((scipy.special, autograd.scipy.special), (scipy.stats, autograd.scipy.stats),
                         (scipy.linalg, autograd.scipy.linalg), (scipy.signal, autograd.scipy.signal),
                         (scipy.integrate, autograd.scipy.integrate)):
        table[id(plain)] = boxed  # `import scipy.stats as st`
    return table, methods


_SCIPY_TABLE, _DISTRIBUTION_METHODS = _scipy_table()
_TABLE.update(_SCIPY_TABLE)
_SSAD = types.SimpleNamespace(**{name: getattr(ssad, name) for name in dir(ssad) if not name.startswith("__")})
_SSAD.stop_gradient = getval


def _method(name):
    def call(value, *args, **kwargs):
        return getattr(value, name)(*args, **kwargs)

    call.__name__ = name
    return call


def translate_value(value, rebound):
    """`value` as autograd should see it; `rebound` maps id(function) to its translated copy."""
    if isinstance(value, types.FunctionType) and (id(value) in rebound or id(value) not in _TABLE):
        return rebound.get(id(value), value)
    if value is ssad:
        return _SSAD
    if isinstance(value, functools.partial):
        return functools.partial(translate_value(value.func, rebound), *value.args, **value.keywords)
    translated = _TABLE.get(id(value))
    if translated is not None:
        return translated
    owner = getattr(value, "__self__", None)  # `scipy.stats.norm.logpdf`: a new bound method at each read
    if owner is not None and (id(owner), getattr(value, "__name__", "")) in _DISTRIBUTION_METHODS:
        return _DISTRIBUTION_METHODS[(id(owner), value.__name__)]
    if getattr(value, "__objclass__", None) is np.ndarray:  # np.ndarray.sum, as a primitive
        return _method(value.__name__)
    return value


def for_autograd(function):
    """A copy of `function` whose globals, and those of every function of its module, are translated."""
    original = function.__globals__
    namespace = {}
    rebound = {}
    for value in original.values():
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            rebound[id(value)] = types.FunctionType(value.__code__, namespace, value.__name__, value.__defaults__,
                                                    value.__closure__)
    rebound.setdefault(id(function), types.FunctionType(function.__code__, namespace, function.__name__,
                                                        function.__defaults__, function.__closure__))
    for name, value in original.items():
        namespace[name] = translate_value(value, rebound)
    return rebound[id(function)], rebound


# ----- structures -----


def _is_float_leaf(x):
    return (isinstance(x, float) and not isinstance(x, bool)) or (isinstance(x, np.ndarray) and x.dtype.kind == "f")


def float_leaves(x, path=()):
    """[(path, leaf)] for every float or float array inside tuples, lists and dicts."""
    if _is_float_leaf(x):
        return [(path, x)]
    if isinstance(x, dict):
        items = list(x.items())
    elif isinstance(x, (tuple, list)):
        items = list(enumerate(x))
    elif hasattr(x, "__dict__") and not callable(x) and not isinstance(x, (type, types.ModuleType, np.generic)):
        items = [(("attr", k), v) for k, v in vars(x).items()]
    else:
        return []
    leaves = []
    for key, child in items:
        leaves += float_leaves(child, path + (key,))
    return leaves


def get_at(x, path):
    for key in path:
        x = getattr(x, key[1]) if isinstance(key, tuple) and key[:1] == ("attr",) else x[key]
    return x


def float_positions(args):
    return [p for p, a in enumerate(args) if float_leaves(a)]


# ----- verdicts -----


@dataclass
class Verdict:
    """agree, wrong, crashed, refused (a documented SsadError at second order), or
    autograd_cannot (autograd cannot run this; not ssad's failure)."""

    status: str
    check: str
    detail: str = ""


class AutogradCannot(Exception):
    """autograd cannot differentiate this program (a limitation of the oracle)."""


def _autograd(thunk):
    try:
        with np.errstate(all="ignore"):
            return thunk()
    except Exception as error:
        raise AutogradCannot(f"{type(error).__name__}: {str(error)[:120]}") from error


def _agrees(got, want, path=""):
    """'' when `got` matches `want`, else a description of the first mismatch."""
    try:
        got_array = np.asarray(got, dtype=float)
        want_array = np.asarray(want, dtype=float)
    except (TypeError, ValueError) as error:
        return f"{path}: not comparable ({error}): ssad {got!r}, autograd {want!r}"
    if got_array.shape != want_array.shape:
        return f"{path}: shape {got_array.shape}, autograd {want_array.shape}"
    scale = float(np.max(np.abs(want_array), initial=0.0))
    if not np.all(np.isfinite(got_array) == np.isfinite(want_array)) or not np.allclose(
            got_array, want_array, rtol=RTOL, atol=ATOL * (1 + scale), equal_nan=True):
        return f"{path}:\n  ssad:     {got_array!r}\n  autograd: {want_array!r}"
    return ""


def _compare_structured(got, want, arg):
    for path, _ in float_leaves(arg):
        try:
            expected = get_at(want, path)
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise AutogradCannot(f"autograd's gradient has another structure: {error!r}") from error
        try:
            value = get_at(got, path)
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            return f"{path}: ssad's gradient has no leaf here ({error!r}); ssad gave {got!r}"
        mismatch = _agrees(value, expected, str(path))
        if mismatch:
            return mismatch
    return ""


def _run_ssad(check, thunk, refusable):
    """(value, None) or (None, Verdict) for an exception."""
    try:
        with np.errstate(all="ignore"):
            return thunk(), None
    except Exception as error:
        status = "refused" if refusable and isinstance(error, ssad.SsadError) else "crashed"
        tail = "".join(traceback.format_exception(error)[-4:])
        return None, Verdict(status, check, f"{type(error).__name__}: {error}\n{tail}")


_directory = tempfile.mkdtemp(prefix="ssad-oracle-")
_serial = itertools.count()
SECOND_REVERSE = """
import numpy as np


def second_reverse({params}):
    return np.sum(GRADIENT({params}) * DIRECTION)
"""


def _second_reverse(gradient, direction, count):
    """A function with source, `<gradient(*args), direction>`, for ssad to differentiate."""
    path = os.path.join(_directory, f"second_{os.getpid()}_{next(_serial)}.py")
    with open(path, "w") as handle:
        handle.write(SECOND_REVERSE.format(params=", ".join(f"a{k}" for k in range(count))))
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.GRADIENT, module.DIRECTION = gradient, direction
    return module.second_reverse


def _central(scalar, x, step=1e-6):
    """Central differences of `scalar` at the float or float array `x`."""
    flat = np.array(x, dtype=float).ravel()
    out = np.zeros_like(flat)
    for k in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[k] += step
        down[k] -= step
        shape = np.shape(x)
        out[k] = (scalar(up.reshape(shape) if shape else float(up[0]))
                  - scalar(down.reshape(shape) if shape else float(down[0]))) / (2 * step)
    return out.reshape(np.shape(x)) if np.shape(x) else float(out[0])


def _matches_differences(function, args, p, got):
    """Whether ssad's gradient `got` agrees with central differences, where autograd disagrees:
    then autograd is the one that is wrong (its rules have gaps: broadcasting in `where`,
    `tile`, `repeat` with an axis, NaN at the zeros of `prod`, ...)."""

    def scalar(value):
        return float(function(*args[:p], value, *args[p + 1:]))

    try:
        with np.errstate(all="ignore"):
            expected = _central(scalar, args[p])
    except Exception:
        return False
    expected = np.asarray(expected)
    return np.shape(got) == expected.shape and bool(
        np.allclose(got, expected, rtol=1e-4, atol=1e-6 * (1 + float(np.max(np.abs(expected), initial=0)))))


def _matches_second_differences(gradient, args, p, v, got):
    """Whether `got` agrees with central differences of ssad's gradient along v."""

    def along(step):
        up = gradient(*args[:p], args[p] + step * v, *args[p + 1:])
        down = gradient(*args[:p], args[p] - step * v, *args[p + 1:])
        return (np.asarray(up) - np.asarray(down)) / (2 * step)

    try:
        with np.errstate(all="ignore"):
            expected = along(1e-5)
    except Exception:
        return False
    return np.shape(got) == expected.shape and bool(
        np.allclose(got, expected, rtol=1e-4, atol=1e-5 * (1 + float(np.max(np.abs(expected), initial=0)))))


def _direction(arg, position):
    rng = np.random.default_rng(position + 11)
    return float(rng.uniform(0.5, 1.5)) if np.ndim(arg) == 0 else rng.uniform(-1.0, 1.0, np.shape(arg))


def compare(function, args, positions=None, second_order=True, label=""):
    """Verdicts for every check of `function` at `args` (see the module docstring)."""
    label = label or getattr(function, "__name__", "f")
    positions = float_positions(args) if positions is None else positions
    verdicts = []
    try:
        boxed, rebound = for_autograd(function)
        boxed_args = tuple(translate_value(a, rebound) for a in args)
    except Exception as error:  # a function autograd cannot even be handed
        return [Verdict("autograd_cannot", f"{label}: translation", repr(error))]
    for p in positions:
        check = f"{label}: grad wrt {p}"
        try:
            want = _autograd(lambda: autograd.grad(boxed, p)(*boxed_args))  # noqa: B023 (called at once)
        except AutogradCannot as cannot:
            verdicts.append(Verdict("autograd_cannot", check, str(cannot)))
            continue
        got, failed = _run_ssad(check, lambda: ssad.grad(function, wrt=p)(*args), refusable=False)  # noqa: B023
        if failed:
            verdicts.append(failed)
            continue
        mismatch = _compare_structured(got, want, args[p])
        if mismatch and _is_float_leaf(args[p]) and _matches_differences(function, args, p, got):
            verdicts.append(Verdict("autograd_wrong", check, mismatch))
            continue
        verdicts.append(Verdict("wrong" if mismatch else "agree", check, mismatch))
        if mismatch or not second_order or not _is_float_leaf(args[p]):
            continue
        verdicts += _compare_second(function, args, p, boxed, boxed_args, label)
    return verdicts


def _compare_second(function, args, p, boxed, boxed_args, label):
    v = _direction(args[p], p)
    try:
        g = autograd.grad(boxed, p)
        want = _autograd(lambda: autograd.grad(lambda *a: anp.sum(g(*a) * v), p)(*boxed_args))
    except AutogradCannot as cannot:
        return [Verdict("autograd_cannot", f"{label}: second order wrt {p}", str(cannot))]
    verdicts = []
    tangents = tuple(v if k == p else None for k in range(len(args)))
    gradient = ssad.grad(function, wrt=p)
    check = f"{label}: jvp(grad) wrt {p}"
    got, failed = _run_ssad(check, lambda: ssad.jvp(gradient, args, tangents)[1], refusable=True)
    verdicts.append(failed or _second_verdict(check, got, want, gradient, args, p, v))
    check = f"{label}: grad(<grad, v>) wrt {p}"
    got, failed = _run_ssad(check, lambda: ssad.grad(_second_reverse(gradient, v, len(args)), wrt=p)(*args),
                            refusable=True)
    verdicts.append(failed or _second_verdict(check, got, want, gradient, args, p, v))
    return verdicts


def _second_verdict(check, got, want, gradient, args, p, v):
    mismatch = _agrees(got, want)
    if not mismatch:
        return Verdict("agree", check)
    if _matches_second_differences(gradient, args, p, v, got):
        return Verdict("autograd_wrong", check, mismatch)
    return Verdict("wrong", check, mismatch)


# ----- the per-rule samples as functions with source -----

RULE_FUNCTION = """
import numpy as np


def {name}({params}):
    out = PRIMITIVE({call})
    return {seed}
"""


def _identifier(text):
    return "".join(c if c.isalnum() else "_" for c in text).strip("_") or "case"


def rule_function(case):
    """(function, args) applying `case.primitive` to `case.args`, reduced to a float through
    sin so that the output seed is not uniform; None with a reason when there is nothing
    to compare (an integer or complex output, complex inputs)."""
    args, kwargs = tuple(case.args), dict(case.kwargs)
    if not callable(case.primitive):  # an attribute (`np.ndarray.real`): read as `x.real`
        return None, "an attribute, not a function"
    with np.errstate(all="ignore"):
        out = case.primitive(*args, **kwargs)
    if any(np.iscomplexobj(leaf) for _, leaf in _all_leaves(args)):
        return None, "complex inputs"
    if isinstance(out, (tuple, list)):
        parts = [k for k, o in enumerate(out) if _is_float_leaf(np.asarray(o)) and not np.iscomplexobj(o)]
        seed = " + ".join(f"np.sum(np.sin(out[{k}])) * {0.5 + 0.25 * k}" for k in parts)
    elif np.iscomplexobj(out):
        return None, "complex output"
    elif np.asarray(out).dtype.kind == "f":
        seed = "np.sum(np.sin(out))"
    else:
        seed = ""
    if not seed:
        return None, "no float output"
    name = "rule_" + _identifier(case.id or getattr(case.primitive, "__name__", "case"))
    params = [f"a{k}" for k in range(len(args))]
    # a flag (True, False, None) is written as a literal, as code that calls the function writes it
    passed = [repr(a) if a is None or isinstance(a, bool) else p for p, a in zip(params, args, strict=True)]
    call = ", ".join(passed + [f"{key}=KEYWORD_{key}" for key in kwargs])
    path = os.path.join(_directory, f"{name}_{os.getpid()}_{next(_serial)}.py")
    with open(path, "w") as handle:
        handle.write(RULE_FUNCTION.format(name=name, params=", ".join(params), call=call, seed=seed))
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.PRIMITIVE = case.primitive
    for key, value in kwargs.items():
        setattr(module, f"KEYWORD_{key}", value)
    return getattr(module, name), args


def _all_leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _all_leaves(item)]
    if isinstance(x, dict):
        return [leaf for item in x.values() for leaf in _all_leaves(item)]
    return [((), x)]


def _accepts(function, case):
    import inspect

    try:
        inspect.signature(function).bind(*case.args, **case.kwargs)
    except TypeError:
        return False
    return True


def rule_cases():
    """Every Case of the per-rule test modules (tests/rules/test_*.py), in order."""
    from tests.rules import test_coverage
    from tests.rules.cases import case_id

    cases = []
    for module in test_coverage.MODULES:
        symmetric = getattr(module, "SYMMETRIC_INPUT", {})
        for case in module.CASES:
            # a rule meant for symmetric (or otherwise constrained) inputs is compared through
            # the module's function of every entry, as tests/rules/test_second_order.py does
            substitute = symmetric.get(case.primitive)
            if substitute is not None and not _accepts(substitute, case):
                substitute = None
            cases.append(case._replace(primitive=substitute, id=case_id(case)) if substitute else case)
    return cases
