"""Numerical checks of the rules in ssad/rules/statistics.py.

autograd.numpy has every one of these functions, but defines no derivative for them
(`autograd.grad` of `np.nanmean`, `np.median`, `np.cov`, ... raises NotImplementedError),
so the comparisons with autograd below differentiate the same quantity written with the
operations autograd does differentiate (`where`, `sort`, sums and products).
"""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.errors import SsadError
from ssad.registry import REGISTRY, primitive_name
from ssad.testing import check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, assert_transpose, case_id

rng = np.random.default_rng(20240722)


def _signed(shape):
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


V = _signed(7)
M = _signed((3, 6))
T = _signed((2, 3, 4))
# NaNs, at most one per slice along any axis, so that every slice keeps two numbers
TN = T.copy()
TN[0, 1, 2] = TN[1, 2, 0] = TN[1, 0, 3] = np.nan
MN = M.copy()
MN[0, 4] = MN[2, 1] = np.nan
W6 = rng.uniform(0.5, 1.5, size=6)
W7 = rng.uniform(0.5, 1.5, size=7)
F6 = np.array([1, 2, 1, 3, 1, 2])
EDGES = np.array([-2, -1, 0, 1, 2])  # integer edges: fixed bins, not perturbed by the checks
X5 = np.array([0, 2, 2, 1, 4])

