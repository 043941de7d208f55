"""Six seeded random programs with checkpointed loops, in every CI run.

The same programs `python -m tests.fuzz 0 N --modes checkpointed` checks: the gradient
with `checkpoint=("every", 2)`, `"sqrt"` and `("revolve", 2)`, each against central
differences and against the gradient without checkpointing. The programs have loops
with `break`, `continue` and early `return`, loops nested in loops and in branches,
`while` loops, in-place writes into arrays made in the loop and before it, and calls
of helper functions. A program may be unfair (its differences are not trustworthy
there); none may be wrong, crash or be refused. `make fuzz` runs thousands;
`SSAD_FUZZ_CHECKPOINTED_PROGRAMS` sets how many run here.
"""

import os
import warnings

import pytest

from tests.fuzz.generate import from_seed
from tests.fuzz.harness import evaluate

PROGRAMS = int(os.environ.get("SSAD_FUZZ_CHECKPOINTED_PROGRAMS", "6"))


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_with_checkpointed_loops(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        outcome = evaluate(from_seed(seed), ["checkpointed"])["checkpointed"]
    assert outcome.status in ("correct", "unfair"), f"seed {seed}: {outcome.status}: {outcome.detail}"
