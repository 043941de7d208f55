"""`compile=True`: the generated gradient compiled with Numba (docs/performance.md).

Each compiled gradient is checked against the NumPy code ssad generates for the same
function (itself checked against finite differences elsewhere), against central
finite differences, and on the benchmark workloads against the hand-written
gradient. `compile="strict"` raises where Numba cannot compile, so a test that uses
it proves the compiled code ran; the fallback is tested apart."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient
from tests.programs import control

numba = pytest.importorskip("numba")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import workloads  # noqa: E402


def _close(a, b, tol=1e-10):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("workload", workloads.WORKLOADS, ids=lambda w: w.name)
def test_benchmark_workloads_compile_and_match_the_hand_written_gradient(workload):
    args = workload.inputs(np.random.default_rng(0))
    compiled = ssad.grad(workload.function, wrt=workload.wrt, compile="strict")
    got = compiled(*args)
    _close(got, tuple(workload.hand(*args)), 1e-9)
    _close(got, ssad.grad(workload.function, wrt=workload.wrt)(*args), 1e-12)
    _close(compiled(*args), got, 0.0)  # the second call runs the same compiled code


def scalar_while(x, a):
    steps = 0
    while x < 10.0 and steps < 50:
        x = x * a + np.sin(x)
        steps += 1
    return x


def branches_in_a_loop(x, w):
    total = 0.0
    for k in range(x.shape[0]):
        if x[k] > 0:
            total = total + np.tanh(x[k] * w)
        else:
            total = total - x[k] * x[k] * w
    return total


def rows_of_a_matrix(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def broadcasts(a, b):
    c = a[:, None] * b[None, :] + a[:, None]
    return np.sum(np.exp(-c * c)) + np.mean(b * b)


PROGRAMS = [
    (scalar_while, (0.7, 1.3), (0, 1)),
    # an inner loop that can break: its trip count changes after it is first assigned, and its
    # stack must get the count each outer step ends with (once 0 each time: a wrong gradient)
    (control.inner_else_continues_outer, (np.array([0.3, -0.4, 0.8, 0.5]),), (0,)),
    (branches_in_a_loop, (np.array([0.5, -1.2, 0.9, -0.1]), 0.8), (0, 1)),
    (rows_of_a_matrix, (0.3 * np.random.default_rng(1).standard_normal((4, 4)),
                        np.random.default_rng(2).standard_normal((5, 4))), (0, 1)),
    (broadcasts, (np.array([0.1, 0.4, -0.3]), np.array([0.2, -0.5])), (0, 1)),
]


@pytest.mark.parametrize("function, args, wrt", PROGRAMS, ids=lambda p: getattr(p, "__name__", ""))
def test_compiled_gradients_of_control_flow_match_finite_differences(function, args, wrt):
    compiled = ssad.grad(function, wrt=wrt, compile="strict")(*args)
    _close(compiled, ssad.grad(function, wrt=wrt)(*args), 1e-12)
    for position, gradient in zip(wrt, compiled, strict=True):
        expected = numerical_gradient(lambda v, p=position: function(*args[:p], v, *args[p + 1:]), args[position])
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function, args, wrt", PROGRAMS, ids=lambda p: getattr(p, "__name__", ""))
def test_value_and_grad_and_jvp_compile(function, args, wrt):
    value, gradient = ssad.value_and_grad(function, wrt=wrt, compile="strict")(*args)
    assert np.isclose(value, function(*args))
    _close(gradient, ssad.grad(function, wrt=wrt)(*args), 1e-12)
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    expected = ssad.jvp(function, args, tangents)
    _close(ssad.jvp(function, args, tangents, compile="strict"), expected, 1e-12)


def takes_a_dict(params, x):
    return np.sum(np.tanh(params["w"] * x))


def test_what_numba_cannot_compile_runs_as_numpy_code_after_one_warning():
    params, x = {"w": np.array([0.5, -0.3])}, np.array([1.0, 2.0])
    gradient = ssad.grad(takes_a_dict, compile=True)
    with pytest.warns(ssad.NativeWarning, match="takes_a_dict|dict|Numba"):
        got = gradient(params, x)
    _close(got["w"], ssad.grad(takes_a_dict)(params, x)["w"], 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ssad.NativeWarning)
        gradient(params, x)  # warned once


def power_iteration(A, v):
    for _ in range(8):
        v = A @ v
        v = v / np.sqrt(np.sum(v * v))
    return v @ A @ v


def test_a_value_the_tape_restores_under_another_name_runs_as_numpy_code():
    # the tape records `A_matmul_v` (the first `v`, renamed) and restores it into `v`: one
    # list a name would pop an empty list (IndexError) or another value, so it is refused
    rng = np.random.default_rng(4)
    A = rng.standard_normal((4, 4))
    A, v = A + A.T + 4.0 * np.eye(4), rng.standard_normal(4)
    with pytest.warns(ssad.NativeWarning, match="restores a value it records as `A_matmul_v` under another name"):
        got = ssad.grad(power_iteration, wrt=(0, 1), compile=True)(A, v)
    _close(got, ssad.grad(power_iteration, wrt=(0, 1))(A, v), 0.0)
    with pytest.raises(ssad.SsadError, match="under another name"):
        ssad.grad(power_iteration, wrt=(0, 1), compile="strict")(A, v)
    with pytest.raises(ssad.SsadError, match="under another name"):
        ssad.show(power_iteration, wrt=(0, 1), compile=True, args=(A, v))


def calls_a_function_value(x, smooth):
    activation = np.tanh if smooth else np.abs
    return np.sum(activation(x) * x)  # <- here


def test_strict_compilation_raises_naming_the_construct_and_the_users_line():
    from .test_errors import marked_line

    line, _ = marked_line(calls_a_function_value)
    x = np.array([1.0, -2.0])
    with pytest.raises(ssad.SsadError, match=rf"{os.path.basename(__file__)}:{line} ") as caught:
        ssad.grad(calls_a_function_value, compile="strict")(x, True)
    assert "a call through a function value" in str(caught.value) and "compile='strict'" in str(caught.value)
    with pytest.warns(ssad.NativeWarning, match=rf"{os.path.basename(__file__)}:{line} "):
        got = ssad.grad(calls_a_function_value, compile=True)(x, True)
    _close(got, ssad.grad(calls_a_function_value)(x, True), 0.0)


def test_show_prints_the_code_numba_compiles():
    shown = str(ssad.show(workloads.euler, wrt=(0, 1), compile=True))
    assert "y_stack = []" in shown and "y_stack.append(y)" in shown and "y = y_stack.pop()" in shown
    assert "Tape()" not in shown


def test_a_second_process_loads_the_compiled_gradient_from_disk(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks")!r})
        import ssad, workloads
        gradient = ssad.grad(workloads.euler, wrt=(0, 1), compile="strict")
        print(gradient(0.5, 0.3, 0.01))
        entry = gradient.variants.for_args((0.5, 0.3, 0.01))
        print(sum(entry.natives[True].dispatcher.stats.cache_hits.values()))
        """
    )
    environment = dict(os.environ, SSAD_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True)
    assert first.stdout.splitlines()[0] == second.stdout.splitlines()[0]
    assert first.stdout.splitlines()[1] == "0" and int(second.stdout.splitlines()[1]) >= 1


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod"])
def test_reductions_along_an_axis_compute_what_numpy_computes(name):
    from ssad.native.overloads import REDUCTIONS

    along, keeping = REDUCTIONS[(name, False)], REDUCTIONS[(name, True)]

    @numba.njit
    def reduced(x, v):
        return along(x, 0), along(x, 1), keeping(x, -1), keeping(x, None), keeping(v, 0), along(v, None)

    x = np.random.default_rng(3).standard_normal((4, 3))
    v = x[1]
    numpy_function = getattr(np, name)
    expected = (numpy_function(x, axis=0), numpy_function(x, axis=1), numpy_function(x, axis=-1, keepdims=True),
                numpy_function(x, axis=None, keepdims=True), numpy_function(v, axis=0, keepdims=True),
                numpy_function(v))
    for got, wanted in zip(reduced(x, v), expected, strict=True):
        assert np.shape(got) == np.shape(wanted)
        np.testing.assert_allclose(got, wanted, rtol=1e-13)


