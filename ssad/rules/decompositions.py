"""Rules: matrix decompositions and functions built on them (np.linalg eig, eigvals,
eigh, eigvalsh, svd, qr, pinv, lstsq, matrix_power).

Conventions
-----------
- Real or complex inputs, stacks of matrices where NumPy takes them (``lstsq``: one
  matrix). Complex inputs follow docs/conventions.md, "Complex numbers": an adjoint
  ``c`` pairs with a tangent ``t`` as ``Re(sum(c * t))``. The adjoints below are
  written as the conjugate of the usual Hermitian-inner-product formulas, evaluated at
  the conjugated cotangents, so that real inputs run the textbook real formulas.
- Distinct eigenvalues (distinct singular values) are required for the derivatives of
  eigenvectors (singular vectors). Where two coincide, the derivative of the vectors is
  undefined and, as in JAX, the rules divide by zero: the gradient holds inf or NaN
  (with NumPy's RuntimeWarning), never a finite value that looks valid. The
  derivatives of the values alone (``eigvalsh``, ``eigvals``, ``svd(compute_uv=False)``)
  need no such division and stay finite at repeated values (they are then one element
  of the subdifferential, as in JAX and autograd).
- Gauge. Eigenvectors and singular vectors are defined up to a sign (real) or a phase
  (complex). A real sign cannot change continuously, so for real inputs the rules give
  the derivative of exactly the vectors NumPy returns, for any loss. For complex
  vectors the phase is a continuous choice:
  * ``eig`` follows LAPACK's normalization, which NumPy returns: every eigenvector has
    unit 2-norm and its entry of largest modulus real. The rule differentiates that
    normalization (a tie for the largest entry is a kink of it), so it is the
    derivative of NumPy's output for any loss, real or complex matrices alike.
  * ``eigh`` and ``svd`` of complex matrices use the gauge of JAX: the tangent of each
    eigenvector (right singular vector) is orthogonal to it, ``Im(v^H dv) = 0``. LAPACK
    picks another phase, so the derivative of NumPy's vectors agrees with the rule only
    for losses invariant under ``v -> v exp(i phi)`` (``|v|``, ``v v^H``, ``u v^H``,
    ``A v``...), as in JAX. The eigenvalues and singular values are gauge invariant.
  * ``svd(full_matrices=True)`` and ``qr(mode='complete')`` of a non-square matrix
    return extra columns, an orthonormal basis of a complement that is not unique. The
    rules move that basis by the smallest rotation that keeps it orthogonal to the rest
    (``dU2 = -U1 dU1^H U2``), so losses that read the extra columns only through their
    span (``U2 U2^H``) are differentiated correctly; others are gauge dependent.
- ``eigh``, ``eigvalsh`` and ``svd``/``pinv`` with ``hermitian=True`` read only one
  triangle of the input: as ``np.linalg.cholesky`` in ``linalg``, the adjoint is the
  symmetrized (Hermitian) gradient and the tangent reads a tangent ``E`` as
  ``(E + E^H) / 2``. ``UPLO`` gets no gradient.
- ``svd``: zero singular values (a rank-deficient or non-square reduced factor) get
  ``1 / s`` replaced by 0, as in JAX, so a rank-deficient matrix with distinct nonzero
  singular values and a single zero one has finite derivatives.
- ``qr``: modes 'reduced', 'complete' and 'r', tall, square and wide matrices
  ('raw' is refused). R needs a nonzero diagonal (full column rank of the leading
  square block). NumPy does not make R's diagonal positive; its sign is held fixed.
- ``pinv``: the derivative for a locally constant rank (true unless a singular value
  sits exactly at the ``rcond``/``rtol`` cutoff), rank-deficient matrices included.
- ``lstsq``: the solution, the residuals and the singular values are differentiated
  (the rank is an integer); a rank-deficient ``a`` is refused.
- ``matrix_power``: any integer ``n`` (0 and negative too; negative needs an invertible
  matrix). Its derivative is the upper right block of ``matrix_power`` of the block
  matrix ``[[A, E], [0, A]]``, the adjoint the same at ``[[A^T, dY], [0, A^T]]``.
- Every rule has a tangent, the exact transpose of its adjoint, and its body uses only
  operations with rules, so ssad differentiates it again (Hessians).
"""

