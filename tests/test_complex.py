"""Complex numbers: one convention in every rule, checked in the complex plane.

ssad's convention is autograd's (and JAX's): for a real-valued f of z = x + 1j y,
``grad(f)(z) = df/dx - 1j * df/dy``; the pullback of a holomorphic g is
``ct -> ct * g'(z)``; tangents are the ordinary directional derivatives, real for
real outputs (docs/conventions.md, "Complex numbers"). Every check here compares with
central differences along the real and the imaginary axis separately, and with
autograd on the same programs.
"""

import warnings

import numpy as np
import pytest

import ssad

anp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")

EPS = 1e-6
rng = np.random.default_rng(20240917)
Z = np.array([0.7 + 0.4j, -0.5 + 0.8j, 0.3 - 0.6j, 1.1 + 0.9j])  # off the axes: no branch cut
C = np.array([0.3 - 1.2j, 1.5 + 0.2j, -0.7 + 0.9j, 0.4 - 0.5j])  # a non-uniform complex weight
T = np.array([0.6 - 0.2j, -0.3 + 1.1j, 0.9 + 0.5j, -1.2 - 0.4j])  # a tangent direction


def fd_grad(f, z):
    """df/dx - 1j df/dy of a real-valued f, by central differences (df/dx for real z)."""
    z = np.asarray(z)
    shape = z.shape
    flat = z.astype(np.complex128).ravel()
    out = np.zeros(flat.shape, np.complex128)
    for i in range(flat.size):
        for step, weight in ((1.0, 1.0), (1j, -1j)):
            up, down = flat.copy(), flat.copy()
            up[i] += EPS * step
            down[i] -= EPS * step
            value = (f(up.reshape(shape)) - f(down.reshape(shape))) / (2 * EPS)
            assert np.isreal(value), "fd_grad needs a real-valued function"
            out[i] += weight * np.real(value)
    out = out.reshape(shape)
    return out if np.iscomplexobj(z) else np.real(out)


def fd_tangent(f, z, t):
    return (f(z + EPS * t) - f(z - EPS * t)) / (2 * EPS)


def direction_like(z):
    """A fixed non-uniform tangent shaped like z: complex for complex z, real for real z."""
    shape = np.shape(z)
    draw = np.random.default_rng(7).uniform(-1.5, 1.5, size=(2,) + shape)
    t = draw[0] + 1j * draw[1] if np.iscomplexobj(z) else draw[0]
    return t if shape else t.item()


def assert_matches_fd(f, z, *, rtol=1e-6, atol=1e-8):
    """ssad's gradient and jvp of the real-valued f at z against central differences;
    the tangent of the real output must be real. Returns the gradient."""
    t = direction_like(z)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning is a failure
        got = ssad.grad(f)(z)
        value, tangent = ssad.jvp(f, (z,), (t,))
    np.testing.assert_allclose(got, fd_grad(f, z), rtol=rtol, atol=atol)
    assert not np.iscomplexobj(tangent), f"a real output got a complex tangent: {tangent!r}"
    np.testing.assert_allclose(tangent, fd_tangent(f, z, t), rtol=rtol, atol=atol)
    np.testing.assert_allclose(value, f(z))
    return got


# ----- The reproduced bugs, as regressions -----


def test_abs_of_an_imaginary_multiple_of_a_real_input():
    assert ssad.grad(lambda x: np.abs(1j * x))(2.0) == 1.0


def test_norm_of_an_imaginary_vector():
    got = ssad.grad(lambda x: np.linalg.norm(1j * x))(np.array([3.0, 4.0]))
    np.testing.assert_allclose(got, [0.6, 0.8])
    assert got.dtype == np.float64


def test_jvp_of_abs_is_real_with_the_right_sign():
    z = 1.1 + 1.2j
    value, tangent = ssad.jvp(lambda z: np.abs(z), (z,), (1j,))
    assert isinstance(tangent, (float, np.floating)) and not np.iscomplexobj(tangent)
    np.testing.assert_allclose(tangent, 1.2 / abs(z))  # d|z| along 1j is Im(z) / |z|
    np.testing.assert_allclose(value, abs(z))


