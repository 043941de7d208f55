"""Rules: ODE solutions (`scipy.integrate.odeint`, `scipy.integrate.solve_ivp`) by the continuous adjoint method.

Registered once SciPy is imported (see `registry.Registry.defer`).

The forward call runs SciPy's solver unchanged. For `y = odeint(func, y0, t, args)`,
`y[i]` the state at `t[i]`, the adjoint rule integrates the adjoint system backwards
from `t[-1]` to `t[0]` with the same solver, one output interval at a time::

    y' = f(y, s, *args)        (restarted at each y[i] the forward call returned)
    a' = -a . df/dy            (a jumps by dy[i] at each t[i])
    g' = -a . df/dargs         (g(t[0]) is the adjoint of args)

The products `a . df/dy` and `a . df/dargs` are vector-Jacobian products of the
user's function made by ssad itself (its generated vjp: `func` is a `def` or a
`lambda` whose source ssad reads, a closure made inside the differentiated function,
a `functools.partial`, or a function with a rule). A closure's captured values get
their gradient the same way, as a third block of the augmented state. The output
times get ``d t[i] = dy[i] . f(y[i], t[i])`` for i >= 1 and ``d t[0] = -a(t[0]) . f(y0, t[0])``
(`a` before its jump dy[0]; `y[0]` is `y0` whatever `t[0]` is).

The tangent rule integrates the forward sensitivities along with the state,
``s' = df/dy s + df/dargs t_args`` (tangents of `func` from ssad's generated jvp),
``s(t[0]) = t_y0 - f(y0, t[0]) t_t[0]``, and gives ``s(t[i]) + f(y[i], t[i]) t_t[i]``.

Conventions:

- Tolerances: the backward (and sensitivity) solves use ``rtol = atol = 1e-10``, or the
  call's own `rtol`/`atol` where they are tighter, so a gradient is as accurate as a
  solution computed with those tolerances; `mxstep` is raised to 100000 (odeint) and
  the step bounds `hmax`/`hmin` and `tcrit` of the call are kept.
- The gradient is that of the exact solution, approximated by two solves; the adjoint
  and the tangent agree with each other and with finite differences to about the
  solver tolerance, not to rounding (they are not the transpose of one discrete scheme).
- `odeint(..., full_output=True)`, `solve_ivp` with `events` or `dense_output=True` and
  `solve_ivp` without `t_eval` are refused with an SsadError saying what to pass.
- Second derivatives (a Hessian, the gradient of a gradient) through an ODE solution
  are refused with an SsadError: take finite differences of `ssad.grad` of the function.
"""

import numbers

import numpy as np
import scipy.integrate

from ..errors import SsadError
from ..registry import adjoint, tangent
from ..runtime.dynamic import call_forward, call_jvp
from ..runtime.structure import zeros_like_value

_TOLERANCE = 1e-10  # rtol and atol of the backward and sensitivity solves
_MXSTEP = 100000  # odeint's bound on the steps of one output interval, for the augmented system


# ----- The augmented state: float leaves of nested values, flattened into one vector -----