CASES = [
    # NaN-ignoring reductions: the first case of each is the second-order check
    Case(np.nansum, (TN,), {"axis": 1}, id="nansum-axis"),
    Case(np.nansum, (TN,), {}, id="nansum-all"),
    Case(np.nansum, (TN, (0, 2), None, None, True), {}, id="nansum-positional-keepdims"),
    Case(np.nansum, (MN,), {"axis": -1, "keepdims": True}, id="nansum-keepdims"),
    Case(np.nanmean, (TN,), {"axis": (0, 2)}, id="nanmean-axis-tuple"),
    Case(np.nanmean, (TN,), {}, id="nanmean-all"),
    Case(np.nanmean, (MN, 0, None, None, True), {}, id="nanmean-positional-keepdims"),
    Case(np.nanmean, (MN + 0.5j * M,), {"axis": 1}, id="nanmean-complex"),
    Case(np.nanvar, (TN,), {"axis": -1, "ddof": 1}, id="nanvar-ddof"),
    Case(np.nanvar, (TN,), {"axis": (0, 1)}, id="nanvar-axis-tuple"),
    Case(np.nanvar, (MN, None, None, None, 1, True), {}, id="nanvar-positional"),
    Case(np.nanvar, (MN + 0.5j * M,), {"axis": 1}, id="nanvar-complex"),
    Case(np.nanstd, (TN,), {"axis": 2}, id="nanstd-axis"),
    Case(np.nanstd, (TN,), {"axis": (0, 2), "ddof": 1, "keepdims": True}, id="nanstd-ddof-keepdims"),
    Case(np.nanstd, (MN,), {}, id="nanstd-all"),
    Case(np.nanmax, (TN,), {"axis": 2}, id="nanmax-axis"),
    Case(np.nanmax, (TN,), {}, id="nanmax-all"),
    Case(np.nanmax, (TN, (0, 1), None, True), {}, id="nanmax-positional-keepdims"),
    Case(np.nanmin, (TN,), {"axis": 1}, id="nanmin-axis"),
    Case(np.nanmin, (MN,), {"axis": 0, "keepdims": True}, id="nanmin-keepdims"),
    Case(np.nanmin, (MN,), {"axis": 1, "initial": 0.0}, id="nanmin-initial"),
    Case(np.nanprod, (TN,), {"axis": 1, "keepdims": True}, id="nanprod-keepdims"),
    Case(np.nanprod, (TN,), {}, id="nanprod-all"),
    Case(np.nanprod, (MN,), {"axis": (0, 1)}, id="nanprod-axis-tuple"),
    Case(np.nancumsum, (TN,), {"axis": 2}, id="nancumsum-axis"),
    Case(np.nancumsum, (TN,), {}, id="nancumsum-flat"),
    Case(np.nancumsum, (MN, 0), {}, id="nancumsum-positional"),
    Case(np.nancumprod, (TN,), {"axis": 1}, id="nancumprod-axis"),
    Case(np.nancumprod, (TN,), {}, id="nancumprod-flat"),
    Case(np.nancumprod, (MN, -1), {}, id="nancumprod-positional"),
    # average: weights positional, so that the check reaches them
    Case(np.average, (M, 1, W6), {}, id="average-weights-1d"),
    Case(np.average, (M, None, None), {}, id="average-plain"),
    Case(np.average, (T, (0, 2), None), {"keepdims": True}, id="average-axis-tuple-keepdims"),
    Case(np.average, (M, None, _signed((3, 6)) * 0.1 + 1.0), {}, id="average-weights-full"),
    Case(np.average, (M, 1, W6, True), {}, id="average-returned"),
    Case(np.average, (T, (0, 2), rng.uniform(0.5, 1.5, (2, 4)), True), {}, id="average-returned-axis-tuple"),
    Case(np.average, (T, (2, 0), rng.uniform(0.5, 1.5, (4, 2))), {"keepdims": True}, id="average-axes-reordered"),
    Case(np.average, (M + 0.5j * M[::-1], 1, W6), {}, id="average-complex"),
    # cov and corrcoef: every argument up to aweights positional
    Case(np.cov, (M, None, True, False, None, None, None), {}, id="cov"),
    Case(np.cov, (M, M[:2] * 0.5 + _signed((2, 6)), True, False, None, None, None), {}, id="cov-y"),
    Case(np.cov, (M.T, None, False, False, None, None, None), {}, id="cov-rowvar-false"),
    Case(np.cov, (V, None, True, True, None, None, None), {}, id="cov-vector-bias"),
    Case(np.cov, (V, V**2, False, False, 2, None, None), {}, id="cov-vector-y-ddof"),
    Case(np.cov, (M, None, True, False, None, F6, W6), {}, id="cov-fweights-aweights"),
    Case(np.cov, (M, None, True, False, 2, None, W6), {}, id="cov-aweights-ddof"),
    Case(np.cov, (M, None, True, True, None, F6, None), {}, id="cov-fweights-bias"),
    Case(np.cov, (M + 0.5j * _signed((3, 6)), None, True, False, None, None, W6), {}, id="cov-complex"),
    Case(np.corrcoef, (M, None), {}, id="corrcoef"),
    Case(np.corrcoef, (V, V**2 + 0.3 * V), {}, id="corrcoef-y"),
    Case(np.corrcoef, (M.T, None, False), {}, id="corrcoef-rowvar-false"),
    # medians and quantiles (points away from the kinks of the interpolation)
    Case(np.median, (T,), {"axis": 1}, id="median-odd"),
    Case(np.median, (M,), {"axis": 1}, id="median-even"),
    Case(np.median, (T,), {}, id="median-all"),
    Case(np.median, (T, (0, 2), None, False, True), {}, id="median-positional-keepdims"),
    Case(np.quantile, (M, 0.37), {"axis": 1}, id="quantile-scalar-q"),
    Case(np.quantile, (T, 0.3), {"axis": (0, 2)}, id="quantile-axis-tuple"),
    Case(np.quantile, (M, np.array([0.1, 0.55, 0.9])), {"axis": 1}, id="quantile-array-q"),
    Case(np.quantile, (T, np.array([[0.15, 0.62]])), {"axis": -1, "keepdims": True}, id="quantile-2d-q-keepdims"),
    Case(np.quantile, (V, 0.8), {}, id="quantile-vector"),
    *[
        Case(np.quantile, (M, 0.37, 1, None, False, method), {}, id=f"quantile-{method}")
        for method in (
            "hazen", "weibull", "median_unbiased", "normal_unbiased", "interpolated_inverted_cdf",
            "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "lower", "higher", "nearest", "midpoint",
        )
    ],
    Case(np.percentile, (M, np.array([10.0, 55.0, 90.0])), {"axis": 1, "keepdims": True}, id="percentile-array-q"),
    Case(np.percentile, (T, 42.0), {}, id="percentile-all"),
    Case(np.percentile, (M, 63.0, 0, None, False, "hazen"), {}, id="percentile-hazen"),
    Case(np.nanmedian, (TN,), {"axis": 2}, id="nanmedian-axis"),
    Case(np.nanmedian, (MN,), {}, id="nanmedian-all"),
    Case(np.nanquantile, (TN, np.array([0.2, 0.7])), {"axis": 2}, id="nanquantile-array-q"),
    Case(np.nanquantile, (MN, 0.4, 0, None, False, "weibull"), {}, id="nanquantile-weibull"),
    Case(np.nanpercentile, (TN, 33.0), {"axis": -1}, id="nanpercentile"),
    Case(np.nanpercentile, (MN, 71.0), {"axis": (0, 1)}, id="nanpercentile-axis-tuple"),
    # histograms and bin counts: weights positional
    Case(np.histogram, (V, EDGES, None, None, W7), {}, id="histogram-weights"),
    Case(np.histogram, (V, EDGES, None, True, W7), {}, id="histogram-density"),
    Case(np.histogram, (V, 3, (-1, 1), None, W7), {}, id="histogram-range"),
    Case(np.histogram, (M, EDGES, None, True, _signed((3, 6))), {}, id="histogram-2d-density"),
    Case(np.bincount, (X5, _signed(5)), {}, id="bincount"),
    Case(np.bincount, (X5, _signed(5), 8), {}, id="bincount-minlength"),
    # unique values (no ties: each element is its own value) and bin edges
    Case(np.unique, (V,), {}, id="unique"),
    Case(np.unique, (M,), {"return_inverse": True, "return_counts": True}, id="unique-inverse-counts"),
    Case(np.unique_values, (V,), {}, id="unique_values"),
    Case(np.unique_counts, (V,), {}, id="unique_counts"),
    Case(np.unique_inverse, (M,), {}, id="unique_inverse"),
    Case(np.unique_all, (V,), {}, id="unique_all"),
    Case(np.histogram_bin_edges, (V,), {}, id="histogram_bin_edges"),
    Case(np.histogram_bin_edges, (M, 4), {}, id="histogram_bin_edges-count"),
    Case(np.histogram_bin_edges, (V, "auto"), {}, id="histogram_bin_edges-method"),
    Case(np.histogram_bin_edges, (V, np.array([-2.0, -0.5, 0.5, 2.0])), {}, id="histogram_bin_edges-edges"),
]

