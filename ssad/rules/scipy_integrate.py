"""Rules: ODE solutions (`scipy.integrate.odeint`, `scipy.integrate.solve_ivp`) by the continuous adjoint method.

Registered once SciPy is imported (see `registry.Registry.defer`).

The forward call runs SciPy's solver unchanged. For outputs `y_i` at times `t_i`
(`odeint(func, y0, t, args)`: the rows of its result, `y_0 = y0` at `t[0]`;
`solve_ivp(fun, (t0, tf), y0, t_eval=t, args=args)`: the columns of `sol.y`, the
solution starting from `y0` at `t0`), the adjoint rule integrates the adjoint system
backwards from the last output time to the start with the same solver, one output
interval at a time::

    y' = f(y, s, *args)        (restarted at each y_i the forward call returned)
    a' = -a . df/dy            (a jumps by dy_i at each t_i)
    g' = -a . df/dargs         (g(start) is the adjoint of args)

The products `a . df/dy` and `a . df/dargs` are vector-Jacobian products of the
user's function made by ssad itself (`runtime.dynamic.call_forward`): `func` is a
`def` or a `lambda` whose source ssad reads, a closure made inside the differentiated
function, a `functools.partial`, a bound method, a callable object, or a function with
a rule. What the function value holds (a closure's captured values, a partial's bound
arguments, a method's object) gets its gradient the same way, as a further block of
the augmented state. The output times get ``d t_i = dy_i . f(y_i, t_i)`` and the start
time ``-a(start) . f(y0, start)``; with odeint the start is `t[0]` itself, so its two
terms make ``d t[0] = -a . f(y0, t[0])`` with `a` taken before its jump `dy_0`.

The tangent rule integrates the forward sensitivities along with the state,
``s' = df/dy s + df/dargs t_args`` (tangents of `func` from ssad's generated jvp,
`runtime.dynamic.call_jvp`), from ``s(start) = t_y0 - f(y0, start) t_start`` and gives
``s(t_i) + f(y_i, t_i) t_t_i``.

`solve_ivp` returns an `OdeResult`, a dict whose keys read as attributes. Its tangent
is an `OdeResult` with the tangents of `t` and `y` (zeros elsewhere), so `sol.y` and
`sol["y"]` both work in forward mode; its adjoint `dy` is read by key or by attribute
(`dy["y"]`, `dy.y`; a missing entry is zero). `sol.t` is `t_eval`: its adjoint goes to
`t_eval`. In reverse mode `sol.y` and `sol["y"]` are the same read: the adjoint of an
attribute of a dict is its entry (`runtime.structure.add_attr`).

Conventions
-----------
- Tolerances: the backward (and sensitivity) solves use ``rtol = atol = 1e-10``, or the
  call's own `rtol`/`atol` where they are tighter (the smallest entry of an array), so a
  gradient is as accurate as a solution computed with those tolerances. odeint's
  `mxstep` is raised to 100000 and its `hmax`/`hmin` are kept; solve_ivp's `method`,
  `max_step` and `min_step` are kept (its `first_step` is not: the intervals differ).
- The gradient is that of the exact solution, approximated by two solves: the adjoint
  and the tangent agree with each other and with finite differences to about the
  solver tolerance, not to rounding (they are not transposes of one discrete scheme).
- `solve_ivp`'s output at a `t_eval[0]` equal to `t0` is `y0`; formally it still depends
  on `t0` and `t_eval[0]` separately (their gradients cancel when both move together).
  `t_span[1]` gets a zero gradient: the outputs at `t_eval` do not depend on it.
- Refused with an SsadError saying what to pass: `odeint(..., full_output=True)`,
  `solve_ivp` without `t_eval`, with `events` or with `dense_output=True`, a solve that
  failed (`sol.status == -1`), and complex states.
- Second derivatives (a Hessian, the gradient of a gradient) through an ODE solution
  are refused with an SsadError: take finite differences of `ssad.grad` of the function.
- Every call densifies: the solvers take NumPy arrays.
"""

import functools
import inspect
import numbers

