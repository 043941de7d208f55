"""The NumPy functions ssad's lowering takes for views (frontend/views.py) against what
the installed NumPy returns: every public function that hands back a view of (or the
very) array it is given, on a few ordinary arrays, must be in ssad's lists, or a write
through its result would go unseen. The exceptions are listed with their reason."""

import inspect
import warnings

import numpy as np
import pytest

import ssad
from ssad.frontend.view_names import VIEW_FUNCTIONS, VIEW_METHODS, VIEW_OF_ANY, VIEW_SOMETIMES, views_first

# Functions that write into their argument, refused as such by the fence (outputs.py). A view
# that cannot be written through (`np.diag(m)` of a matrix is read-only) is no exception: a
# write into m changes what it reads.
WRITE_INTO_THE_ARGUMENT = {"nan_to_num", "copyto", "put", "place", "putmask", "fill_diagonal"}
SKIP = {"test", "shares_memory", "may_share_memory", "save", "savez", "savez_compressed", "savetxt", "show_config",
        "show_runtime", "info", "lookfor", "source", "who"}
EXTRAS = ((), (2,), (0,), (1,), ((1, 0),))


def _returns_a_view(function, x):
    for extra in EXTRAS:
        given = x.copy()
        try:
            out = function(given, *extra)
        except Exception:  # noqa: BLE001 - not a call this function takes
            continue
        for item in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(item, np.ndarray) and np.shares_memory(item, given):
                return True
    return False


def _public_functions():
    modules = [(np, ""), (np.linalg, "linalg."), (np.lib.stride_tricks, "stride_tricks.")]
    for module, prefix in modules:
        for name in sorted(dir(module)):
            value = getattr(module, name)
            scalar_type = isinstance(value, type) and issubclass(value, np.generic)  # `np.float64(a)` is a
            if name.startswith("_") or name in SKIP or (isinstance(value, type) and not scalar_type) or not callable(value):
                continue
            yield prefix + name, name, value


def test_every_numpy_function_returning_a_view_is_known():
    inputs = [np.arange(6.0) + 1.0, np.arange(6.0).reshape(2, 3) + 1.0, np.arange(24.0).reshape(2, 3, 4) + 1.0,
              np.arange(6) + 1, np.arange(6.0) + 1j]
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            for label, name, function in _public_functions():
                if name in VIEW_FUNCTIONS or name in VIEW_SOMETIMES or name in VIEW_OF_ANY or name in WRITE_INTO_THE_ARGUMENT:
                    continue
                if any(_returns_a_view(function, x) for x in inputs):
                    missing.append(label)
    assert not missing, f"NumPy functions that return views, unknown to frontend/views.py: {missing}"


def _second_is_out(function):
    """A ufunc, or a function whose second parameter is `out` (`np.fix(x, y)` writes into y: refused by the fence)."""
    if isinstance(function, np.ufunc):
        return True
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return names[1:2] == ["out"]


def test_every_numpy_function_returning_a_view_of_another_operand_is_known():
    """`np.atleast_1d(a, b)` views b too; `np.histogram_bin_edges(a, bins=e)` is e itself."""
    missing = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for label, name, function in _public_functions():
            if name in VIEW_OF_ANY or name in WRITE_INTO_THE_ARGUMENT or _second_is_out(function):
                continue
            for shape in ((6,), (2, 3), (2, 3, 4)):
                first = np.arange(np.prod(shape), dtype=float).reshape(shape) + 1.0
                second = first * 2.0
                try:
                    out = function(first, second)
                except Exception:  # noqa: BLE001 - not a call this function takes
                    continue
                if any(isinstance(item, np.ndarray) and np.shares_memory(item, second)
                       for item in (out if isinstance(out, (tuple, list)) else [out])):
                    missing.append(label)
                    break
    assert not missing, f"NumPy functions that return views of a later operand, unknown to frontend/view_names.py: {missing}"


@pytest.mark.parametrize("name", sorted(n for n in dir(np.ndarray) if not n.startswith("_")))
def test_every_array_method_returning_a_view_is_known(name):
    x = np.arange(6.0).reshape(2, 3) + 1.0
    value = getattr(x, name)
    if callable(value):
        views = _returns_a_view(lambda given, *extra: getattr(given, name)(*extra), x)
    else:
        views = isinstance(value, np.ndarray) and np.shares_memory(value, x)
    if name in ("byteswap", "fill", "resize", "sort", "partition", "put", "itemset", "setfield", "setflags"):
        return  # change the array in place: refused as a method called for its effect
    assert not views or name in VIEW_METHODS, f"x.{name} returns a view of x, unknown to frontend/views.py"


