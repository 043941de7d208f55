"""200 seeded random programs at first and second order, in every CI run.

The same programs, judged the same way, as `python -m tests.fuzz 0 N --modes
first,fwd_over_rev,rev_over_rev,grad_inside`: the gradient against central differences,
then forward over reverse (a Hessian-vector product), reverse over reverse (the gradient
of <gradient, v>) and a gradient called inside a differentiated function, each against
differences of the gradient. A program may be unfair (its differences are not
trustworthy there); none may be wrong, crash, or be refused at second order when its
first order works. The checks of the compiler's own output (the mirror and the closure
check, see `tests/conftest.py`), which more than double a compile's time, run here only
with `SSAD_STRUCTURAL_CHECKS=all` (`make fuzz` runs them on one seed in ten of its
sweep). `make fuzz` runs 10,000 of these programs in five modes;
`SSAD_FUZZ_SECOND_ORDER_PROGRAMS` sets how many run here. Each program compiles a dozen
generated functions at first and second order, about 3 s in all on one core (a few
take 15 s): the default keeps this file to about 5.5 minutes on two.
"""

import os
import warnings

import pytest

from ssad.backend import pipeline
from ssad.transform import mirror
from tests.fuzz.generate import from_seed
from tests.fuzz.harness import evaluate

PROGRAMS = int(os.environ.get("SSAD_FUZZ_SECOND_ORDER_PROGRAMS", "200"))
MODES = ("first", "fwd_over_rev", "rev_over_rev", "grad_inside")
CHUNK = 4
CHECKED = os.environ.get("SSAD_STRUCTURAL_CHECKS") == "all"


@pytest.mark.parametrize("start", range(0, PROGRAMS, CHUNK), ids=lambda s: f"seeds-{s}-{min(s + CHUNK, PROGRAMS) - 1}")
def test_random_programs_at_second_order(start):
    mirror.ENABLED = pipeline.CHECK_CLOSURE = CHECKED
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for seed in range(start, min(start + CHUNK, PROGRAMS)):
            for mode, outcome in evaluate(from_seed(seed), MODES).items():
                if outcome.status not in ("correct", "unfair"):
                    failures.append(f"seed {seed} [{mode}] {outcome.status}: {str(outcome.detail)[:400]}")
    assert not failures, "\n".join(failures)


# A program whose first derivative is right and whose second is not: the adjoint rule of
# `softsin` reads cos(x) through a function declared to carry no gradient, so the code
# that differentiates the gradient again drops the -sin(x) term.
WRONG_AT_SECOND_ORDER = """
import numpy as np
import ssad

W = np.array([0.7, -0.4, 1.3, 0.2])


def frozen_cos(x):
    return np.cos(x)


def softsin(x):
    return np.sin(x)


ssad.nondifferentiable(frozen_cos)


@ssad.adjoint(softsin)
def softsin_adjoint(dy, y, x):
    return (dy * frozen_cos(x),)


def f(x, y, s):
    return np.dot(softsin(x * y), W) + s * np.sum(y)
"""


def test_a_wrong_second_derivative_is_called_wrong():
    """The sample above passes only if its judge can fail: here first order is right and
    both second-order ways that differentiate the rule again are wrong."""
    program = from_seed(0)
    program.source = WRONG_AT_SECOND_ORDER
    outcomes = evaluate(program, ("first", "fwd_over_rev", "rev_over_rev"))
    assert {mode: outcome.status for mode, outcome in outcomes.items()} == {
        "first": "correct", "fwd_over_rev": "wrong", "rev_over_rev": "wrong"}