def test_abs_squared_plus_real_square_is_2x_squared():
    def f(z):
        return np.abs(z) ** 2 + np.real(z * z)

    got = ssad.grad(f)(1.1 + 1.2j)
    assert got == pytest.approx(4.4 + 0j, abs=1e-12)
    assert got == pytest.approx(autograd.grad(lambda z: anp.abs(z) ** 2 + anp.real(z * z))(1.1 + 1.2j))


def test_arcsinh_of_a_complex_input():
    def f(z):
        return np.real(np.arcsinh(z) * (0.3 - 0.8j))

    assert_matches_fd(f, 1.1 + 1.2j)


def test_complex_output_of_a_scalar_input_in_vjp():
    # y = 1j * x: the adjoint of the real x is Re(ct * 1j)
    _, pullback = ssad.vjp(lambda x: x * 1j, 2.0)
    assert pullback(1.0) == (0.0,)
    assert pullback(1j) == (-1.0,)
    assert type(pullback(1j)[0]) is float


@pytest.mark.parametrize(
    "f, arg",
    [
        (lambda z: z * z, 1.1 + 1.2j),
        (lambda x: x * 1j, 2.0),
        (lambda z: np.sum(np.exp(z)), Z),
        (lambda x: np.exp(1j * x), np.float64(0.5)),
    ],
    ids=["complex-to-complex", "real-to-complex", "complex-array-sum", "numpy-complex-scalar"],
)
def test_grad_of_a_complex_output_is_an_error(f, arg):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ssad.SsadError, match="real-valued output") as caught:
            ssad.grad(f)(arg)
    message = str(caught.value)
    assert "vjp" in message and "np.real" in message


def test_value_and_grad_of_a_complex_output_is_an_error():
    with pytest.raises(ssad.SsadError, match="real-valued output"):
        ssad.value_and_grad(lambda z: np.exp(z))(0.5 + 0.5j)


# ----- The convention, against autograd -----


def test_the_convention_is_autograds():
    # grad(f) = df/dx - 1j df/dy; for a holomorphic g, the pullback is ct * g'(z)
    z = 0.7 + 0.4j
    got = ssad.grad(lambda z: np.abs(z))(z)
    assert got == pytest.approx(np.conj(z) / abs(z))
    assert got == pytest.approx(autograd.grad(anp.abs)(z))
    def sin(z):
        return np.sin(z)

    _, pullback = ssad.vjp(sin, z)
    (d_z,) = pullback(1.0)
    assert d_z == pytest.approx(np.cos(z))
    assert d_z == pytest.approx(autograd.make_vjp(anp.sin)(z)[0](1.0))
    # descending: z - lr * conj(grad) lowers a real f
    f = lambda z: np.abs(z - (0.2 + 0.1j)) ** 2  # noqa: E731
    step = z - 0.1 * np.conj(ssad.grad(f)(z))
    assert f(step) < f(z)


# ----- Every elementwise function, in the complex plane -----

UNARY = [
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "reciprocal",
    "abs", "absolute", "negative", "positive", "real", "imag", "conj", "conjugate", "angle", "sinc",
]  # fmt: skip
# autograd's rule of arccosh, 1 / sqrt(z**2 - 1), has the wrong sign where Re z < 0 (the
# root of the product is not the product of the roots); finite differences agree with ssad
AUTOGRAD_DIFFERS = {"arccosh"}


def unary_program(xp, name):
    """sum(|g(z)|**2 + Re(g(z) * C)) for g = xp.<name>: a real-valued test of g."""
    g = getattr(xp, name)

    def f(z):
        w = g(z)
        return xp.sum(xp.abs(w) ** 2 + xp.real(w * C))

    return f


@pytest.mark.parametrize("name", UNARY)
def test_unary_function_in_the_complex_plane(name):
    got = assert_matches_fd(unary_program(np, name), Z)
    if name not in AUTOGRAD_DIFFERS and name != "positive":  # autograd has no rule for positive
        np.testing.assert_allclose(got, autograd.grad(unary_program(anp, name))(Z), rtol=1e-10)


@pytest.mark.parametrize("name", ["abs", "real", "imag", "angle"])
def test_real_valued_functions_get_real_tangents_and_match_autograd(name):
    g = getattr(np, name)

    def apply(z):
        return g(z)

    _, tangent = ssad.jvp(apply, (Z,), (T,))
    assert tangent.dtype == np.float64
    np.testing.assert_allclose(tangent, fd_tangent(g, Z, T), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.grad(unary_program(np, name))(Z), autograd.grad(unary_program(anp, name))(Z), rtol=1e-10)


