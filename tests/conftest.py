import os
import zlib

import numpy as np
import pytest

from ssad.backend import pipeline
from ssad.transform import mirror
from ssad.testing import assert_close, numerical_gradient

# Two checks of the compiler itself run on what the tests compile: every adjoint sweep
# reads the values of the forward sweep it reverses (ssad/transform/mirror.py), and every
# generated function is read back by the front end, which must accept it (CHECK_CLOSURE in
# ssad/backend/pipeline.py). They more than double the time a compile takes, so `make
# test` runs them in one test in three, the same ones every run (chosen by the test's id),
# and in every test of the files that test them; SSAD_STRUCTURAL_CHECKS=all (which `make
# fuzz` sets) runs them in every test. What a test asserts is the same either way.
mirror.ENABLED = pipeline.CHECK_CLOSURE = True  # while the test modules are collected
_EVERY_TEST = os.environ.get("SSAD_STRUCTURAL_CHECKS") == "all"
_CHECKED_FILES = {"tests/test_mirror.py", "tests/test_tape.py", "tests/fuzz/test_record.py"}


def structural_checks_in(nodeid):
    """Whether the test `nodeid` runs with the compiler's own checks (see above)."""
    return _EVERY_TEST or nodeid.split("::")[0] in _CHECKED_FILES or zlib.crc32(nodeid.encode()) % 3 == 0


@pytest.fixture(autouse=True)
def _structural_checks(request):
    mirror.ENABLED = pipeline.CHECK_CLOSURE = structural_checks_in(request.node.nodeid)
    yield
    mirror.ENABLED = pipeline.CHECK_CLOSURE = True


def float_positions(args):
    return [
        i
        for i, a in enumerate(args)
        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    ]


def finite_difference_gradient(f, args, position):
    """Central differences of scalar f with respect to args[position]."""

    def scalar(value):
        moved = list(args)
        moved[position] = value
        return float(f(*moved))

    return numerical_gradient(scalar, args[position])


def assert_gradient_matches(f, args, position, got, rtol=1e-5, atol=1e-7):
    expected = finite_difference_gradient(f, args, position)
    assert_close(f"{f.__name__} argument {position}", got, expected, rtol, atol)


def case_ids(cases):
    """`name-k` for the k-th argument set of each function, in CASES order."""
    seen = {}
    ids = []
    for function, _ in cases:
        k = seen.get(function.__name__, 0)
        seen[function.__name__] = k + 1
        ids.append(f"{function.__name__}-{k}")
    return ids


def pytest_make_parametrize_id(config, val, argname):
    """Test ids that name functions, not their addresses: the same in every process
    (`pytest -n 2` collects the tests once per worker and compares the ids)."""
    if isinstance(val, (str, int, float, bool, type(None))):
        return None
    name = getattr(val, "__qualname__", None) or getattr(val, "__name__", None)
    if isinstance(name, str):
        owner = getattr(val, "__objclass__", None)
        return f"{owner.__name__}.{name}" if owner is not None and "." not in name else name
    text = repr(val)
    return None if " at 0x" in text else text


def check_every_order(f, x, v):
    """value_and_grad, jvp along `v`, hvp, jvp(grad) and grad(<grad, v>) of `f` at `x`, against
    central differences of `f` and of ssad's own gradient."""
    import ssad
    from ssad.testing import numerical_gradient

    expected = numerical_gradient(f, x.copy())
    value, gradient = ssad.value_and_grad(f)(x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (x.copy(),), (v,))[1], expected @ v, rtol=1e-6, atol=1e-8)
    grad_f = ssad.grad(f)
    second = numerical_gradient(lambda u: float(np.dot(grad_f(u), v)), x.copy())
    np.testing.assert_allclose(ssad.hvp(f)(x.copy(), v), second, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.jvp(grad_f, (x.copy(),), (v,))[1], second, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(lambda u: np.dot(grad_f(u), v))(x.copy()), second, rtol=1e-5, atol=1e-6)