def _is_float_leaf(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and np.asarray(x).dtype.kind == "f"


def _flatten(value, like):
    """The float leaves of `value`, laid out like those of `like`, as one 1-D array.

    `value` may be None (zero) or a scalar zero standing for a whole container."""
    parts = []
    _collect(value, like, parts)
    return np.concatenate(parts) if parts else np.zeros(0)


def _collect(value, like, parts):
    if _is_float_leaf(like):
        shape = np.shape(like)
        if value is None:
            parts.append(np.zeros(int(np.prod(shape))))
        else:
            parts.append(np.broadcast_to(np.asarray(value, dtype=np.float64), shape).ravel())
        return
    if isinstance(like, (tuple, list)):
        for position, item in enumerate(like):
            _collect(_part(value, position), item, parts)
    elif isinstance(like, dict):
        for key, item in like.items():
            _collect(_part(value, key), item, parts)


def _part(value, key):
    if isinstance(value, (tuple, list)):
        return value[key]
    if isinstance(value, dict):
        return value.get(key)
    return value  # None or a scalar zero: zero for every part


def _size(like):
    return _flatten(None, like).size


def _unflatten(vector, like):
    """The value with the structure of `like` whose float leaves are read from `vector`;
    None for a leaf that carries no gradient (a string, an integer, a function)."""
    value, _ = _rebuild(vector, like, 0)
    return value


def _rebuild(vector, like, start):
    if _is_float_leaf(like):
        count = int(np.prod(np.shape(like)))
        part = vector[start : start + count]
        if np.ndim(like) == 0:
            return float(part[0]), start + count
        return part.reshape(np.shape(like)).copy(), start + count
    if isinstance(like, (tuple, list)):
        items = []
        for item in like:
            rebuilt, start = _rebuild(vector, item, start)
            items.append(rebuilt)
        return type(like)(items), start
    if isinstance(like, dict):
        items = {}
        for key, item in like.items():
            items[key], start = _rebuild(vector, item, start)
        return items, start
    return None, start


def _function_like(func):
    """The structure of `func`'s adjoint: a closure's captured values (a dict), else None."""
    captured = zeros_like_value(func) if hasattr(func, "template") else None
    return captured if isinstance(captured, dict) else None


def _vector(value, shape):
    """A function value (a list, a tuple, an array) as a flat float array of `shape`'s size."""
    return np.broadcast_to(np.asarray(value, dtype=np.float64), shape).ravel()


def _like_value(d, value):
    """The adjoint vector `d` shaped like the function value `value` (a list stays a list)."""
    if isinstance(value, (list, tuple)):
        return type(value)(float(u) for u in np.ravel(d))
    return np.reshape(d, np.shape(value))


# ----- Calling the user's function in either convention -----


def _call_args(y, s, args, time_first):
    return (s, y) + tuple(args) if time_first else (y, s) + tuple(args)


def _state_adjoints(adjoints, time_first):
    """(the state's adjoint, the arguments' adjoints) from a pullback's adjoints."""
    positional = adjoints[1:-1]
    return (positional[1] if time_first else positional[0]), positional[2:]


def _adjoint_system(func, args, n, time_first, d_func_like):
    """The right-hand side, in odeint's convention, of [y, a, g_args, g_func] backwards in time."""
    args = tuple(args)
    shape = (n,)
    split_args = 2 * n + _size(args)

    def rhs(z, s):
        y, a = z[:n], z[n : 2 * n]
        value, pullback = call_forward(func, *_call_args(y, s, args, time_first))
        adjoints = pullback(_like_value(a, value))
        d_y, d_args = _state_adjoints(adjoints, time_first)
        parts = [_vector(value, shape), -_flatten(d_y, y), -_flatten(tuple(d_args), args)]
        if d_func_like is not None:
            parts.append(-_flatten(adjoints[0], d_func_like))
        return np.concatenate(parts)

    return rhs, split_args


def _sensitivity_system(func, t_func, args, t_args, n, time_first):
    """The right-hand side, in odeint's convention, of [y, s]: the state and its tangent."""
    args = tuple(args)
    t_args = tuple(_part(t_args, k) for k in range(len(args)))
    shape = (n,)

    def rhs(z, s):
        y, t_y = z[:n], z[n:]
        primals = _call_args(y, s, args, time_first)
        tangents = _call_args(t_y, None, t_args, time_first)
        value, t_value = call_jvp(func, t_func, primals, tangents)
        return np.concatenate([_vector(value, shape), _vector(0.0 if t_value is None else t_value, shape)])

    return rhs


def _slope(func, y, s, args, time_first):
    """f(y, s) as a flat array."""
    return _vector(func(*_call_args(y, s, args, time_first)), np.shape(y))


def _tolerance(given):
    return _TOLERANCE if given is None else min(float(np.min(given)), _TOLERANCE)


# ----- odeint -----


@adjoint(scipy.integrate.odeint)
def odeint_adjoint(
    dy, y, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    if full_output:
        raise SsadError(_FULL_OUTPUT)
    args = _as_tuple(args)
    times = np.asarray(t, dtype=np.float64)
    n = y.shape[1]
    dy = np.reshape(np.asarray(dy, dtype=np.float64), y.shape)
    d_func_like = _function_like(func)
    rhs, split = _adjoint_system(func, args, n, tfirst, d_func_like)
    tolerances = dict(rtol=_tolerance(rtol), atol=_tolerance(atol), mxstep=max(mxstep, _MXSTEP), hmax=hmax, hmin=hmin)
    d_times = np.zeros(times.shape)
    a = dy[-1].copy()
    g = np.zeros(split - 2 * n + (_size(d_func_like) if d_func_like is not None else 0))
    for i in range(len(times) - 1, 0, -1):
        d_times[i] = dy[i] @ _slope(func, y[i], times[i], args, tfirst)
        z = scipy.integrate.odeint(rhs, np.concatenate([y[i], a, g]), times[i - 1 : i + 1][::-1], **tolerances)[-1]
        a, g = z[n : 2 * n], z[2 * n :]
        if i == 1:
            d_times[0] = -(a @ _slope(func, y[0], times[0], args, tfirst))
        a = a + dy[i - 1]
    if len(times) == 1:
        a = dy[0].copy()
    d_args = _unflatten(g[: split - 2 * n], args)
    d_func = _unflatten(g[split - 2 * n :], d_func_like) if d_func_like is not None else None
    d_y0 = np.reshape(a, np.shape(y0)) if np.ndim(y0) else float(np.sum(a))
    return (d_func, d_y0, _shaped_like(d_times, t), d_args)


@tangent(scipy.integrate.odeint)
def odeint_tangent(
    tangents, y, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    if full_output:
        raise SsadError(_FULL_OUTPUT)
    args = _as_tuple(args)
    times = np.asarray(t, dtype=np.float64)
    n = y.shape[1]
    t_func, t_y0, t_times = tangents[0], tangents[1], tangents[2]
    t_args = tangents[3] if len(tangents) > 3 else None
    t_times = np.zeros(times.shape) if t_times is None else np.broadcast_to(np.asarray(t_times, float), times.shape)
    start = _vector(0.0 if t_y0 is None else t_y0, (n,)) - _slope(func, y[0], times[0], args, tfirst) * t_times[0]
    rhs = _sensitivity_system(func, t_func, args, t_args, n, tfirst)
    tolerances = dict(rtol=_tolerance(rtol), atol=_tolerance(atol), mxstep=max(mxstep, _MXSTEP), hmax=hmax, hmin=hmin)
    z = scipy.integrate.odeint(rhs, np.concatenate([y[0], start]), times, **tolerances)
    t_y = z[:, n:].copy()
    for i in range(len(times)):
        t_y[i] += _slope(func, y[i], times[i], args, tfirst) * t_times[i]
    return t_y


_FULL_OUTPUT = (
    "the derivative of odeint(..., full_output=True) is not supported; call odeint without full_output "
    "in the function you differentiate"
)


def _as_tuple(args):
    if args is None:
        return ()
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def _shaped_like(d, x):
    return float(d[0]) if np.ndim(x) == 0 else np.reshape(d, np.shape(x))


# ----- Second derivatives: refused -----

_SECOND_ORDER = (
    "a second derivative through an ODE solution (scipy.integrate.{name}) is not supported: the gradient "
    "of an ODE solution is itself an ODE solution whose right-hand side is ssad's own vjp. Take central "
    "finite differences of ssad.grad of your function instead (e.g. (grad(f)(p + h e_i) - grad(f)(p - h e_i)) "
    "/ (2 h) with the solver's rtol/atol tight, about 1e-10)"
)


@adjoint(odeint_adjoint)
@tangent(odeint_adjoint)
@adjoint(odeint_tangent)
@tangent(odeint_tangent)
def _odeint_second_order(*args, **kwargs):
    raise SsadError(_SECOND_ORDER.format(name="odeint"))