import numpy as np

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from .elementwise import _conj, _is_complex
from .linalg import _transpose

# ----- Helpers -----


def _h(m):
    """The conjugate transpose of each matrix in a stack."""
    return _conj(np.swapaxes(m, -1, -2))


def _hermitian_part(m):
    return (m + _h(m)) / 2


def _diagonal(m):
    return np.diagonal(m, axis1=-2, axis2=-1)


def _diag(d):
    """Diagonal matrices with the last axis of `d` on their diagonals."""
    return np.expand_dims(d, -1) * np.eye(np.shape(d)[-1])


def _inverse_gaps(w):
    """F[..., i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it; inf where two values
    coincide (the derivative of the vectors is undefined there, as in JAX)."""
    eye = np.eye(np.shape(w)[-1])
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    return 1 / (gaps + eye) - eye


def _reciprocal_or_zero(s):
    """1 / s, and 0 where s is 0 (a zero singular value, as in JAX)."""
    return np.where(s == 0, 0.0, 1 / np.where(s == 0, 1.0, s))


def _columns(v, b):
    """`v`, shaped like `b` or like a solution for `b`, as columns (a 1-D `b` is one column)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def _rotate_complement_tangent(d_q1, q1, q2):
    """Tangent of the extra columns `q2` completing the orthonormal `q1` to a square
    unitary matrix: the smallest rotation keeping q1^H q2 = 0, dq2 = -q1 dq1^H q2."""
    return -(q1 @ (_h(d_q1) @ q2))


def _largest_entries(v):
    """A 0/1 mask of the entry of largest modulus of each column of `v` (first of ties)."""
    rows = np.arange(np.shape(v)[-2])
    return (np.expand_dims(rows, -1) == np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)).astype(float)


def _matching_order(w_eig, w):
    """Indices into `w_eig` of the values nearest to each entry of `w` (the eigenvalues
    np.linalg.eig returns with its vectors, in the order np.linalg.eigvals returned them)."""
    return np.argmin(np.abs(np.expand_dims(w_eig, -1) - np.expand_dims(w, -2)), axis=-2)


nondifferentiable(_largest_entries, _matching_order)  # positions and indices


def _shaped(g, like):
    """`g`, one component of the adjoint of a tuple output, unchanged. Its tangent is
    always an array shaped like `like`: forward mode may hand a rule a zero tangent for
    such a component as the number 0.0, which matrix products and slices cannot take."""
    return g


@adjoint(_shaped)
def _shaped_adjoint(dy, y, g, like):
    return (dy, None)


@tangent(_shaped)
def _shaped_tangent(tangents, y, g, like):
    return tangents[0] + np.zeros_like(like)


# ----- Helpers: eigendecompositions -----


def _eigh_tangent(e, w, v):
    """(dw, dv) of the Hermitian eigendecomposition along a Hermitian tangent `e`."""
    x = _h(v) @ e @ v
    return np.real(_diagonal(x)), v @ (_inverse_gaps(w) * x)


def _eigh_adjoint(g_w, g_v, w, v):
    """Adjoint of `a` for a = v diag(w) v^H, Hermitian (symmetrized)."""
    x = _diag(np.real(g_w)) + _inverse_gaps(w) * (_h(v) @ _conj(g_v))
    return _conj(_hermitian_part(v @ x @ _h(v)))


def _eig_tangent(t, w, v):
    """(dw, dv) of the eigendecomposition a v = v diag(w) along `t`, with the vectors
    normalized as LAPACK does: unit 2-norm, largest entry real."""
    x = np.linalg.inv(v) @ t @ v
    d_v = v @ (_inverse_gaps(w) * x)
    unit = d_v - v * np.real(np.sum(_conj(v) * d_v, axis=-2, keepdims=True))
    return _diagonal(x), _eig_phase_tangent(unit, v)


def _eig_phase_tangent(d_v, v):
    """`d_v` with the phase of each column turned so that the largest entry of v stays real."""
    if not _is_complex(v):
        return d_v
    top = _largest_entries(v)
    pivots = np.sum(top * v, axis=-2, keepdims=True)
    return d_v - 1j * v * np.imag(np.sum(top * d_v, axis=-2, keepdims=True) / pivots)


def _eig_phase_adjoint(g_v, v):
    """The transpose of `_eig_phase_tangent`."""
    if not _is_complex(v):
        return g_v
    top = _largest_entries(v)
    pivots = np.sum(top * v, axis=-2, keepdims=True)
    return g_v - 1j * top * np.imag(np.sum(g_v * v, axis=-2, keepdims=True)) / pivots


def _eig_adjoint(g_w, g_v, w, v, a):
    """Adjoint of `a` in (w, v) = np.linalg.eig(a): the transpose of `_eig_tangent`."""
    turned = _eig_phase_adjoint(g_v, v)
    unit = turned - _conj(v) * np.real(np.sum(turned * v, axis=-2, keepdims=True))
    x = _diag(g_w) + _inverse_gaps(w) * (_transpose(v) @ unit)
    g = _transpose(np.linalg.inv(v)) @ x @ _transpose(v)
    return _real_if_real(g, a)


def _real_if_real(g, a):
    """The adjoint `g` of `a`: its real part for a real `a` (no view of a real `g`)."""
    return np.real(g) if _is_complex(g) and not _is_complex(a) else g


# ----- Helpers: singular value decomposition -----


def _svd_tangent(t, u, s, vh):
    """(du, ds, dvh) of u, s, vh = np.linalg.svd(a) along `t`, reduced or full."""
    k = np.shape(s)[-1]
    u1, v1 = u[..., :, :k], _h(vh[..., :k, :])
    p = _h(u1) @ t @ v1
    f = _inverse_gaps(s * s)
    row, col = np.expand_dims(s, -2), np.expand_dims(s, -1)
    inverse_row = np.expand_dims(_reciprocal_or_zero(s), -2)
    t_v, t_u = t @ v1, _h(t) @ u1
    d_u = u1 @ (f * (p * row + col * _h(p))) + (t_v - u1 @ (_h(u1) @ t_v)) * inverse_row
    d_v = v1 @ (f * (col * p + _h(p) * row)) + (t_u - v1 @ (_h(v1) @ t_u)) * inverse_row
    if _is_complex(p):  # the phase of u follows that of v
        d_u = d_u + u1 * (1j * np.expand_dims(np.imag(_diagonal(p)), -2) * inverse_row)
    if np.shape(u)[-1] > k:
        d_u = np.concatenate([d_u, _rotate_complement_tangent(d_u, u1, u[..., :, k:])], axis=-1)
    if np.shape(vh)[-2] > k:
        d_v = np.concatenate([d_v, _rotate_complement_tangent(d_v, v1, _h(vh[..., k:, :]))], axis=-1)
    return d_u, np.real(_diagonal(p)), _h(d_v)


def _svd_adjoint(g_u, g_s, g_vh, u, s, vh):
    """Adjoint of `a` in u, s, vh = np.linalg.svd(a): the transpose of `_svd_tangent`."""
    k = np.shape(s)[-1]
    u1, vh1 = u[..., :, :k], vh[..., :k, :]
    v1 = _h(vh1)
    g_u, g_v = _conj(g_u), _transpose(g_vh)  # Hermitian-product cotangents of u and v
    g_u1, g_v1 = g_u[..., :, :k], g_v[..., :, :k]
    if np.shape(u)[-1] > k:
        u2 = u[..., :, k:]
        g_u1 = g_u1 - u2 @ (_h(g_u[..., :, k:]) @ u1)
    if np.shape(vh)[-2] > k:
        v2 = _h(vh[..., k:, :])
        g_v1 = g_v1 - v2 @ (_h(g_v[..., :, k:]) @ v1)
    f = _inverse_gaps(s * s)
    row, col = np.expand_dims(s, -2), np.expand_dims(s, -1)
    inverse = _reciprocal_or_zero(s)
    j, m = _h(u1) @ g_u1, _h(v1) @ g_v1
    p = (f * (j - _h(j))) * row + col * (f * (m - _h(m))) + _diag(np.real(g_s))
    if _is_complex(j):
        p = p + _diag(1j * np.imag(_diagonal(j)) * inverse)
    g = u1 @ p @ vh1
    g = g + ((g_u1 - u1 @ (_h(u1) @ g_u1)) * np.expand_dims(inverse, -2)) @ vh1
    g = g + u1 @ (np.expand_dims(inverse, -1) * (_h(g_v1) - (_h(g_v1) @ v1) @ vh1))
    return _conj(g)


def _singular_values_adjoint(g_s, a, hermitian):
    """Adjoint of `a` in s = np.linalg.svd(a, compute_uv=False): conj(u diag(g_s) v^H)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    return _conj((u * np.expand_dims(np.real(g_s), -2)) @ vh)


