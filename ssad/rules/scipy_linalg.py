"""Rules: SciPy's linear algebra (scipy.linalg); registered once SciPy is imported.

Conventions
-----------
- Triangular and structured inputs. A function that reads only part of its matrix
  (``solve_triangular``; ``solve`` and ``inv`` with ``assume_a`` 'diagonal',
  'tridiagonal', 'upper triangular' or 'lower triangular'; ``lu_solve`` and
  ``cho_solve`` reading the factors) gives no gradient to the entries it does not read,
  and its tangent ignores them. ``unit_diagonal=True`` leaves the diagonal unread too.
- Symmetric inputs. ``cholesky``, ``cho_factor`` and ``solve``/``inv`` with ``assume_a``
  'sym', 'her' or 'pos' read one triangle of a matrix meant to be symmetric (Hermitian):
  as ``np.linalg.cholesky`` in ``linalg``, the adjoint is the symmetrized gradient
  (``(G + G^T) / 2``; ``(G + G^H) / 2`` for 'her' and complex 'pos') and the tangent
  reads a tangent ``E`` as its symmetric part. ``cholesky`` returns the upper factor
  unless ``lower=True``; ``cholesky``, ``cho_factor`` and ``cho_solve`` take real
  matrices only.
- ``cho_factor(a)`` returns ``(c, lower)``: ``c`` holds the factor in one triangle and,
  in the other, the entries of ``a`` there, which LAPACK leaves untouched (SciPy calls
  them "random data"). The rules differentiate exactly that, so ``cho_solve``, which
  reads only the factor's triangle, passes no gradient through the other entries, and
  ``cho_solve(cho_factor(a), b)`` has the gradient of ``np.linalg.solve(a, b)``
  (symmetrized in ``a``). The flag ``lower`` gets no gradient.
- ``lu_factor(a)`` returns ``(lu, piv)``: L below the diagonal (its unit diagonal is
  implicit), U on and above it, and the row interchanges ``piv`` (no gradient). The
  derivative holds the pivoting fixed, which it is away from ties between pivot
  candidates. ``lu_solve`` takes ``trans`` 0, 1 and 2.
- ``solve``, ``inv`` and ``det`` are holomorphic for complex input and keep their real
  formulas (transposes, not conjugate transposes), as in ``linalg``; ``solve`` with
  ``transposed=True`` solves ``a^T x = b``. ``assume_a='banded'`` is refused.
- ``expm``, ``sqrtm`` and ``logm`` are matrix functions f with a power series of real
  coefficients: the derivative along ``E`` is the upper right block of
  ``f([[A, E], [0, A]])`` (for ``expm`` the Fréchet derivative of Higham and Al-Mohy),
  and the adjoint the same block at ``[[A^T, dY], [0, A^T]]``. They need what f itself
  needs (``sqrtm`` and ``logm``: no eigenvalue on the closed negative real axis);
  ``sqrtm`` of a real matrix with negative eigenvalues is complex, and so is its
  derivative.
- Every rule has a tangent, the exact transpose of its adjoint, and its body uses only
  operations with rules, so ssad differentiates it again (Hessians).
"""

import numpy as np
import scipy.linalg

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from .elementwise import _conj, _is_complex
from .decompositions import _shaped, _upper_right, _with_derivative_block
from .linalg import _cholesky_adjoint, _cholesky_tangent, _transpose, cofactors

# ----- Helpers -----


def _symmetric_part(m):
    return (m + _transpose(m)) / 2


def _columns(v, b):
    """`v`, shaped like `b` or like a solution for `b`, as columns (a 1-D `b` is one column)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def _triangle(m, lower, unit_diagonal=False):
    """The triangle of `m` a triangular solve reads (without the diagonal for a unit one)."""
    if np.ndim(m) == 0:  # a zero tangent, folded to the float 0.0 when differentiated again
        return m
    offset = 1 if unit_diagonal else 0
    return np.tril(m, -offset) if lower else np.triu(m, offset)


def _apply_trans(m, trans):
    """op(m) for LAPACK's `trans`: m (0), m^T (1), m^H (2)."""
    if trans == 0:
        return m
    if trans == 1:
        return _transpose(m)
    return _conj(_transpose(m))


def _adjoint_of_op(g, trans):
    """The adjoint of `m` from that of op(m) (the transpose of `_apply_trans` under
    the pairing Re(sum(c * t)))."""
    return _apply_trans(g, trans)


def _trans_code(trans):
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}
    if trans not in codes:
        raise located(f"scipy.linalg: trans={trans!r} is not one of 0, 1, 2, 'N', 'T', 'C'")
    return codes[trans]