def test_attributes_real_and_imag():
    def f(z):
        return np.sum(z.real * z.imag * C.real + z.imag**2)

    got = assert_matches_fd(f, Z)
    x, y = Z.real, Z.imag
    np.testing.assert_allclose(got, (y * C.real) - 1j * (x * C.real + 2 * y))  # df/dx - 1j df/dy


BINARY = ["add", "subtract", "multiply", "divide", "power"]


def binary_program(xp, name, other, first):
    g = getattr(xp, name)

    def f(z):
        w = g(z, other) if first else g(other, z)
        return xp.sum(xp.abs(w) ** 2 + xp.real(w * C))

    return f


@pytest.mark.parametrize("first", [True, False], ids=["z-first", "z-second"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_function_in_the_complex_plane(name, first):
    other = np.array([0.9 - 0.3j, 0.4 + 0.7j, -0.8 + 0.5j, 0.6 + 0.2j])
    z = Z if name != "power" or first else Z * 0.5
    got = assert_matches_fd(binary_program(np, name, other, first), z)
    np.testing.assert_allclose(got, autograd.grad(binary_program(anp, name, other, first))(z), rtol=1e-9)


def test_operators_and_builtins():
    def f(z):
        w = (z * C + 1.5) / (z - 2j) - z**2 + abs(z) ** 0.5
        return np.sum(np.real(w) * 0.7 + np.imag(w) ** 2)

    got = assert_matches_fd(f, Z)

    def g(z):
        w = (z * C + 1.5) / (z - 2j) - z**2 + abs(z) ** 0.5
        return anp.sum(anp.real(w) * 0.7 + anp.imag(w) ** 2)

    np.testing.assert_allclose(got, autograd.grad(g)(Z), rtol=1e-10)


def test_a_complex_exponent():
    def f(p):
        return np.real(np.sum((0.8 + 0.3j) ** p * C))

    assert_matches_fd(f, Z)


# ----- Reductions and linear algebra -----

A = np.array([[1.2 + 0.3j, -0.4 + 0.8j, 0.2 - 0.1j], [0.5 - 0.6j, 0.9 + 0.2j, -0.3 + 0.4j], [0.1 + 0.7j, 0.3 - 0.2j, 1.1 - 0.5j]])
B = np.array([[0.6 - 0.4j, 0.2 + 0.9j], [-0.5 + 0.1j, 0.8 + 0.3j], [0.3 + 0.2j, -0.7 - 0.6j]])
W = np.array([[0.5 + 1.0j, -0.2 + 0.3j], [0.4 - 0.6j, 1.3 + 0.1j], [-0.9 + 0.2j, 0.1 - 0.8j]])


def programs(xp):
    """Real-valued programs of a complex matrix `a`, one per reduction or linear algebra function."""

    def loss(w):
        """sum(|w|**2 + Re(w * weights)) for a matrix w, with non-uniform complex weights."""
        weights = np.resize(W.ravel(), np.shape(w))
        return xp.sum(xp.abs(w) ** 2 + xp.real(w * weights))

    def sum_(a):
        return xp.real(xp.sum(a * W[:, :1]) * (0.3 - 0.9j)) + xp.abs(xp.sum(a, axis=0)[1])

    def mean(a):
        return xp.real(xp.sum(xp.mean(a, axis=1) * C[:3])) + xp.abs(xp.mean(a))

    def prod(a):
        return xp.real(xp.sum(xp.prod(a, axis=0) * C[:3]))

    def cumsum(a):
        return xp.real(xp.sum(xp.cumsum(a, axis=1) * A))

    def cumprod(a):
        return xp.real(xp.sum(xp.cumprod(a, axis=1) * A))

    def var(a):
        return xp.var(a) + xp.sum(xp.var(a, axis=0) * xp.array([0.3, 1.2, -0.5]))

    def std(a):
        return xp.sum(xp.std(a, axis=1) * xp.array([0.7, -1.1, 0.4]))

    def dot(a):
        return loss(xp.dot(a, B))

    def matmul(a):
        return loss(B.T @ a)

    def einsum(a):
        return loss(xp.einsum("ij,jk->ik", a, B))

    def tensordot(a):
        return loss(xp.tensordot(a, B, axes=1))

    def outer(a):
        return loss(xp.outer(a[0], a[1]))

    def inner(a):
        return loss(xp.inner(a, B.T))

    def kron(a):
        return loss(xp.kron(a[:2, :2], B[:2, :1]))

    def trace(a):
        return xp.abs(xp.trace(a)) + xp.real(xp.trace(a @ a) * (0.2 - 0.5j))

    def vdot(a):
        return xp.real(xp.vdot(a, A) * (0.4 + 1.1j)) + xp.abs(xp.vdot(A[0], a[1]))

    def inv(a):
        return loss(xp.linalg.inv(a))

    def solve(a):
        return loss(xp.linalg.solve(a, B))

    def det(a):
        return xp.abs(xp.linalg.det(a)) + xp.real(xp.linalg.det(a) * (0.5 - 0.2j))

    def norm(a):
        return xp.linalg.norm(a) + xp.sum(xp.linalg.norm(a, axis=0) * xp.array([0.3, 1.2, -0.5]))

    found = dict(locals())
    return {name.rstrip("_"): f for name, f in found.items() if callable(f) and name != "loss"}


# autograd has no VJP for these
NOT_IN_AUTOGRAD = {"vdot", "cumprod"}


@pytest.mark.parametrize("name", sorted(programs(np)))
def test_reduction_or_linear_algebra_in_the_complex_plane(name):
    got = assert_matches_fd(programs(np)[name], A)
    if name not in NOT_IN_AUTOGRAD:
        np.testing.assert_allclose(got, autograd.grad(programs(anp)[name])(A), rtol=1e-9)


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 3, "fro", "nuc", -1, np.inf])
def test_norm_orders_of_complex_inputs(ord):
    def norm(a):
        return np.linalg.norm(a, ord)

    if ord in ("fro", "nuc", -1):
        assert_matches_fd(norm, A, rtol=1e-5)
    else:
        assert_matches_fd(norm, Z, rtol=1e-5)


