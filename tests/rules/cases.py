"""The shape of a per-rule numerical check, shared by the rule test modules."""

from typing import Any, NamedTuple

import numpy as np

from ssad.registry import REGISTRY


class Case(NamedTuple):
    """Check the adjoint rule of `primitive` at `args`/`kwargs` with ssad.testing.check_rule."""

    primitive: Any
    args: tuple
    kwargs: dict = {}
    id: str = ""


def case_id(case):
    return case.id or getattr(case.primitive, "__name__", repr(case.primitive))


class Samples:
    """Random inputs from one seeded generator, so every run checks the same points."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def uniform(self, low, high, shape=()):
        """Floats drawn from [low, high): an array of `shape`, or a Python float for ()."""
        value = self.rng.uniform(low, high, size=shape)
        return value if shape else float(value)

    def away_from_zero(self, low, high, shape=()):
        """Floats with magnitude in [low, high) and random signs."""
        sign = self.rng.choice([-1.0, 1.0], size=shape)
        value = sign * self.rng.uniform(low, high, size=shape)
        return value if shape else float(value)


# ----- Tangents are the transposes of the adjoints -----


def _random_like(value, generator):
    if isinstance(value, (list, tuple)):
        return type(value)(_random_like(v, generator) for v in value)
    if np.ndim(value) == 0:
        return float(generator.standard_normal())
    return generator.standard_normal(np.shape(value))


def _carries_tangent(value):
    if isinstance(value, (list, tuple)):
        return all(_carries_tangent(v) for v in value)
    return isinstance(value, float) or (isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f")


def _inner(a, b):
    if isinstance(a, (list, tuple)):
        return sum(_inner(u, v) for u, v in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def assert_transpose(primitive, *args, seed=0, **kwargs):
    """<adjoint(dy), t> == <dy, tangent(t)> for random dy and t, at `args`."""
    generator = np.random.default_rng(seed)
    y = primitive(*args, **kwargs)
    dy = _random_like(y, generator)
    tangents = tuple(_random_like(a, generator) if _carries_tangent(a) else None for a in args)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    assert np.shape(t_y) == np.shape(y)
    paired = [(d, t) for d, t in zip(adjoints, tangents, strict=False) if d is not None and t is not None]
    assert paired, "no argument carries both an adjoint and a tangent"
    forward = _inner(dy, t_y)
    backward = sum(_inner(d, t) for d, t in paired)
    assert np.isfinite(forward)
    np.testing.assert_allclose(backward, forward, rtol=1e-12, atol=1e-12)
