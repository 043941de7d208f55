"""ssad's first and second derivatives against autograd's, on the program corpora, the
per-rule samples and random programs (see `tests/oracle.py` for how the same function
runs under autograd).

A check counts as ssad's failure when ssad raises (at second order, anything but a
documented `ssad.SsadError`) or disagrees with autograd where central differences side
with autograd. Programs autograd cannot run (in-place writes, `math` functions on
boxes, rules autograd lacks) and points where autograd is the one that is wrong
(differences side with ssad) are counted, not failed, and printed by
`test_oracle_summary`.

CI runs SSAD_ORACLE_PROGRAMS random programs (default 12), first order only, and the
first per-rule sample of each primitive (SSAD_ORACLE_ALL_RULE_SAMPLES=1: every sample);
`make fuzz` runs 500 here at second order too (SSAD_ORACLE_SECOND=1), and a sweep
of thousands with `python -m tests.fuzz START STOP --modes autograd`.
"""

import collections
import os
import warnings

import numpy as np
import pytest

from tests import oracle
from tests.fuzz.generate import from_seed
from tests.fuzz.harness import MARGIN, load, smallest_gap
from tests.programs import control, functions, straight
from tests.rules.cases import case_id

from .conftest import case_ids

PROGRAMS = int(os.environ.get("SSAD_ORACLE_PROGRAMS", "12"))
TALLY = collections.Counter()

def _assert_verdicts(verdicts):
    failures = []
    for verdict in verdicts:
        TALLY[verdict.status] += 1
        if verdict.status not in ("wrong", "crashed"):
            continue
        failures.append(f"[{verdict.status}] {verdict.check}\n{verdict.detail}")
    assert not failures, "\n\n".join(failures)


CORPUS = [*straight.CASES, *control.CASES, *functions.CASES]
CORPUS_IDS = [f"straight/{i}" for i in case_ids(straight.CASES)] + [
    f"control/{i}" for i in case_ids(control.CASES)] + [f"functions/{i}" for i in case_ids(functions.CASES)]


@pytest.mark.parametrize("function, args", CORPUS, ids=CORPUS_IDS)
def test_corpus_matches_autograd(function, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_verdicts(oracle.compare(function, args))


# CI compares the first sample of each primitive; `make fuzz` (SSAD_ORACLE_ALL_RULE_SAMPLES=1) all of them.
RULE_CASES = oracle.rule_cases()
if os.environ.get("SSAD_ORACLE_ALL_RULE_SAMPLES", "0") != "1":
    RULE_CASES = [case for k, case in enumerate(RULE_CASES)
                  if all(other.primitive is not case.primitive for other in RULE_CASES[:k])]


@pytest.mark.parametrize("case", RULE_CASES, ids=[case_id(c) for c in RULE_CASES])
def test_rule_samples_match_autograd(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        function, args = oracle.rule_function(case)
        if function is None:
            TALLY[f"rule sample not compared: {args}"] += 1
            return
        _assert_verdicts(oracle.compare(function, args, label=case_id(case)))


# random programs, first order only in CI (second order: `make fuzz`, or SSAD_ORACLE_SECOND=1)
SECOND = os.environ.get("SSAD_ORACLE_SECOND", "0") == "1"


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_match_autograd(seed):
    program = from_seed(10_000 + seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = load(program.source)
        try:
            with np.errstate(all="raise", under="ignore"):
                value = module.f(*program.args())
            fair = np.isfinite(value) and smallest_gap(program) >= MARGIN
        except (FloatingPointError, ValueError):
            fair = False
        if not fair:
            TALLY["random program near a kink or not finite"] += 1
            return
        _assert_verdicts(oracle.compare(module.f, program.args(), positions=(0, 1, 2), second_order=SECOND,
                                        label=f"seed {10_000 + seed}"))


def test_oracle_summary(capsys):
    """Not a check: prints how many comparisons each outcome had (visible with -s or -rA)."""
    with capsys.disabled():
        print("\nautograd oracle:", dict(sorted(TALLY.items())))