TUPLE_OUTPUTS = {"average-returned", "average-returned-axis-tuple"}
TUPLE_OUTPUTS |= {c.id for c in CASES if c.primitive is np.histogram}
TUPLE_OUTPUTS |= {"unique-inverse-counts", "unique_counts", "unique_inverse", "unique_all"}

NONDIFFERENTIABLE = []


def _quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    _quietly(check_rule, case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    _quietly(check_tangent, case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id not in TUPLE_OUTPUTS and not c.id.endswith("complex")], ids=case_id
)
def test_tangent_is_the_transpose_of_the_adjoint(case):  # real inputs: cases.assert_transpose pairs real values
    _quietly(assert_transpose, case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", [c for c in CASES if c.id in TUPLE_OUTPUTS], ids=case_id)
def test_tangent_of_a_tuple_output_is_the_transpose_of_the_adjoint(case):
    generator = np.random.default_rng(3)
    y = case.primitive(*case.args, **case.kwargs)
    dy = tuple(generator.standard_normal(np.shape(part)) for part in y)
    tangents = tuple(
        generator.standard_normal(np.shape(a)) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None
        for a in case.args
    )
    adjoints = REGISTRY.adjoint_rule(case.primitive)(dy, y, *case.args, **case.kwargs)
    t_y = REGISTRY.tangent_rule(case.primitive)(tangents, y, *case.args, **case.kwargs)
    forward = sum(float(np.sum(d * t)) for d, t in zip(dy, t_y, strict=True))
    paired = [(d, t) for d, t in zip(adjoints, tangents, strict=False) if d is not None and t is not None]
    assert paired
    backward = sum(float(np.sum(d * t)) for d, t in paired)
    np.testing.assert_allclose(backward, forward, rtol=1e-12, atol=1e-12)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import statistics

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == statistics.__name__}
    assert rules == {case.primitive for case in CASES}
    missing = [primitive_name(p) for p in rules if REGISTRY.tangent_rule(p) is None]
    assert not missing


# ----- Second order through variants the first case of each primitive does not reach -----

