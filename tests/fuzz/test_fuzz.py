"""Random differentiable programs: ssad's gradients and JVPs against finite differences.

CI runs `SSAD_FUZZ_EXAMPLES` programs (default 60), the same ones every run
(`derandomize=True`, no example database). Set the variable higher for a longer
search, e.g. `SSAD_FUZZ_EXAMPLES=5000 .venv/bin/pytest tests/fuzz -q`. A failure
prints the shrunk program and its point; turn it into a named test in
`tests/test_regressions.py` when fixing the bug. `python -m tests.fuzz START STOP`
sweeps seeded programs and lists every failure instead of stopping at the first.
"""

import os
import warnings

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st

from tests.fuzz.generate import Choices, generate
from tests.fuzz.harness import Unfair, check

EXAMPLES = int(os.environ.get("SSAD_FUZZ_EXAMPLES", "60"))
# Shrinking a failure compiles each candidate program again and can take minutes;
# SSAD_FUZZ_SHRINK=0 reports the first failing program as it was generated.
# SSAD_FUZZ_SECOND_ORDER=1 also checks forward over reverse, reverse over reverse and a
# gradient called inside a differentiated function (`make fuzz` sets it).
# The programs include selecting reductions over arrays rebuilt and written in place
# inside loops (SSAD_FUZZ_WIDENED=0 leaves them out).
WIDENED = os.environ.get("SSAD_FUZZ_WIDENED", "1") == "1"
SECOND_ORDER = os.environ.get("SSAD_FUZZ_SECOND_ORDER", "0") == "1"
PHASES = [p for p in Phase if p is not Phase.shrink or os.environ.get("SSAD_FUZZ_SHRINK", "1") != "0"]


@st.composite
def programs(draw):
    return generate(Choices(lambda lo, hi: draw(st.integers(lo, hi))), widened=WIDENED)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
@given(programs())
def test_gradient_and_jvp_of_random_programs_match_finite_differences(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # e.g. both branches of np.where are evaluated
        try:
            check(program, second_order=SECOND_ORDER)
        except Unfair:
            reject()
