"""Every rule sample with two or more float arguments, differentiated with respect to one
argument at a time, as user code whose other operands are constants is: forward mode
then hands the tangent rule the float 0.0 for every constant operand (the symbolic zero
that could not fold away), and reverse mode drops the adjoints of the constants.

Both are compared with central differences. Where reverse mode refuses an argument its
adjoint rule gives no gradient (the float `ord=0.5` of a norm), forward mode may refuse
it too or must be right."""

import warnings

import numpy as np
import pytest

import ssad
from tests import oracle

from .cases import case_id

CASES = oracle.rule_cases()  # every sample: about 30 s on two cores


def _float_positions(args):
    return [p for p, a in enumerate(args) if oracle._is_float_leaf(a)]


def _along(function, args, p, t):
    def scalar(step):
        return float(function(*args[:p], np.asarray(args[p]) + step * t, *args[p + 1:]))

    return scalar


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_one_argument_moving(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        function, args = oracle.rule_function(case)
        if function is None or len(_float_positions(args)) < 2:
            return
        for p in _float_positions(args):
            t = oracle._direction(args[p], p)
            tangents = tuple(t if k == p else None for k in range(len(args)))
            with np.errstate(all="ignore"):
                expected = oracle._central(_along(function, args, p, t), 0.0)
                try:
                    gradient = ssad.grad(function, wrt=p)(*args)
                except ssad.SsadError as refusal:  # a float flag (`ord=0.5` of norm)
                    assert "gives no gradient for its argument" in str(refusal), refusal
                    gradient = None
                try:
                    _, got = ssad.jvp(function, args, tangents)
                except ssad.SsadError:
                    assert gradient is None, f"jvp along argument {p} refused where grad is not"
                    continue
            tolerance = dict(rtol=1e-4, atol=1e-6 * (1 + abs(expected)), equal_nan=True)
            np.testing.assert_allclose(got, expected, err_msg=f"jvp along argument {p}", **tolerance)
            if gradient is not None:
                np.testing.assert_allclose(np.sum(np.asarray(gradient) * t), expected,
                                           err_msg=f"grad wrt argument {p}", **tolerance)
