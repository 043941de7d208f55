"""Third derivatives on the control-flow and data corpora.

`jacobian(hessian(f))` is reverse mode over the jvp of the generated gradient, and
`hessian(g)` for `g(x) = sum(grad(f)(x))` is forward over reverse over reverse. Each is
checked against central differences of a second derivative that
tests/test_higher_order.py checks against differences of the gradient.
"""

import dataclasses
import os

import numpy as np
import pytest

import ssad

from .test_higher_order import _SUMMED, CORPUS, CORPUS_IDS, _differences_of, _small_float_positions

# Inputs up to this size: a third derivative of n inputs takes n * n sweeps.
_LARGEST = 6

# Refused at third order by a clean SsadError (docs/forward-and-higher-order.md): calls
# through function values, whose second-order code has no derivative of its own.
REFUSED_AT_THIRD_ORDER = {
    "functions/closure_used_twice-0", "functions/returned_closure-0", "functions/returned_closure-1",
    "functions/closure_over_intermediate-0", "functions/local_factory-0", "functions/closure_in_loop-0",
    "functions/closure_calls_recursive-0", "functions/lambda_apply_twice-0",
    "functions/apply_numpy_function-0", "functions/apply_user_function-0", "functions/local_lambdas-0",
    "functions/closure_with_constant_keyword-0", "functions/defaults_of_the_enclosing_values-0",
    "functions/composed_functions-0", "functions/functions_in_list-0",
    "functions/functions_in_dict-0", "functions/returned_function-0", "functions/closure_passed_to_apply-0",
    "functions/function_chosen_by_int-0", "functions/function_chosen_by_int-1", "functions/method_reading_self-0",
    "functions/dataclass_method-0", "functions/methods_calling_methods-0", "functions/partial_of_user_function-0",
    "functions/partial_binding_active_value-0",
}

_CASES = [
    (function, args, case, position)
    for (function, args), case in zip(CORPUS, CORPUS_IDS, strict=True)
    if not case.startswith("straight/")
    for position in _small_float_positions(args)[:1]
    if np.size(args[position]) <= _LARGEST
]
# Each case takes seconds (n * n sweeps of code compiled three times over): CI runs every
# third one and every refused one; `make fuzz` runs them all (SSAD_THIRD_ORDER=all).
if os.environ.get("SSAD_THIRD_ORDER") != "all":
    _CASES = [c for k, c in enumerate(_CASES) if k % 3 == 0 or c[2] in REFUSED_AT_THIRD_ORDER]


@pytest.mark.parametrize("function, args, case, position", _CASES, ids=[c[2] for c in _CASES])
def test_third_derivatives_of_every_control_flow_and_data_program(function, args, case, position):
    hessian = ssad.hessian(function, wrt=position)
    summed = _SUMMED[len(args)]
    gradient = ssad.grad(function, wrt=position)
    if case in REFUSED_AT_THIRD_ORDER:
        with pytest.raises(ssad.SsadError):
            ssad.jacobian(hessian, wrt=position)(*args)
        with pytest.raises(ssad.SsadError):
            ssad.hessian(summed, wrt=position)(*args, gradient)
        return
    expected = _differences_of(hessian, args, position, step=1e-5)
    scale = 1.0 + np.max(np.abs(expected))
    got = ssad.jacobian(hessian, wrt=position)(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * scale)

    # hessian(x -> sum(grad(f)(x))): the third derivative summed over its first index
    summed_hessian = ssad.hessian(summed, wrt=position)(*args, gradient)
    np.testing.assert_allclose(summed_hessian, np.sum(expected, axis=tuple(range(np.ndim(args[position])))),
                               rtol=1e-4, atol=1e-5 * scale)


def cubic(x):
    return np.sin(x) * x * x


def test_grad_of_grad_of_grad_is_the_closed_form():
    third = ssad.grad(ssad.grad(ssad.grad(cubic)))
    for x in (0.3, -1.7):
        expected = -np.cos(x) * x * x - 6 * x * np.sin(x) + 6 * np.cos(x)
        np.testing.assert_allclose(third(x), expected, rtol=1e-12)


@dataclasses.dataclass
class Pair:
    a: float
    b: float


def through_a_record(x):
    pair = Pair(x, x * x)
    return np.sin(pair.a) * pair.b + pair.a**3


def through_a_dict(x):
    parts = {"a": x, "b": x * x}
    return np.sin(parts["a"]) * parts["b"] + parts["a"] ** 3


@pytest.mark.parametrize("function", [through_a_record, through_a_dict])
def test_third_derivatives_through_records_and_dicts(function):
    """The second-order code reads the adjoint of a record's attribute (`attribute_part`), which has
    its own rules: a third derivative of attribute and key reads is the closed form."""
    third = ssad.grad(ssad.grad(ssad.grad(function)))
    for x in (0.7, -1.2):
        expected = -np.cos(x) * x * x - 6 * x * np.sin(x) + 6 * np.cos(x) + 6.0
        np.testing.assert_allclose(third(x), expected, rtol=1e-12)


def test_other_derivatives_of_a_jacobian_are_refused_with_the_way_to_get_them():
    x = np.array([0.3, -0.2])
    with pytest.raises(ssad.SsadError, match=r"ssad\.jacobian"):
        ssad.grad(ssad.hessian(cubic))(x)