import numpy as np
import scipy.integrate
from scipy.integrate._ivp.ivp import OdeResult

from ..errors import SsadError
from ..registry import adjoint, tangent
from ..runtime.dynamic import call_forward, call_jvp
from ..runtime.structure import fields_of, is_namedtuple, is_record, rebuild, zeros_like_value

_TOLERANCE = 1e-10  # rtol and atol of the backward and sensitivity solves
_MXSTEP = 100000  # odeint's bound on the steps of one output interval, for the augmented system


# ----- The augmented state: float leaves of nested values, flattened into one vector -----
#
# A value's adjoint has the value's structure (tuples, lists, dicts, objects with
# attributes); a function value's adjoint is that of what it holds: a dict of a
# closure's captured values, (bound arguments, {bound keywords}) of a partial, the
# adjoint of a bound method's object or of a callable object itself.


def _is_float_leaf(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and np.asarray(x).dtype.kind == "f"


def _is_closure(x):
    return hasattr(x, "template") and isinstance(getattr(x, "captured", None), dict)


def _children(like):
    """[(key, child)] of a structured value, or None for a leaf; `key` reads the child of its adjoint."""
    if is_namedtuple(like) or isinstance(like, (tuple, list)):
        return list(enumerate(like))
    if isinstance(like, dict):
        return list(like.items())
    if _is_closure(like):
        return [(key, value) for key, value in like.captured.items() if value is not like]
    if isinstance(like, functools.partial):
        return [(0, tuple(like.args)), (1, dict(like.keywords))]
    if inspect.ismethod(like):
        return None  # the method's adjoint is its object's: see `_function_like`
    if is_record(like):
        return [(name, getattr(like, name)) for name in fields_of(like)]
    return None


def _part(value, key):
    """The child `key` of the adjoint `value`; None (zero) or a scalar zero stands for all of them."""
    if value is None or isinstance(value, numbers.Number):
        return value
    if isinstance(value, (tuple, list)):
        return value[key]
    if isinstance(value, dict):
        return value.get(key)
    return getattr(value, key, None)


def _flatten(value, like):
    """The float leaves of the adjoint `value`, laid out like those of `like`, as one 1-D array."""
    parts = []
    _collect(value, like, parts)
    return np.concatenate(parts) if parts else np.zeros(0)


def _collect(value, like, parts):
    if _is_float_leaf(like):
        size = int(np.prod(np.shape(like)))
        if value is None:
            parts.append(np.zeros(size))
        else:
            parts.append(np.broadcast_to(np.asarray(value, dtype=np.float64), np.shape(like)).ravel())
        return
    for key, child in _children(like) or ():
        _collect(_part(value, key), child, parts)


def _size(like):
    return _flatten(None, like).size


def _unflatten(vector, like):
    """The adjoint with the structure of `like` whose float leaves are read from `vector`;
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
    children = _children(like)
    if children is None:
        return None, start
    items = {}
    for key, child in children:
        items[key], start = _rebuild(vector, child, start)
    if is_namedtuple(like):
        return type(like)(*items.values()), start
    if isinstance(like, (tuple, list)):
        return type(like)(items.values()), start
    if isinstance(like, functools.partial):
        return tuple(items.values()), start
    if isinstance(like, dict) or _is_closure(like):
        return items, start
    return rebuild(like, items), start


def _function_like(func):
    """A value whose structure is that of `func`'s adjoint, or None when it carries none."""
    if inspect.ismethod(func):
        func = func.__self__
    if _is_closure(func) or isinstance(func, functools.partial) or is_record(func):
        return func if _size(func) else None
    return None


def _vector(value, n):
    """A function value (a list, a tuple, an array) as a flat float array of length n."""
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)).ravel()


def _like_value(d, value):
    """The adjoint vector `d` shaped like the function value `value` (a list stays a list)."""
    if isinstance(value, (list, tuple)):
        return type(value)(float(u) for u in np.ravel(d))
    return np.reshape(d, np.shape(value))


