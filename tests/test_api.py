"""The public API: signatures, result structure, user rules, caching, show."""

import threading

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches


def poly(x, y, scale=2.0):
    return np.sum(scale * x * x * y + np.sin(y))


def test_float_inputs_give_float_gradients():
    g = ssad.grad(poly)(1.5, 0.5)
    assert type(g) is float
    assert g == pytest.approx(2.0 * 2 * 1.5 * 0.5)


def test_array_gradient_has_input_shape_and_dtype():
    x = np.linspace(0.1, 1.0, 6, dtype=np.float32).reshape(2, 3)
    g = ssad.grad(poly)(x, np.float32(0.5))
    assert isinstance(g, np.ndarray) and g.shape == (2, 3) and g.dtype == np.float32
    gy = ssad.grad(poly, wrt=1)(x, np.float32(0.5))
    assert isinstance(gy, np.float32)


def test_integer_array_input_gets_a_float_gradient():
    g = ssad.grad(poly)(np.array([1, 2, 3]), 0.5)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2.0 * 2 * np.array([1, 2, 3]) * 0.5)


def test_wrt_by_index_name_and_tuple():
    x, y = np.array([0.3, -0.7]), 0.9
    gx = ssad.grad(poly, wrt="x")(x, y)
    gy = ssad.grad(poly, wrt=1)(x, y)
    both = ssad.grad(poly, wrt=("x", 1))(x, y)
    single_tuple = ssad.grad(poly, wrt=(1,))(x, y)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[0], gx)
    assert both[1] == pytest.approx(gy)
    assert isinstance(single_tuple, tuple) and single_tuple[0] == pytest.approx(gy)
    assert_gradient_matches(poly, (x, y), 0, gx)
    assert_gradient_matches(poly, (x, y), 1, gy)
    assert ssad.grad(poly, wrt=-1)(x, y, 3.0) == pytest.approx(np.sum(x * x * y))


def test_gradient_function_keeps_the_signature_and_defaults():
    import inspect

    dpoly = ssad.grad(poly)
    assert str(inspect.signature(dpoly)) == str(inspect.signature(poly))
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(dpoly(x, 1.0, scale=3.0), 3.0 * 2 * x)
    np.testing.assert_allclose(dpoly(x, y=1.0), 2.0 * 2 * x)


def keyword_only(x, *, weight):
    return np.sum(weight * x**2)


def test_keyword_only_parameter_by_name():
    g = ssad.grad(keyword_only, wrt="weight")(np.array([1.0, 2.0]), weight=0.5)
    assert g == pytest.approx(5.0)


def test_input_that_does_not_influence_the_output_gets_zeros():
    def uses_only_x(x, y):
        return np.sum(x**2)

    gy = ssad.grad(uses_only_x, wrt=1)(np.ones(2), np.ones((3, 4)))
    assert gy.shape == (3, 4) and not gy.any()
    assert ssad.grad(uses_only_x, wrt=1)(np.ones(2), 2.0) == 0.0


def test_value_and_grad():
    value, g = ssad.value_and_grad(poly)(np.array([1.0, 2.0]), 0.5)
    assert value == pytest.approx(poly(np.array([1.0, 2.0]), 0.5))
    np.testing.assert_allclose(g, 2.0 * 2 * np.array([1.0, 2.0]) * 0.5)


def detached(x):
    y = ssad.stop_gradient(x * x)
    return np.sum(y * x)


def test_stop_gradient():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ssad.grad(detached)(x), x * x)


# ----- user rules -----


def softplus(x):
    return np.log1p(np.exp(x))


@ssad.adjoint(softplus)
def softplus_adjoint(dy, y, x):
    return (dy / (1.0 + np.exp(-x)),)


def uses_softplus(x):
    return np.sum(softplus(x) * 2.0)


def test_user_rule_on_a_user_function_wins_over_its_body():
    x = np.array([-1.0, 0.5, 2.0])
    g = ssad.grad(uses_softplus)(x)
    np.testing.assert_allclose(g, 2.0 / (1.0 + np.exp(-x)))
    assert_gradient_matches(uses_softplus, (x,), 0, g)
    assert "np.exp(-x)" in ssad.show(uses_softplus).source  # the rule is inlined


def clipped_cube(x):
    return np.clip(x, -1.0, 1.0) ** 3


