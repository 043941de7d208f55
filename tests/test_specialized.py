"""Code specialized on the shape class of the arguments (ranks), recomputation instead of
the tape, common subexpressions in loop bodies, and dead loops: each checked for what the
generated code contains and, always, for the gradient it computes (central differences,
autograd, or a closed form)."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import ssad
from ssad.analysis.ranks import Fact, rank_facts
from ssad.backend.driver import argument_class
from ssad.frontend import anf, parse
from ssad.runtime.receivers import COMPLEX
from ssad.testing import assert_close

from .conftest import assert_gradient_matches

RNG = np.random.default_rng(7)


# ----- the programs (np is swapped for autograd.numpy to get the oracle) -----


def elements(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * np.sin(x[i])
    return s


def rows(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s = s + np.dot(x[i], x[i - 1])
    return s


def recurrence(W, h):
    for _ in range(5):
        h = np.tanh(W @ h)
    return np.sum(h)


def horner(c, x):
    p = np.zeros_like(x)
    for k in range(c.shape[0]):
        p = p * x + c[k]
    return np.sum(p)


def stencil(x):
    s = 0.0
    for i in range(1, x.shape[0] - 1):
        s = s + (x[i - 1] - 2.0 * x[i] + x[i + 1]) ** 2
    return s


def products(a, b):
    return np.sum(np.tanh(np.dot(a, b)) ** 2) + np.sum(a @ b)


def with_autograd_numpy(function):
    import types

    namespace = dict(function.__globals__, np=anp)
    return types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__)


def oracle(function, args, wrt):
    return autograd.grad(with_autograd_numpy(function), wrt)(*args)


LOOPS = [
    (elements, (RNG.standard_normal(7),), 0),
    (rows, (RNG.standard_normal((6, 4)),), 0),
    (recurrence, (0.5 * RNG.standard_normal((4, 4)), RNG.standard_normal(4)), 0),
    (recurrence, (0.5 * RNG.standard_normal((4, 4)), RNG.standard_normal(4)), 1),
    (horner, (RNG.standard_normal(5), RNG.uniform(-1, 1, 6)), 0),
    (horner, (RNG.standard_normal(5), RNG.uniform(-1, 1, 6)), 1),
    (stencil, (RNG.standard_normal(8),), 0),
]


@pytest.mark.parametrize("function, args, wrt", LOOPS, ids=lambda v: getattr(v, "__name__", None))
def test_loops_match_autograd_and_finite_differences(function, args, wrt):
    got = ssad.grad(function, wrt=wrt)(*args)
    assert_close(function.__name__, got, oracle(function, args, wrt), 1e-10, 1e-12)
    assert_gradient_matches(function, args, wrt, got)


@pytest.mark.parametrize("function, args, wrt", LOOPS, ids=lambda v: getattr(v, "__name__", None))
def test_loops_at_second_order(function, args, wrt):
    """The specialized code is differentiated again: a Hessian-vector product against
    central differences of the gradient, and against autograd's."""
    gradient = ssad.grad(function, wrt=wrt)
    v = RNG.standard_normal(np.shape(args[wrt]))
    tangents = tuple(v if i == wrt else None for i in range(len(args)))
    _, hvp = ssad.jvp(gradient, args, tangents)

    def moved(step):
        shifted = list(args)
        shifted[wrt] = args[wrt] + step * v
        return gradient(*shifted)

    eps = 1e-6
    assert_close(f"{function.__name__} hvp", hvp, (moved(eps) - moved(-eps)) / (2 * eps), 1e-5, 1e-7)
    expected = autograd.grad(lambda *a: anp.sum(autograd.grad(with_autograd_numpy(function), wrt)(*a) * v), wrt)(*args)
    assert_close(f"{function.__name__} hvp vs autograd", hvp, expected, 1e-8, 1e-10)


@pytest.mark.parametrize("shapes", [(3,), (2, 3)])
@pytest.mark.parametrize("other", [(3,), (3, 4)])
def test_products_of_every_rank_pair(shapes, other):
    """One function called with vectors and matrices: a variant per rank pair, each one's
    plain form of the product adjoints right."""
    a, b = RNG.standard_normal(shapes), RNG.standard_normal(other)
    got = ssad.grad(products, wrt=(0, 1))(a, b)
    expected = oracle(products, (a, b), 0), oracle(products, (a, b), 1)
    assert_close("d_a", got[0], expected[0], 1e-10, 1e-12)
    assert_close("d_b", got[1], expected[1], 1e-10, 1e-12)