def writes_in_place(x, w):
    y = x.copy()
    for _ in range(3):
        y[1:] = y[1:] * w + np.sin(y[:-1])
        y[0] = y[0] * w
    return np.sum(y * y) + np.sum(y[::2])


def adds_into_elements(x, a):
    y = x * a  # not known to be an array where it is lowered: `y[i] += v` is checked where it runs
    for i in range(3):
        y[i] += x[i] * x[i + 1]
    return np.sum(y * y)


def scalar_loop_that_breaks(x, a):
    for _ in range(20):
        if x > 5.0:
            break
        x = x * a + np.sin(x)
    return x


@pytest.mark.parametrize("function, args", [
    (writes_in_place, (np.array([0.3, -0.5, 0.8, 0.1]), 0.9)),
    (scalar_loop_that_breaks, (0.4, 1.3)),
    (adds_into_elements, (np.array([0.3, -0.5, 0.8, 0.1]), 0.9)),
], ids=["writes_in_place", "scalar_loop_that_breaks", "adds_into_elements"])
def test_in_place_writes_and_a_loop_that_breaks_compile(function, args):
    compiled = ssad.grad(function, wrt=(0, 1), compile="strict")(*args)
    _close(compiled, ssad.grad(function, wrt=(0, 1))(*args), 1e-12)
    for position, gradient in zip((0, 1), compiled, strict=True):
        moved = lambda v, p=position: function(*args[:p], v, *args[p + 1:])  # noqa: E731
        np.testing.assert_allclose(gradient, numerical_gradient(moved, args[position]), rtol=1e-6, atol=1e-8)