def test_slogdet_sign_and_logabsdet():
    def f(a):
        sign, logabsdet = np.linalg.slogdet(a)
        return np.real(sign * (0.3 + 0.7j)) + 2.0 * logabsdet

    assert_matches_fd(f, A)


# ----- Real inputs, complex intermediates -----


def abs_exp_i(x):
    return np.sum(np.abs(np.exp(1j * x) * C[:3]))


def z_conj_z(x):
    z = x + 2j * x**2
    return np.real(np.sum(z * np.conj(z)))


def norm_of_complex(x):
    return np.linalg.norm(x * C[:3] + 1j)


def angle_sum(x):
    return np.sum(np.angle(x + 1j * x**2 + 0.5j))


def imag_of_product(x):
    return np.sum(np.imag(np.exp(1j * x) * C[:3]) ** 2)


def scalar(x):
    return np.abs(np.exp(1j * x) + 0.5 * x) ** 2


def astype_complex(x):
    return np.abs(np.sum(x.astype(np.complex128) * C[:3]))


def abs_of_abs(x):
    return np.abs(np.abs(x * C[:3]) * (1 + 2j) + 1.0)[1]


def real_part_of_a_product(x):
    return np.sum(np.abs(np.real(x * C[:3]) * (0.5 - 1j)))


X = np.array([0.3, -1.2, 0.8])
REAL_PROGRAMS = {
    f.__name__: (f, x)
    for f, x in [
        (abs_exp_i, X), (z_conj_z, X), (norm_of_complex, X), (angle_sum, X), (imag_of_product, X),
        (scalar, 0.7), (astype_complex, X), (abs_of_abs, X), (real_part_of_a_product, X),
    ]
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(REAL_PROGRAMS))
def test_real_function_with_a_complex_intermediate(name):
    f, x = REAL_PROGRAMS[name]
    got = assert_matches_fd(f, x)
    assert not np.iscomplexobj(got)
    assert np.shape(got) == np.shape(x)