def test_a_gradient_made_once_serves_every_shape_class():
    gradient = ssad.grad(products, wrt=(0, 1))
    for a_shape, b_shape in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)), ((3,), (3,))]:
        a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
        got = gradient(a, b)
        assert_gradient_matches(products, (a, b), 0, got[0])
        assert_gradient_matches(products, (a, b), 1, got[1])
    assert len(gradient.variants.by_mask) == 4


def test_show_with_arguments_shows_the_specialized_code():
    general = ssad.show(recurrence, wrt=(0, 1)).source
    specialized = ssad.show(recurrence, wrt=(0, 1), args=(np.ones((4, 4)), np.ones(4))).source
    assert "matmul_left_adjoint" in general and "matmul_left_adjoint" not in specialized
    assert "np.outer(" in specialized and "W.T @ " in specialized


def test_row_loop_records_nothing_and_runs_no_forward_loop():
    """x[i], x[i - 1] and i - 1 are made again in the adjoint loop; the value is not needed
    by the gradient, so the forward loop goes too."""
    source = ssad.show(rows, args=(np.ones((4, 3)),)).source
    assert "tape" not in source.lower()
    assert source.count("for i in") == 1
    assert "d_x[i] = d_x[i] + " in source
    assert "dot_left_adjoint" not in source and "unbroadcast" not in source


def test_element_loop_reads_each_element_once():
    source = ssad.show(elements, args=(np.ones(4),)).source
    assert source.count("= x[i]") == 1  # in the adjoint loop: the forward loop is gone
    assert "unbroadcast" not in source and "shape_only" not in source


def test_value_and_grad_still_computes_the_value():
    x = RNG.standard_normal((5, 3))
    value, gradient = ssad.value_and_grad(rows)(x)
    assert value == pytest.approx(sum(np.dot(x[i], x[i - 1]) for i in range(1, 5)), rel=1e-12)
    assert_gradient_matches(rows, (x,), 0, gradient)


def test_float32_arguments_keep_their_dtype():
    x = RNG.standard_normal(6).astype(np.float32)
    got = ssad.grad(elements)(x)
    assert got.dtype == np.float32
    assert_close("float32", got, np.sin(x) + x * np.cos(x), 1e-5, 1e-6)


# ----- recomputation is refused where it would read a changed value -----


def written_in_the_loop(x):
    y = x * 1.0
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + np.sin(y[i]) * y[i + 1]
        y[i + 1] = y[i + 1] * 2.0 + y[i]
    return s


def carried(x):
    s = 0.0
    t = 0.0
    for i in range(x.shape[0]):
        s = s + t * x[i]
        t = x[i]
    return s


def changed_by_a_callee(x):
    y = x * 1.0
    s = 0.0
    for i in range(x.shape[0]):
        t = y[i]
        scale(y)
        s = s + np.sin(t) * y[i]
    return s


def scale(z):
    z *= 1.5


