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
