"""Run one generated program through ssad and compare with central finite differences.

`check(program)` loads the program from a real file (ssad reads source), then

1. evaluates `f` and skips the point (`Unfair`) unless the value is a finite float;
2. runs a *probe* copy of the module in which every float comparison and every
   kink (`np.maximum`, `abs`, `np.clip`, `np.max`, `np.linalg.norm`, ...) records how
   far it is from switching, and skips the point when one is within `MARGIN`: a
   finite difference there could straddle a branch switch;
3. takes central differences of `f` with respect to `x`, `y` and `s` at two step
   sizes, and skips the point when they disagree (something non-smooth the probe
   does not see);
4. compares, mode by mode (`MODES`):
   - first: `ssad.grad(f, wrt=(0, 1, 2))`, `ssad.grad` with respect to one named
     argument, `ssad.vjp`'s pullback, with the differences; ssad must leave the
     arguments unchanged;
   - forward: `ssad.jvp` along a fixed non-uniform direction, and with one tangent None;
   - fwd_over_rev: `ssad.jvp(ssad.grad(f))` and `ssad.hessian(f, wrt='x')`,
   - rev_over_rev: `ssad.grad` of `<ssad.grad(f)(x, y, s), t>`,
   - grad_inside: `ssad.grad` of a function that calls `ssad.grad(f, wrt='x')` and `f`,
     the first two against central differences of ssad's own first-order gradient,
     the last against differences of that function.

`check` raises AssertionError (`Wrong` or `Crashed`) with the program's source and
inputs, ready to paste into a regression test. At second order a documented
`ssad.SsadError` is an acceptable answer (`Refused`), counted apart. `evaluate`
returns an `Outcome` per mode instead of raising, for sweeps (`python -m tests.fuzz`).
"""

import ast
import atexit
import importlib.util
import itertools
import operator
import os
import re
import shutil
import tempfile
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import ssad
from ssad.backend import pipeline
from ssad.transform import mirror

from .generate import LENGTH

# Every program's adjoint sweeps are checked to read the values of the forward sweep
# they reverse (ssad/transform/mirror.py), in sweeps as in the test suite.
mirror.ENABLED = True
pipeline.CHECK_CLOSURE = True  # every generated function must be accepted by the front end

MARGIN = 1e-3  # how close a comparison or a kink may come to switching
STEP, WIDE_STEP = 1e-6, 1e-5  # central-difference steps; the wide one estimates their error
RTOL, ATOL = 1e-5, 1e-6
TANGENTS = (np.array([0.3, -1.1, 0.7, 0.9]), np.array([-0.6, 0.2, 1.4, -0.8]), 0.45)
NAMES = ("x", "y", "s")

_directory = tempfile.mkdtemp(prefix="ssad-fuzz-")
atexit.register(shutil.rmtree, _directory, ignore_errors=True)
_serial = itertools.count()


class Unfair(Exception):
    """The program cannot be judged by finite differences at its point."""


# ----- loading -----


