"""The NumPy functions ssad's lowering takes for views (frontend/views.py) against what
the installed NumPy returns: every public function that hands back a view of (or the
very) array it is given, on a few ordinary arrays, must be in ssad's lists, or a write
through its result would go unseen. The exceptions are listed with their reason."""

import warnings

import numpy as np
import pytest

from ssad.frontend.views import VIEW_FUNCTIONS, VIEW_METHODS, VIEW_OF_ANY

# a view only in a degenerate call, or one that cannot be written through, or not of floats
NOT_WRITABLE_OR_DEGENERATE = {
    "diag",  # of a 2-D array: a read-only view (NumPy raises on a write)
    "diff", "polyder", "polyint",  # with n=0 / m=0 only: the input itself
    "nan_to_num",  # with copy=False only, which writes in place: refused by the fence (outputs.py)
    "from_dlpack", "ix_",  # buffers and index arrays, not float arrays ssad differentiates
    "copyto", "put", "place", "putmask", "fill_diagonal",  # write into the argument: refused by the fence
}
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
            if name.startswith("_") or name in SKIP or isinstance(value, type) or not callable(value):
                continue
            yield prefix + name, name, value


def test_every_numpy_function_returning_a_view_is_known():
    inputs = [np.arange(6.0) + 1.0, np.arange(6.0).reshape(2, 3) + 1.0, np.arange(24.0).reshape(2, 3, 4) + 1.0]
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            for label, name, function in _public_functions():
                if name in VIEW_FUNCTIONS or name in VIEW_OF_ANY or name in NOT_WRITABLE_OR_DEGENERATE:
                    continue
                if any(_returns_a_view(function, x) for x in inputs):
                    missing.append(label)
    assert not missing, f"NumPy functions that return views, unknown to frontend/views.py: {missing}"


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
