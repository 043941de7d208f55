"""Forward mode: jvp by source transformation, against directional finite differences."""

import copy

import numpy as np
import pytest

import ssad

from .programs import control, functions, straight


def _float_leaf(value):
    return (isinstance(value, float) and not isinstance(value, bool)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "f"
    )


def _direction(value, rng):
    """A random tangent shaped like `value` (None where it carries none)."""
    if _float_leaf(value):
        draw = rng.standard_normal(np.shape(value))
        return draw if np.ndim(value) else float(draw)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_direction(v, rng) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_direction(v, rng) for v in value)
    if isinstance(value, dict):
        return {k: _direction(v, rng) for k, v in value.items()}
    return None


def _moved(value, tangent, step):
    if tangent is None:
        return value
    if _float_leaf(value):
        moved = np.asarray(value, dtype=np.float64) + step * np.asarray(tangent)
        return moved if np.ndim(value) else float(moved)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_moved(v, t, step) for v, t in zip(value, tangent, strict=True)])
    if isinstance(value, (list, tuple)):
        return type(value)(_moved(v, t, step) for v, t in zip(value, tangent, strict=True))
    if isinstance(value, dict):
        return {k: _moved(v, tangent[k], step) for k, v in value.items()}
    return value


def _has_tangent(tangent):
    if tangent is None:
        return False
    if isinstance(tangent, (list, tuple)):
        return any(_has_tangent(t) for t in tangent)
    if isinstance(tangent, dict):
        return any(_has_tangent(t) for t in tangent.values())
    return True


