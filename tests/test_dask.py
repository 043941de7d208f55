"""Generated gradients on dask arrays: lazy, computed on a Dask cluster, equal to NumPy's.

Two layers. End to end, gradients of an MLP loss, a reduction-heavy function and a
looped function, applied to chunked dask arrays, come back as dask arrays that nothing
has computed yet; a `dask.distributed` cluster computes them, and they equal the
gradients of the same functions of NumPy arrays. Rule by rule, every built-in adjoint
rule is applied to dask inputs (the samples of tests/rules/) under a scheduler that
refuses to compute: the protocol-safe rules return lazy dask arrays equal to the NumPy
result, and the rules that are not are exactly those listed in NOT_PROTOCOL_SAFE, with
the reason. docs/dask.md lists both, as this module finds them.
"""

import collections
import copy
import functools
import math
import operator
import os
import re
import types
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

import ssad  # noqa: E402
import ssad.rules  # noqa: E402,F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name  # noqa: E402
from ssad.runtime import (  # noqa: E402
    add_at, c_, concat, iterated, list_adjoint, merged, pack_like, r_, repeated, repeats_summed, unspent, zipped,
)
from ssad.rules.linalg import cofactors, differentiable_singular_values, einsum_of  # noqa: E402
from ssad.runtime.dynamic import call_jvp, method_jvp  # noqa: E402
from ssad.runtime.pullbacks import call_forward_packed, method_forward_packed, packed_adjoint, packed_tangent  # noqa: E402
from ssad.rules.objects import operator_forward_packed  # noqa: E402
from ssad.runtime.closures import joined  # noqa: E402
from ssad.runtime.defaults import dict_derivative  # noqa: E402
from ssad.runtime.replace import fields_at, replaced  # noqa: E402
from ssad.runtime.structure import zeros_like_value  # noqa: E402
from ssad.runtime.partials import made_partial_adjoint, made_partial_tangent  # noqa: E402
from ssad.runtime.refusals import rule_adjoints  # noqa: E402
from ssad.runtime.operators import operator_jvp  # noqa: E402
from ssad.runtime.in_place import diagonal_fill  # noqa: E402
from ssad.runtime.structure import add_attr, attribute_part, field_tangent, record_tangent  # noqa: E402

from .rules.test_coverage import MODULES as RULE_TEST_MODULES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class RefusedToCompute(Exception):
    """Raised by the scheduler installed while a gradient is built: something computed."""


def refuse_to_compute(*args, **kwargs):
    raise RefusedToCompute("a dask array was computed while the gradient was being built")


def lazily():
    """A context in which computing any dask array raises RefusedToCompute."""
    return dask.config.set(scheduler=refuse_to_compute)


# ----- End to end, on a local cluster -----


