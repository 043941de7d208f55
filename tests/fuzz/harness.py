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
4. compares `ssad.grad(f, wrt=(0, 1, 2))`, `ssad.grad` with respect to one named
   argument, and `ssad.jvp` along a fixed non-uniform direction with the
   differences, and checks that ssad left the arguments unchanged.

Any disagreement, or any exception from ssad, raises AssertionError with the
program's source and inputs, ready to paste into a regression test.
"""

import ast
import atexit
import importlib.util
import itertools
import operator
import os
import shutil
import tempfile
import traceback

import numpy as np

import ssad

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
}


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
        if kind is None:
            return node
        return ast.Call(ast.Name("__kink__", ast.Load()), [ast.Constant(kind), node.func, *node.args], node.keywords)


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
        a = np.asarray(args[0], dtype=float)
        if kind == "pair":
            record(a - np.asarray(args[1], dtype=float))
        elif kind == "zero":
            record(a)
        elif kind == "clip":
            record(np.concatenate([np.ravel(a - args[1]), np.ravel(a - args[2])]))
        else:
            ordered = np.sort(a, axis=None)
            record(ordered[-1] - ordered[-2] if kind == "top" else ordered[1] - ordered[0])
        return function(*args, **kwargs)

    namespace = {"__gap__": gap, "__kink__": kink, "__name__": "probe"}
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


# ----- the check -----


def _failure(program, what, detail):
    return AssertionError(
        f"{what}\n{detail}\n\n"
        f"----- program -----\n{program.source}\n"
        f"----- point -----\n{program.arguments_source()}\n"
    )


def _compare(program, label, got, expected, noise, scale):
    got_array = np.asarray(got, dtype=float)
    expected_array = np.asarray(expected, dtype=float)
    if got_array.shape != expected_array.shape:
        raise _failure(program, f"{label} has shape {got_array.shape}, expected {expected_array.shape}", "")
    # finite differences lose about 1e-16 * |f| / STEP to rounding
    bound = ATOL + 1e-9 * scale + RTOL * np.abs(expected_array) + noise
    if not (np.all(np.isfinite(got_array)) and np.all(np.abs(got_array - expected_array) <= bound)):
        raise _failure(program, f"{label} disagrees with finite differences",
                       f"ssad:                 {got_array!r}\nfinite differences:   {expected_array!r}")


def _run(program, label, thunk):
    try:
        return thunk()
    except Exception as error:  # every exception is a finding: the programs are supported Python
        tail = "".join(traceback.format_exception(error)[-6:])
        raise _failure(program, f"{label} raised {type(error).__name__}: {error}", tail) from error


def check(program, second_order=False):
    """Raise AssertionError when ssad's derivatives of `program` disagree with finite differences."""
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
    try:
        expected = finite_differences(f, args, STEP)
        wide = finite_differences(f, args, WIDE_STEP)
    except FloatingPointError as error:
        raise Unfair(f"f is not finite near the point: {error}") from error
    noise = [np.abs(np.asarray(a) - np.asarray(b)) for a, b in zip(expected, wide, strict=True)]
    if any(np.any(n > 1e-6 + 1e-4 * np.abs(e)) for n, e in zip(noise, expected, strict=True)):
        raise Unfair("finite differences at two step sizes disagree")
    scale = abs(value)

    gradients = _run(program, "ssad.grad(f, wrt=(0, 1, 2))", lambda: ssad.grad(f, wrt=(0, 1, 2))(*args))
    for name, got, want, n in zip(NAMES, gradients, expected, noise, strict=True):
        _compare(program, f"ssad.grad(f, wrt=(0, 1, 2)): the gradient with respect to {name}", got, want, n, scale)
    if not isinstance(gradients[2], float):
        raise _failure(program, f"the gradient with respect to the float s is a {type(gradients[2]).__name__}", "")
    for arg, original in zip(args, program.args(), strict=True):
        if not np.array_equal(arg, original):
            raise _failure(program, "ssad.grad changed its arguments", f"{arg!r} != {original!r}")

    # one argument alone, by name, with or without the optimizer, varied from program to program
    position, optimize = len(program.source) % 3, len(program.source) % 4 != 0
    label = f"ssad.grad(f, wrt={NAMES[position]!r}, optimize={optimize})"
    single = _run(program, label, lambda: ssad.grad(f, wrt=NAMES[position], optimize=optimize)(*args))
    _compare(program, label, single, expected[position], noise[position], scale)

    primal, tangent = _run(program, "ssad.jvp(f, args, tangents)", lambda: ssad.jvp(f, args, TANGENTS))
    _compare(program, "the value ssad.jvp returns", primal, value, 0.0, scale)
    directional = sum(float(np.sum(np.asarray(e) * t)) for e, t in zip(expected, TANGENTS, strict=True))
    directional_noise = sum(float(np.sum(n * np.abs(t))) for n, t in zip(noise, TANGENTS, strict=True))
    magnitude = sum(float(np.sum(np.abs(np.asarray(e) * t))) for e, t in zip(expected, TANGENTS, strict=True))
    _compare(program, f"ssad.jvp along {TANGENTS!r}", tangent, directional,
             directional_noise + RTOL * magnitude, scale)

    # forward mode with one argument held constant (a `None` tangent)
    held = (position + 1) % 3
    partial = tuple(None if k == held else t for k, t in enumerate(TANGENTS))
    label = f"ssad.jvp(f, args, {partial!r})"
    _, tangent = _run(program, label, lambda: ssad.jvp(f, args, partial))
    directional = sum(float(np.sum(np.asarray(e) * t)) for e, t in zip(expected, partial, strict=True) if t is not None)
    _compare(program, label, tangent, directional, directional_noise + RTOL * magnitude, scale)

    # a pullback seeded with 0.7
    primal, pullback = _run(program, "ssad.vjp(f, *args)", lambda: ssad.vjp(f, *args))
    _compare(program, "the value ssad.vjp returns", primal, value, 0.0, scale)
    adjoints = _run(program, "ssad.vjp's pullback(0.7)", lambda: pullback(0.7))
    for name, got, want, n in zip(NAMES, adjoints, expected, noise, strict=True):
        _compare(program, f"ssad.vjp's pullback(0.7): the adjoint of {name}", got, 0.7 * np.asarray(want),
                 0.7 * n, scale)

    if second_order:
        _check_second_order(program, f, args, gradients)


def _check_second_order(program, f, args, gradients):
    """Forward over reverse: the jvp of ssad's gradient against differences of that gradient."""
    gradient = ssad.grad(f, wrt=(0, 1, 2))
    label = "ssad.jvp(ssad.grad(f, wrt=(0, 1, 2)), args, tangents)"
    _, tangent = _run(program, label, lambda: ssad.jvp(gradient, args, TANGENTS))
    step = 1e-5
    up = gradient(*(a + step * t for a, t in zip(args, TANGENTS, strict=True)))
    down = gradient(*(a - step * t for a, t in zip(args, TANGENTS, strict=True)))
    for name, got, u, d, g in zip(NAMES, tangent, up, down, gradients, strict=True):
        expected = (np.asarray(u) - np.asarray(d)) / (2 * step)
        _compare(program, f"{label}: the tangent of the gradient with respect to {name}", got, expected,
                 1e-4 * (1 + np.abs(expected)), float(np.max(np.abs(g))))