SECOND_ORDER = [
    Case(np.nanmean, (MN, 0, None, None, True), {}, id="nanmean-positional-keepdims"),
    Case(np.nanstd, (TN,), {"axis": (0, 2), "ddof": 1, "keepdims": True}, id="nanstd-ddof-keepdims"),
    Case(np.nanmin, (MN,), {"axis": 0, "keepdims": True}, id="nanmin-keepdims"),
    Case(np.nancumprod, (TN,), {}, id="nancumprod-flat"),
    Case(np.average, (M, 1, W6, True), {}, id="average-returned"),
    Case(np.average, (T, (2, 0), rng.uniform(0.5, 1.5, (4, 2))), {"keepdims": True}, id="average-axes-reordered"),
    Case(np.cov, (M, M[:2] * 0.5 + 1.0, True, False, None, None, None), {}, id="cov-y"),
    Case(np.cov, (M, None, True, False, 2, F6, W6), {}, id="cov-aweights-ddof"),
    Case(np.cov, (M.T, None, False, False, None, None, None), {}, id="cov-rowvar-false"),
    Case(np.corrcoef, (V, V**2 + 0.3 * V), {}, id="corrcoef-y"),
    Case(np.median, (M,), {"axis": 1}, id="median-even"),
    Case(np.quantile, (M, np.array([0.1, 0.55, 0.9])), {"axis": 1}, id="quantile-array-q"),
    Case(np.quantile, (M, 0.37, 1, None, False, "hazen"), {}, id="quantile-hazen"),
    Case(np.percentile, (T, 42.0), {"axis": (0, 2)}, id="percentile-axis-tuple"),
    Case(np.nanquantile, (TN, np.array([0.2, 0.7])), {"axis": 2}, id="nanquantile-array-q"),
    Case(np.nanmedian, (MN,), {"axis": 0}, id="nanmedian-axis"),
    Case(np.histogram, (V, EDGES, None, True, W7), {}, id="histogram-density"),
    Case(np.unique_all, (M,), {}, id="unique_all-matrix"),
    Case(np.histogram_bin_edges, (M, 3), {}, id="histogram_bin_edges-count"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_of_variants(case):
    _quietly(check_second_order, case.primitive, *case.args, **case.kwargs)


# ----- Exact values at ties, NaNs and all-NaN slices -----


def _adjoint(primitive, dy, *args, **kwargs):
    y = _quietly(primitive, *args, **kwargs)
    return _quietly(REGISTRY.adjoint_rule(primitive), dy, y, *args, **kwargs)


def _tangent(primitive, tangents, *args, **kwargs):
    y = _quietly(primitive, *args, **kwargs)
    return _quietly(REGISTRY.tangent_rule(primitive), tangents, y, *args, **kwargs)


ALL_NAN = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan]])


