"""Rules: linear algebra (products, contractions, norms and np.linalg factorizations).

Conventions
-----------
- Real or complex inputs (``cholesky``: real only). Adjoints have exactly the shape
  of their operand; where an operand was broadcast (a batch of matrices times one
  matrix) its adjoint is summed back. Complex inputs follow the convention of
  ``elementwise`` (docs/conventions.md, "Complex numbers"): products, contractions,
  ``inv``, ``det`` and ``solve`` are holomorphic and keep their real formulas
  (transposes, never conjugate transposes); ``vdot`` conjugates its first operand;
  ``norm`` and ``slogdet``'s ``logabsdet`` are real and read Re(dy), and the sign of
  a complex ``slogdet`` carries a gradient.
- ``dot``/``matmul``: any mix of 1-D and 2-D operands; ``matmul`` also stacks of
  matrices with broadcasting; ``dot`` also N-D operands and scalars.
- ``einsum``: subscripts given as a string, explicit (``'ij,jk->ik'``) or implicit,
  with repeated labels (``'ii->'``), ``...`` and any number of operands, or in the
  sublist form ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (with ``Ellipsis``). The
  subscripts get no adjoint.
- ``matvec``, ``vecmat``, ``vecdot`` (NumPy 2) and ``matrix_transpose``: stacks with
  broadcasting; ``vecdot`` and ``vecmat`` conjugate their first operand, as NumPy does, so
  its adjoint is conjugated.
- ``np.linalg.norm``: vector ord None/2, 1, inf, -inf, 0 and any other p; matrix
  ord None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf; with ``axis`` and ``keepdims``.
  At a zero input it returns a zero subgradient, never NaN; ties for a maximum or
  minimum share the gradient evenly, as in ``reductions``.
- ``inv`` needs an invertible matrix. ``det`` does not: its derivative is the cofactor
  matrix, ``det(a) * inv(a)^T`` where ``a`` is well conditioned and the transposed
  adjugate, through the SVD, where it is singular or nearly so (``cofactors``). ``slogdet`` returns
  ``(sign, logabsdet)``; its ``dy`` holds one adjoint per component, and the sign of a
  real matrix carries no gradient, also at a singular matrix, where logabsdet (-inf)
  has no derivative and its adjoint or tangent raises when used.
- ``cholesky`` takes a symmetric matrix. NumPy reads only its lower triangle, so
  the derivative with respect to single entries is not symmetric; the rule returns
  the symmetrized gradient instead (the usual convention): ``dA`` is symmetric and
  ``sum(dA * E)`` is the derivative along any symmetric perturbation ``E``.
- Every rule with an adjoint also has a tangent (forward-mode) rule, its exact
  transpose: ``<adjoint(dy), t> == <dy, tangent(t)>``. The tangent of ``slogdet`` is
  a tuple ``(zeros like sign, tangent of logabsdet)``. The tangent of ``cholesky`` is
  meant for symmetric perturbations; it reads a tangent ``E`` as its symmetric part
  ``(E + E^T) / 2`` (the transpose of the symmetrized adjoint), so along a symmetric
  ``E`` it is the derivative of ``cholesky(a + s E)``. A float ``ord`` of a vector
  p-norm passed positionally has a tangent (d norm / d p) although the adjoint gives
  it no gradient.
"""

import numbers
import operator
import string

import numpy as np

from ..registry import adjoint, nondifferentiable, specialized, tangent
from ..runtime import broadcast_like, stop_gradient, unbroadcast
from ..runtime.locations import located
from ..runtime.refusals import no_derivative
from .elementwise import _conj, _is_complex, _tangent_of
from .reductions import _share_among_ties

# ----- Helpers: products and contractions -----


def _transpose(m):
    """The transpose of each matrix in a stack (the last two axes swapped)."""
    return np.swapaxes(m, -1, -2)


def _as_stacks(dy, a, b):
    """`a`, `b` and the adjoint of `a @ b` as stacks of matrices: a 1-D `a` becomes a
    row, a 1-D `b` a column, and `dy` gets the axes matmul removed for them."""
    if np.ndim(b) == 1:
        b = np.reshape(b, (-1, 1))
        dy = np.expand_dims(dy, -1)
    if np.ndim(a) == 1:
        a = np.reshape(a, (1, -1))
        dy = np.expand_dims(dy, -2)
    return dy, a, b


def _dtype(x):
    """x's dtype, read from the array: np.asarray would compute a dask array."""
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def _is_matrix(x):
    # `.ndim` is an attribute read; np.ndim is a function call several times slower,
    # and this test runs once per matrix product in generated loops.
    return getattr(x, "ndim", None) == 2


def matmul_left_adjoint(dy, a, b):
    """Adjoint of `a` in `a @ b`. A matrix `b` that is no array (a SciPy sparse matrix, which
    np.swapaxes cannot transpose) is transposed by its own `.T`."""
    if _is_matrix(b) and (_is_matrix(a) or (np.ndim(a) == 1 and not isinstance(b, np.ndarray))):
        return dy @ b.T
    dy, a2, b2 = _as_stacks(dy, a, b)
    return np.reshape(unbroadcast(dy @ _transpose(b2), a2), np.shape(a))


def matmul_right_adjoint(dy, a, b):
    """Adjoint of `b` in `a @ b` (a matrix `a` that is no array transposed by its `.T`)."""
    if _is_matrix(a) and (_is_matrix(b) or (np.ndim(b) == 1 and not isinstance(a, np.ndarray))):
        return a.T @ dy
    dy, a2, b2 = _as_stacks(dy, a, b)
    return np.reshape(unbroadcast(_transpose(a2) @ dy, b2), np.shape(b))