def _structure(assume_a):
    """The family of `assume_a` in scipy.linalg.solve and inv: 'general', 'symmetric',
    'hermitian', or a structure read through a mask."""
    families = {
        None: "general", "gen": "general", "general": "general",
        "sym": "symmetric", "symmetric": "symmetric",
        "her": "hermitian", "hermitian": "hermitian", "pos": "hermitian", "positive definite": "hermitian",
        "diagonal": "diagonal", "tridiagonal": "tridiagonal",
        "upper triangular": "upper triangular", "lower triangular": "lower triangular",
    }
    if assume_a not in families:
        raise located(
            f"scipy.linalg: no gradient rule for assume_a={assume_a!r}; for a banded matrix "
            "use scipy.linalg.solve with assume_a=None (general) on the full matrix"
        )
    return families[assume_a]


def _lu_permutation(piv):
    """The rows of `a` in the order of the factored matrix: (P a) = a[perm], from
    LAPACK's sequence of interchanges `piv` (per matrix of a stack)."""
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    for index in np.ndindex(piv.shape[:-1]):
        row = perm[index]
        for i, p in enumerate(piv[index]):
            row[i], row[p] = row[p], row[i]
    return perm


nondifferentiable(_trans_code, _structure, _lu_permutation)  # flags and indices


def _project(m, family, lower, a):
    """The part of a tangent or adjoint `m` of `a` that a solve with structure
    `family` reads (symmetrized for the symmetric families)."""
    if np.ndim(m) == 0:  # the zero tangent of a constant matrix, folded to the float 0.0
        return m
    if family == "general":
        return m
    if family == "symmetric":
        return _symmetric_part(m)
    if family == "hermitian":
        return (m + _conj(_transpose(m))) / 2 if _is_complex(a) else _symmetric_part(m)
    if family == "diagonal":
        return m * np.eye(np.shape(m)[-1])
    if family == "tridiagonal":
        return np.triu(np.tril(m, 1), -1)
    return np.triu(m) if family == "upper triangular" else np.tril(m)


def _matrix_times(m, v):
    """m @ v, for a tangent `m` of a matrix that is the float 0.0 when the matrix is constant."""
    if np.ndim(m) == 0:
        return m * v
    return m @ v


def _solve_with_transpose(a, g, family, lower):
    """The solution of a^T z = g for `a` read with structure `family`."""
    if family in ("symmetric", "hermitian"):
        if family == "hermitian" and _is_complex(a):  # a^T = conj(a)
            return _conj(scipy.linalg.solve(a, _conj(g), lower=lower, assume_a="her"))
        return scipy.linalg.solve(a, g, lower=lower, assume_a="sym")
    if family == "general":
        return scipy.linalg.solve(_transpose(a), g)
    swapped = {"upper triangular": "lower triangular", "lower triangular": "upper triangular"}
    return scipy.linalg.solve(_transpose(a), g, assume_a=swapped.get(family, family))


def _factor_tangent(t):
    """The tangent of the factor in a (factor, flag) argument: None when the argument
    carries none (a zero tangent, or one per component with the factor's missing)."""
    return t[0] if isinstance(t, (tuple, list)) and not isinstance(t[0], (type(None), float)) else None


def _permute_rows(m, perm):
    return np.take_along_axis(m, np.expand_dims(perm, -1), axis=-2)


def _lu_parts(lu):
    """(L, U) of a packed LU factorization: L unit lower triangular, U upper triangular."""
    return np.tril(lu, -1) + np.eye(np.shape(lu)[-1]), np.triu(lu)


# ----- Triangular solves -----


@adjoint(scipy.linalg.solve_triangular)
def solve_triangular_adjoint(dy, y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                             check_finite=True):
    code = _trans_code(trans)
    if code == 2:  # op(a)^T = conj(a)
        d_b = _conj(scipy.linalg.solve_triangular(a, _conj(dy), trans=0, lower=lower, unit_diagonal=unit_diagonal))
    else:
        d_b = scipy.linalg.solve_triangular(a, dy, trans=1 - code, lower=lower, unit_diagonal=unit_diagonal)
    d_op = -(_columns(d_b, b) @ _transpose(_columns(y, b)))
    return (_triangle(_adjoint_of_op(d_op, code), lower, unit_diagonal), d_b)


@tangent(scipy.linalg.solve_triangular)
def solve_triangular_tangent(tangents, y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                             check_finite=True):
    code = _trans_code(trans)
    # a zero may come as None or 0.0, and the symbolic zero of an inlined rule folds away: each
    # term starts from zeros shaped like its operand, which the triangle and the product need
    t_a = np.zeros(np.shape(a)) + (0.0 if tangents[0] is None else tangents[0])
    t_b = np.zeros(np.shape(b)) + (0.0 if tangents[1] is None else tangents[1])
    d_op = _apply_trans(_triangle(t_a, lower, unit_diagonal), code)
    rhs = _columns(t_b, b) - d_op @ _columns(y, b)
    d_y = scipy.linalg.solve_triangular(a, rhs, trans=code, lower=lower, unit_diagonal=unit_diagonal)
    return np.reshape(d_y, np.shape(y))