def _sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1.0)


def _log_likelihood(weights, inputs, targets):
    preds = _sigmoid(inputs @ weights)
    return np.sum(np.log(preds * targets + (1 - preds) * (1 - targets)))


def logistic_loss(weights, inputs, targets):
    return -_log_likelihood(weights, inputs, targets) + 0.1 * np.sum(weights * weights)


def test_functions_of_the_users_that_the_function_calls_are_compiled_with_it():
    rng = np.random.default_rng(5)
    args = (0.1 * rng.standard_normal(3), rng.standard_normal((20, 3)), (rng.random(20) > 0.5).astype(float))
    compiled = ssad.grad(logistic_loss, compile="strict")
    _close(compiled(*args), ssad.grad(logistic_loss)(*args), 1e-12)
    moved = lambda w: logistic_loss(w, *args[1:])  # noqa: E731
    np.testing.assert_allclose(compiled(*args), numerical_gradient(moved, args[0]), rtol=1e-6)
    tangents = (np.ones(3), None, None)
    _close(ssad.jvp(logistic_loss, args, tangents, compile="strict"), ssad.jvp(logistic_loss, args, tangents), 1e-12)


def row_losses(W, X):
    total = 0.0
    for i in range(X.shape[0]):
        total += np.sum(np.tanh(W @ X[i]) ** 2)
    return total


@pytest.mark.parametrize("rows", [5, 1, 0])
def test_values_a_loop_first_assigns_are_recorded_with_one_type(rows):
    # `X[i]` and what follows it are first bound inside the loop; the NumPy code records
    # `None` before the first, which Numba would type as optional and refuse
    rng = np.random.default_rng(rows)
    W, X = 0.5 * rng.standard_normal((4, 3)), rng.standard_normal((rows, 3))
    compiled = ssad.grad(row_losses, wrt=(0, 1), compile="strict")(W, X)
    _close(compiled, ssad.grad(row_losses, wrt=(0, 1))(W, X), 1e-12)
    for position, gradient in zip((0, 1), compiled, strict=True):
        moved = lambda v, p=position: row_losses(*(W, X)[:p], v, *(W, X)[p + 1:])  # noqa: E731
        np.testing.assert_allclose(gradient, numerical_gradient(moved, (W, X)[position]), rtol=1e-6, atol=1e-8)
    assert "X_at_i = None" not in str(ssad.show(row_losses, compile=True))


def dot_and_a_copy(x, W):
    a = np.array(x)
    return np.sum(np.tanh(np.dot(a, W))) + np.sum(a[1:] * a[:-1])


def masked_write(x, W):
    y = x.copy()
    y[x > 0] = y[x > 0] ** 2
    return np.sum(y * np.sin(y)) + np.sum(W)


def extrema_and_moments(x, W):
    return np.max(x) * np.mean(x ** 2) + np.var(x) + np.sum(np.max(W * x[:, None], axis=0)) + np.sum(np.abs(x))


@pytest.mark.parametrize("function", [dot_and_a_copy, masked_write, extrema_and_moments], ids=lambda f: f.__name__)
def test_rules_whose_helpers_have_compiled_forms(function):
    rng = np.random.default_rng(7)
    x, W = rng.standard_normal(4), rng.standard_normal((4, 3))
    compiled = ssad.grad(function, wrt=(0, 1), compile="strict")(x, W)
    _close(compiled, ssad.grad(function, wrt=(0, 1))(x, W), 1e-12)
    for position, gradient in zip((0, 1), compiled, strict=True):
        moved = lambda v, p=position: function(*(x, W)[:p], v, *(x, W)[p + 1:])  # noqa: E731
        np.testing.assert_allclose(gradient, numerical_gradient(moved, (x, W)[position]), rtol=1e-6, atol=1e-8)


def wave(x):
    return np.sum(np.sin(x) * x)


def coupled(a, b):
    return np.sin(a * b) + a * a * b