def _tensordot_axes(a, b, axes):
    """The `axes` argument of np.tensordot as two lists of non-negative axes."""
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, numbers.Integral):
        return list(range(na - axes, na)), list(range(axes))
    a_axes, b_axes = axes
    if isinstance(a_axes, numbers.Integral):
        a_axes = [a_axes]
    if isinstance(b_axes, numbers.Integral):
        b_axes = [b_axes]
    return [int(i) % na for i in a_axes], [int(i) % nb for i in b_axes]


def _tensordot_left(dy, a, b, axes):
    """Adjoint of `a` in np.tensordot(a, b, axes), `axes` as from `_tensordot_axes`."""
    a_axes, b_axes = axes
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g = np.tensordot(dy, b, (list(range(len(a_free), len(a_free) + len(b_free))), b_free))
    # g's axes: a's free axes, then the partners of b's contracted axes in b's order
    held = a_free + [a_axes[t] for t in sorted(range(len(b_axes)), key=b_axes.__getitem__)]
    return np.transpose(g, np.argsort(held).tolist())


def _tensordot_right(dy, a, b, axes):
    """Adjoint of `b` in np.tensordot(a, b, axes), `axes` as from `_tensordot_axes`."""
    a_axes, b_axes = axes
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g = np.tensordot(a, dy, (a_free, list(range(len(a_free)))))
    # g's axes: the partners of a's contracted axes in a's order, then b's free axes
    held = [b_axes[t] for t in sorted(range(len(a_axes)), key=a_axes.__getitem__)] + b_free
    return np.transpose(g, np.argsort(held).tolist())


def _dot_axes(a, b):
    """The axes np.dot contracts: the last of `a` with the second-to-last of `b`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return [], []
    return [np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]


def dot_left_adjoint(dy, a, b):
    """Adjoint of `a` in np.dot(a, b)."""
    if 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2:
        return matmul_left_adjoint(dy, a, b)
    return _tensordot_left(dy, a, b, _dot_axes(a, b))


def dot_right_adjoint(dy, a, b):
    """Adjoint of `b` in np.dot(a, b)."""
    if 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2:
        return matmul_right_adjoint(dy, a, b)
    return _tensordot_right(dy, a, b, _dot_axes(a, b))


# The plain forms of the product adjoints for vectors and matrices (see `specialized`).
_LEFT_FORMS = {(1, 1): "dy * b", (2, 1): "np.outer(dy, b)", (1, 2): "b @ dy", (2, 2): "dy @ b.T"}
_RIGHT_FORMS = {(1, 1): "dy * a", (2, 1): "a.T @ dy", (1, 2): "np.outer(a, dy)", (2, 2): "a.T @ dy"}


@specialized(dot_left_adjoint, matmul_left_adjoint)
def _left_form(dy, a, b):
    return _LEFT_FORMS.get((a, b))


@specialized(dot_right_adjoint, matmul_right_adjoint)
def _right_form(dy, a, b):
    return _RIGHT_FORMS.get((a, b))


def _inner_axes(a, b):
    """The axes np.inner contracts: the last of each operand (none for a scalar)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return [], []
    return [np.ndim(a) - 1], [np.ndim(b) - 1]


def _kron_shapes(a, b):
    """Shapes for kron's adjoints: `a` and `b` padded with leading length-1 axes to a common
    rank, dy's blocks (axis 2i over axis i of `a`, axis 2i+1 over axis i of `b`), and each
    input spread over the blocks' axes."""
    rank = max(np.ndim(a), np.ndim(b))
    a_shape = (1,) * (rank - np.ndim(a)) + np.shape(a)
    b_shape = (1,) * (rank - np.ndim(b)) + np.shape(b)
    blocks = tuple(n for pair in zip(a_shape, b_shape, strict=True) for n in pair)
    a_spread = tuple(n for m in a_shape for n in (m, 1))
    b_spread = tuple(n for m in b_shape for n in (1, m))
    return blocks, a_spread, b_spread


nondifferentiable(_kron_shapes)  # shapes only


def _kron_left(dy, a, b):
    """Adjoint of `a` in np.kron(a, b)."""
    blocks, _, b_spread = _kron_shapes(a, b)
    summed = np.sum(np.reshape(dy, blocks) * np.reshape(b, b_spread), axis=tuple(range(1, len(blocks), 2)))
    return np.reshape(summed, np.shape(a))


def _kron_right(dy, a, b):
    """Adjoint of `b` in np.kron(a, b)."""
    blocks, a_spread, _ = _kron_shapes(a, b)
    summed = np.sum(np.reshape(dy, blocks) * np.reshape(a, a_spread), axis=tuple(range(0, len(blocks), 2)))
    return np.reshape(summed, np.shape(b))


def _trace_adjoint(dy, a, offset, axis1, axis2):
    """Adjoint of `a` in np.trace(a, offset, axis1, axis2): `dy` spread on the diagonal."""
    shape = np.shape(a)
    eye = np.eye(shape[axis1], shape[axis2], offset, dtype=np.result_type(_dtype(a), 1.0))
    if len(shape) == 2:
        return dy * eye if axis1 % 2 < axis2 % 2 else dy * eye.T
    # dy times eye for each of its elements (np.multiply.outer, in operations with rules)
    spread = np.reshape(dy, np.shape(dy) + (1, 1)) * eye
    return np.moveaxis(spread, (-2, -1), (axis1, axis2))


# ----- Helpers: einsum -----


def _require_string_subscripts(subscripts):
    if not isinstance(subscripts, str):
        raise located(
            "the einsum rule needs the subscripts as a string, as in "
            "np.einsum('ij,jk->ik', a, b); rewrite the sublist form "
            "np.einsum(a, [0, 1], b, [1, 2]) that way."
        )