# ----- Cholesky -----


@adjoint(scipy.linalg.cholesky)
def cholesky_adjoint(dy, y, a, lower=False, overwrite_a=False, check_finite=True):
    low = y if lower else _transpose(y)
    return (_cholesky_adjoint(dy if lower else _transpose(dy), low),)


@tangent(scipy.linalg.cholesky)
def cholesky_tangent(tangents, y, a, lower=False, overwrite_a=False, check_finite=True):
    d_low = _cholesky_tangent(tangents[0], y if lower else _transpose(y))
    return d_low if lower else _transpose(d_low)


@adjoint(scipy.linalg.cho_factor)
def cho_factor_adjoint(dy, y, a, lower=False, overwrite_a=False, check_finite=True):
    c, d_c = y[0], _shaped(dy[0], y[0])
    low = np.tril(c) if lower else _transpose(np.triu(c))
    d_low = np.tril(d_c) if lower else _transpose(np.triu(d_c))
    untouched = np.triu(d_c, 1) if lower else np.tril(d_c, -1)  # a's own entries
    return (_cholesky_adjoint(d_low, low) + _symmetric_part(untouched),)


@tangent(scipy.linalg.cho_factor)
def cho_factor_tangent(tangents, y, a, lower=False, overwrite_a=False, check_finite=True):
    c, e = y[0], _symmetric_part(tangents[0])
    d_low = _cholesky_tangent(e, np.tril(c) if lower else _transpose(np.triu(c)))
    if lower:
        return (d_low + np.triu(e, 1), np.zeros_like(y[1]))
    return (_transpose(d_low) + np.tril(e, -1), np.zeros_like(y[1]))