def _singular_values_tangent(t, a, hermitian):
    """Tangent of s = np.linalg.svd(a, compute_uv=False): Re(diag(u^H t v))."""
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    return np.real(np.sum(_conj(u) * (t @ _h(vh)), axis=-2))


# ----- Helpers: QR -----


def _right_divide(m, r):
    """m r^-1 for square `r`, as a solve."""
    return _transpose(np.linalg.solve(_transpose(r), _transpose(m)))


def _qr_square_tangent(t, q, r):
    """(dq, dr) of q, r = qr(a) for `a` with at least as many rows as columns, reduced."""
    t_r = _right_divide(t, r)
    c = _h(q) @ t_r
    low = np.tril(c, -1)
    omega = low - _h(low)
    if _is_complex(c):  # R's diagonal stays real
        omega = omega + _diag(1j * np.imag(_diagonal(c)))
    return q @ (omega - c) + t_r, (c - omega) @ r


def _qr_square_adjoint(g_q, g_r, q, r):
    """The transpose of `_qr_square_tangent`, with Hermitian-product cotangents (unconjugated result)."""
    m = g_r @ _h(r) - _h(q) @ g_q
    c = np.triu(m, 1) + _diag(np.real(_diagonal(m))) + np.tril(_h(m), -1)
    return _right_divide(q @ c + g_q, _h(r))