def index_from_an_array(w, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s = s + w[idx[k]] ** 2 * w[k]
    return s


@pytest.mark.parametrize(
    "function, args",
    [
        (written_in_the_loop, (RNG.standard_normal(5),)),
        (carried, (RNG.standard_normal(5),)),
        (index_from_an_array, (RNG.standard_normal(5), np.array([4, 0, 0, 2, 1]))),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_recomputation_only_where_the_value_is_the_same(function, args):
    got = ssad.grad(function)(*args)
    assert_gradient_matches(function, args, 0, got)


def test_an_array_a_callee_changes_is_not_recomputed():
    x = RNG.standard_normal(4)
    try:
        got = ssad.grad(changed_by_a_callee)(x)
    except ssad.SsadError:
        return  # refusing the write through the callee is fine; a wrong value is not
    assert_gradient_matches(changed_by_a_callee, (x,), 0, got)


# ----- the rank facts -----


def facts_of(function, **params):
    program = anf.to_anf(parse.parse_function(function))
    return rank_facts(program, params)


def test_rank_facts_follow_indexing_products_and_reductions():
    facts = facts_of(rows, x=Fact(2))
    assert facts["i"] == Fact(0, True)
    assert facts["x_at_i"] == Fact(1)
    assert facts["dot_x_at_i_x_at_i_minus_1"] == Fact(0)
    assert facts["s"] == Fact(0)


def test_rank_facts_hold_around_a_loop_and_drop_on_disagreement():
    facts = facts_of(recurrence, W=Fact(2), h=Fact(1))
    assert facts["h"] == Fact(1)

    def grows(x):
        s = 0.0
        for _ in range(3):
            s = s + x
        return np.sum(s)

    assert "s" not in facts_of(grows, x=Fact(1))  # a number, then an array: no rank
    assert facts_of(grows, x=Fact(0))["s"] == Fact(0)


def test_argument_classes():
    assert argument_class(1.5) == Fact(0)
    assert argument_class(3) == Fact(0, True)
    assert argument_class(True) == Fact(0)
    assert argument_class(np.ones((2, 3))) == Fact(2, False, (False, False))
    assert argument_class(np.ones((1, 3))) == Fact(2, False, (True, False))  # broadcasts along axis 0
    assert argument_class(np.arange(3)) == Fact(1, True, (False,))
    assert argument_class(np.ones(3, complex)) == COMPLEX  # no rank: real inputs' gradients made real
    assert argument_class(1.5 + 2j) == argument_class(np.complex128(1j)) == COMPLEX
    assert argument_class([1.0, 2.0]) is None
    with pytest.raises(ssad.SsadError, match="a subclass of np.ndarray"):  # np.ndarray's rules would not hold
        argument_class(np.ma.masked_array([1.0]))


# ----- the facts reach the functions it calls -----


def cell(W, h):
    return np.tanh(W @ h)


def calls_a_cell(W, h):
    return np.sum(cell(W, h) ** 2)


def test_a_callee_is_specialized_on_the_callers_facts():
    from ssad.runtime.handles import vjp_handles

    W, h = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    gradient = ssad.grad(calls_a_cell, wrt=(0, 1))
    got = gradient(W, h)
    assert_close("d_W", got[0], oracle(calls_a_cell, (W, h), 0), 1e-10, 1e-12)
    assert_close("d_h", got[1], oracle(calls_a_cell, (W, h), 1), 1e-10, 1e-12)
    facts = frozenset({("W", argument_class(W)), ("h", argument_class(h))})
    forward, _ = vjp_handles(cell, ("W", "h"), facts)
    source = forward.entry().source
    assert "np.outer(" in source and "matmul_left_adjoint" not in source


# ----- scalars made again in the adjoint loop -----


def test_element_and_stencil_loops_make_their_scalars_again():
    """np.sin(x[i]) and the stencil's arithmetic are numbers: the adjoint loop makes them
    again, so nothing is recorded and the forward loop (the value only) goes."""
    for function in (elements, stencil):
        x = RNG.standard_normal(7)
        source = ssad.show(function, args=(x,)).source
        assert "tape" not in source.lower(), source
        assert source.count("for i in") == 1, source
        assert_gradient_matches(function, (x,), 0, ssad.grad(function)(x))


def scalar_of_a_carried_value(x):
    s = 0.0
    t = 1.0
    for i in range(x.shape[0]):
        u = np.sin(t) * x[i]
        s = s + u * u
        t = x[i] * 2.0 + t
    return s


def test_a_scalar_of_a_carried_value_is_recorded():
    """`np.sin(t)` reads `t`, which the loop carries: it is not made again (the value of
    another iteration would be read), so the gradient stays right."""
    x = RNG.standard_normal(6)
    got = ssad.grad(scalar_of_a_carried_value)(x)
    assert_gradient_matches(scalar_of_a_carried_value, (x,), 0, got)
    assert_close("d_x", got, oracle(scalar_of_a_carried_value, (x,), 0), 1e-10, 1e-12)


def mean_square(x):
    return np.mean(x**2)


def test_a_full_reduction_is_not_computed_for_its_size():
    """The mean's adjoint divides by size(x) / size(mean): for a number that is 1, so the
    mean itself is not computed by the gradient."""
    x = RNG.standard_normal(5)
    source = ssad.show(mean_square, args=(x,)).source
    assert "= np.mean(" not in source, source
    assert_close("d_x", ssad.grad(mean_square)(x), 2 * x / 5, 1e-14, 1e-15)


# ----- compiled once, at the first call -----


def test_grad_and_its_first_call_compile_once(monkeypatch):
    from ssad.backend import driver

    built = []
    original = driver.build

    def counting(f, *args, **kwargs):
        built.append(kwargs.get("scalars"))
        return original(f, *args, **kwargs)

    monkeypatch.setattr(driver, "build", counting)
    fresh = type(rows)(rows.__code__, rows.__globals__, "rows", rows.__defaults__)
    gradient = ssad.grad(fresh)
    assert built == []  # grad(f) runs the front end only
    x = RNG.standard_normal((4, 3))
    assert_gradient_matches(rows, (x,), 0, gradient(x))
    assert len(built) == 1 and built[0]  # the code for a matrix, not the general code too
    gradient(RNG.standard_normal((6, 2)))
    assert len(built) == 1  # the same shape class
    general = gradient.variants.general  # asked for: compiled then
    assert len(built) == 2 and not built[1]
    assert "unbroadcast" in general.source or "dot_left_adjoint" in general.source


def uses_a_with(x):
    with np.errstate(all="ignore"):
        y = np.sin(x)
    return y


def hermite(x):
    return np.sum(np.polynomial.hermite.hermval(x, [0.5, -1.0]) ** 2)


def test_what_ssad_refuses_is_raised_by_grad_itself():
    """grad(f) compiles nothing, but runs the pipeline far enough to refuse at once."""
    with pytest.raises(ssad.UnsupportedSyntaxError):
        ssad.grad(uses_a_with)
    with pytest.raises(ssad.MissingRuleError, match="hermval"):
        ssad.grad(hermite)


def test_grad_and_its_first_call_parse_and_lower_once(monkeypatch):
    """The check at grad(f) leaves its program in A-normal form to the first call's build."""
    lowered = []
    original = anf.to_anf

    def counting(parsed):
        lowered.append(parsed.function)
        return original(parsed)

    monkeypatch.setattr(anf, "to_anf", counting)
    fresh = type(rows)(rows.__code__, rows.__globals__, "rows", rows.__defaults__)
    gradient = ssad.grad(fresh)
    x = RNG.standard_normal((4, 3))
    assert_gradient_matches(rows, (x,), 0, gradient(x))
    assert lowered.count(fresh) == 1  # (the suite also reads back what ssad generates)


def test_a_closure_value_changed_after_grad_is_the_one_differentiated():
    scale = 1.0

    def f(x):
        return scale * np.sum(x**3)

    gradient = ssad.grad(f)
    scale = 3.0  # rebound before the first call: the first call's value counts, as in f itself
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(gradient(x), 9.0 * x**2)


WEIGHT = 1.0


def weighted(x):
    return WEIGHT * np.sum(np.sin(x))


def test_a_global_rebound_after_grad_is_the_one_differentiated(monkeypatch):
    gradient = ssad.grad(weighted)
    monkeypatch.setitem(weighted.__globals__, "WEIGHT", -2.0)
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(gradient(x), -2.0 * np.cos(x))


def test_a_rule_registered_after_grad_is_the_one_used():
    def cube(x):
        return x**3

    def f(x):
        return np.sum(cube(x))

    gradient = ssad.grad(f)
    x = np.array([0.5, 2.0])

    @ssad.adjoint(cube)
    def cube_adjoint(dy, y, x):
        return (dy * 100.0,)  # deliberately not the derivative: shows which rule ran

    np.testing.assert_allclose(gradient(x), np.full(2, 100.0))
    np.testing.assert_allclose(ssad.grad(f)(x), np.full(2, 100.0))


def test_code_replaced_after_grad_is_the_code_differentiated():
    def f(x):
        return np.sum(np.sin(x))

    def other(x):
        return np.sum(x**2)

    gradient = ssad.grad(f)
    f.__code__ = other.__code__
    x = np.array([0.3, -1.5])
    np.testing.assert_allclose(gradient(x), 2 * x)


# ----- adjoints summed back to a broadcast operand's shape, as plain sums -----


def broadcast_operands(W, b, c, s, x):
    # b is added to every row, c multiplies every column, s is a number
    z = np.tanh(x @ W + b) * c + s
    return np.sum(z**2) + np.sum(c * c)


def _broadcast_arguments():
    return (RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((5, 1)), 0.7,
            RNG.standard_normal((5, 3)))


def test_broadcast_operands_get_plain_sums():
    args = _broadcast_arguments()
    source = ssad.show(broadcast_operands, wrt=(0, 1, 2, 3), args=args).source
    assert ".sum(axis=0)" in source  # the bias
    assert ".sum(axis=1, keepdims=True)" in source  # the column
    assert ".sum()" in source  # the number
    assert "unbroadcast" not in source
    got = ssad.grad(broadcast_operands, wrt=(0, 1, 2, 3))(*args)
    expected = autograd.grad(with_autograd_numpy(broadcast_operands), (0, 1, 2, 3))(*args)
    for name, g, e in zip("Wbcs", got, expected, strict=True):
        assert_close(f"d_{name}", g, e, 1e-10, 1e-12)
    assert type(got[3]) is float  # the number's gradient is a number


def test_plain_sums_differentiate_again():
    args = _broadcast_arguments()
    for position in (1, 2):
        got = ssad.hessian(broadcast_operands, position)(*args)
        expected = autograd.hessian(with_autograd_numpy(broadcast_operands), position)(*args)
        assert_close(f"hessian {position}", got, expected, 1e-9, 1e-11)
    gradient = ssad.grad(broadcast_operands, 1)
    inner = autograd.grad(with_autograd_numpy(broadcast_operands), 1)

    def squared(W, b, c, s, x):
        return np.sum(gradient(W, b, c, s, x) ** 2)

    def squared_autograd(W, b, c, s, x):
        return anp.sum(inner(W, b, c, s, x) ** 2)

    assert_close("grad of a gradient", ssad.grad(squared, 2)(*args), autograd.grad(squared_autograd, 2)(*args),
                 1e-9, 1e-11)


def test_a_unit_dimension_both_operands_share_is_not_summed():
    def f(c, d):
        return np.sum(np.sin(c * d))  # both (5, 1): the product is a column too

    c, d = RNG.standard_normal((5, 1)), RNG.standard_normal((5, 1))
    source = ssad.show(f, wrt=(0, 1), args=(c, d)).source
    assert "d_c = d_c_times_d * d" in source and "keepdims" not in source and "unbroadcast" not in source
    got = ssad.grad(f, wrt=(0, 1))(c, d)
    assert_close("d_c", got[0], np.cos(c * d) * d, 1e-12, 1e-14)
    assert_close("d_d", got[1], np.cos(c * d) * c, 1e-12, 1e-14)


def cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(logits.shape[0]), labels])


def test_a_mean_of_gathered_entries_scatters_its_number():
    """The mean's adjoint is one number: the scatter into the log-probabilities spreads it
    over the entries read, with no array of copies made first."""
    logits, labels = RNG.standard_normal((6, 4)), np.array([0, 3, 1, 1, 2, 0])
    source = ssad.show(cross_entropy, args=(logits, labels)).source
    assert "broadcast_to" not in source and "getitem_adjoint(" in source
    got = ssad.grad(cross_entropy)(logits, labels)
    probabilities = np.exp(logits) / np.sum(np.exp(logits), axis=1, keepdims=True)
    expected = (probabilities - np.eye(4)[labels]) / 6
    assert_close("d_logits", got, expected, 1e-12, 1e-14)
    hessian = ssad.hessian(cross_entropy)(logits, labels)
    assert_close("hessian", hessian, autograd.hessian(with_autograd_numpy(cross_entropy))(logits, labels), 1e-10, 1e-12)


def test_calls_with_new_shapes_of_one_class_share_its_code():
    gradient = ssad.grad(broadcast_operands, wrt=(0, 1))
    W, b, c, s, x = _broadcast_arguments()
    for rows in (5, 7, 5):
        x_rows, c_rows = RNG.standard_normal((rows, 3)), RNG.standard_normal((rows, 1))
        got = gradient(W, b, c_rows, s, x_rows)
        assert_gradient_matches(broadcast_operands, (W, b, c_rows, s, x_rows), 1, got[1])
    assert len(gradient.variants.by_mask) == 1 and len(gradient.variants.by_shapes) == 2
    # a dimension of length 1 where there was none is another class; so are integers
    gradient(W[:1], b, c, s, x[:, :1])
    gradient(W, b, c, 1, x)
    assert len(gradient.variants.by_mask) == 3
    # every parameter of wrt by keyword too
    got = gradient(W=W, b=b, c=c, s=s, x=x)
    assert_gradient_matches(broadcast_operands, (W, b, c, s, x), 0, got[0])