# a check that refuses an input: not transformed when a rule is differentiated again
nondifferentiable(_require_string_subscripts)


def _sublist_subscripts(first, rest):
    """The subscripts string of the sublist form `np.einsum(a, [0, 1], b, [1, 2], [0, 2])`
    (called as `first, *rest`): each integer label a letter, `Ellipsis` as '...'."""
    arguments = (first,) + tuple(rest)
    letters = string.ascii_letters

    def spell(sublist):
        return "".join("..." if label is Ellipsis else letters[label] for label in sublist)

    terms = [spell(arguments[k]) for k in range(1, len(arguments), 2)]
    output = "->" + spell(arguments[-1]) if len(arguments) % 2 == 1 else ""
    return ",".join(terms) + output


nondifferentiable(_sublist_subscripts)  # labels, not values


def _einsum_sublist_adjoint(dy, first, rest, optimize):
    """Adjoints of `np.einsum(a, [0, 1], b, [1, 2])`: one per array, None per sublist."""
    spec = _sublist_subscripts(first, rest)
    arrays = [first] + [rest[2 * k - 1] for k in range(1, (len(rest) + 1) // 2)]
    labels, output, spare = _einsum_labels(spec, arrays)
    adjoints = [_einsum_adjoint(dy, 0, labels, output, spare, arrays, optimize)]
    for k in range(1, len(arrays)):
        adjoints.append(None)  # the sublist before operand k
        adjoints.append(_einsum_adjoint(dy, k, labels, output, spare, arrays, optimize))
    return tuple(adjoints)


def _einsum_labels(subscripts, operands):
    """The labels of each operand and of the output, with '...' spelled out as letters
    not used elsewhere, and the output made explicit for implicit subscripts."""
    _require_string_subscripts(subscripts)
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    unused = [c for c in string.ascii_letters if c not in spec]
    spans = [np.ndim(op) - len(t.replace("...", "")) for t, op in zip(terms, operands, strict=True)]
    width = max([n for t, n in zip(terms, spans, strict=True) if "..." in t], default=0)
    ellipsis = "".join(unused[:width])
    labels = [t.replace("...", ellipsis[width - n :]) for t, n in zip(terms, spans, strict=True)]
    if not arrow:
        letters = inputs.replace("...", "").replace(",", "")
        output = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return labels, output.replace("...", ellipsis), unused[width:]


def _einsum_adjoint(dy, k, labels, output, spare, operands, optimize):
    """Adjoint of operand `k` of an einsum, as one more einsum of `dy` with the other
    operands (and the constant arrays `_einsum_adjoint_plan` adds)."""
    shapes = [np.shape(op) for op in operands]
    subscripts, constants = _einsum_adjoint_plan(k, labels, output, spare, shapes, np.result_type(_dtype(operands[k]), 1.0))
    args = [dy]  # built by appends, not `+` on lists: so it differentiates again
    for m, op in enumerate(operands):
        if m != k:
            args.append(op)
    for constant in constants:
        args.append(constant)
    return einsum_of(subscripts, args, optimize)


def _einsum_adjoint_plan(k, labels, output, spare, shapes, dtype):
    """(the subscripts of the einsum that gives the adjoint of operand `k`, the constant
    arrays it takes after dy and the other operands). A label only operand `k` has is
    supplied by a vector of ones; a repeated label (a diagonal) gets a fresh label tied to
    it by an identity matrix; a length-1 axis that was broadcast gets a fresh label, so
    its adjoint is summed."""
    sizes = {}
    for term, shape in zip(labels, shapes, strict=True):
        for label, n in zip(term, shape, strict=True):
            sizes[label] = max(sizes.get(label, 1), n)
    terms = [output] + [t for m, t in enumerate(labels) if m != k]
    constants = []
    present = set("".join(terms))
    spare = iter(spare)
    target = ""
    for label, n in zip(labels[k], shapes[k], strict=True):
        if n == 1 and sizes[label] > 1:
            fresh = next(spare)
            terms.append(fresh)
            constants.append(np.ones(1, dtype))
            target += fresh
        elif label in target:
            fresh = next(spare)
            terms.append(label + fresh)
            constants.append(np.eye(n, dtype=dtype))
            target += fresh
        else:
            if label not in present:
                terms.append(label)
                constants.append(np.ones(n, dtype))
                present.add(label)
            target += label
    return ",".join(terms) + "->" + target, constants


nondifferentiable(_einsum_labels, _einsum_adjoint_plan)  # labels, shapes and constant arrays


def _einsum_tangent(y, subscripts, operands, tangents, optimize):
    """Tangent of np.einsum(subscripts, *operands): the sum over the operands of the same
    einsum with that operand replaced by its tangent. A missing tangent (None, or the
    float 0.0 of a zero tangent) contributes nothing."""
    _require_string_subscripts(subscripts)
    total = 0.0
    for k, t in enumerate(tangents):
        if t is None or (type(t) is float and t == 0.0):
            continue
        replaced = []  # built by appends, not `+` on tuples: so it differentiates again
        for m, op in enumerate(operands):
            replaced.append(t if m == k else op)
        total = total + einsum_of(subscripts, replaced, optimize)
    return broadcast_like(total, y)


def einsum_of(subscripts, operands, optimize=False):
    """np.einsum(subscripts, *operands): the einsum the rules of einsum compute, with its
    operands in one list, which ssad differentiates (a `*` of values that carry
    gradients it does not), so that those rules differentiate again."""
    return np.einsum(subscripts, *operands, optimize=optimize)


@adjoint(einsum_of)
def einsum_of_adjoint(dy, y, subscripts, operands, optimize=False):
    labels, output, spare = _einsum_labels(subscripts, operands)
    return (None, [_einsum_adjoint(dy, k, labels, output, spare, operands, optimize) for k in range(len(operands))])


@tangent(einsum_of)
def einsum_of_tangent(tangents, y, subscripts, operands, optimize=False):
    given = tangents[1]
    if not isinstance(given, (list, tuple)):  # a zero tangent of the whole list
        return broadcast_like(0.0, y)
    return _einsum_tangent(y, subscripts, operands, given, optimize)


# ----- Helpers: norms -----


def _safe(m):
    """`m` with zeros replaced by ones, to divide by a norm that may be zero."""
    return np.where(m == 0, 1, m)


def _vector_norm_gradient(x, m, ord, axis):
    """d norm / d x for a vector norm of `x` along `axis` (an int, or a tuple of all
    axes for the flattened 2-norm); `m` is the norm with the reduced axes kept."""
    if ord is None or ord == 2:
        return x / _safe(m)
    if ord == 1:
        return np.sign(x)
    if ord == np.inf or ord == -np.inf:
        return np.sign(x) * _share_among_ties(np.ones_like(m), m, np.abs(x), axis)
    if ord == 0:
        return np.zeros_like(x)
    # sign(x) is 0 where x is; _safe keeps 0 ** (ord - 1) (inf for ord < 1) out
    return np.sign(x) * _safe(np.abs(x) / _safe(m)) ** (ord - 1)


def _matrix_norm_gradient(x, m, ord, rows, cols):
    """d norm / d x for a matrix norm of `x` over the axes (`rows`, `cols`); `m` is
    the norm with both axes kept."""
    if ord is None or ord == "fro":
        return x / _safe(m)
    if ord in (1, -1):
        sums = np.sum(np.abs(x), axis=rows, keepdims=True)
        return np.sign(x) * _share_among_ties(np.ones_like(m), m, sums, cols)
    if ord in (np.inf, -np.inf):
        sums = np.sum(np.abs(x), axis=cols, keepdims=True)
        return np.sign(x) * _share_among_ties(np.ones_like(m), m, sums, rows)
    return _singular_norm_gradient(x, m, ord, rows, cols)


def _singular_norm_gradient(x, m, ord, rows, cols):
    """d norm / d x for the matrix norms of the singular values (ord 2, -2, 'nuc')."""
    u, s, vh = np.linalg.svd(np.moveaxis(x, (rows, cols), (-2, -1)), full_matrices=False)
    if ord == 2:
        u, vh = u[..., :1], vh[..., :1, :]
    elif ord == -2:
        u, vh = u[..., -1:], vh[..., -1:, :]
    elif ord != "nuc":
        _unknown_matrix_norm(ord)
    # at a zero norm (a zero matrix; for ord=-2 a singular one) the subgradient is zero.
    # Differentiated again (a Hessian) through the rules of np.linalg.svd: that needs the
    # singular value in question to be simple (see ssad.rules.decompositions)
    return np.where(m == 0, 0, np.moveaxis(u @ vh, (-2, -1), (rows, cols)))


def _unknown_matrix_norm(ord):
    raise located(f"np.linalg.norm: no gradient rule for the matrix norm ord={ord!r}")


nondifferentiable(_unknown_matrix_norm)


def _norm_axes(x, ord, axis):
    """The axes np.linalg.norm(x, ord, axis) reduces, and whether it is a vector norm."""
    if axis is None:
        return tuple(range(x.ndim)), ord is None or x.ndim == 1
    axes = tuple(int(i) % x.ndim for i in (axis if isinstance(axis, tuple) else (axis,)))
    return axes, len(axes) == 1


nondifferentiable(_norm_axes)  # axes and a flag: read from x's shape, not its values


def _norm_gradient(y, x, ord, axes, vector, keepdims):
    """d norm / d x for y = np.linalg.norm(x, ord, axis, keepdims), shaped like `x`."""
    m = np.asarray(y) if keepdims else np.expand_dims(y, axes)
    if vector:
        return _vector_norm_gradient(x, m, ord, axes if len(axes) > 1 else axes[0])
    return _matrix_norm_gradient(x, m, ord, axes[0], axes[1])


def _norm_adjoint(dy, y, x, ord, axis, keepdims):
    """Adjoint of `x` in np.linalg.norm(x, ord, axis, keepdims)."""
    x = np.asarray(x)
    axes, vector = _norm_axes(x, ord, axis)
    if _is_complex(x):  # the norm is real: Re(dy) times the conjugate of d norm/d Re x + 1j d norm/d Im x
        dy = np.real(dy)
        gradient = np.conj(_norm_gradient(y, x, ord, axes, vector, keepdims))
    else:
        gradient = _norm_gradient(y, x, ord, axes, vector, keepdims)
    dtype = np.result_type(dy, x.dtype, 1.0)
    g = np.asarray(dy, dtype) if keepdims else np.expand_dims(np.asarray(dy, dtype), axes)
    return g * gradient


def _norm_tangent(tangents, y, x, ord, axis, keepdims):
    """Tangent of y = np.linalg.norm(x, ord, axis, keepdims) along the tangents of `x`
    and, for a vector p-norm with a float `ord` passed positionally, of `ord`."""
    x = np.asarray(x)
    axes, vector = _norm_axes(x, ord, axis)
    gradient = _norm_gradient(y, x, ord, axes, vector, keepdims)
    if _is_complex(x):  # a real tangent: Re(sum(conj(d norm/d Re x + 1j d norm/d Im x) * t))
        d_y = np.real(np.sum(tangents[0] * np.conj(gradient), axis=axes, keepdims=keepdims))
    else:
        d_y = np.sum(tangents[0] * gradient, axis=axes, keepdims=keepdims)
    d_ord = tangents[1] if len(tangents) > 1 else None
    if d_ord is None or not np.any(d_ord) or not vector or not isinstance(ord, numbers.Real):
        return d_y
    if ord == 0 or np.isinf(ord):
        return d_y  # special cases, not members of the family of p-norms
    return d_y + d_ord * _p_norm_order_derivative(y, x, ord, axes, keepdims)


def _p_norm_order_derivative(y, x, p, axes, keepdims):
    """d N / d p for the vector p-norm N = (sum |x_i|^p)^(1/p) along `axes`: with
    r = |x| / N (so that sum r^p = 1), dN/dp = (N / p) sum r^p ln r. Zero elements
    contribute nothing (the limit for p > 0); a zero norm gives zero."""
    m = np.asarray(y) if keepdims else np.expand_dims(y, axes)
    r = _safe(np.abs(x) / _safe(m))
    return y * np.sum(np.where(x == 0, 0, r**p * np.log(r)), axis=axes, keepdims=keepdims) / p


# ----- Helpers: solves and factorizations -----

# NumPy 2 reads a 1-D `b` of np.linalg.solve as a vector; NumPy 1 any `b` with one
# dimension fewer than `a`.
_SOLVE_VECTOR_IS_1D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def _as_columns(v, a, b):
    """`v`, shaped like the solution of np.linalg.solve(a, b), as a stack of columns."""
    vector = np.ndim(b) == 1 if _SOLVE_VECTOR_IS_1D else np.ndim(b) == np.ndim(a) - 1
    return np.expand_dims(v, -1) if vector else v


def _cholesky_adjoint(low_adjoint, low):
    """Symmetric adjoint of `a` for the lower Cholesky factor L = `low` of `a` and its
    adjoint dL = `low_adjoint`: with P the lower triangle of L^T dL with its diagonal halved
    and S = L^-T P L^-1, the adjoint is (S + S^T) / 2."""
    # (not `d_low`: forward mode names the tangent of `low` so when this is differentiated again)
    n = np.shape(low)[-1]
    p = np.tril(_transpose(low) @ low_adjoint) * (1 - 0.5 * np.eye(n, dtype=np.asarray(low).dtype))
    low_inv = np.linalg.inv(low)
    s = _transpose(low_inv) @ p @ low_inv
    return (s + _transpose(s)) / 2


def _cholesky_tangent(d_a, low):
    """Tangent dL of the lower Cholesky factor L = `low` along the tangent `d_a` of `a`:
    with X = L^-1 E L^-T for E the symmetric part of `d_a`, dL = L Phi(X), where Phi
    keeps the lower triangle of X and halves its diagonal."""
    n = np.shape(low)[-1]
    low_inv = np.linalg.inv(low)
    x = low_inv @ ((d_a + _transpose(d_a)) / 2) @ _transpose(low_inv)
    return low @ (np.tril(x) * (1 - 0.5 * np.eye(n, dtype=np.asarray(low).dtype)))


# ----- Products -----


@adjoint(np.dot)
@adjoint(np.ndarray.dot)
def dot_adjoint(dy, y, a, b, out=None):
    return (dot_left_adjoint(dy, a, b), dot_right_adjoint(dy, a, b))


@tangent(np.dot)
@tangent(np.ndarray.dot)
def dot_tangent(tangents, y, a, b, out=None):
    return np.dot(tangents[0], b) + np.dot(a, tangents[1])


@adjoint(np.matmul)
@adjoint(operator.matmul)
def matmul_adjoint(dy, y, x1, x2, out=None):
    return (matmul_left_adjoint(dy, x1, x2), matmul_right_adjoint(dy, x1, x2))


@tangent(np.matmul)
@tangent(operator.matmul)
def matmul_tangent(tangents, y, x1, x2, out=None):
    return tangents[0] @ x2 + x1 @ tangents[1]


@adjoint(np.vdot)
def vdot_adjoint(dy, y, a, b):
    # vdot(a, b) = sum(conj(a) * b): conjugate-linear in a
    return (np.reshape(_conj(dy * b), np.shape(a)), np.reshape(dy * _conj(a), np.shape(b)))


@tangent(np.vdot)
def vdot_tangent(tangents, y, a, b):
    return np.vdot(tangents[0], b) + np.vdot(a, tangents[1])


@adjoint(np.inner)
def inner_adjoint(dy, y, a, b):
    axes = _inner_axes(a, b)
    return (_tensordot_left(dy, a, b, axes), _tensordot_right(dy, a, b, axes))


@tangent(np.inner)
def inner_tangent(tangents, y, a, b):
    return np.inner(tangents[0], b) + np.inner(a, tangents[1])


@adjoint(np.outer)
def outer_adjoint(dy, y, a, b, out=None):
    return (np.reshape(dy @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ dy, np.shape(b)))


@tangent(np.outer)
def outer_tangent(tangents, y, a, b, out=None):
    return np.outer(tangents[0], b) + np.outer(a, tangents[1])


@adjoint(np.kron)
def kron_adjoint(dy, y, a, b):
    return (_kron_left(dy, a, b), _kron_right(dy, a, b))


@tangent(np.kron)
def kron_tangent(tangents, y, a, b):
    return np.kron(tangents[0], b) + np.kron(a, tangents[1])


# ----- Contractions -----


@adjoint(np.tensordot)
def tensordot_adjoint(dy, y, a, b, axes=2):
    pairs = _tensordot_axes(a, b, axes)
    return (_tensordot_left(dy, a, b, pairs), _tensordot_right(dy, a, b, pairs))


@tangent(np.tensordot)
def tensordot_tangent(tangents, y, a, b, axes=2):
    return np.tensordot(tangents[0], b, axes) + np.tensordot(a, tangents[1], axes)


@adjoint(np.einsum)
def einsum_adjoint(dy, y, subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        return _einsum_sublist_adjoint(dy, subscripts, operands, optimize)
    labels, output, spare = _einsum_labels(subscripts, operands)
    grads = [_einsum_adjoint(dy, k, labels, output, spare, operands, optimize)
             for k in range(len(operands))]
    return (None,) + tuple(grads)


@tangent(np.einsum)
def einsum_tangent(tangents, y, subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        spec = _sublist_subscripts(subscripts, operands)
        arrays = [subscripts] + [operands[2 * k - 1] for k in range(1, (len(operands) + 1) // 2)]
        moved = [tangents[2 * k] for k in range(len(arrays))]
        return _einsum_tangent(y, spec, arrays, moved, optimize)
    return _einsum_tangent(y, subscripts, operands, tangents[1:], optimize)


# ----- NumPy 2's vector and matrix products -----


def _no_tangent(t):
    """A missing tangent: None, or the float 0.0 a zero tangent is folded to."""
    return t is None or (type(t) is float and t == 0.0)


@adjoint(np.matvec)
def matvec_adjoint(dy, y, x1, x2, out=None):
    return (
        unbroadcast(dy[..., :, None] * x2[..., None, :], x1),
        unbroadcast(np.sum(x1 * dy[..., :, None], axis=-2), x2),
    )


@tangent(np.matvec)
def matvec_tangent(tangents, y, x1, x2, out=None):
    t1 = 0.0 if _no_tangent(tangents[0]) else np.matvec(tangents[0], x2)
    t2 = 0.0 if _no_tangent(tangents[1]) else np.matvec(x1, tangents[1])
    return broadcast_like(t1 + t2, y)


@adjoint(np.vecmat)
def vecmat_adjoint(dy, y, x1, x2, out=None):
    return (
        unbroadcast(_conj(np.sum(x2 * dy[..., None, :], axis=-1)), x1),
        unbroadcast(_conj(x1)[..., :, None] * dy[..., None, :], x2),
    )


@tangent(np.vecmat)
def vecmat_tangent(tangents, y, x1, x2, out=None):
    t1 = 0.0 if _no_tangent(tangents[0]) else np.vecmat(tangents[0], x2)
    t2 = 0.0 if _no_tangent(tangents[1]) else np.vecmat(x1, tangents[1])
    return broadcast_like(t1 + t2, y)


@adjoint(np.vecdot)
def vecdot_adjoint(dy, y, x1, x2, out=None, axis=-1):
    # each operand's own `axis` is the one summed over: moved last, the rest broadcast
    a, b = np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)
    d = np.expand_dims(dy, -1)
    d_a, d_b = unbroadcast(_conj(d * b), a), unbroadcast(d * _conj(a), b)
    return (np.moveaxis(d_a, -1, axis), np.moveaxis(d_b, -1, axis))


@tangent(np.vecdot)
def vecdot_tangent(tangents, y, x1, x2, out=None, axis=-1):
    t1 = 0.0 if _no_tangent(tangents[0]) else np.vecdot(tangents[0], x2, axis=axis)
    t2 = 0.0 if _no_tangent(tangents[1]) else np.vecdot(x1, tangents[1], axis=axis)
    return broadcast_like(t1 + t2, y)


@adjoint(np.matrix_transpose)
def matrix_transpose_adjoint(dy, y, x):
    return (np.swapaxes(dy, -1, -2),)


@tangent(np.matrix_transpose)
def matrix_transpose_tangent(tangents, y, x):
    return np.swapaxes(tangents[0], -1, -2)


@adjoint(np.trace)
@adjoint(np.ndarray.trace)
def trace_adjoint(dy, y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return (_trace_adjoint(dy, a, offset, axis1, axis2),)


@tangent(np.trace)
@tangent(np.ndarray.trace)
def trace_tangent(tangents, y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return np.trace(tangents[0], offset, axis1, axis2)


# ----- Norms -----


@adjoint(np.linalg.norm)
def norm_adjoint(dy, y, x, ord=None, axis=None, keepdims=False):
    return (_norm_adjoint(dy, y, x, ord, axis, keepdims),)


@tangent(np.linalg.norm)
def norm_tangent(tangents, y, x, ord=None, axis=None, keepdims=False):
    return _norm_tangent(tangents, y, x, ord, axis, keepdims)


# ----- Inverses, determinants and solves -----


@adjoint(np.linalg.inv)
def inv_adjoint(dy, y, a):
    y_t = _transpose(y)
    return (-(y_t @ dy @ y_t),)


@tangent(np.linalg.inv)
def inv_tangent(tangents, y, a):
    return -(y @ tangents[0] @ y)


@adjoint(np.linalg.det)
def det_adjoint(dy, y, a):
    return (np.expand_dims(dy, (-2, -1)) * cofactors(a, y),)  # y, det(a), spares cofactors an LU


@tangent(np.linalg.det)
def det_tangent(tangents, y, a):
    return np.sum(cofactors(a, y) * tangents[0], axis=(-2, -1))


@adjoint(np.linalg.slogdet)
def slogdet_adjoint(dy, y, a):
    scale = _slogdet_scale(dy, y)
    regular = invertible_part(a, stop_gradient(y[0]), stop_gradient(scale))  # a, where it is invertible
    return (np.expand_dims(scale, (-2, -1)) * _transpose(np.linalg.inv(regular)),)


@tangent(np.linalg.slogdet)
def slogdet_tangent(tangents, y, a):
    d_log_det = np.trace(np.linalg.solve(invertible_part(a, stop_gradient(y[0])), tangents[0]), axis1=-2, axis2=-1)
    return _slogdet_tangent(d_log_det, y)


def _slogdet_scale(dy, y):
    """The adjoint of log(det(a)) from those of slogdet's (sign, logabsdet): dy[1] for a
    real matrix; for a complex one, whose sign exp(1j * Im log det) moves too,
    Re(dy[1]) + 1j * Im(dy[0] * sign)."""
    if _is_complex(y[0]):
        return np.real(dy[1]) + 1j * np.imag(dy[0] * y[0])
    return dy[1]


def _slogdet_tangent(d_log_det, y):
    """(tangent of sign, tangent of logabsdet) from the tangent of log(det(a)): (0, it)
    for a real matrix; (1j * sign * Im(it), Re(it)) for a complex one. At a singular
    matrix (sign 0) log|det| is -inf and has no derivative, nor has a complex sign: their
    tangents raise where they are used (the real sign's stays 0)."""
    if np.all(np.not_equal(y[0], 0)):
        if _is_complex(y[0]):
            return (1j * y[0] * np.imag(d_log_det), np.real(d_log_det))
        return (np.zeros_like(y[0]), d_log_det)
    undefined = no_derivative("np.linalg.slogdet", "a", reason=_SINGULAR_LOG_DET)
    return (undefined if _is_complex(y[0]) else np.zeros_like(y[0]), undefined)


# ----- Determinants at singular matrices -----
# The derivative of det(a) is the cofactor matrix, det(a) * inv(a)^T where a is invertible.
# Where a is exactly singular (det 0: LU met a zero pivot, and inv would raise) it is still
# finite: the transposed adjugate, computed through the SVD a = U diag(s) Vh, as it is where
# a is nearly singular (det(a) * inv(a) would lose the digits its condition number counts).
# The adjugate of a product is the product of the adjugates in reverse order, that of
# diag(s) is diag(p) with p_i the product of the other singular values, and that of a
# unitary U is det(U) U^H: cofactors = c * conj(U) diag(p) conj(Vh), c = det(U) det(Vh).
# Its derivative along E is c * conj(U) D(X) conj(Vh), X = (U^H E Vh^H)^T, with
# D(X)_ij = -X_ij q_ij off the diagonal and D(X)_ii = sum over k != i of q_ik X_kk, q_ij the
# product of the singular values other than s_i and s_j (the derivative of adj(diag(s))
# along X, a polynomial, so exact at zeros of s as well). That map is its own transpose
# (the Hessian of det is symmetric), so one function gives the tangent and the adjoint.

_SINGULAR_LOG_DET = (
    "np.linalg.slogdet's logabsdet (and a complex sign) has no derivative at a singular matrix (its "
    "logabsdet is -inf there); differentiate at an invertible matrix, use its sign alone, or use "
    "np.linalg.det, whose derivative (the adjugate) is finite everywhere"
)


def cofactors(a, y):
    """The cofactor matrix of each square matrix of `a`, whose determinant the caller has
    computed, `y` (the rules of det pass their output): the derivative of det(a), exact at a
    singular matrix too (see the banner above). It reads `y` where `a` is well conditioned,
    as y * inv(a)^T, and its rules give the derivative in `a` and in `y` apart, so the two
    add up to the whole one where `y` is det(a)."""
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:  # exactly singular: LU met a zero pivot
        inverse = None
    if inverse is not None and _moderate(_squared_norms(a) * _squared_norms(inverse)):
        return np.asarray(y)[..., None, None] * inverse.swapaxes(-1, -2)  # the common case
    u, q, vh, c = _adjugate_parts(a)
    return c * (u * np.expand_dims(np.diagonal(q, axis1=-2, axis2=-1), -2)) @ vh


def cofactors_derivative(e, cofactor, a, y):
    """The derivative in `a` along `e` of `cofactor` = cofactors(a, y), `y` held, which is also
    its adjoint in `a` for an adjoint `e`: -(cofactor e^T cofactor) / y where `a` is well
    conditioned (y * inv(a)^T moves as -y inv(a)^T e^T inv(a)^T); through the SVD elsewhere,
    where cofactors does not read `y` and this is the whole derivative."""
    e = np.broadcast_to(e, np.shape(a))  # a zero tangent may come as the number 0.0
    if _well_conditioned(a, cofactor, y):
        return -(cofactor @ _transpose(e) @ cofactor) / np.expand_dims(y, (-2, -1))
    u, q, vh, c = _adjugate_parts(a)
    x = _transpose(_transpose(u) @ e @ _transpose(vh))
    apart = q * (1.0 - np.eye(np.shape(a)[-1]))  # q off the diagonal
    on_diagonal = np.sum(apart * np.expand_dims(np.diagonal(x, axis1=-2, axis2=-1), -2), axis=-1)
    d = np.eye(np.shape(a)[-1]) * np.expand_dims(on_diagonal, -1) - x * apart
    return c * (u @ d @ vh)


def cofactors_slope(cofactor, a, y):
    """The derivative of `cofactor` = cofactors(a, y) in `y`: inv(a)^T = cofactor / y where it
    reads `y` (`a` well conditioned), else 0."""
    if _well_conditioned(a, cofactor, y):
        return cofactor / np.expand_dims(y, (-2, -1))
    return np.zeros_like(cofactor)


def _well_conditioned(a, cofactor, y):
    """Whether each matrix of `a` (cofactors `cofactor`, determinant `y`) is far enough from
    singular that det(a) * inv(a) and a division by det(a) keep their digits (see `_moderate`;
    inv(a) = cofactor^T / y). A singular matrix is not."""
    if not np.all(np.not_equal(y, 0)):
        return False
    return _moderate(_squared_norms(a) * _squared_norms(cofactor / np.asarray(y)[..., None, None]))


def _squared_norms(m):
    """The squared Frobenius norm of each matrix of `m`."""
    if np.ndim(m) == 2:
        return np.vdot(m, m).real  # one call: the common case of one matrix
    return np.sum(np.abs(m) ** 2, axis=(-2, -1))


def _moderate(squared_condition):
    """Whether every condition number |a| |inv(a)| (given squared) is below 1e5, where
    det(a) * inv(a) keeps all but five digits. A NaN passes, and comes out as NaN."""
    return not (squared_condition >= 1e10).any()  # a method: no dispatch, as for one matrix


def _adjugate_parts(a):
    """(conj(U), q, conj(Vh), c) of the SVD a = U diag(s) Vh, as the banner above names them;
    c with two trailing axes, to scale each matrix."""
    u, s, vh = np.linalg.svd(a)
    c = np.expand_dims(np.linalg.det(u) * np.linalg.det(vh), (-2, -1))
    return np.conj(u), _other_products(differentiable_singular_values(s)), np.conj(vh), c


def differentiable_singular_values(s):
    """`s`, singular values the derivatives of det read through the SVD. A third derivative
    of det differentiates the SVD, which has no derivative where a singular value is 0 (it
    moves as |t| there, and its singular vectors lose their pairing, though the adjugate
    made of them is smooth): its rules raise where one is 0, or so small beside the largest
    (below 1e-9 of it) that the derivative would lose more than its last seven digits, at
    the user's line."""
    return s


def _refuse_zero_singular_values(s):
    if np.any(s <= 1e-9 * np.max(s, axis=-1, keepdims=True)):
        raise located(
            "a third derivative of np.linalg.det (or scipy.linalg.det) at a singular or nearly singular matrix "
            "(a singular value below 1e-9 of the largest) is not supported: ssad reads the adjugate there "
            "through the SVD, which has no derivative at a zero singular value; take at most second "
            "derivatives there, or differentiate at a better conditioned matrix",
        )


@adjoint(differentiable_singular_values)
def differentiable_singular_values_adjoint(dy, y, s):
    _refuse_zero_singular_values(s)
    return (dy,)


@tangent(differentiable_singular_values)
def differentiable_singular_values_tangent(tangents, y, s):
    _refuse_zero_singular_values(s)
    return tangents[0]


def _other_products(s):
    """q[..., i, j]: the product of the entries of s (last axis) other than s_i and s_j;
    q[..., i, i] of those other than s_i. No division, so exact where entries are 0."""
    t = np.where(np.eye(np.shape(s)[-1], dtype=bool), 1.0, np.expand_dims(s, -2))  # row i: s_i read as 1
    ones = np.ones_like(t[..., :1])
    before = np.cumprod(np.concatenate([ones, t[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(t, -1)[..., :-1]], axis=-1), axis=-1), -1)
    return before * after


@adjoint(cofactors)
def cofactors_adjoint(dy, y, a, det):
    return (cofactors_derivative(dy, y, a, det), np.sum(dy * cofactors_slope(y, a, det), axis=(-2, -1)))


@tangent(cofactors)
def cofactors_tangent(tangents, y, a, det):
    along_det = np.expand_dims(_tangent_of(tangents, 1), (-2, -1)) * cofactors_slope(y, a, det)
    return cofactors_derivative(tangents[0], y, a, det) + along_det


def invertible_part(a, sign, scale=None):
    """`a` for `slogdet`'s rules to invert: `a` itself when every matrix is invertible (sign
    not 0), else with each singular one replaced by the identity. Its log|det| is -inf and has
    no derivative, so the adjoint `scale` of log|det| must be 0 there (the sign alone used):
    a nonzero one raises at the user's line. (The tangent rule, `scale` None, refuses its
    log|det| term where it is used, see `_slogdet_tangent`.)"""
    singular = np.equal(sign, 0)
    if not np.any(singular):
        return a
    if scale is not None and np.any(singular & np.not_equal(scale, 0)):
        raise located(_SINGULAR_LOG_DET)
    return np.where(np.expand_dims(singular, (-2, -1)), np.eye(np.shape(a)[-1], dtype=a.dtype), a)


@adjoint(invertible_part)
def invertible_part_adjoint(dy, y, a, sign, scale=None):
    return (np.where(np.expand_dims(np.equal(sign, 0), (-2, -1)), 0.0, dy),)


@tangent(invertible_part)
def invertible_part_tangent(tangents, y, a, sign, scale=None):
    return np.where(np.expand_dims(np.equal(sign, 0), (-2, -1)), 0.0, tangents[0])


@adjoint(np.linalg.solve)
def solve_adjoint(dy, y, a, b):
    d_b = np.linalg.solve(_transpose(a), _as_columns(dy, a, b))
    d_a = -(d_b @ _transpose(_as_columns(y, a, b)))
    return (unbroadcast(d_a, a), unbroadcast(np.reshape(d_b, np.shape(y)), b))


@tangent(np.linalg.solve)
def solve_tangent(tangents, y, a, b):
    # d(a^-1 b) = a^-1 (db - da y), with vectors as columns; the reshape of db (not a
    # helper call) lets a zero tangent of b fold away
    rhs = np.reshape(tangents[1], np.shape(_as_columns(b, a, b))) - tangents[0] @ _as_columns(y, a, b)
    return np.reshape(np.linalg.solve(a, rhs), np.shape(y))


# ----- Factorizations -----


@adjoint(np.linalg.cholesky)
def cholesky_adjoint(dy, y, a, upper=False):
    low = _transpose(y) if upper else y
    d_low = _transpose(dy) if upper else dy
    return (_cholesky_adjoint(d_low, low),)


@tangent(np.linalg.cholesky)
def cholesky_tangent(tangents, y, a, upper=False):
    # for symmetric perturbations: a tangent is read as its symmetric part
    d_low = _cholesky_tangent(tangents[0], _transpose(y) if upper else y)
    return _transpose(d_low) if upper else d_low
