"""The shape of a per-rule numerical check, shared by the rule test modules."""

from typing import Any, NamedTuple

import numpy as np


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