def _qr_tangent(t, q, r, a):
    """(dq, dr) of q, r = np.linalg.qr(a, mode) for mode 'reduced' or 'complete'."""
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    k = min(m, n)
    q1 = q[..., :, :k]
    d_q, d_r = _qr_square_tangent(t[..., :, :k], q1, r[..., :k, :k])
    if n > k:  # wide: the columns past the square block are q^H a[:, k:]
        d_r = np.concatenate([d_r, _h(d_q) @ a[..., :, k:] + _h(q1) @ t[..., :, k:]], axis=-1)
    if np.shape(q)[-1] > k:  # complete, tall: extra columns of q, zero rows of r
        d_q = np.concatenate([d_q, _rotate_complement_tangent(d_q, q1, q[..., :, k:])], axis=-1)
        d_r = np.concatenate([d_r, np.zeros_like(r[..., k:, :])], axis=-2)
    return d_q, d_r


def _qr_adjoint(g_q, g_r, q, r, a):
    """Adjoint of `a` in q, r = np.linalg.qr(a, mode): the transpose of `_qr_tangent`."""
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    k = min(m, n)
    q1 = q[..., :, :k]
    g_q, g_r = _conj(g_q), _conj(g_r)
    g_q1 = g_q[..., :, :k]
    if np.shape(q)[-1] > k:
        g_q1 = g_q1 - q[..., :, k:] @ (_h(g_q[..., :, k:]) @ q1)
    if n > k:
        g_r2 = g_r[..., :k, k:]
        g_square = _qr_square_adjoint(g_q1 + a[..., :, k:] @ _h(g_r2), g_r[..., :k, :k], q1, r[..., :k, :k])
        return _conj(np.concatenate([g_square, q1 @ g_r2], axis=-1))
    return _conj(_qr_square_adjoint(g_q1, g_r[..., :k, :k], q1, r[..., :k, :k]))


def _qr_mode(mode):
    if mode not in ("reduced", "complete", "r"):
        raise located(
            f"np.linalg.qr: no gradient rule for mode={mode!r}; use mode 'reduced', 'complete' or 'r'"
        )


# ----- Helpers: pseudo-inverse, least squares -----


