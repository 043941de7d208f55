"""Every built-in rule has a numerical check, and the rule count stays visible."""

from ssad.registry import REGISTRY, primitive_name

from . import (
    test_assembly,
    test_decompositions,
    test_elementwise,
    test_fft,
    test_functional,
    test_linalg,
    test_polynomials,
    test_reductions,
    test_runtime,
    test_scalar,
    test_scipy_integrate,
    test_scipy_linalg,
    test_scipy_signal,
    test_scipy_special,
    test_scipy_stats,
    test_shape,
    test_signal,
    test_statistics,
)

MODULES = [
    test_assembly, test_decompositions, test_elementwise, test_fft, test_functional, test_linalg, test_polynomials, test_reductions,
    test_runtime, test_scalar, test_scipy_integrate, test_scipy_linalg, test_scipy_signal, test_scipy_special,
    test_scipy_stats, test_shape, test_signal, test_statistics,
]


def builtin_adjoint_primitives():
    return [
        p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__.startswith("ssad.rules")
    ]


def test_every_builtin_adjoint_rule_has_a_numerical_check():
    checked = set()
    for module in MODULES:
        checked |= {case.primitive for case in module.CASES}
        checked |= set(getattr(module, "CHECKED_ELSEWHERE", ()))
    missing = [primitive_name(p) for p in builtin_adjoint_primitives() if p not in checked]
    assert not missing, f"rules without a numerical check: {missing}"


def test_every_builtin_adjoint_rule_has_a_tangent_rule():
    missing = [primitive_name(p) for p in builtin_adjoint_primitives() if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


def test_every_declared_nondifferentiable_primitive_is_registered():
    for module in MODULES:
        for primitive in getattr(module, "NONDIFFERENTIABLE", ()):
            assert REGISTRY.is_nondifferentiable(primitive), primitive_name(primitive)


def test_the_rule_table_is_broad():
    assert len(builtin_adjoint_primitives()) >= 120
    assert len(REGISTRY.nondifferentiable_primitives()) >= 60


def test_a_rule_returns_none_only_where_the_generated_code_knows_it():
    """Generated code drops an argument's adjoint where every `return` of the rule holds a
    literal None at its place (`call_adjoints._none_positions`); anywhere else it uses the
    value, and a None there (`return (None, dy) if ... else ...`) raised TypeError in the
    user's gradient (np.histogram_bin_edges with given edges did)."""
    import warnings

    import numpy as np

    from ssad.testing import _apply, _is_float_input, _random_like
    from ssad.transform.call_adjoints import _none_positions

    unknown = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for module in MODULES:
            for case in module.CASES:
                rule = REGISTRY.adjoint_rule(case.primitive)
                if rule is None or not rule.__module__.startswith("ssad."):
                    continue
                y = _apply(case.primitive, *case.args, **case.kwargs)
                adjoints = rule(_random_like(y, np.random.default_rng(0)), y, *case.args, **case.kwargs)
                always = _none_positions(rule)[0]
                unknown += [f"{case.id or primitive_name(case.primitive)} argument {i}"
                            for i, (arg, d) in enumerate(zip(case.args, adjoints, strict=False))
                            if d is None and _is_float_input(arg) and i not in always]
    assert not unknown, f"rules returning None where generated code does not drop it: {unknown}"
