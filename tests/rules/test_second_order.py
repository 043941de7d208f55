"""Every built-in adjoint rule is differentiated again by ssad: a Hessian-vector product
through each primitive, forward over reverse and reverse over reverse, against central
differences of its gradient (`ssad.testing.check_second_order`), at the first sample of
each primitive in the rule modules' CASES."""

import numpy as np
import pytest

from ssad.registry import primitive_name
from ssad.testing import check_second_order

from .cases import case_id
from .test_coverage import MODULES

# Primitives whose second derivative is refused on purpose, with the reason the docs give: none.
REFUSED = {}


def _first_case_of_each_primitive():
    seen, cases = set(), []
    for module in MODULES:
        for case in module.CASES:
            if case.primitive in seen or primitive_name(case.primitive) in REFUSED:
                continue
            seen.add(case.primitive)
            # a rule meant for symmetric inputs is checked through a function of every entry
            substitute = getattr(module, "SYMMETRIC_INPUT", {}).get(case.primitive)
            cases.append(case._replace(primitive=substitute, id=case_id(case)) if substitute else case)
    return cases


CASES = _first_case_of_each_primitive()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_second_order_through_the_rule(case):
    with np.errstate(all="ignore"):
        check_second_order(case.primitive, *case.args, **case.kwargs)