def _like_input(d, value):
    """The adjoint vector `d` of the state as the adjoint of the input `value` (y0)."""
    if np.ndim(value) == 0:
        return float(d[0])
    return _like_value(d, value)


# ----- Calling the user's function in either convention -----


def _call_args(y, s, args, time_first):
    return (s, y) + tuple(args) if time_first else (y, s) + tuple(args)


def _slope(func, y, s, args, time_first):
    """f(y, s) as a flat array."""
    return _vector(func(*_call_args(y, s, args, time_first)), np.size(y))


def _adjoint_system(func, args, n, time_first, d_func_like):
    """The right-hand side, in odeint's convention, of [y, a, g_args, g_func] backwards in time."""

    def rhs(z, s):
        y, a = z[:n], z[n : 2 * n]
        value, pullback = call_forward(func, *_call_args(y, s, args, time_first))
        adjoints = pullback(_like_value(a, value))
        positional = adjoints[1:-1]
        d_y = positional[1] if time_first else positional[0]
        parts = [_vector(value, n), -_flatten(d_y, y), -_flatten(tuple(positional[2:]), args)]
        if d_func_like is not None:
            parts.append(-_flatten(adjoints[0], d_func_like))
        return np.concatenate(parts)

    return rhs


def _sensitivity_system(func, t_func, args, t_args, n, time_first):
    """The right-hand side, in odeint's convention, of [y, s]: the state and its tangent."""
    t_args = tuple(_part(t_args, k) for k in range(len(args)))

    def rhs(z, s):
        y, t_y = z[:n], z[n:]
        primals = _call_args(y, s, args, time_first)
        tangents = _call_args(t_y, None, t_args, time_first)
        value, t_value = call_jvp(func, t_func, primals, tangents)
        return np.concatenate([_vector(value, n), _vector(0.0 if t_value is None else t_value, n)])

    return rhs


def _tolerance(given):
    return _TOLERANCE if given is None else min(float(np.min(given)), _TOLERANCE)


# ----- The two sweeps, shared by odeint and solve_ivp -----
#
# `integrate(rhs, z, start, stop)` solves z' = rhs(z, s) from `start` to `stop` and
# returns z(stop); `integrate_at(rhs, z, start, times)` returns z at each of `times`
# (rows).


def _backward(integrate, func, args, time_first, outputs, dy, start, y0):
    """(d_outputs_times, d_start, d_y0 as a vector, d_args, d_func) for outputs y_i = outputs[i]
    at times[i] of the solution from y0 at `start`; `outputs` is (times, rows)."""
    times, ys = outputs
    n = ys.shape[1]
    d_func_like = _function_like(func)
    rhs = _adjoint_system(func, args, n, time_first, d_func_like)
    size_args = _size(args)
    a = np.zeros(n)
    g = np.zeros(size_args + (_size(d_func_like) if d_func_like is not None else 0))
    d_times = np.zeros(len(times))
    for i in range(len(times) - 1, -1, -1):
        d_times[i] = dy[i] @ _slope(func, ys[i], times[i], args, time_first)
        a = a + dy[i]
        previous, state = (times[i - 1], ys[i - 1]) if i > 0 else (start, y0)
        if previous != times[i]:
            z = integrate(rhs, np.concatenate([ys[i], a, g]), times[i], previous)
            a, g = z[n : 2 * n], z[2 * n :]
    d_start = -(a @ _slope(func, y0, start, args, time_first))
    d_args = _unflatten(g[:size_args], args)
    d_func = _unflatten(g[size_args:], d_func_like) if d_func_like is not None else None
    return d_times, d_start, a, d_args, d_func


def _forward(integrate_at, func, t_func, args, t_args, time_first, outputs, start, y0, t_y0, t_start, t_times):
    """The tangents of the outputs (rows), for the tangents of y0, the start time, the output times,
    args and the function value."""
    times, ys = outputs
    n = ys.shape[1]
    first = _vector(0.0 if t_y0 is None else t_y0, n) - _slope(func, y0, start, args, time_first) * t_start
    rhs = _sensitivity_system(func, t_func, args, t_args, n, time_first)
    t_ys = integrate_at(rhs, np.concatenate([y0, first]), start, times)[:, n:]
    for i in range(len(times)):
        t_ys[i] += _slope(func, ys[i], times[i], args, time_first) * t_times[i]
    return t_ys