def load(source):
    """Import `source` from a new file and return its module (not put in sys.modules)."""
    number = next(_serial)
    path = os.path.join(_directory, f"program_{os.getpid()}_{number}.py")
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(f"ssad_fuzz_program_{number}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----- the probe -----

_COMPARISONS = {"Lt": operator.lt, "Gt": operator.gt, "LtE": operator.le, "GtE": operator.ge}
_KINKS = {
    "np.maximum": "pair", "np.minimum": "pair", "max": "pair", "min": "pair",
    "abs": "zero", "np.abs": "zero", "np.clip": "clip",
    "np.max": "top", "np.min": "bottom", "np.linalg.norm": "zero",
    "np.amax": "top", "np.amin": "bottom", "np.argmax": "top", "np.argmin": "bottom", "np.sort": "ties",
}
# methods that select, as `z.max()`: the probe calls them through `__methods__`
_METHOD_KINKS = {"max": "top", "min": "bottom", "argmax": "top", "argmin": "bottom"}


class _Probe(ast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]).__name__ in _COMPARISONS:
            op = ast.Constant(type(node.ops[0]).__name__)
            return ast.Call(ast.Name("__gap__", ast.Load()), [node.left, node.comparators[0], op], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        kind = _KINKS.get(ast.unparse(node.func))
        if kind is not None:
            return ast.Call(ast.Name("__kink__", ast.Load()), [ast.Constant(kind), node.func, *node.args],
                            node.keywords)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _METHOD_KINKS and not node.args:
            method = ast.Subscript(ast.Name("__methods__", ast.Load()), ast.Constant(node.func.attr), ast.Load())
            return ast.Call(ast.Name("__kink__", ast.Load()),
                            [ast.Constant(_METHOD_KINKS[node.func.attr]), method, node.func.value], node.keywords)
        return node


def probe_source(source):
    """The module with every float comparison and kink reporting its distance to switching."""
    return ast.unparse(ast.fix_missing_locations(_Probe().visit(ast.parse(source))))


def smallest_gap(program):
    """How close the run of `f` at the program's point comes to a branch switch or a kink."""
    gaps = [np.inf]

    def record(distance):
        gaps.append(float(np.min(np.abs(distance), initial=np.inf)))

    def gap(a, b, op):
        if not (isinstance(a, int) and isinstance(b, int)):
            record(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
        return _COMPARISONS[op](a, b)

    def kink(kind, function, *args, **kwargs):
        if kwargs.get("key") is not None:  # max(items, key=...): how close the keys come to a tie
            items = args[0] if len(args) == 1 else args
            record(np.diff(np.sort([float(kwargs["key"](item)) for item in items])))
            return function(*args, **kwargs)
        a = np.asarray(args[0], dtype=float)
        if kind == "pair":
            record(a - np.asarray(args[1], dtype=float))
        elif kind == "zero":
            record(a)
        elif kind == "clip":
            record(np.concatenate([np.ravel(a - args[1]), np.ravel(a - args[2])]))
        elif a.size > 1:
            ordered = np.sort(a, axis=None)
            if kind == "ties":
                record(np.diff(ordered))
            else:
                record(ordered[-1] - ordered[-2] if kind == "top" else ordered[1] - ordered[0])
        return function(*args, **kwargs)

    def method(name):
        return lambda value, *a, **k: getattr(value, name)(*a, **k)

    methods = {name: method(name) for name in _METHOD_KINKS}
    namespace = {"__gap__": gap, "__kink__": kink, "__methods__": methods, "__name__": "probe"}
    exec(compile(probe_source(program.source), "<probe>", "exec"), namespace)
    namespace["f"](*program.args())
    return min(gaps)


# ----- finite differences -----


def _value(f, args):
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        value = f(*args)
    if not isinstance(value, (float, np.floating)) or not np.isfinite(value) or abs(value) > 1e6:
        raise Unfair(f"f returns {value!r}")
    return float(value)


def finite_differences(f, args, step):
    """Central differences of f with respect to each argument, shaped like it."""
    gradients = []
    for position, arg in enumerate(args):
        flat = np.atleast_1d(np.array(arg, dtype=float))
        gradient = np.zeros_like(flat)
        for k in range(flat.size):
            moved = []
            for sign in (1.0, -1.0):
                shifted = flat.copy()
                shifted[k] += sign * step
                value = shifted if np.ndim(arg) else float(shifted[0])
                moved.append(_value(f, args[:position] + (value,) + args[position + 1:]))
            gradient[k] = (moved[0] - moved[1]) / (2 * step)
        gradients.append(gradient if np.ndim(arg) else float(gradient[0]))
    return gradients


# ----- outcomes -----

MODES = ("first", "forward", "fwd_over_rev", "rev_over_rev", "grad_inside", "compiled", "checkpointed")
SECOND_ORDER = ("fwd_over_rev", "rev_over_rev", "grad_inside")


class Refused(Exception):
    """ssad raised one of its documented errors (`ssad.SsadError`) where that is acceptable."""

    def __init__(self, label, error):
        super().__init__(f"{label} refused: {type(error).__name__}: {error}")
        self.error = error


def refusal_kind(error):
    """A refusal's message without names and locations, so refusals of one kind count together.

    `error` is an exception, or the text `Type: message` of one."""
    if isinstance(error, str):
        kind, _, text = error.partition(": ")
        return refusal_kind(type(kind, (Exception,), {})(text))
    text = str(error).splitlines()[0] if str(error) else ""
    text = re.sub(r"<ssad [^>]*>:\d+:\d+: ?", "", text)
    text = re.sub(r"^[^\s:]+\.py:\d+:\d+: ?", "", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\d+", "N", text)
    return f"{type(error).__name__}: {text[:90]}"


@dataclass
class Outcome:
    """How one mode of checking went: correct, refused, wrong, crashed, unfair (no fair
    reference at this point) or blocked (first order failed, so nothing to build on)."""

    status: str
    detail: str = ""
    kind: str = ""  # for refusals and crashes: the error's class and message shape


# ----- the check -----


def _failure(program, what, detail, error=AssertionError):
    return error(
        f"{what}\n{detail}\n\n"
        f"----- program -----\n{program.source}\n"
        f"----- point -----\n{program.arguments_source()}\n"
    )


class Wrong(AssertionError):
    """ssad returned a value that disagrees with the reference."""


class Crashed(AssertionError):
    """ssad, or the code it generated, raised an exception it should not have."""

    kind = ""


def _compare(program, label, got, expected, noise, scale, reference="finite differences"):
    try:
        got_array = np.asarray(got, dtype=float)
    except (TypeError, ValueError) as error:
        raise _failure(program, f"{label} is not an array of floats: {got!r}", str(error), Wrong) from error
    expected_array = np.asarray(expected, dtype=float)
    if got_array.shape != expected_array.shape:
        raise _failure(program, f"{label} has shape {got_array.shape}, expected {expected_array.shape}", "", Wrong)
    # finite differences lose about 1e-16 * |f| / STEP to rounding
    bound = ATOL + 1e-9 * scale + RTOL * np.abs(expected_array) + noise
    if not (np.all(np.isfinite(got_array)) and np.all(np.abs(got_array - expected_array) <= bound)):
        raise _failure(program, f"{label} disagrees with {reference}",
                       f"ssad:{' ' * (len(reference) - 3)}{got_array!r}\n{reference}: {expected_array!r}", Wrong)


def _run(program, label, thunk, refusable=False):
    try:
        return thunk()
    except Exception as error:  # every exception is a finding: the programs are supported Python
        if refusable and isinstance(error, ssad.SsadError):
            raise Refused(label, error) from error
        tail = "".join(traceback.format_exception(error)[-6:])
        failure = _failure(program, f"{label} raised {type(error).__name__}: {error}", tail, Crashed)
        failure.kind = refusal_kind(error)
        raise failure from error


@dataclass
class Reference:
    """`f` at the program's point, with central differences of it there."""

    program: object
    module: object
    f: object
    args: tuple
    value: float
    expected: list
    noise: list

    @property
    def scale(self):
        return abs(self.value)


def reference(program):
    """Load the program and difference it; raises Unfair where differences cannot be trusted."""
    module = load(program.source)
    f = module.f
    args = program.args()
    try:
        value = _value(f, args)
    except FloatingPointError as error:
        raise Unfair(f"f is not finite at the point: {error}") from error
    except Unfair:
        raise
    except Exception as error:
        raise _failure(program, f"the generated program itself raised {type(error).__name__}: {error}",
                       "(a problem of the generator, not of ssad)") from error
    if smallest_gap(program) < MARGIN:
        raise Unfair("a comparison or a kink is too close to switching")
    expected, noise = _differences(f, args)
    return Reference(program, module, f, args, value, expected, noise)


def _differences(f, args):
    try:
        expected = finite_differences(f, args, STEP)
        wide = finite_differences(f, args, WIDE_STEP)
    except FloatingPointError as error:
        raise Unfair(f"f is not finite near the point: {error}") from error
    noise = [np.abs(np.asarray(a) - np.asarray(b)) for a, b in zip(expected, wide, strict=True)]
    if any(np.any(n > 1e-6 + 1e-4 * np.abs(e)) for n, e in zip(noise, expected, strict=True)):
        raise Unfair("finite differences at two step sizes disagree")
    return expected, noise


def check_first_order(ref):
    """ssad.grad (all arguments, one by name, with and without the optimizer) and ssad.vjp."""
    program, f, args, expected, noise, scale = ref.program, ref.f, ref.args, ref.expected, ref.noise, ref.scale
    gradients = _run(program, "ssad.grad(f, wrt=(0, 1, 2))", lambda: ssad.grad(f, wrt=(0, 1, 2))(*args))
    for name, got, want, n in zip(NAMES, gradients, expected, noise, strict=True):
        _compare(program, f"ssad.grad(f, wrt=(0, 1, 2)): the gradient with respect to {name}", got, want, n, scale)
    if not isinstance(gradients[2], float):
        raise _failure(program, f"the gradient with respect to the float s is a {type(gradients[2]).__name__}", "",
                       Wrong)
    for arg, original in zip(args, program.args(), strict=True):
        if not np.array_equal(arg, original):
            raise _failure(program, "ssad.grad changed its arguments", f"{arg!r} != {original!r}", Wrong)

    # one argument alone, by name, with or without the optimizer, varied from program to program
    position, optimize = len(program.source) % 3, len(program.source) % 4 != 0
    label = f"ssad.grad(f, wrt={NAMES[position]!r}, optimize={optimize})"
    single = _run(program, label, lambda: ssad.grad(f, wrt=NAMES[position], optimize=optimize)(*args))
    _compare(program, label, single, expected[position], noise[position], scale)

    # a pullback seeded with 0.7
    primal, pullback = _run(program, "ssad.vjp(f, *args)", lambda: ssad.vjp(f, *args))
    _compare(program, "the value ssad.vjp returns", primal, ref.value, 0.0, scale)
    adjoints = _run(program, "ssad.vjp's pullback(0.7)", lambda: pullback(0.7))
    for name, got, want, n in zip(NAMES, adjoints, expected, noise, strict=True):
        _compare(program, f"ssad.vjp's pullback(0.7): the adjoint of {name}", got, 0.7 * np.asarray(want),
                 0.7 * n, scale)
    return gradients


def check_compiled(ref):
    """ssad.grad(f, compile=True), against finite differences: compiled with Numba, or run as
    the NumPy code after a NativeWarning (a refusal, its gradient compared all the same)."""
    program, f, args, expected, noise, scale = ref.program, ref.f, ref.args, ref.expected, ref.noise, ref.scale
    label = "ssad.grad(f, wrt=(0, 1, 2), compile=True)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ssad.NativeWarning)
        gradients = _run(program, label, lambda: ssad.grad(f, wrt=(0, 1, 2), compile=True)(*args))
    for name, got, want, n in zip(NAMES, gradients, expected, noise, strict=True):
        _compare(program, f"{label}: the gradient with respect to {name}", got, want, n, scale)
    fallbacks = [w for w in caught if issubclass(w.category, ssad.NativeWarning)]
    if fallbacks:
        raise Refused(label, ssad.SsadError(str(fallbacks[0].message)))


CHECKPOINTS = (("every", 2), "sqrt", ("revolve", 2))


def check_checkpointed(ref):
    """ssad.grad(f, checkpoint=...) in each strategy, against finite differences and against the
    gradient without checkpointing (to rounding: the same operations run, in the same order).
    A `while` loop refused by the strategies that need a trip count on entry is no finding."""
    program, f, args, expected, noise, scale = ref.program, ref.f, ref.args, ref.expected, ref.noise, ref.scale
    plain = _run(program, "ssad.grad(f, wrt=(0, 1, 2))", lambda: ssad.grad(f, wrt=(0, 1, 2))(*args))
    for strategy in CHECKPOINTS:
        label = f"ssad.grad(f, wrt=(0, 1, 2), checkpoint={strategy!r})"
        try:
            gradients = ssad.grad(f, wrt=(0, 1, 2), checkpoint=strategy)(*args)
        except ssad.SsadError as error:
            if "needs the trip count" in str(error):
                continue
            raise Refused(label, error) from error
        except Exception:
            gradients = _run(program, label, lambda s=strategy: ssad.grad(f, wrt=(0, 1, 2), checkpoint=s)(*args))
        for name, got, want, n, same in zip(NAMES, gradients, expected, noise, plain, strict=True):
            _compare(program, f"{label}: the gradient with respect to {name}", got, want, n, scale)
            _compare(program, f"{label}: the gradient with respect to {name}", got, same, 0.0, scale,
                     reference="ssad.grad without checkpoint=")


def check_forward(ref):
    """ssad.jvp along a fixed direction, and with one argument held constant."""
    program, f, args, expected, noise, scale = ref.program, ref.f, ref.args, ref.expected, ref.noise, ref.scale
    primal, tangent = _run(program, "ssad.jvp(f, args, tangents)", lambda: ssad.jvp(f, args, TANGENTS))
    _compare(program, "the value ssad.jvp returns", primal, ref.value, 0.0, scale)
    directional = sum(float(np.sum(np.asarray(e) * t)) for e, t in zip(expected, TANGENTS, strict=True))
    directional_noise = sum(float(np.sum(n * np.abs(t))) for n, t in zip(noise, TANGENTS, strict=True))
    magnitude = sum(float(np.sum(np.abs(np.asarray(e) * t))) for e, t in zip(expected, TANGENTS, strict=True))
    _compare(program, f"ssad.jvp along {TANGENTS!r}", tangent, directional,
             directional_noise + RTOL * magnitude, scale)

    # forward mode with one argument held constant (a `None` tangent)
    held = (len(program.source) % 3 + 1) % 3
    partial = tuple(None if k == held else t for k, t in enumerate(TANGENTS))
    label = f"ssad.jvp(f, args, {partial!r})"
    _, tangent = _run(program, label, lambda: ssad.jvp(f, args, partial))
    directional = sum(float(np.sum(np.asarray(e) * t)) for e, t in zip(expected, partial, strict=True) if t is not None)
    _compare(program, label, tangent, directional, directional_noise + RTOL * magnitude, scale)


def check(program, second_order=False):
    """Raise AssertionError when ssad's derivatives of `program` disagree with finite differences.

    With `second_order`, also check the three second-order modes, where a documented
    `ssad.SsadError` is an acceptable answer; returns {mode: Outcome}.
    """
    ref = reference(program)
    check_first_order(ref)
    check_forward(ref)
    outcomes = {"first": Outcome("correct"), "forward": Outcome("correct")}
    if second_order:
        for mode in SECOND_ORDER:
            try:
                SECOND_ORDER_CHECKS[mode](ref)
                outcomes[mode] = Outcome("correct")
            except Refused as refusal:
                outcomes[mode] = Outcome("refused", str(refusal), refusal_kind(refusal.error))
            except Unfair as unfair:
                outcomes[mode] = Outcome("unfair", str(unfair))
    return outcomes


def evaluate(program, modes=MODES):
    """Every requested mode's Outcome for `program`; never raises for a finding."""
    try:
        ref = reference(program)
    except Unfair as unfair:
        return {mode: Outcome("unfair", str(unfair)) for mode in modes}
    except AssertionError as error:  # the generator's fault
        return {mode: Outcome("crashed", str(error), "generator") for mode in modes}
    outcomes = {}
    checks = {"first": check_first_order, "forward": check_forward, "compiled": check_compiled,
              "checkpointed": check_checkpointed, **SECOND_ORDER_CHECKS}
    for mode in modes:
        if mode in SECOND_ORDER and "first" in outcomes and outcomes["first"].status != "correct":
            outcomes[mode] = Outcome("blocked", "first order is not correct")
            continue
        try:
            checks[mode](ref)
            outcomes[mode] = Outcome("correct")
        except Refused as refusal:
            status = "refused" if mode in SECOND_ORDER or mode in ("compiled", "checkpointed") else "crashed"
            outcomes[mode] = Outcome(status, str(refusal), refusal_kind(refusal.error))
        except Unfair as unfair:
            outcomes[mode] = Outcome("unfair", str(unfair))
        except Wrong as error:
            outcomes[mode] = Outcome("wrong", str(error))
        except Crashed as error:
            outcomes[mode] = Outcome("crashed", str(error), error.kind)
        except AssertionError as error:
            outcomes[mode] = Outcome("wrong", str(error))
    return outcomes


# ----- second order -----
#
# Each second-order mode is compared with central differences of ssad's own first-order
# gradient (checked above against differences of f), at two step sizes.

SECOND_STEP, SECOND_WIDE_STEP = 1e-5, 1e-4

WRAPPERS = """

def ssad_fuzz_second_reverse(x, y, s):
    gx, gy, gs = SSAD_FUZZ_GRADIENT(x, y, s)
    return np.sum(gx * SSAD_FUZZ_TX) + np.sum(gy * SSAD_FUZZ_TY) + gs * SSAD_FUZZ_TS


def ssad_fuzz_gradient_inside(x, y, s):
    gx = SSAD_FUZZ_GRADIENT_X(x, y, s)
    return 0.5 * f(x, y, s) + np.sum(np.sin(gx) * SSAD_FUZZ_TX) + s * np.sum(gx * y)
"""


def _wrappers(ref):
    """The program's module again, with functions that call ssad's gradient of f."""
    if not hasattr(ref, "_wrapped"):
        module = load(ref.program.source + WRAPPERS)
        module.SSAD_FUZZ_GRADIENT = ssad.grad(module.f, wrt=(0, 1, 2))
        module.SSAD_FUZZ_GRADIENT_X = ssad.grad(module.f, wrt="x")
        module.SSAD_FUZZ_TX, module.SSAD_FUZZ_TY, module.SSAD_FUZZ_TS = TANGENTS
        ref._wrapped = module
    return ref._wrapped


def _directional_second(ref, gradient, tangents=TANGENTS):
    """Central differences of `gradient` (a tuple of arrays) along `tangents`, with an estimate of their error."""

    def along(step):
        up = gradient(*(a + step * t for a, t in zip(ref.args, tangents, strict=True)))
        down = gradient(*(a - step * t for a, t in zip(ref.args, tangents, strict=True)))
        if not isinstance(up, tuple):
            up, down = (up,), (down,)
        return [(np.asarray(u) - np.asarray(d)) / (2 * step) for u, d in zip(up, down, strict=True)]

    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        try:
            expected, wide = along(SECOND_STEP), along(SECOND_WIDE_STEP)
        except FloatingPointError as error:
            raise Unfair(f"the gradient is not finite near the point: {error}") from error
    noise = [np.abs(e - w) for e, w in zip(expected, wide, strict=True)]
    if any(np.any(n > 1e-4 * (1 + np.abs(e))) for n, e in zip(noise, expected, strict=True)):
        raise Unfair("differences of the gradient at two step sizes disagree")
    return expected, noise


def _compare_second(ref, label, got, expected, noise, names=NAMES):
    if not isinstance(got, (tuple, list)) or len(got) != len(expected):
        raise _failure(ref.program, f"{label} returned {type(got).__name__} {got!r}", "", Wrong)
    scale = max(float(np.max(np.abs(e))) for e in expected)
    for name, g, e, n in zip(names, got, expected, noise, strict=True):
        _compare(ref.program, f"{label}: the part for {name}", g, e, 1e-5 * (1 + scale) + 10 * n, scale,
                 "differences of ssad.grad")


def check_fwd_over_rev(ref):
    """ssad.jvp of ssad.grad(f): the Hessian times TANGENTS."""
    module = _wrappers(ref)
    gradient = module.SSAD_FUZZ_GRADIENT
    label = "ssad.jvp(ssad.grad(f, wrt=(0, 1, 2)), args, tangents)"
    _, tangent = _run(ref.program, label, lambda: ssad.jvp(gradient, ref.args, TANGENTS), refusable=True)
    expected, noise = _directional_second(ref, gradient)
    _compare_second(ref, label, tangent, expected, noise)

    # ssad.hessian with respect to x alone, times the x part of TANGENTS
    label = "ssad.hessian(f, wrt='x')(*args) @ tangents[0]"
    hessian = _run(ref.program, label, lambda: ssad.hessian(ref.f, wrt="x")(*ref.args), refusable=True)
    only_x = (TANGENTS[0], np.zeros(LENGTH), 0.0)
    expected, noise = _directional_second(ref, ssad.grad(ref.f, wrt="x"), only_x)
    _compare_second(ref, label, (np.asarray(hessian) @ TANGENTS[0],), expected, noise, ("x",))


def check_rev_over_rev(ref):
    """ssad.grad of <ssad.grad(f), TANGENTS>: the Hessian times TANGENTS again, by reverse over reverse."""
    module = _wrappers(ref)
    label = "ssad.grad(lambda x, y, s: <ssad.grad(f, wrt=(0, 1, 2))(x, y, s), tangents>, wrt=(0, 1, 2))"
    got = _run(ref.program, label, lambda: ssad.grad(module.ssad_fuzz_second_reverse, wrt=(0, 1, 2))(*ref.args),
               refusable=True)
    expected, noise = _directional_second(ref, module.SSAD_FUZZ_GRADIENT)
    _compare_second(ref, label, got, expected, noise)


def check_grad_inside(ref):
    """ssad.grad of a function that calls ssad.grad(f, wrt='x') and f itself."""
    module = _wrappers(ref)
    inside = module.ssad_fuzz_gradient_inside
    label = "ssad.grad(g, wrt=(0, 1, 2)) where g calls ssad.grad(f, wrt='x')"
    got = _run(ref.program, label, lambda: ssad.grad(inside, wrt=(0, 1, 2))(*ref.args), refusable=True)
    try:
        value = _value(inside, ref.args)
    except FloatingPointError as error:
        raise Unfair(f"g is not finite at the point: {error}") from error
    expected, noise = _differences(inside, ref.args)
    if not isinstance(got, tuple) or len(got) != 3:
        raise _failure(ref.program, f"{label} returned {got!r}", "", Wrong)
    for name, g, e, n in zip(NAMES, got, expected, noise, strict=True):
        _compare(ref.program, f"{label}: the gradient with respect to {name}", g, e, n, abs(value),
                 "finite differences of g")


SECOND_ORDER_CHECKS = {
    "fwd_over_rev": check_fwd_over_rev,
    "rev_over_rev": check_rev_over_rev,
    "grad_inside": check_grad_inside,
}