def _pinv_tangent(t, p, a):
    """Tangent of p = pinv(a) along `t`, for a locally constant rank."""
    t_h = _h(t)
    return -(p @ t @ p) + p @ (_h(p) @ (t_h - t_h @ (a @ p))) + (t_h - (p @ a) @ t_h) @ (_h(p) @ p)


def _pinv_adjoint(g, p, a):
    """Adjoint of `a` in p = pinv(a): the transpose of `_pinv_tangent`."""
    g_h = _transpose(g)  # conj of the Hermitian-product cotangent's conjugate transpose
    p_h = _h(p)
    hat = -(p_h @ _conj(g) @ p_h) + (g_h - a @ (p @ g_h)) @ (p @ p_h) + (p_h @ p) @ (g_h - (g_h @ p) @ a)
    return _conj(hat)


def _require_full_rank(rank, a):
    if rank != min(np.shape(a)[-2], np.shape(a)[-1]):
        raise located(
            f"np.linalg.lstsq: the matrix has rank {rank}, less than {min(np.shape(a))}; its least-squares "
            "solution is not differentiable there. Use np.linalg.pinv(a) @ b with a fixed rank cutoff instead"
        )


nondifferentiable(_qr_mode, _require_full_rank)  # checks that refuse an input


# ----- Helpers: matrix functions -----


def _with_derivative_block(a, e):
    """The block matrix [[a, e], [0, a]]: a matrix function of it holds the function of
    `a` on the diagonal and its derivative along `e` in the upper right block."""
    upper = np.concatenate([a, e], axis=-1)
    lower = np.concatenate([np.zeros_like(e), a], axis=-1)
    return np.concatenate([upper, lower], axis=-2)


def _upper_right(m, n):
    return m[..., :n, n:]


# ----- Eigendecompositions -----


@adjoint(np.linalg.eigh)
def eigh_adjoint(dy, y, a, UPLO="L"):
    return (_eigh_adjoint(_shaped(dy[0], y[0]), _shaped(dy[1], y[1]), y[0], y[1]),)


@tangent(np.linalg.eigh)
def eigh_tangent(tangents, y, a, UPLO="L"):
    return _eigh_tangent(_hermitian_part(tangents[0]), y[0], y[1])


def _eigh_reading(a, UPLO):
    """np.linalg.eigh(a, UPLO), with UPLO spelled as a constant: differentiated again, a
    variable UPLO would be taken for a value that carries a gradient."""
    return np.linalg.eigh(a, "U") if UPLO in ("U", "u") else np.linalg.eigh(a)


@adjoint(np.linalg.eigvalsh)
def eigvalsh_adjoint(dy, y, a, UPLO="L"):
    w, v = _eigh_reading(a, UPLO)
    return (_conj((v * np.expand_dims(dy, -2)) @ _h(v)),)


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(tangents, y, a, UPLO="L"):
    w, v = _eigh_reading(a, UPLO)
    return np.real(np.sum(_conj(v) * (_hermitian_part(tangents[0]) @ v), axis=-2))


@adjoint(np.linalg.eig)
def eig_adjoint(dy, y, a):
    return (_eig_adjoint(_shaped(dy[0], y[0]), _shaped(dy[1], y[1]), y[0], y[1], a),)


@tangent(np.linalg.eig)
def eig_tangent(tangents, y, a):
    return _eig_tangent(tangents[0], y[0], y[1])


@adjoint(np.linalg.eigvals)
def eigvals_adjoint(dy, y, a):
    w, v = np.linalg.eig(a)
    v = np.take_along_axis(v, np.expand_dims(_matching_order(w, y), -2), axis=-1)
    return (_real_if_real(_transpose(np.linalg.inv(v)) @ (np.expand_dims(dy, -1) * _transpose(v)), a),)


@tangent(np.linalg.eigvals)
def eigvals_tangent(tangents, y, a):
    w, v = np.linalg.eig(a)
    v = np.take_along_axis(v, np.expand_dims(_matching_order(w, y), -2), axis=-1)
    return np.sum(_transpose(np.linalg.inv(v)) * (tangents[0] @ v), axis=-2)


# ----- Singular value decomposition -----