def test_hessian_and_jacobian_compile():
    x = np.array([0.3, -1.2, 0.7])
    _close(ssad.hessian(wave, compile="strict")(x), ssad.hessian(wave)(x), 1e-13)
    np.testing.assert_allclose(ssad.hessian(wave, compile="strict")(x), np.diag(2 * np.cos(x) - x * np.sin(x)),
                               rtol=1e-12, atol=1e-15)
    _close(ssad.hessian(coupled, wrt=(0, 1), compile="strict")(0.3, 0.8), ssad.hessian(coupled, wrt=(0, 1))(0.3, 0.8),
           1e-13)
    gradient = ssad.grad(wave)
    for mode in ("forward", "reverse"):
        _close(ssad.jacobian(gradient, mode=mode, compile="strict")(x), ssad.jacobian(gradient, mode=mode)(x), 1e-13)


def test_vjp_compiles_both_halves_and_its_pullback_runs_again():
    a, b = np.array([0.1, 0.4, -0.3]), np.array([0.2, -0.5])
    value, pullback = ssad.vjp(broadcasts, a, b, compile="strict")
    expected_value, expected = ssad.vjp(broadcasts, a, b)
    assert value == pytest.approx(expected_value, rel=1e-14)
    _close(pullback(1.0), expected(1.0), 1e-13)
    _close(pullback(2.0), expected(2.0), 1e-13)


def test_a_vjp_whose_loop_hands_a_tape_to_its_backward_half_runs_as_numpy_code():
    W, xs = 0.3 * np.random.default_rng(1).standard_normal((4, 4)), np.random.default_rng(2).standard_normal((5, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ssad.NativeWarning)
        value, pullback = ssad.vjp(rows_of_a_matrix, W, xs, compile=True)
        got = pullback(1.0)
    _close(got, ssad.vjp(rows_of_a_matrix, W, xs)[1](1.0), 1e-13)
    messages = [str(w.message) for w in caught if issubclass(w.category, ssad.NativeWarning)]
    assert len(messages) == 1 and "handed from the forward half to the backward half" in messages[0]


def broadcast_operands(W, b, c, x):
    # a bias added to every row and a column: their adjoints are `.sum(axis=0)` and
    # `.sum(axis=1, keepdims=True)` in the code compiled for these shapes
    return np.sum((np.tanh(x @ W + b) * c) ** 2)


def test_adjoints_summed_to_a_row_or_a_column_compile():
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 1)), rng.standard_normal((5, 3)))
    source = ssad.show(broadcast_operands, wrt=(0, 1, 2), args=args).source
    assert ".sum(axis=0)" in source and ".sum(axis=1, keepdims=True)" in source
    got = ssad.grad(broadcast_operands, wrt=(0, 1, 2), compile="strict")(*args)
    _close(got, ssad.grad(broadcast_operands, wrt=(0, 1, 2))(*args))
    for position in range(3):
        moved = lambda v, p=position: broadcast_operands(*args[:p], v, *args[p + 1:])  # noqa: E731
        np.testing.assert_allclose(got[position], numerical_gradient(moved, args[position]), rtol=1e-6, atol=1e-8)


def _corpus_cases():
    """(id, function, args, wrt) of the corpus programs with float arguments: with
    SSAD_COMPILED_CORPUS=all (`make fuzz`) every one of the straight-line, control-flow and
    function corpora, else the control-flow programs whose loops can stop early or run a
    count of times not known on entry (`break`, `while`), where the tape records the most."""
    import inspect

    from tests.programs import functions, straight

    everything = os.environ.get("SSAD_COMPILED_CORPUS") == "all"
    cases, seen = [], {}
    for module in (control, straight, functions) if everything else (control,):
        for function, args in module.CASES:
            source = inspect.getsource(function)
            if not everything and "break" not in source and "while" not in source:
                continue
            wrt = tuple(i for i, a in enumerate(args)
                        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
            if wrt:
                k = seen[function.__name__] = seen.get(function.__name__, -1) + 1
                cases.append(pytest.param(function, args, wrt, id=f"{function.__name__}-{k}"))
    return cases


@pytest.mark.parametrize("function, args, wrt", _corpus_cases())
def test_corpus_programs_compiled_or_not_give_the_numpy_gradient(function, args, wrt):
    # compiled, or run as NumPy code after a NativeWarning: the same gradient either way (an
    # inner loop's trip count recorded too early once gave a wrong compiled gradient here)
    expected = ssad.grad(function, wrt=wrt)(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ssad.NativeWarning)
        got = ssad.grad(function, wrt=wrt, compile=True)(*args)
    _close(got, expected, 1e-9)