def _time_tangents(t_times, times):
    if t_times is None:
        return np.zeros(times.shape)
    return np.broadcast_to(np.asarray(t_times, dtype=np.float64), times.shape)


def _refuse_complex(y0, name):
    if np.iscomplexobj(y0):
        raise SsadError(
            f"the derivative of scipy.integrate.{name} with a complex state is not supported; "
            "integrate its real and imaginary parts as a real state of twice the size"
        )


# ----- odeint -----


def _odeint_solver(rtol, atol, mxstep, hmax, hmin):
    options = dict(rtol=_tolerance(rtol), atol=_tolerance(atol), mxstep=max(mxstep, _MXSTEP), hmax=hmax, hmin=hmin)

    def integrate(rhs, z, start, stop):
        return scipy.integrate.odeint(rhs, z, np.array([start, stop]), **options)[-1]

    def integrate_at(rhs, z, start, times):
        return scipy.integrate.odeint(rhs, z, times, **options)  # odeint starts at times[0] == start

    return integrate, integrate_at


@adjoint(scipy.integrate.odeint)
def odeint_adjoint(
    dy, y, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    dy = np.reshape(np.asarray(dy, dtype=np.float64), y.shape)
    integrate, _ = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    d_times, d_start, d_y0, d_args, d_func = _backward(
        integrate, func, tuple(args), tfirst, (times, y), dy, times[0], y[0]
    )
    d_times[0] += d_start
    return (d_func, _like_input(d_y0, y0), _shaped_like(d_times, t), d_args)


@tangent(scipy.integrate.odeint)
def odeint_tangent(
    tangents, y, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    t_func, t_y0, t_times = tangents[0], tangents[1], _time_tangents(tangents[2], times)
    t_args = tangents[3] if len(tangents) > 3 else None
    _, integrate_at = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    return _forward(
        integrate_at, func, t_func, tuple(args), t_args, tfirst, (times, y), times[0], y[0], t_y0, t_times[0],
        t_times,
    )


def _refuse_odeint_options(full_output, y0):
    if full_output:
        raise SsadError(
            "the derivative of odeint(..., full_output=True) is not supported; call odeint without "
            "full_output in the function you differentiate"
        )
    _refuse_complex(y0, "odeint")


def _shaped_like(d, x):
    if np.ndim(x) == 0:
        return float(d[0])
    if isinstance(x, (list, tuple)):
        return type(x)(float(u) for u in d)
    return np.reshape(d, np.shape(x))


# ----- solve_ivp -----


def _ivp_solver(method, rtol, atol, max_step, min_step):
    options = dict(method=method, rtol=_tolerance(rtol), atol=_tolerance(atol))
    if max_step is not None:
        options["max_step"] = max_step
    if min_step:
        options["min_step"] = min_step

    def integrate(rhs, z, start, stop):
        return _solved(scipy.integrate.solve_ivp(lambda s, w: rhs(w, s), (start, stop), z, **options)).y[:, -1]

    def integrate_at(rhs, z, start, times):
        stop = times[-1]
        solution = scipy.integrate.solve_ivp(lambda s, w: rhs(w, s), (start, stop), z, t_eval=times, **options)
        return _solved(solution).y.T

    return integrate, integrate_at


def _solved(solution):
    if solution.status < 0:
        raise SsadError(f"the adjoint or sensitivity solve of solve_ivp failed: {solution.message}")
    return solution


def _field(d, name):
    """The entry `name` of an OdeResult's adjoint (a dict, an OdeResult or an object); None for zero."""
    if d is None:
        return None
    if isinstance(d, dict):
        return d.get(name)
    return getattr(d, name, None)


def _refuse_ivp_options(sol, t_eval, dense_output, events, y0):
    if t_eval is None:
        raise SsadError(
            "the derivative of solve_ivp needs the output times: pass t_eval=... (the times at which "
            "the solution is read) in the function you differentiate"
        )
    if events is not None or dense_output:
        raise SsadError(
            "the derivative of solve_ivp with events or dense_output=True is not supported; "
            "call it with t_eval and without events and dense_output in the function you differentiate"
        )
    if sol.status < 0:
        raise SsadError(f"solve_ivp failed ({sol.message}); its solution has no derivative")
    _refuse_complex(y0, "solve_ivp")


def _ivp_args(args):
    return () if args is None else tuple(args)


def _args_like(d_args, args):
    """Adjoints of the items of `args` as the adjoint of `args` (a tuple, a list or an array)."""
    if args is None:
        return None
    if isinstance(args, np.ndarray):
        return np.reshape(np.array([0.0 if d is None else d for d in d_args], dtype=np.float64), args.shape)
    return type(args)(d_args) if isinstance(args, list) else d_args


def _span_like(d_start, t_span):
    """(d t0, 0.0) shaped like `t_span`: the outputs at t_eval do not depend on t_span[1]."""
    d = np.array([d_start, 0.0])
    return _shaped_like(d, t_span)


@adjoint(scipy.integrate.solve_ivp)
def solve_ivp_adjoint(
    dy, y, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None, vectorized=False,
    args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None, jac_sparsity=None,
    lband=None, uband=None,
):
    _refuse_ivp_options(y, t_eval, dense_output, events, y0)
    times = np.asarray(y.t, dtype=np.float64)
    ys = y.y.T
    d_ys = _field(dy, "y")
    d_ys = np.zeros(ys.shape) if d_ys is None else np.broadcast_to(np.asarray(d_ys, dtype=np.float64), y.y.shape).T
    integrate, _ = _ivp_solver(method, rtol, atol, max_step, min_step)
    start = float(t_span[0])
    d_times, d_start, d_y0, d_args, d_func = _backward(
        integrate, fun, _ivp_args(args), True, (times, ys), d_ys, start, np.asarray(y0, dtype=np.float64)
    )
    d_t = _field(dy, "t")
    if d_t is not None:
        d_times = d_times + np.broadcast_to(np.asarray(d_t, dtype=np.float64), times.shape)
    return (
        d_func, _span_like(d_start, t_span), _like_input(d_y0, y0), None, _shaped_like(d_times, t_eval),
        None, None, None, _args_like(d_args, args),
    )


@tangent(scipy.integrate.solve_ivp)
def solve_ivp_tangent(
    tangents, y, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None, vectorized=False,
    args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None, jac_sparsity=None,
    lband=None, uband=None,
):
    _refuse_ivp_options(y, t_eval, dense_output, events, y0)
    times = np.asarray(y.t, dtype=np.float64)
    tangents = tuple(tangents) + (None,) * (9 - len(tangents))
    t_fun, t_span_tangent, t_y0, t_times, t_args = tangents[0], tangents[1], tangents[2], tangents[4], tangents[8]
    t_start = 0.0 if t_span_tangent is None else float(np.ravel(np.asarray(t_span_tangent, dtype=np.float64))[0])
    t_times = _time_tangents(t_times, times)
    _, integrate_at = _ivp_solver(method, rtol, atol, max_step, min_step)
    t_ys = _forward(
        integrate_at, fun, t_fun, _ivp_args(args), t_args, True, (times, y.y.T), float(t_span[0]),
        np.asarray(y0, dtype=np.float64), t_y0, t_start, t_times,
    )
    result = OdeResult(zeros_like_value(dict(y)))
    result.t = np.array(t_times, dtype=np.float64)
    result.y = t_ys.T.copy()
    return result


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


@adjoint(solve_ivp_adjoint)
@tangent(solve_ivp_adjoint)
@adjoint(solve_ivp_tangent)
@tangent(solve_ivp_tangent)
def _solve_ivp_second_order(*args, **kwargs):
    raise SsadError(_SECOND_ORDER.format(name="solve_ivp"))