def test_real_functions_with_complex_intermediates_match_autograd():
    def f(xp):
        def loss(x):
            return xp.sum(xp.abs(xp.exp(1j * x) * C[:3] + x) ** 2) + xp.real(xp.sum(x * xp.conj(x * (1 + 1j))))

        return loss

    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(ssad.grad(f(np))(x), autograd.grad(f(anp))(x), rtol=1e-10)


def test_pullback_of_a_holomorphic_function():
    # vjp with a complex cotangent: ct * g'(z) (autograd's make_vjp gives the same)
    def g(z):
        return np.exp(z) * z + np.sin(z) / (z + 2.0)

    def ag(z):
        return anp.exp(z) * z + anp.sin(z) / (z + 2.0)

    _, pullback = ssad.vjp(g, Z)
    (got,) = pullback(C)
    np.testing.assert_allclose(got, autograd.make_vjp(ag)(Z)[0](C), rtol=1e-12)
    derivative = np.exp(Z) * (1 + Z) + (np.cos(Z) * (Z + 2.0) - np.sin(Z)) / (Z + 2.0) ** 2
    np.testing.assert_allclose(got, C * derivative, rtol=1e-12)


# ----- Complex values that appear inside loops -----


def phase_loop(xp):
    def f(x):
        y = x
        for _ in range(3):
            y = y * xp.exp(1j * x)  # real on the first pass, complex after
        return xp.abs(xp.sum(y))

    return f


def complex_constant_accumulated(xp):
    def f(x):
        total = 0.0
        for k in range(3):
            total = total + xp.abs(xp.sum(x * (0.5 + 1j * k) + 0.25j)) ** 2
        return total

    return f


def indexed_complex_loop(xp):
    def f(x):
        acc = 0.0 + 0.0j
        for i in range(len(x)):
            acc = acc + x[i] * xp.exp(1j * x[i] * (i + 1))
        return xp.abs(acc) ** 2

    return f


@pytest.mark.parametrize("program", [phase_loop, complex_constant_accumulated, indexed_complex_loop])
def test_a_real_input_accumulates_a_real_gradient_from_complex_values_in_a_loop(program):
    x = np.array([0.3, -0.7, 1.1])
    got = assert_matches_fd(program(np), x)
    assert not np.iscomplexobj(got)
    np.testing.assert_allclose(got, autograd.grad(program(anp))(x), rtol=1e-10)
    np.testing.assert_allclose(ssad.hessian(program(np))(x), autograd.hessian(program(anp))(x), rtol=1e-8, atol=1e-10)


# ----- A real adjoint array meeting a complex part -----
# Each program was wrong or crashed: an adjoint (or tangent) array made real by its first
# part (`np.real(z)`'s, a real input's) was then written into in place with a complex part,
# which NumPy dropped (a silently wrong gradient of a complex input, a wrong jvp) or refused
# (`d_x += ...` with a complex right side). Adjoints now add in place only where every value
# is real, a part added at an index makes a real array complex, a complex value's tangent
# is complex, and a real input's gradient is real in the generated code too, so that a
# derivative of the gradient sees a real value.


def real_part_then_an_element(xp):
    def f(z):
        a = xp.abs(z[1]) ** 2
        return a + xp.sum(xp.real(z))

    return f


def real_part_then_elements_in_a_loop(xp):
    def f(z):
        s = 0.0
        for i in range(3):
            s = s + xp.abs(z[i]) ** 2 * (i + 1)
        return s + xp.sum(xp.real(z) ** 3)

    return f


def real_part_then_a_slice(xp):
    def f(z):
        a = xp.sum(xp.abs(z[1:]) ** 2)
        return a + xp.sum(xp.real(z) * 2.0)

    return f


@pytest.mark.parametrize("program", [real_part_then_an_element, real_part_then_elements_in_a_loop,
                                     real_part_then_a_slice])
def test_a_complex_input_read_by_real_part_and_by_element(program):
    got = assert_matches_fd(program(np), Z[:3].copy())
    np.testing.assert_allclose(got, autograd.grad(program(anp))(Z[:3].copy()), rtol=1e-10)


def written_after_a_complex_cast(x):
    z = x + 0j
    z[1] = z[1] * 1j
    return np.sum(np.real(z) ** 2 + np.imag(z) ** 2 * x) + np.sum(x)