def check_jvp(function, args, seed=0, eps=1e-6):
    rng = np.random.default_rng(seed)
    tangents = tuple(_direction(a, rng) for a in args)
    tangents = tuple(t if _has_tangent(t) else None for t in tangents)
    before = copy.deepcopy(args)
    value, tangent = ssad.jvp(function, args, tangents)
    up = function(*[_moved(a, t, eps) for a, t in zip(args, tangents, strict=True)])
    down = function(*[_moved(a, t, -eps) for a, t in zip(args, tangents, strict=True)])
    expected = (np.asarray(up, dtype=np.float64) - np.asarray(down, dtype=np.float64)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(value, dtype=np.float64), np.asarray(function(*args), dtype=np.float64), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tangent, dtype=np.float64), expected, rtol=1e-5, atol=1e-7)
    for a, b in zip(args, before, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# stop_gradient cuts a path that finite differences still see: checked on its own below.
CORPUS = [c for c in straight.CASES + control.CASES + functions.CASES if "stop_gradient" not in c[0].__name__]


def _id(case):
    function, _ = case
    return f"{function.__module__.rsplit('.', 1)[-1]}.{function.__name__}"


@pytest.mark.parametrize("case", CORPUS, ids=[_id(c) for c in CORPUS])
def test_jvp_matches_directional_finite_differences(case):
    function, args = case
    check_jvp(function, args)


def vector_valued(x, W):
    return np.tanh(x @ W) * x[0]


def test_jvp_of_a_vector_output():
    rng = np.random.default_rng(3)
    check_jvp(vector_valued, (rng.standard_normal(3), rng.standard_normal((3, 4))))


def test_jvp_with_some_tangents_none():
    x, W = np.array([0.3, -0.5, 0.9]), np.ones((3, 2)) * 0.4
    value, tangent = ssad.jvp(vector_valued, (x, W), (None, np.ones((3, 2))))
    e = 1e-6
    expected = (vector_valued(x, W + e) - vector_valued(x, W - e)) / (2 * e)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


def test_show_forward_mode_source():
    source = ssad.show(vector_valued, wrt=(0, 1), mode="forward").source
    assert source.startswith("def jvp_vector_valued(x, W, *, d_x, d_W):")
    assert "# tangent of: return np.tanh(x @ W) * x[0]" in source
    compile(source, "<forward>", "exec")


def detached(x):
    return np.sum(ssad.stop_gradient(x * x) * x)


def test_stop_gradient_stops_tangents():
    x = np.array([0.5, -1.5])
    _, tangent = ssad.jvp(detached, (x,), (np.array([1.0, 2.0]),))
    assert tangent == pytest.approx(np.sum(x * x * np.array([1.0, 2.0])))


# ----- values released once dead -----


def chain(x):
    return np.sum(np.sin(np.cos(np.tanh(np.exp(0.1 * x)))) * x)


def test_forward_code_releases_each_array_after_its_last_read():
    """Without the `del` lines every intermediate array and its tangent (ten of each here)
    would stay alive until the function returns."""
    import tracemalloc

    source = ssad.show(chain, mode="forward").source
    assert source.count("\n    del ") >= 5
    x = np.linspace(-1.0, 1.0, 1_000_000)
    direction = np.ones_like(x)
    ssad.jvp(chain, (x,), (direction,))  # compiled before measuring
    tracemalloc.start()
    value, tangent = ssad.jvp(chain, (x,), (direction,))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6 * x.nbytes, f"peak {peak / x.nbytes:.1f} arrays of x's size"
    inner = np.sin(np.cos(np.tanh(np.exp(0.1 * x))))
    derivative = np.cos(np.cos(np.tanh(np.exp(0.1 * x)))) * -np.sin(np.tanh(np.exp(0.1 * x))) * (
        1 - np.tanh(np.exp(0.1 * x)) ** 2) * np.exp(0.1 * x) * 0.1
    assert value == pytest.approx(np.sum(inner * x), rel=1e-12)
    assert tangent == pytest.approx(np.sum(derivative * x + inner), rel=1e-10)


def test_forward_code_with_its_del_lines_is_differentiated_again():
    x, v = np.array([0.3, -0.7, 1.2]), np.array([1.0, 0.5, -2.0])

    def along(x):
        return ssad.jvp(chain, (x,), (v,))[1]

    got = ssad.grad(along)(x)
    expected = ssad.hessian(chain)(x) @ v
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    step = 1e-6
    columns = [(along(x + step * e) - along(x - step * e)) / (2 * step) for e in np.eye(3)]
    np.testing.assert_allclose(got, columns, rtol=1e-6, atol=1e-8)


# A value made from a view (`h = y[::-1] + 0.07`) has the view's tangent, a view of `d_y`:
# a later write into y (`y[3] -= ...`) once changed `d_h` with it, a silently wrong jvp
# (random program 3409: -1.984 for -1.883).


def new_value_from_a_reversed_view(x, y):
    y = y.copy()
    y[2:3] = np.sin(x)[2:3]
    h = y[::-1] + 0.07
    y[3] -= np.mean(h)
    h = 0.52 * h + np.tanh(np.amax(y) + y)
    return np.sum(np.cos(h) * x)


def new_value_from_a_row(x, y):
    m = np.outer(y, x)
    m[0, 0] = 1.0
    r = m[1]
    c = r + 0.0
    m[1] = m[1] * 3.0
    return np.sum(c * m[1]) + np.sum(m)


def new_value_from_a_view_of_a_view(x, y):
    z = x * 1.0
    z[0] = y[0]
    a = z[1:]
    b = a[::2]
    c = b + 1.0
    z[1] = z[1] * y[1]
    return np.sum(c * c) + np.sum(z)


def new_value_from_a_view_made_in_a_loop(x, y):
    z = x * 1.0
    z[0] = y[0]
    t = 0.0
    for _ in range(3):
        c = z[1:] * 1.0 + 0.0
        d = z[:2] - 0.5
        z[1] = z[1] * y[1] + np.sum(d)
        t = t + np.sum(c * c) + np.sum(d)
    return t + np.sum(z)


def new_value_from_an_unpacked_row(x, y):
    m = np.outer(x, y)
    m[0, 0] = 1.0
    p, q, r, s = m
    c = p + 0.0
    m[0] = m[0] * 3.0
    return np.sum(c * m[0])


@pytest.mark.parametrize("f", [new_value_from_a_reversed_view, new_value_from_a_row, new_value_from_a_view_of_a_view,
                               new_value_from_a_view_made_in_a_loop, new_value_from_an_unpacked_row])
def test_a_new_value_made_from_a_view_keeps_its_tangent_when_the_array_changes(f):
    x, y = np.array([1.37, 0.78, 0.5, -1.49]), np.array([1.15, -1.35, 0.48, 0.58])
    check_jvp(f, (x, y), seed=1)
    direction = (np.array([0.3, -1.1, 0.7, 0.9]), np.array([-0.6, 0.2, 1.4, -0.8]))
    gradients = ssad.grad(f, wrt=(0, 1))(x, y)
    along = sum(np.sum(g * d) for g, d in zip(gradients, direction, strict=True))
    assert ssad.jvp(f, (x, y), direction)[1] == pytest.approx(along, rel=1e-10)