@adjoint(scipy.linalg.cho_solve)
def cho_solve_adjoint(dy, y, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    # (c, lower) rebuilt, not c_and_lower passed on: its parts are what gets differentiated again
    d_b = scipy.linalg.cho_solve((c, lower), dy)
    d_a = -(_columns(d_b, b) @ _transpose(_columns(y, b)))
    if lower:  # a = L L^T
        d_c = np.tril((d_a + _transpose(d_a)) @ np.tril(c))
    else:  # a = U^T U
        d_c = np.triu(np.triu(c) @ (d_a + _transpose(d_a)))
    return ((d_c, None), d_b)


@tangent(scipy.linalg.cho_solve)
def cho_solve_tangent(tangents, y, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    d_c = _factor_tangent(tangents[0])
    rhs = _columns(tangents[1], b)
    if d_c is not None:
        low = np.tril(c) if lower else _transpose(np.triu(c))
        d_low = np.tril(d_c) if lower else _transpose(np.triu(d_c))
        rhs = rhs - (d_low @ _transpose(low) + low @ _transpose(d_low)) @ _columns(y, b)
    return np.reshape(scipy.linalg.cho_solve((c, lower), rhs), np.shape(y))


# ----- Solves, inverses, determinants -----


@adjoint(scipy.linalg.solve)
def solve_adjoint(dy, y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                  assume_a=None, transposed=False):
    family = _structure(assume_a)
    if transposed:  # a^T x = b: a^T's transpose is a, read with the same structure
        d_b = scipy.linalg.solve(a, dy, lower=lower, assume_a=assume_a)
    else:
        d_b = _solve_with_transpose(a, dy, family, lower)
    d_m = -(_columns(d_b, b) @ _transpose(_columns(y, b)))
    return (_project(_transpose(d_m) if transposed else d_m, family, lower, a), d_b)


@tangent(scipy.linalg.solve)
def solve_tangent(tangents, y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                  assume_a=None, transposed=False):
    family = _structure(assume_a)
    d_a = _project(tangents[0], family, lower, a)
    rhs = _columns(tangents[1], b) - _matrix_times(_transpose(d_a) if transposed and np.ndim(d_a) else d_a,
                                                    _columns(y, b))
    d_y = scipy.linalg.solve(a, rhs, lower=lower, assume_a=assume_a, transposed=transposed)
    return np.reshape(d_y, np.shape(y))


@adjoint(scipy.linalg.inv)
def inv_adjoint(dy, y, a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    y_t = _transpose(y)
    return (_project(-(y_t @ dy @ y_t), _structure(assume_a), lower, a),)


@tangent(scipy.linalg.inv)
def inv_tangent(tangents, y, a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    return -(y @ _project(tangents[0], _structure(assume_a), lower, a) @ y)


@adjoint(scipy.linalg.det)
def det_adjoint(dy, y, a, overwrite_a=False, check_finite=True):
    return (np.expand_dims(dy, (-2, -1)) * cofactors(a, y),)  # finite at a singular matrix too


@tangent(scipy.linalg.det)
def det_tangent(tangents, y, a, overwrite_a=False, check_finite=True):
    return np.sum(cofactors(a, y) * tangents[0], axis=(-2, -1))


# ----- LU -----


@adjoint(scipy.linalg.lu_factor)
def lu_factor_adjoint(dy, y, a, overwrite_a=False, check_finite=True):
    low, up = _lu_parts(y[0])
    d_lu = _shaped(dy[0], y[0])
    x = np.tril(_transpose(low) @ np.tril(d_lu, -1), -1) + np.triu(np.triu(d_lu) @ _transpose(up))
    # d(P a) = L X U: the adjoint of P a is L^-T X U^-T, then the rows go back in place
    d_pa = np.linalg.solve(_transpose(low), _transpose(np.linalg.solve(up, _transpose(x))))
    return (_permute_rows(d_pa, np.argsort(_lu_permutation(y[1]), axis=-1)),)


@tangent(scipy.linalg.lu_factor)
def lu_factor_tangent(tangents, y, a, overwrite_a=False, check_finite=True):
    low, up = _lu_parts(y[0])
    d_pa = _permute_rows(tangents[0], _lu_permutation(y[1]))
    x = np.linalg.solve(low, _transpose(np.linalg.solve(_transpose(up), _transpose(d_pa))))
    return (low @ np.tril(x, -1) + np.triu(x) @ up, np.zeros_like(y[1]))


@adjoint(scipy.linalg.lu_solve)
def lu_solve_adjoint(dy, y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    code = _trans_code(trans)
    lu, piv = lu_and_piv
    if code == 2:
        d_b = _conj(scipy.linalg.lu_solve((lu, piv), _conj(dy), trans=0))
    else:
        d_b = scipy.linalg.lu_solve((lu, piv), dy, trans=1 - code)
    d_a = _adjoint_of_op(-(_columns(d_b, b) @ _transpose(_columns(y, b))), code)
    d_pa = _permute_rows(d_a, _lu_permutation(piv))  # the adjoint of L U, with a = P^T L U
    low, up = _lu_parts(lu)
    d_lu = np.tril(d_pa @ _transpose(up), -1) + np.triu(_transpose(low) @ d_pa)
    return ((d_lu, None), d_b)


@tangent(scipy.linalg.lu_solve)
def lu_solve_tangent(tangents, y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    code = _trans_code(trans)
    lu, piv = lu_and_piv
    d_lu = _factor_tangent(tangents[0])
    rhs = _columns(tangents[1], b)
    if d_lu is not None:
        low, up = _lu_parts(lu)
        d_pa = np.tril(d_lu, -1) @ up + low @ np.triu(d_lu)
        d_a = _permute_rows(d_pa, np.argsort(_lu_permutation(piv), axis=-1))
        rhs = rhs - _apply_trans(d_a, code) @ _columns(y, b)
    return np.reshape(scipy.linalg.lu_solve((lu, piv), rhs, trans=code), np.shape(y))


# ----- Matrix functions -----


@adjoint(scipy.linalg.expm)
def expm_adjoint(dy, y, A):
    return (_upper_right(scipy.linalg.expm(_with_derivative_block(_transpose(A), dy)), np.shape(A)[-1]),)


@tangent(scipy.linalg.expm)
def expm_tangent(tangents, y, A):
    return _upper_right(scipy.linalg.expm(_with_derivative_block(A, tangents[0])), np.shape(A)[-1])


@adjoint(scipy.linalg.sqrtm)
def sqrtm_adjoint(dy, y, A, disp=True, blocksize=64):
    return (_upper_right(scipy.linalg.sqrtm(_with_derivative_block(_transpose(A), dy)), np.shape(A)[-1]),)


@tangent(scipy.linalg.sqrtm)
def sqrtm_tangent(tangents, y, A, disp=True, blocksize=64):
    return _upper_right(scipy.linalg.sqrtm(_with_derivative_block(A, tangents[0])), np.shape(A)[-1])


@adjoint(scipy.linalg.logm)
def logm_adjoint(dy, y, A, disp=True):
    return (_upper_right(scipy.linalg.logm(_with_derivative_block(_transpose(A), dy)), np.shape(A)[-1]),)


@tangent(scipy.linalg.logm)
def logm_tangent(tangents, y, A, disp=True):
    return _upper_right(scipy.linalg.logm(_with_derivative_block(A, tangents[0])), np.shape(A)[-1])