def written_after_a_complex_cast_of_a_copy(x):
    z = x * 1.0
    z = z + 0j
    z[0] = z[0] * C[0]
    return np.sum(np.real(z) + np.imag(z) * x)


def product_with_a_global_complex_array(name):
    products = {
        "outer": lambda x: np.sum(np.abs(np.outer(x, C)) ** 2),
        "einsum": lambda x: np.abs(np.einsum("i,i->", x, C)),
        "vdot": lambda x: np.abs(np.vdot(C, x)),
        "inner": lambda x: np.abs(np.inner(x, C)) + np.abs(np.tensordot(x, C, 1)),
    }
    product = products[name]

    def f(x):
        a = product(x)
        return a + np.sum(x ** 2)

    return f


def imaginary_part_of_a_real_array(x):
    z = x.imag
    return np.sum(z * 2.0) + np.sum(x ** 2)


def imaginary_part_of_a_real_array_and_a_phase(x):
    z = x * np.exp(1j * x)
    return np.sum(np.real(z * z)) + np.sum(x.imag) + np.sum(x * x)


REAL_INPUT_PROGRAMS = [
    written_after_a_complex_cast,
    written_after_a_complex_cast_of_a_copy,
    *(product_with_a_global_complex_array(n) for n in ("outer", "einsum", "vdot", "inner")),
    imaginary_part_of_a_real_array,
    imaginary_part_of_a_real_array_and_a_phase,
]


@pytest.mark.parametrize("f", REAL_INPUT_PROGRAMS, ids=range(len(REAL_INPUT_PROGRAMS)))
def test_a_real_input_with_complex_parts_at_first_and_second_order(f):
    from ssad.testing import numerical_gradient

    x = np.array([0.3, 0.5, 0.9, 1.2])
    t = direction_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning is a failure
        got = ssad.grad(f)(x.copy())
        _, tangent = ssad.jvp(f, (x.copy(),), (t,))
    assert not np.iscomplexobj(got) and not np.iscomplexobj(tangent)
    np.testing.assert_allclose(got, numerical_gradient(f, x.copy()), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, fd_tangent(f, x, t), rtol=1e-6, atol=1e-8)
    grad_f = ssad.grad(f)
    expected = (grad_f(x + EPS * t) - grad_f(x - EPS * t)) / (2 * EPS)
    _, along = ssad.jvp(grad_f, (x.copy(),), (t,))
    assert not np.iscomplexobj(along)
    np.testing.assert_allclose(along, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ssad.hessian(f)(x.copy()) @ t, expected, rtol=1e-5, atol=1e-7)


def written_after_a_copy(z):
    z = z.copy()
    z[1] = z[0] * 1j
    return np.sum(np.abs(z) ** 2)


@pytest.mark.parametrize("t", [np.array([1.0, 0.5, -0.25, 2.0]), np.array([1.0, 1j, 0.5 - 0.5j, -1.0])],
                         ids=["real", "complex"])
def test_a_real_tangent_of_a_complex_input_keeps_what_is_written_into_it(t):
    # the tangent array of z, real as given, took `z[1]`'s complex tangent and dropped its
    # imaginary part: jvp along the real axis was 3.2 where the derivative is 5.4
    _, got = ssad.jvp(written_after_a_copy, (Z.copy(),), (t,))
    np.testing.assert_allclose(got, fd_tangent(written_after_a_copy, Z, t), rtol=1e-6)


def test_a_real_element_read_into_a_complex_matrix_gets_a_real_adjoint_without_a_warning():
    # The adjoint of x[0] arrives complex from np.array's split; its real part is x's
    # adjoint (what the cast into the real buffer kept, with NumPy's ComplexWarning).
    def f(x):
        m = np.array([[x[0], x[1] + 1j * x[2]], [x[1] - 1j * x[2], x[3]]])
        return np.sum(np.linalg.eigvalsh(m) ** 2)

    x = np.array([0.3, -1.2, 0.7, 1.5])
    want = np.array([2 * x[0], 4 * x[1], 4 * x[2], 2 * x[3]])  # sum of squared eigenvalues = |m|_F^2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(ssad.grad(f)(x), want, rtol=1e-10)
        np.testing.assert_allclose(ssad.hvp(f)(x, np.ones(4)), [2.0, 4.0, 4.0, 2.0], rtol=1e-10)