@pytest.fixture(scope="module")
def client():
    # A worker thread in this process, reached over TCP on the loopback interface: it
    # starts in under a second, and the gradient still travels to a scheduler and back.
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def mlp_loss(W1, b1, W2, b2, x, labels):
    """Softmax cross-entropy of a two-layer tanh network (labels one-hot)."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_probs, axis=1))


def reductions(x, w):
    """Sums, means, extrema, variances and products along different axes."""
    centered = x - np.mean(x, axis=0)
    spread = np.var(x, axis=1) + np.std(x, axis=0).sum()
    peaks = np.max(x * w, axis=1) - np.min(x, axis=1)
    scale = np.prod(1.0 + 0.1 * np.tanh(w))
    return np.sum(centered**2 * w) + np.mean(spread) + np.sum(peaks) * scale + np.sum(np.cumsum(x, axis=0)[-1])


def looped(x, w):
    """A recurrence over the columns, a branch and an accumulation in a loop."""
    h = np.zeros_like(x[:, 0])
    total = 0.0
    for j in range(x.shape[1]):
        h = np.tanh(h * w[j] + x[:, j])
        if j % 2 == 0:
            total = total + np.sum(h**2)
        else:
            total = total + np.mean(h)
    return total


def _mlp_inputs(rng):
    x = rng.standard_normal((60, 4))
    labels = np.eye(3)[rng.integers(0, 3, 60)]
    params = (rng.standard_normal((4, 8)), rng.standard_normal(8), rng.standard_normal((8, 3)), np.zeros(3))
    return params, x, labels


def test_gradient_of_an_mlp_loss_stays_lazy_and_equals_numpys(client):
    rng = np.random.default_rng(0)
    params, x, labels = _mlp_inputs(rng)
    gradient = ssad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    expected = gradient(*params, x, labels)
    lazy_params = [da.from_array(p) for p in params]
    with lazily():
        lazy = gradient(*lazy_params, da.from_array(x, chunks=(15, 4)), da.from_array(labels, chunks=(15, 3)))
    assert all(isinstance(g, da.Array) for g in lazy)
    computed = client.compute(list(lazy), sync=True)
    for got, want, p in zip(computed, expected, params, strict=True):
        assert got.shape == p.shape and got.dtype == p.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_numpy_parameters_on_dask_data_get_lazy_gradients(client):
    rng = np.random.default_rng(1)
    params, x, labels = _mlp_inputs(rng)
    gradient = ssad.grad(mlp_loss, wrt=(0, 2))
    expected = gradient(*params, x, labels)
    with lazily():
        lazy = gradient(*params, da.from_array(x, chunks=(20, 4)), da.from_array(labels, chunks=(20, 3)))
    assert all(isinstance(g, da.Array) for g in lazy)
    for got, want in zip(client.compute(list(lazy), sync=True), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [reductions, looped], ids=["reductions", "looped"])
def test_gradient_stays_lazy_and_equals_numpys(f, client):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((12, 6)), rng.uniform(0.5, 1.5, 6)
    value_and_grad = ssad.value_and_grad(f, wrt=(0, 1))
    value, expected = value_and_grad(x, w)
    with lazily():
        lazy_value, lazy = value_and_grad(da.from_array(x, chunks=(4, 3)), da.from_array(w, chunks=3))
    assert isinstance(lazy_value, da.Array) and all(isinstance(g, da.Array) for g in lazy)
    got_value, got = client.compute([lazy_value, list(lazy)], sync=True)
    assert got_value == pytest.approx(value, rel=1e-12)
    for g, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)


def gather_rows(table, rows, weights):
    """An embedding lookup: integer-array indexing, read more than once per row."""
    return np.sum(np.tanh(table[rows]) * weights)


def test_scattered_adjoint_of_an_integer_index_stays_lazy():
    rng = np.random.default_rng(3)
    table, rows, weights = rng.standard_normal((5, 3)), rng.integers(0, 5, 40), rng.standard_normal((40, 3))
    gradient = ssad.grad(gather_rows)
    with lazily():
        lazy = gradient(da.from_array(table, chunks=(2, 3)), rows, da.from_array(weights, chunks=(10, 3)))
        from_numpy_table = gradient(table, rows, da.from_array(weights, chunks=(10, 3)))
    expected = gradient(table, rows, weights)
    for got in (lazy, from_numpy_table):
        assert isinstance(got, da.Array)
        np.testing.assert_allclose(got.compute(scheduler="sync"), expected, rtol=1e-12)


def test_a_non_scalar_lazy_result_is_refused_without_computing():
    with lazily(), pytest.raises(ssad.SsadError, match="returns a scalar"):
        ssad.grad(lambda x: x * 2.0)(da.ones(3))


# ----- Rule by rule -----

# Rules that do not give lazy dask gradients, and why. The test below checks that
# this is exactly the set of rules that fail on dask inputs, so it cannot go stale.
_MATH = "a `math` function: it converts its argument to a Python float, which computes a dask array"
_UNSUPPORTED = "Dask has no implementation of it, so NumPy computes the array"
_AS_NUMPY = "the rule reads its input with `np.asarray`, which computes a dask array"
_INTO_ZEROS = "the rule writes the adjoint into a NumPy array of zeros, which computes it"
_ORDER_STATISTICS = "the rule finds the positions of the order statistics with NumPy, which computes the array"
_SCIPY = "SciPy converts its inputs with `np.asarray`, which computes a dask array"
NOT_PROTOCOL_SAFE = {
    **{
        getattr(math, name): _MATH
        for name in (
            "sin cos tan asin acos atan atan2 hypot sinh cosh tanh exp expm1 log log1p log2 log10 sqrt erf fabs pow"
        ).split()
    },
    float: "converts to a Python float, which computes a dask array",
    **{cast: "converts to a NumPy scalar or array, which computes a dask array"
       for cast in (np.float64, np.float32, np.float16, np.complex128, np.complex64)},
    complex: "converts to a Python complex, which computes a dask array",
    max: "compares its arguments with `>`, which computes a dask array to a bool",
    min: "compares its arguments with `<`, which computes a dask array to a bool",
    np.inner: _UNSUPPORTED,
    np.unique: "the number of unique values is known only once the array is computed",
    np.unique_values: "the number of unique values is known only once the array is computed",
    np.unique_counts: "the number of unique values is known only once the array is computed",
    np.unique_inverse: "the number of unique values is known only once the array is computed",
    np.unique_all: "the number of unique values is known only once the array is computed",
    np.histogram_bin_edges: "NumPy computes the edges from the array's minimum and maximum",
    diagonal_fill: "`np.fill_diagonal`'s values are repeated with np.resize, which computes a dask array",
    list_adjoint: "splits the adjoint of a list given to a NumPy function into NumPy items, which computes a dask array",
    np.kron: _UNSUPPORTED,
    np.sort: _UNSUPPORTED,
    np.array: "builds a NumPy array, which computes its dask items",
    np.asarray: "builds a NumPy array, which computes its dask items",
    np.copy: _UNSUPPORTED,
    np.full: "makes a NumPy array; a dask fill value is computed",
    np.linspace: _UNSUPPORTED,
    np.split: _UNSUPPORTED,
    np.array_split: _UNSUPPORTED,
    np.hsplit: _UNSUPPORTED,
    np.vsplit: _UNSUPPORTED,
    np.dsplit: _UNSUPPORTED,
    np.linalg.det: _UNSUPPORTED,
    cofactors: "it tells a singular matrix from an invertible one with NumPy, which computes a dask array",
    differentiable_singular_values: "its rules test the singular values for zeros, which computes a dask array",
    np.linalg.inv: "Dask factorizes only a matrix cut into square chunks",
    np.linalg.solve: "Dask factorizes only a matrix cut into square chunks",
    np.linalg.cholesky: "Dask factorizes only a matrix cut into square chunks",
    np.linalg.slogdet: _UNSUPPORTED,
    np.ndarray.reshape: "Dask reshapes only by merging or splitting axes along chunk boundaries",
    np.ndarray.conjugate: "dask arrays have no `.conjugate()` method",
    np.ndarray.take: "dask arrays have no `.take()` method",
    np.take_along_axis: _UNSUPPORTED,
    np.ndarray.diagonal: "dask arrays have no `.diagonal()` method",
    np.column_stack: _UNSUPPORTED,
    r_: "`np.r_[...]` and `np.c_[...]` build a NumPy array from their pieces, which computes dask pieces",
    c_: "`np.r_[...]` and `np.c_[...]` build a NumPy array from their pieces, which computes dask pieces",
    np.cumprod: _AS_NUMPY,
    np.ndarray.cumprod: _AS_NUMPY,
    np.linalg.norm: _AS_NUMPY,
    np.diag: _INTO_ZEROS,
    np.diagonal: _INTO_ZEROS,
    # ----- NumPy functions Dask does not implement: NumPy computes the array -----
    **{
        f: _UNSUPPORTED
        for f in (
            np.real_if_close, np.cumulative_sum, np.cumulative_prod, np.matrix_transpose, np.logspace, np.geomspace,
            np.kaiser, np.diagflat, np.partition, np.resize, np.unstack, np.sort_complex, np.ascontiguousarray,
            np.asfortranarray, np.asarray_chkfinite, np.astype, np.linalg.eig, np.linalg.eigvals, np.linalg.eigh,
            np.linalg.eigvalsh, np.linalg.pinv, np.linalg.matrix_power, np.convolve, np.correlate, np.vander,
            np.polyval, np.polyder, np.polyint, np.polymul, np.polyadd, np.polysub, np.polyfit, np.interp,
            np.trapezoid, np.diff, np.unwrap, np.cross, np.cov, np.trim_zeros,
        )
    },
    np.linalg.qr: "Dask factorizes only a tall-and-skinny matrix cut into chunks of rows",
    np.matvec: "Dask's gufunc cannot broadcast a core dimension split into chunks",
    np.row_stack: "Dask's `vstack` rejects the `dtype` keyword NumPy's `row_stack` passes",
    np.select: "Dask cannot evaluate NumPy conditions against chunked choices",
    np.ndarray.compress: "dask arrays have no `.compress()` method",
    np.ndarray.item: "dask arrays have no `.item()` method",
    np.fft.rfft2: "Dask transforms only along axes held in one chunk, and these samples split every axis",
    np.fft.rfftn: "Dask transforms only along axes held in one chunk, and these samples split every axis",
    np.fft.ihfft: "Dask transforms only along axes held in one chunk, and these samples split every axis",
    np.percentile: "Dask's percentile takes only a 1-D array, which these samples are not",
    np.histogram: "Dask's histogram needs its bins given, and takes weights only as a dask array",
    np.bincount: "Dask's bincount needs both the indices and the weights as dask arrays",
    np.insert: "a Python number inserted gets its adjoint as a NumPy scalar, which computes a dask array",
    np.ediff1d: "a Python number at an end gets its adjoint as a NumPy scalar, which computes a dask array",
    **{f: _ORDER_STATISTICS for f in (np.median, np.nanmedian, np.quantile, np.nanquantile, np.nanpercentile)},
    np.gradient: _AS_NUMPY,
    np.nancumprod: _AS_NUMPY,
}


def _scipy_rules():
    """SciPy's differentiated functions: all compute their dask inputs (see `_SCIPY`)."""
    import scipy.integrate
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats

    functions = [
        scipy.special.logsumexp, scipy.special.softmax, scipy.special.log_softmax, scipy.special.polygamma,
        scipy.special.multigammaln, scipy.special.gammainc, scipy.special.gammaincc, scipy.linalg.solve_triangular, scipy.linalg.cholesky,
        scipy.linalg.cho_factor, scipy.linalg.cho_solve, scipy.linalg.solve, scipy.linalg.inv, scipy.linalg.det,
        scipy.linalg.lu_factor, scipy.linalg.lu_solve, scipy.linalg.expm, scipy.linalg.sqrtm, scipy.linalg.logm,
        scipy.signal.convolve, scipy.signal.correlate, scipy.signal.fftconvolve, scipy.signal.oaconvolve,
        scipy.signal.convolve2d, scipy.signal.correlate2d,
    ]
    for name in ("norm", "t", "beta", "gamma", "chi2", "expon", "laplace", "cauchy", "logistic"):
        distribution = getattr(scipy.stats, name)
        functions += [getattr(distribution, m) for m in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf")]
    functions += [getattr(scipy.stats.poisson, m) for m in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf")]
    for name in ("multivariate_normal", "dirichlet"):
        functions += [getattr(getattr(scipy.stats, name), m) for m in ("logpdf", "pdf")]
    return {f: _SCIPY for f in functions}


NOT_PROTOCOL_SAFE.update(_scipy_rules())


class Sample(NamedTuple):
    """One application of `primitive` to `args`; `dy` None draws a random output adjoint."""

    primitive: Any
    args: tuple
    kwargs: dict = {}
    id: str = ""
    dy: Any = None


def _samples_from_rule_tests():
    for module in RULE_TEST_MODULES:
        for case in module.CASES:
            yield Sample(case.primitive, case.args, case.kwargs, case.id)


_rng = np.random.default_rng(11)
_A, _B, _C = _rng.standard_normal((3, 4)), _rng.standard_normal((3, 2)), _rng.standard_normal((3, 4))
_Pair = collections.namedtuple("_Pair", "a b")
# The primitives tests/rules/ checks elsewhere than in its CASES tables.
EXTRA_SAMPLES = [
    Sample(np.float32, (_A,), id="float32"),
    Sample(np.float16, (_A,), id="float16"),
    Sample(np.complex64, (_A,), id="complex64"),
    Sample(np.ndarray.T, (_A,), id="ndarray.T"),
    Sample(np.hstack, ([_A, _B],), id="hstack"),
    Sample(np.vstack, ([_A, _C],), id="vstack"),
    Sample(np.dstack, ([_A, _C],), id="dstack"),
    Sample(np.column_stack, ([_A, _B],), id="column_stack"),
    Sample(add_at, (_A, np.s_[1:], _C[0]), id="add_at-rows"),
    Sample(add_at, (_A, np.array([0, 2, 0]), _C), id="add_at-repeated"),
    Sample(pack_like, (_A, list(_C)), id="pack_like"),
    Sample(np.ndarray.repeat, (_A, 2, 1), id="ndarray.repeat-axis"),
    Sample(concat, ([_A], [_B]), id="concat"),
    Sample(repeated, ([_A, _B], 2), id="repeated"),
    Sample(repeats_summed, ([_A, _B, _C, _B], [_A, _B], 2), id="repeats_summed", dy=[_C, _B]),
    Sample(list, ((_A, _B),), id="list"),
    Sample(tuple, ([_A, _B],), id="tuple"),
    Sample(dict.values, ({"a": _A, "b": _B},), id="dict.values", dy=[_C, 2.0 * _B]),
    Sample(dict, ({"a": _A, "b": _B},), id="dict", dy={"a": _C, "b": 2.0 * _B}),
    Sample(dict_derivative, ({"a": _A}, {"a": _B}, zeros_like_value), id="dict_derivative", dy={"a": _C}),
    Sample(dict.items, ({"a": _A, "b": _B},), id="dict.items", dy=[(None, _C), (None, 2.0 * _B)]),
    Sample(add_attr, (types.SimpleNamespace(w=_A), "w", _C), id="add_attr", dy=types.SimpleNamespace(w=_B[:, :1] * _C)),
    Sample(attribute_part, (types.SimpleNamespace(w=_A, c=_B), "w"), id="attribute_part", dy=_C),
    Sample(field_tangent, (types.SimpleNamespace(w=_A, c=_B), "w"), id="field_tangent", dy=_C),
    Sample(record_tangent, (_Pair(_A, _B), {"a": _C}), id="record_tangent", dy=_Pair(_C, _B)),
    Sample(replaced, (_Pair(_A, _B), ("a",), (_C,)), id="replaced", dy=_Pair(2.0 * _C, _B)),
    Sample(fields_at, (_Pair(_A, _B), ("b",)), id="fields_at", dy=(_C[:, :2],)),
    Sample(copy.deepcopy, ({"a": _A, "b": [_B]},), id="copy.deepcopy", dy={"a": _C, "b": [2.0 * _B]}),
    Sample(copy.copy, ({"a": _A, "b": [_B]},), id="copy.copy", dy={"a": _C, "b": [2.0 * _B]}),
    Sample(functools.partial, (np.multiply, _A), id="partial", dy=((_C,), {}, None)),
    Sample(unspent, ((_A, [_B, _C]),), id="unspent", dy=(_C, [2.0 * _B, _A])),
    Sample(einsum_of, ("ij,ik->jk", [_A, _B]), id="einsum_of"),
    Sample(np.linalg.eigh, (_A[:3, :3] + _A[:3, :3].T,), id="eigh"),
    Sample(np.linalg.eigvalsh, (_A[:3, :3] + _A[:3, :3].T,), id="eigvalsh"),
    Sample(np.block, ([[_A, _C]],), id="block"),
    Sample(np.trim_zeros, (np.array([0.0, 1.5, -2.0, 0.0]),), id="trim_zeros"),
    Sample(np.row_stack, ([_A, _C],), id="row_stack"),
    Sample(iterated, (_A,), id="iterated"),
    Sample(merged, ({"a": _A, "b": _B}, {"b": _C}), id="merged", dy={"a": 2.0 * _A, "b": _C}),
    Sample(zipped, ([_A, _B], [_C, _A]), id="zipped", dy=[(_C, 2.0 * _A), (_B, _C)]),
    Sample(dict.get, ({"a": _A, "b": _B}, "a"), id="dict.get"),
    Sample(sorted, ([_A[0, 0], _A[1, 2], _A[2, 1]],), id="sorted", dy=[0.5, -1.0, 2.0]),
]


def _to_dask(value):
    """Float arrays (also inside containers) as dask arrays of two chunks per axis."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return da.from_array(value.copy(), chunks=tuple(max(1, (n + 1) // 2) for n in value.shape))
    if isinstance(value, list):
        return [_to_dask(v) for v in value]
    if isinstance(value, tuple):
        return type(value)(*[_to_dask(v) for v in value]) if hasattr(value, "_fields") else tuple(_to_dask(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_dask(v) for k, v in value.items()}
    if isinstance(value, types.SimpleNamespace):
        return types.SimpleNamespace(**_to_dask(vars(value)))
    return value


def _holds_dask(value):
    if isinstance(value, da.Array):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_dask(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_dask(v) for v in value.values())
    if isinstance(value, types.SimpleNamespace):
        return _holds_dask(vars(value))
    return False


def _leaves(value):
    if isinstance(value, (list, tuple, type({}.values()), type({}.items()))):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, types.SimpleNamespace):
        return _leaves(vars(value))
    return [value]


def _random_like(value, rng):
    if isinstance(value, (list, tuple)):
        return (list if isinstance(value, list) else tuple)(_random_like(v, rng) for v in value)
    return rng.standard_normal(np.shape(value)) if np.ndim(value) else float(rng.standard_normal())


def _call(primitive, args, kwargs):
    """The primitive applied as generated code applies it: ndarray methods as methods."""
    if getattr(primitive, "__objclass__", None) is np.ndarray:
        attribute = getattr(args[0], primitive.__name__)
        return attribute(*args[1:], **kwargs) if callable(attribute) else attribute
    return primitive(*args, **kwargs)


def _same(got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None or isinstance(w, (str, types.FunctionType)) or callable(w):
            continue
        g = np.asarray(g)
        assert g.shape == np.shape(w), f"shape {g.shape} != {np.shape(w)}"
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def check_on_dask(sample):
    """None when the rule gives lazy dask adjoints equal to NumPy's at this sample; "skip"
    when Dask itself cannot evaluate the primitive there (lazily, as NumPy does); otherwise
    a description of what went wrong."""
    rule = REGISTRY.adjoint_rule(sample.primitive)
    lazy_args = _to_dask(sample.args)
    if not _holds_dask(lazy_args):  # scalar samples: as 0-d dask arrays
        lazy_args = tuple(da.from_array(np.asarray(a)) if isinstance(a, float) else a for a in lazy_args)
    args = copy.deepcopy(sample.args)
    y = _call(sample.primitive, args, sample.kwargs)
    dy = sample.dy if sample.dy is not None else _random_like(y, np.random.default_rng(0))
    expected = rule(dy, y, *copy.deepcopy(sample.args), **sample.kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's FutureWarning before it computes an unsupported function
        try:
            with lazily():
                lazy_y = _call(sample.primitive, lazy_args, sample.kwargs)
            _same(dask.compute(lazy_y, scheduler="sync")[0], y)
        except Exception as error:  # Dask cannot evaluate the primitive itself here
            return (
                "skip"
                if not isinstance(error, RefusedToCompute)
                else f"dask computes {primitive_name(sample.primitive)}"
            )
        try:
            with lazily():
                got = rule(
                    _to_dask(dy) if not isinstance(dy, float) else da.from_array(np.asarray(dy)),
                    lazy_y,
                    *lazy_args,
                    **sample.kwargs,
                )
        except Exception as error:
            return f"{sample.id}: {type(error).__name__}: {error}"
    for g, want, arg in zip(got, expected, lazy_args, strict=False):
        if want is None:
            continue
        if _holds_dask(arg) and not all(isinstance(leaf, da.Array) for leaf in _leaves(g) if leaf is not None):
            return f"{sample.id}: an adjoint is not a dask array ({type(g).__name__})"
        try:
            _same(dask.compute(g, scheduler="sync")[0], want)
        except AssertionError as error:
            return f"{sample.id}: differs from NumPy: {error}"
    return None


# Calls through function values, read again, and what second-order code calls for them:
# they take functions, not arrays; each runs the callee's own rule or generated code,
# whose rules are checked on dask one by one.
# So do the operators of objects of the user's (`u * x` calling `V2.__mul__`), and `super()`.
_FUNCTION_VALUE_CALLS = {call_forward_packed, method_forward_packed, packed_tangent, packed_adjoint, call_jvp, method_jvp,
                         ssad.checkpoint, operator_forward_packed, operator_jvp, super}
# What a user's adjoint rule returned, checked where the gradient runs: the rule's own tuple.
_FUNCTION_VALUE_CALLS.add(rule_adjoints)
# The adjoint and tangent of a partial read back and built as the value Python made (they
# take the partial and its function), and a nested function joined to one made before it.
_FUNCTION_VALUE_CALLS |= {made_partial_adjoint, made_partial_tangent, joined}


def _ode_solvers():
    """SciPy's ODE solvers take the user's function and integrate NumPy arrays: no dask sample."""
    import scipy.integrate

    return {scipy.integrate.odeint, scipy.integrate.solve_ivp}


def builtin_adjoint_primitives():
    # A private helper of the rules (its rules serve only a rule differentiated again) is no
    # primitive a user calls on dask arrays.
    rules = {REGISTRY.adjoint_rule(p) for p in REGISTRY.adjoint_primitives()}
    rules |= {REGISTRY.tangent_rule(p) for p in REGISTRY.adjoint_primitives()}
    return [
        p
        for p in REGISTRY.adjoint_primitives()
        if REGISTRY.adjoint_rule(p).__module__.startswith("ssad.rules") and not p.__name__.startswith("_")
        and p not in _FUNCTION_VALUE_CALLS and p not in _ode_solvers()
        and p not in rules  # a rule registered as a primitive (to refuse its own derivative)
    ]


@functools.cache
def rule_verdicts():
    """{primitive: None if protocol-safe, else what failed}, from every sample of each rule."""
    samples = {}
    for sample in [*_samples_from_rule_tests(), *EXTRA_SAMPLES]:
        samples.setdefault(sample.primitive, []).append(sample)
    verdicts = {}
    for primitive in builtin_adjoint_primitives():
        results = [check_on_dask(s) for s in samples.get(primitive, [])]
        failures = [r for r in results if r not in (None, "skip")]
        if failures:
            verdicts[primitive] = failures[0]
        elif None not in results:
            verdicts[primitive] = "Dask cannot evaluate it at any sample" if results else "no sample"
        else:
            verdicts[primitive] = None
    return verdicts


def test_every_rule_has_a_sample():
    assert "no sample" not in rule_verdicts().values()


def test_the_rules_that_are_not_protocol_safe_are_exactly_those_listed():
    failing = {p: reason for p, reason in rule_verdicts().items() if reason is not None}
    unexpected = {primitive_name(p): reason for p, reason in failing.items() if p not in NOT_PROTOCOL_SAFE}
    assert not unexpected, f"rules that fail on dask inputs but are not listed: {unexpected}"
    now_safe = [primitive_name(p) for p in NOT_PROTOCOL_SAFE if p not in failing]
    assert not now_safe, f"listed as not protocol-safe, but they work on dask: {now_safe}"


# ----- The table in docs/dask.md -----

_TABLE = re.compile(r"(<!-- rule table: begin -->\n)(.*?)(<!-- rule table: end -->)", re.S)


def rule_table():
    """The protocol-safe and not-safe rule lists of docs/dask.md, as Markdown."""
    verdicts = rule_verdicts()
    safe = sorted(primitive_name(p) for p, reason in verdicts.items() if reason is None)
    lines = [f"**Protocol-safe ({len(safe)})**: " + ", ".join(f"`{name}`" for name in safe) + ".", ""]
    lines += [f"**Not protocol-safe ({len(NOT_PROTOCOL_SAFE)})**:", ""]
    by_reason = {}
    for primitive, reason in NOT_PROTOCOL_SAFE.items():
        by_reason.setdefault(reason, []).append(primitive_name(primitive))
    for reason, names in sorted(by_reason.items(), key=lambda item: sorted(item[1])[0]):
        lines.append(f"- {', '.join(f'`{n}`' for n in sorted(names))}: {reason}.")
    return "\n".join(lines) + "\n"


def test_the_docs_list_the_rules_as_this_module_finds_them():
    """SSAD_UPDATE_DOCS=1 rewrites the table in docs/dask.md."""
    page = ROOT / "docs" / "dask.md"
    text = page.read_text()
    match = _TABLE.search(text)
    assert match, "docs/dask.md has no <!-- rule table: begin --> ... <!-- rule table: end --> section"
    table = rule_table()
    if match.group(2) != table and os.environ.get("SSAD_UPDATE_DOCS") == "1":
        page.write_text(text[: match.start(2)] + table + text[match.end(2) :])
        return
    assert match.group(2) == table, (
        "docs/dask.md's rule table is stale: run SSAD_UPDATE_DOCS=1 pytest tests/test_dask.py"
    )


def test_the_operator_module_rules_are_checked_too():
    # a + b, a * b, a @ b in user code lower to these; they must be safe for any dask model
    for primitive in (operator.add, operator.sub, operator.mul, operator.truediv, operator.matmul, operator.neg):
        assert rule_verdicts()[primitive] is None, primitive_name(primitive)