@ssad.adjoint(clipped_cube)
def clipped_cube_adjoint(dy, y, x):
    if np.ndim(x) == 0:  # not inlinable: the rule is called
        return (dy * 3 * np.clip(x, -1.0, 1.0) ** 2 * (abs(x) < 1.0),)
    inside = np.abs(x) < 1.0
    return (dy * 3 * np.clip(x, -1.0, 1.0) ** 2 * inside,)


def uses_clipped_cube(x):
    return np.sum(np.sin(clipped_cube(x)))


def test_user_rule_that_cannot_be_inlined_is_called():
    x = np.array([-0.5, 0.25, 0.75])
    g = ssad.grad(uses_clipped_cube)(x)
    assert_gradient_matches(uses_clipped_cube, (x,), 0, g)
    assert "clipped_cube_adjoint(" in ssad.show(uses_clipped_cube).source


def test_registering_a_rule_invalidates_the_cache():
    def quad(x):
        return np.sum(scaled_square(x))

    first = ssad.grad(quad)

    @ssad.adjoint(scaled_square)
    def scaled_square_adjoint(dy, y, x):
        return (dy * 4.0 * x,)

    second = ssad.grad(quad)
    assert first is not second
    np.testing.assert_allclose(second(np.array([1.0, 2.0])), [4.0, 8.0])


def scaled_square(x):
    return 2.0 * x * x


@ssad.adjoint(scaled_square)
def scaled_square_adjoint_initial(dy, y, x):
    return (dy * 4.0 * x,)


# ----- cache, threads, show -----


def test_second_grad_is_cached():
    first = ssad.grad(poly, wrt=0)
    second = ssad.grad(poly, wrt=0)
    assert first is second
    assert first.variants.for_args((2.0,)).function is second.variants.for_args((2.0,)).function


def test_concurrent_calls_are_reentrant():
    dpoly = ssad.grad(poly)
    errors = []

    def work(k):
        x = np.full(5, 0.1 * k)
        for _ in range(200):
            g = dpoly(x, 0.5)
            if not np.allclose(g, 2.0 * 2 * x * 0.5):
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_show_returns_source_with_html():
    shown = ssad.show(poly)
    assert str(shown) == shown.source
    assert shown.source.startswith("def grad_poly(x, y, scale=2.0):")
    assert "# grad of: return np.sum(scale * x * x * y + np.sin(y))" in shown.source
    html = shown._repr_html_()
    assert "<span" in html and "grad_poly" in html
    compile(shown.source, "<test>", "exec")


def test_show_stages():
    every = ssad.stages(poly)
    assert list(every) == ["parse", "fence", "jumps", "anf", "cse", "activity", "reverse", "tape", "optimized"]
    assert "scale_times_x = scale * x" in every["anf"]
    assert "# active:" in every["activity"]
    for source in every.values():
        compile(source, "<stage>", "exec")


def early_exit(x, n):
    s = 0.0
    for _ in range(n):
        if s > 10.0:
            break
        s = s + np.sin(x * s + 1.0) * np.sin(x * s + 1.0)
    return s


def test_each_stage_shows_its_own_step():
    every = ssad.stages(early_exit)
    assert "break" in every["fence"] and "stop = True" in every["jumps"]
    assert every["anf"].count("np.sin(") == 2  # the loop body's repeated sine stays two calls
    assert "# save: s" in every["reverse"] and "tape.push(" not in every["reverse"]
    assert "tape.push(" in every["tape"] and "# save:" not in every["tape"]
    with pytest.raises(ssad.SsadError, match="no tape stage"):
        ssad.show(early_exit, mode="forward", stage="tape")


def test_generated_code_is_visible_to_inspect_and_tracebacks():
    import inspect
    import linecache

    generated = ssad.grad(poly).variants.general.function
    source = inspect.getsource(generated)
    assert source == ssad.show(poly).source
    filename = generated.__code__.co_filename
    assert filename.startswith("<ssad grad_poly")
    assert linecache.getline(filename, 1).startswith("def grad_poly")


def test_grad_of_a_gradient_function_differentiates_its_generated_code():
    second = ssad.grad(ssad.grad(poly))
    assert second(1.5, 0.5) == pytest.approx(2.0 * 2 * 0.5)
