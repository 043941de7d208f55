"""Matrices of generated programs (`test_shared_items.py`, `test_helper_items.py`): loaded
from a real file, as ssad reads source, and each one differentiated exactly or refused."""

import importlib.util

import numpy as np

import ssad
from ssad.testing import numerical_gradient

X = np.array([0.3, 0.7])
V = np.array([1.0, -0.5])


def load(directory, name, source):
    """The module `name` of `source`, written to `directory/name.py` and imported."""
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outcome(f):
    """'exact' (gradient, forward derivative and Hessian-vector product against central
    differences), or 'refused' with an `SsadError` at a line of `f`'s file; anything else fails."""
    try:
        gradient = ssad.grad(f)
        got = gradient(X)
    except ssad.SsadError as error:
        assert error.lineno is not None and error.filename == f.__code__.co_filename, str(error)
        return "refused"
    expected = numerical_gradient(f, X)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (X,), (V,))[1], expected @ V, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(gradient, (X,), (V,))[1], numerical_gradient(lambda z: gradient(z) @ V, X),
                               rtol=1e-5, atol=1e-7)
    return "exact"