@adjoint(np.linalg.svd)
def svd_adjoint(dy, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    if compute_uv:
        g = _svd_adjoint(_shaped(dy[0], y[0]), _shaped(dy[1], y[1]), _shaped(dy[2], y[2]), y[0], y[1], y[2])
    else:
        g = _singular_values_adjoint(dy, a, hermitian)
    return (_hermitian_part(g) if hermitian else g,)


@tangent(np.linalg.svd)
def svd_tangent(tangents, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    t = _hermitian_part(tangents[0]) if hermitian else tangents[0]
    if compute_uv:
        return _svd_tangent(t, y[0], y[1], y[2])
    return _singular_values_tangent(t, a, hermitian)


# ----- QR -----


@adjoint(np.linalg.qr)
def qr_adjoint(dy, y, a, mode="reduced"):
    _qr_mode(mode)
    if mode == "r":
        q = np.linalg.qr(a)[0]
        return (_qr_adjoint(np.zeros_like(q), dy, q, y, a),)
    return (_qr_adjoint(_shaped(dy[0], y[0]), _shaped(dy[1], y[1]), y[0], y[1], a),)


@tangent(np.linalg.qr)
def qr_tangent(tangents, y, a, mode="reduced"):
    _qr_mode(mode)
    if mode == "r":
        return _qr_tangent(tangents[0], np.linalg.qr(a)[0], y, a)[1]
    return _qr_tangent(tangents[0], y[0], y[1], a)


# ----- Pseudo-inverse and least squares -----


@adjoint(np.linalg.pinv)
def pinv_adjoint(dy, y, a, rcond=None, hermitian=False, rtol=None):
    g = _pinv_adjoint(dy, y, a)
    return (_hermitian_part(g) if hermitian else g,)


@tangent(np.linalg.pinv)
def pinv_tangent(tangents, y, a, rcond=None, hermitian=False, rtol=None):
    return _pinv_tangent(_hermitian_part(tangents[0]) if hermitian else tangents[0], y, a)


@adjoint(np.linalg.lstsq)
def lstsq_adjoint(dy, y, a, b, rcond=None):
    _require_full_rank(y[2], a)
    p = np.linalg.pinv(a)
    g_x, x, b2 = _columns(_shaped(dy[0], y[0]), b), _columns(y[0], b), _columns(b, b)
    d_b = _transpose(p) @ g_x
    d_a = _pinv_adjoint(g_x @ _transpose(b2), p, a) + _singular_values_adjoint(_shaped(dy[3], y[3]), a, False)
    if np.size(y[1]) > 0:  # residuals |b - a x|^2 per column: the envelope theorem
        r = _conj(b2 - a @ x) * np.real(_shaped(dy[1], y[1]))
        d_b = d_b + 2 * r
        d_a = d_a - 2 * r @ _transpose(x)
    return (d_a, np.reshape(d_b, np.shape(b)))


@tangent(np.linalg.lstsq)
def lstsq_tangent(tangents, y, a, b, rcond=None):
    _require_full_rank(y[2], a)
    p = np.linalg.pinv(a)
    t_a, t_b = tangents[0], _columns(tangents[1], b) + np.zeros_like(_columns(b, b))
    x = _columns(y[0], b)
    d_x = _pinv_tangent(t_a, p, a) @ _columns(b, b) + p @ t_b
    d_residuals = np.zeros_like(y[1])
    if np.size(y[1]) > 0:
        r = _columns(b, b) - a @ x
        d_residuals = 2 * np.real(np.sum(_conj(r) * (t_b - t_a @ x), axis=-2))
    d_s = _singular_values_tangent(t_a, a, False)
    return (np.reshape(d_x, np.shape(y[0])), d_residuals, np.zeros_like(y[2]), d_s)


# ----- Matrix powers -----


@adjoint(np.linalg.matrix_power)
def matrix_power_adjoint(dy, y, a, n):
    block = np.linalg.matrix_power(_with_derivative_block(_transpose(a), dy), n)
    return (_upper_right(block, np.shape(a)[-1]), None)


@tangent(np.linalg.matrix_power)
def matrix_power_tangent(tangents, y, a, n):
    block = np.linalg.matrix_power(_with_derivative_block(a, tangents[0]), n)
    return _upper_right(block, np.shape(a)[-1])