@pytest.mark.parametrize(
    "primitive, expected",
    [
        (np.nansum, [[2.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanmean, [[2 / 3, 0.0, 2 / 3, 2 / 3], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanmax, [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanmin, [[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanvar, [[-2 / 3 * 2, 0.0, 2 / 3 * 2, 0.0], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanprod, [[12.0, 0.0, 4.0, 6.0], [0.0, 0.0, 0.0, 0.0]]),
        (np.nanmedian, [[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]),
    ],
)
def test_all_nan_slices_and_nan_elements_get_zero_gradient(primitive, expected):
    (dx,) = _adjoint(primitive, np.array([2.0, 5.0]), ALL_NAN, axis=1)
    np.testing.assert_allclose(dx, expected, rtol=1e-15, atol=1e-15)
    t = np.array([[1.0, 100.0, 3.0, 5.0], [7.0, 11.0, 13.0, 17.0]])
    assert np.isnan(_quietly(primitive, ALL_NAN, axis=1)[1]) == (primitive not in (np.nansum, np.nanprod))
    t_y = _tangent(primitive, (t,), ALL_NAN, axis=1)
    np.testing.assert_allclose(t_y[1], 0.0)  # the tangent of the all-NaN slice, and no NaN read
    np.testing.assert_allclose(t_y[0], np.sum(np.asarray(expected)[0] * t[0]) / 2.0, rtol=1e-14)


def test_nanstd_without_spread_or_degrees_of_freedom_is_zero():
    x = np.array([[2.0, np.nan, 2.0], [np.nan, 1.0, np.nan], [1.0, 3.0, np.nan]])
    (dx,) = _adjoint(np.nanstd, np.ones(3), x, axis=1, ddof=1)
    np.testing.assert_array_equal(dx, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1 / np.sqrt(2), 1 / np.sqrt(2), 0.0]])
    (dx,) = _adjoint(np.nanvar, np.ones(3), x, axis=1, ddof=1)
    assert np.all(np.isfinite(dx)) and dx[1, 1] == 0.0


def test_nanmax_ties_split_evenly_and_nans_get_nothing():
    x = np.array([[3.0, np.nan, 3.0, 1.0], [np.nan, 2.0, 2.0, 2.0]])
    (dx,) = _adjoint(np.nanmax, np.array([4.0, 3.0]), x, axis=1)
    np.testing.assert_array_equal(dx, [[2.0, 0.0, 2.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    t = np.array([[1.0, 50.0, 3.0, 7.0], [9.0, 1.0, 2.0, 6.0]])
    np.testing.assert_array_equal(_tangent(np.nanmax, (t,), x, axis=1), [2.0, 3.0])


def test_median_of_an_even_count_splits_between_the_two_middle_elements():
    x = np.array([4.0, 1.0, 3.0, 2.0])
    (dx,) = _adjoint(np.median, 2.0, x)
    np.testing.assert_array_equal(dx, [0.0, 0.0, 1.0, 1.0])
    (dx,) = _adjoint(np.median, 2.0, x[:3])
    np.testing.assert_array_equal(dx, [0.0, 0.0, 2.0])


def test_median_with_ties_follows_argsort_like_sort():
    x = np.array([2.0, 2.0, 2.0, 5.0, 1.0])
    (dx,) = _adjoint(np.median, 1.0, x)
    assert np.sum(dx) == 1.0 and np.count_nonzero(dx) == 1
    assert dx[np.argsort(x)[2]] == 1.0


def test_median_of_a_slice_holding_nan_goes_to_its_nans_as_max_does():
    x = np.array([[1.0, np.nan, 3.0, np.nan, 2.0], [1.0, 4.0, 3.0, 5.0, 2.0]])
    (dx,) = _adjoint(np.median, np.array([2.0, 1.0]), x, axis=1)
    np.testing.assert_array_equal(dx, [[0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    d_a, d_q = _adjoint(np.quantile, np.array([2.0, 1.0]), x, 0.3, axis=1)
    assert d_q == pytest.approx(1.0 * 4 * (2.0 - 1.0))  # the NaN slice passes nothing to q
    np.testing.assert_array_equal(d_a[0], [0.0, 1.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "method, expected",
    [
        ("lower", [1.0, 0.0, 0.0, 0.0, 0.0]),
        ("higher", [0.0, 1.0, 0.0, 0.0, 0.0]),
        ("nearest", [0.0, 1.0, 0.0, 0.0, 0.0]),
        ("midpoint", [0.5, 0.5, 0.0, 0.0, 0.0]),
        ("linear", [0.4, 0.6, 0.0, 0.0, 0.0]),
    ],
)
def test_quantile_weights_of_the_two_order_statistics(method, expected):
    x = np.array([10.0, 20.0, 30.0, 40.0, 50.0])  # sorted: index = rank; v = 4 q = 0.6 for linear
    d_a, d_q = _adjoint(np.quantile, 1.0, x[::-1], 0.15, method=method)
    np.testing.assert_allclose(d_a[::-1], expected, rtol=1e-12)
    assert d_q == (4 * 10.0 if method == "linear" else 0.0)


def test_quantile_slope_in_q_at_the_ends_uses_the_end_segments():
    x = np.array([3.0, 1.0, 7.0, 2.0])
    assert _adjoint(np.quantile, 1.0, x, 1.0)[1] == pytest.approx(3 * (7.0 - 3.0))
    assert _adjoint(np.quantile, 1.0, x, 0.0)[1] == pytest.approx(3 * (2.0 - 1.0))
    assert _adjoint(np.percentile, 1.0, x, 100.0)[1] == pytest.approx(3 * (7.0 - 3.0) / 100)
    assert _adjoint(np.quantile, 1.0, x, 0.01, method="hazen")[1] == 0.0  # clipped to the first value


@pytest.mark.parametrize("method", ["linear", "hazen", "weibull", "median_unbiased", "normal_unbiased",
                                    "interpolated_inverted_cdf", "nearest", "averaged_inverted_cdf"])
def test_quantile_slope_in_q_matches_numpy_for_every_method(method):
    x = np.array([0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 3.1])
    for q in (0.2, 0.45, 0.8):
        d_q = _adjoint(np.quantile, 1.0, x, q, method=method)[1]
        expected = numerical_gradient(lambda s: np.quantile(x, s, method=method), q)
        np.testing.assert_allclose(d_q, expected, rtol=1e-6, atol=1e-8)


def test_quantile_weights_keyword_is_refused():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ssad.SsadError, match="weights="):
        _adjoint(np.quantile, 1.0, x, 0.5, method="inverted_cdf", weights=np.ones(3))


def test_cov_fweights_carry_no_gradient_and_aweights_do():
    adjoints = _adjoint(np.cov, np.eye(3), M, None, True, False, None, F6, W6)
    assert adjoints[5] is None and adjoints[6].shape == (6,)


def test_corrcoef_diagonal_passes_nothing_back():
    dy = np.eye(3)
    (d_x, d_y) = _adjoint(np.corrcoef, dy, M, None)
    np.testing.assert_allclose(d_x, 0.0, atol=1e-14)
    assert d_y is None
    assert np.all(_adjoint(np.corrcoef, 1.0, V, None)[0] == 0.0)  # one variable: constant 1


def test_average_returned_sum_of_weights_differentiates_in_the_weights():
    d_a, _, d_w = _adjoint(np.average, (np.zeros(3), np.array([1.0, 2.0, 3.0])), M, 1, W6, True)
    np.testing.assert_array_equal(d_a, 0.0)
    np.testing.assert_allclose(d_w, np.full(6, 6.0))


# ----- unique values and bin edges: ties share -----


def test_unique_shares_a_value_among_the_elements_equal_to_it():
    x = np.array([0.3, 0.3, 1.0, 0.3])
    d_x = REGISTRY.adjoint_rule(np.unique)(np.array([3.0, 5.0]), np.unique(x), x)[0]
    np.testing.assert_allclose(d_x, [1.0, 1.0, 5.0, 1.0])
    t = REGISTRY.tangent_rule(np.unique)((np.array([0.3, 0.6, 1.0, 0.0]),), np.unique(x), x)
    np.testing.assert_allclose(t, [0.3, 1.0])  # each value moves by the mean of its elements' tangents


def test_unique_along_an_axis_is_refused():
    with pytest.raises(SsadError, match="axis"):
        REGISTRY.adjoint_rule(np.unique)(np.ones((2, 2)), np.eye(2), np.eye(2), axis=0)


def test_bin_edges_move_with_the_extremes():
    x = np.array([0.2, 0.2, 1.0, 0.5])
    edges = np.histogram_bin_edges(x, 2)  # [0.2, 0.6, 1.0]
    d_x = REGISTRY.adjoint_rule(np.histogram_bin_edges)(np.array([1.0, 1.0, 1.0]), edges, x, 2)[0]
    np.testing.assert_allclose(d_x, [0.75, 0.75, 1.5, 0.0])  # min: 1 + 1/2 shared by two; max: 1/2 + 1
    fixed = REGISTRY.adjoint_rule(np.histogram_bin_edges)(np.ones(3), edges, x, 2, (0.0, 1.0))
    np.testing.assert_array_equal(fixed[0], np.zeros(4))


def edges_of_sorted_values(x):
    v = np.sort(x)
    return np.sum(np.histogram_bin_edges(x * 2.0, bins=v) * x)  # the edges given: `v` itself


def test_given_edges_are_differentiated_and_the_values_get_zero():
    # the adjoint of the values was None, and generated code that scales it (`x * 2.0`) raised TypeError
    x = np.array([0.7, -0.4, 1.1])
    expected = numerical_gradient(edges_of_sorted_values, x)
    np.testing.assert_allclose(ssad.grad(edges_of_sorted_values)(x), expected, rtol=1e-7)
    np.testing.assert_allclose(ssad.jvp(edges_of_sorted_values, (x,), (x,))[1], expected @ x, rtol=1e-7)


# ----- histogram: the weights differentiate, x does not -----


def weighted_histogram(x, w):
    return np.sum(np.sin(np.histogram(x, EDGES, weights=w)[0]))


def density_histogram(x, w):
    counts, edges = np.histogram(x, bins=EDGES, density=True, weights=w)
    return np.sum(counts * counts) + np.sum(edges)


@pytest.mark.parametrize("f", [weighted_histogram, density_histogram])
def test_histogram_differentiates_in_the_weights_and_gives_x_none(f):
    d_x, d_w = ssad.grad(f, wrt=(0, 1))(V, W7)
    np.testing.assert_array_equal(d_x, np.zeros_like(V))  # explicitly zero: the counts are piecewise constant
    np.testing.assert_allclose(d_w, numerical_gradient(lambda w: f(V, w), W7), rtol=1e-6, atol=1e-8)
    _, t = ssad.jvp(f, (V, W7), (np.ones_like(V), W7[::-1]))
    np.testing.assert_allclose(t, np.sum(d_w * W7[::-1]), rtol=1e-10)
    (d_x,) = REGISTRY.adjoint_rule(np.histogram)((np.ones(4), np.ones(5)), np.histogram(V, EDGES), V, EDGES)[:1]
    assert d_x is None


def test_bincount_weights():
    w = np.array([0.5, 1.5, -2.0, 3.0, 1.0])

    def f(w):
        return np.sum(np.cos(np.bincount(X5, w, minlength=6)))

    np.testing.assert_allclose(ssad.grad(f)(w), numerical_gradient(f, w), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.hessian(f)(w), _numerical_hessian(f, w), rtol=1e-5, atol=1e-6)


# ----- Against autograd (the same quantities in operations autograd differentiates) -----


def _numerical_hessian(f, x):
    """Central differences of central differences, shaped x.shape + x.shape."""
    rows = [
        numerical_gradient(lambda s, i=i: numerical_gradient(f, s, eps=1e-4).ravel()[i], x, eps=1e-4).ravel()
        for i in range(x.size)
    ]
    return np.stack(rows).reshape(x.shape + x.shape)


def ssad_nanmean_loss(x):
    return np.sum(np.sin(np.nanmean(x, axis=1)))


def autograd_nanmean_loss(x, missing):
    present = ~missing
    total = anp.sum(anp.where(present, x, 0.0), axis=1)
    return anp.sum(anp.sin(total / np.sum(present, axis=1)))


def ssad_median_loss(x):
    return np.sum(np.sin(np.median(x, axis=1)))


def _sorted_rows(x):
    """Each row sorted (autograd differentiates np.sort of vectors only)."""
    return anp.stack([anp.sort(x[i]) for i in range(x.shape[0])])


def autograd_median_loss(x):
    ordered = _sorted_rows(x)
    n = x.shape[1]
    return anp.sum(anp.sin((ordered[:, (n - 1) // 2] + ordered[:, n // 2]) / 2))


def ssad_percentile_loss(x):
    return np.sum(np.sin(np.percentile(x, 37.0, axis=1)))


def autograd_percentile_loss(x):
    ordered = _sorted_rows(x)
    v = (x.shape[1] - 1) * 0.37
    j = int(np.floor(v))
    return anp.sum(anp.sin(ordered[:, j] + (v - j) * (ordered[:, j + 1] - ordered[:, j])))


def ssad_cov_loss(x):
    return np.sum(np.sin(np.cov(x, aweights=W6)))


def autograd_cov_loss(x):
    w = W6
    centered = x - anp.sum(x * w, axis=1, keepdims=True) / np.sum(w)
    fact = np.sum(w) - np.sum(w * w) / np.sum(w)
    return anp.sum(anp.sin(anp.dot(centered * w, centered.T) / fact))


def ssad_average_loss(x):
    return np.sum(np.sin(np.average(x, axis=1, weights=W6)))


def autograd_average_loss(x):
    return anp.sum(anp.sin(anp.sum(x * W6, axis=1) / np.sum(W6)))


def ssad_nanstd_loss(x):
    return np.sum(np.sin(np.nanstd(x, axis=1, ddof=1)))


def autograd_nanstd_loss(x, missing):
    present = ~missing
    count = np.sum(present, axis=1)
    clean = anp.where(present, x, 0.0)
    mean = anp.sum(clean, axis=1) / count
    squares = anp.where(present, (clean - mean[:, None]) ** 2, 0.0)
    return anp.sum(anp.sin(anp.sqrt(anp.sum(squares, axis=1) / (count - 1))))


@pytest.mark.parametrize(
    "ours, theirs, x",
    [
        (ssad_nanmean_loss, lambda x: autograd_nanmean_loss(x, np.isnan(MN)), MN),
        (ssad_nanstd_loss, lambda x: autograd_nanstd_loss(x, np.isnan(MN)), MN),
        (ssad_median_loss, autograd_median_loss, M),
        (ssad_median_loss, autograd_median_loss, M[:, :5]),
        (ssad_percentile_loss, autograd_percentile_loss, M),
        (ssad_cov_loss, autograd_cov_loss, M),
        (ssad_average_loss, autograd_average_loss, M),
    ],
    ids=["nanmean", "nanstd", "median-even", "median-odd", "percentile", "cov-aweights", "average"],
)
def test_matches_autograd(ours, theirs, x):
    theirs_at = np.where(np.isnan(x), 0.0, x) if np.isnan(x).any() else x
    expected = autograd.grad(theirs)(theirs_at)
    got = ssad.grad(ours)(x)
    present = ~np.isnan(x)
    np.testing.assert_allclose(got[present], expected[present], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(got[~present], 0.0)  # a NaN entry gets zero, not NaN


# ----- End to end: a robust loss on data with missing entries -----

X_DATA = np.linspace(-1.0, 1.0, 9)
Y_DATA = 0.7 * X_DATA + 0.2 + np.array([0.05, -0.1, 0.3, 0.0, -0.2, 0.15, 2.5, -0.05, 0.1])
MISSING = np.zeros(9, dtype=bool)
MISSING[[2, 7]] = True
Y_DATA[MISSING] = 0.0  # placeholders, masked below


def robust_loss(theta):
    residual = Y_DATA - (theta[0] + theta[1] * X_DATA)
    observed = np.where(MISSING, np.nan, residual)
    center = np.nanmedian(observed)
    spread = np.nanpercentile(observed, 75.0) - np.nanpercentile(observed, q=25.0, method="linear")
    z = (residual - center) / spread
    terms = np.where(MISSING, np.nan, np.log1p(z * z))
    size = np.quantile(np.abs(theta), 0.5) + np.median(theta * theta)
    return np.nanmean(terms) + 0.1 * size + 0.01 * np.nanstd(observed)


THETA = np.array([0.3, 0.55])


def test_robust_loss_gradient_in_both_modes():
    expected = numerical_gradient(robust_loss, THETA)
    np.testing.assert_allclose(ssad.grad(robust_loss)(THETA), expected, rtol=1e-6, atol=1e-9)
    direction = np.array([0.4, -1.3])
    value, slope = ssad.jvp(robust_loss, (THETA,), (direction,))
    assert value == robust_loss(THETA)
    np.testing.assert_allclose(slope, expected @ direction, rtol=1e-6, atol=1e-9)


def test_robust_loss_hessian():
    hessian = ssad.hessian(robust_loss)(THETA)
    expected = numerical_gradient(lambda t: ssad.grad(robust_loss)(t)[0], THETA)
    np.testing.assert_allclose(hessian[0], expected, rtol=1e-5, atol=1e-7)
    expected = numerical_gradient(lambda t: ssad.grad(robust_loss)(t)[1], THETA)
    np.testing.assert_allclose(hessian[1], expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def quantile_band(x, q):
    return np.sum(np.quantile(x, q, axis=0) ** 2)


def test_gradient_in_q_end_to_end():
    x = M.T
    q = np.array([0.3, 0.65])
    d_q = ssad.grad(quantile_band, wrt=1)(x, q)
    np.testing.assert_allclose(d_q, numerical_gradient(lambda s: quantile_band(x, s), q), rtol=1e-6, atol=1e-9)
    _, t = ssad.jvp(quantile_band, (x, q), (np.zeros_like(x), np.array([1.0, -2.0])))
    np.testing.assert_allclose(t, d_q @ np.array([1.0, -2.0]), rtol=1e-10)
    hessian = ssad.hessian(quantile_band, wrt=1)(x, q)
    rows = [numerical_gradient(lambda s, i=i: ssad.grad(quantile_band, wrt=1)(x, s)[i], q) for i in range(2)]
    np.testing.assert_allclose(hessian, np.stack(rows), rtol=1e-5, atol=1e-7)


# ----- End to end: keyword arguments that carry gradients, as users write them -----

Y2 = _signed((2, 6))


def weighted_mean_times_total(x, w):
    avg, total = np.average(x, axis=1, weights=w, returned=True)
    return np.sum(np.sin(avg) * total)


def weighted_covariance(x, y, w):
    return np.sum(np.cos(np.cov(x, y=y, aweights=w, ddof=2)))


def percentile_energy(x, q):
    return np.sum(np.percentile(x, q=q, axis=1) ** 2)


def correlation_cubes(x, y):
    return np.sum(np.corrcoef(x, y=y, rowvar=True) ** 3)


@pytest.mark.parametrize(
    "f, args",
    [
        (weighted_mean_times_total, (M, W6)),
        (weighted_covariance, (M, Y2, W6)),
        (percentile_energy, (M, 37.0)),
        (correlation_cubes, (M, Y2)),
    ],
    ids=["average-returned", "cov-y-aweights", "percentile-q", "corrcoef-y"],
)
def test_keywords_carrying_gradients_end_to_end(f, args):
    wrt = tuple(range(len(args)))
    gradients = ssad.grad(f, wrt=wrt)(*args)
    for i, arg in enumerate(args):
        expected = numerical_gradient(lambda s, i=i: f(*args[:i], s, *args[i + 1:]), arg)
        np.testing.assert_allclose(gradients[i], expected, rtol=1e-6, atol=1e-8)
    directions = tuple(_signed(np.shape(a)) if np.ndim(a) else 0.7 for a in args)
    _, slope = ssad.jvp(f, args, directions)
    expected_slope = sum(np.sum(g * d) for g, d in zip(gradients, directions, strict=True))
    np.testing.assert_allclose(slope, expected_slope, rtol=1e-10)
    hessian = ssad.hessian(f)(*args)
    first = args[0]
    rows = [
        numerical_gradient(lambda s, k=k: ssad.grad(f)(s, *args[1:]).ravel()[k], first).ravel()
        for k in range(first.size)
    ]
    np.testing.assert_allclose(hessian.reshape(first.size, first.size), np.stack(rows), rtol=1e-5, atol=1e-6)