def test_the_scan_finds_views_that_only_some_calls_return():
    """What the scan above must catch (and once excused): a read-only view, an order-0 call,
    a scalar type called on an array of its own dtype, index grids."""
    x, m = np.arange(4.0) + 1.0, np.arange(9.0).reshape(3, 3)
    assert np.shares_memory(np.diag(m), m) and np.shares_memory(np.diff(x, 0), x)
    assert np.shares_memory(np.polyder(x, 0), x) and np.shares_memory(np.polyint(x, 0), x)
    assert np.float64(x) is x and all(np.shares_memory(g, x) for g in np.ix_(x, x))
    for name in ("diag", "diff", "polyder", "polyint", "float64", "complex128", "int64", "nditer"):
        assert name in VIEW_SOMETIMES


def _central(f, x, h=1e-6):
    steps = np.eye(x.size) * h
    return np.array([(f(x + e) - f(x - e)) / (2 * h) for e in steps])


def _diag_then_write(x):
    m = np.outer(x, x)
    d = np.diag(m)  # a view of m's diagonal
    m[0, 0] = 5.0 * x[1]
    return np.sum(d * x)


def _order_zero_then_write(x):
    p = x * 1.0
    q = np.polyder(p, 0)  # p itself
    p[0] = 0.0
    return np.sum(q * x)


def _scalar_type_then_write(x):
    p = x * 1.0
    q = np.float64(p)  # p itself
    p[0] = 0.0
    return np.sum(q * x)


def _index_grid_then_write(x):
    p = x * 1.0
    a, b = np.ix_(p, p)  # views of p
    p[0] = 0.0
    return np.sum(a * b)


def _row_of_max_then_write(x):
    m = np.reshape(x * 1.0, (3, 1))
    r = max(m)  # a row of m
    m[0, 0] = 7.0
    return np.sum(r * x)


def _max_of_one_element_arrays_then_write(x):
    a, b = x[0:1] * 1.0, x[1:2] * 1.0
    r = max(a, b)  # a or b itself
    a[0] = 0.0
    return np.sum(r * x)


def _atleast_of_two_then_write(x):
    a, b = x * 1.0, x * 2.0
    a2, b2 = np.atleast_1d(a, b)  # b2 is b
    b[0] = 3.0
    return np.sum(b2 * x)


def _nditer_writes(x):
    v = x * 1.0
    for t in np.nditer(v, op_flags=["readwrite"]):
        t[...] = t * 2.0
    return np.sum(v * x)


@pytest.mark.parametrize("f", [_diag_then_write, _order_zero_then_write, _scalar_type_then_write,
                               _index_grid_then_write, _row_of_max_then_write,
                               _max_of_one_element_arrays_then_write, _nditer_writes, _atleast_of_two_then_write])
def test_a_write_into_what_a_sometimes_view_shares_is_refused_not_missed(f):
    """Each of these gave a silently wrong gradient when the result was taken for a copy."""
    x = np.array([0.7, -0.4, 1.1])
    with pytest.raises(ssad.SsadError, match="would change an array that"):
        ssad.grad(f)(x)


def _diff_then_write(x):
    p = x * 1.0
    q = np.diff(p) + np.diff(p, 1) + np.diff(p, n=2)[0]  # new arrays: the order is not 0
    p[0] = 0.0
    return np.sum(q * x[1:]) + np.sum(p * x)


def _scalar_type_of_a_number(x):
    t = np.float64(x[0])
    t += 1.0
    u = max(np.sum(x), 0.5)
    return t * x[1] + u * x[2]


def _diag_of_a_vector(x):
    v = x * 1.0
    d = np.diag(v)  # of a vector a new matrix: the write below leaves it (the generated code checks)
    v[0] = 3.0 * x[2]
    return np.sum(d @ x) + np.sum(v * v)


def _max_of_a_list_then_write(x):
    a, b = x[0:1] * 1.0, x[1:2] * 1.0
    r = min([a, b])  # b here (x[1] < x[0]): the write into a leaves it
    a[0] = 3.0
    return np.sum(r * x[1])


@pytest.mark.parametrize("f", [_diff_then_write, _scalar_type_of_a_number, _diag_of_a_vector,
                               _max_of_a_list_then_write])
def test_what_is_no_view_still_differentiates(f):
    x = np.array([0.7, -0.4, 1.1])
    np.testing.assert_allclose(ssad.grad(f)(x), _central(f, x), rtol=1e-7, atol=1e-7)


def test_order_arguments_are_read_from_the_call():
    import gast

    def call(text):
        return gast.parse(text).body[0].value

    assert not views_first("diff", call("np.diff(a)")) and not views_first("diff", call("np.diff(a, 2)"))
    assert views_first("diff", call("np.diff(a, 0)")) and views_first("diff", call("np.diff(a, n=k)"))
    assert views_first("polyint", call("np.polyint(p, m)")) and not views_first("polyder", call("np.polyder(p, m=1)"))
