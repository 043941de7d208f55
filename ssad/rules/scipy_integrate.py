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

Second derivatives: the rules are themselves solutions of ODEs, and each has its own
tangent and adjoint rule, which solve the ODE of that derivative (see the banners
"Second derivatives" below): forward over reverse (`ssad.hessian(f)`,
`ssad.jvp(ssad.grad(f), ...)`) is the tangent of the adjoint rule, reverse over reverse
(`ssad.grad(ssad.grad(f))`) its adjoint, forward over forward (`ssad.jvp` of a function
that calls `ssad.jvp(f, ...)`) the tangent of the tangent rule, and reverse over forward
its adjoint. Their right-hand sides need second-order products of the user's function:
the tangent of ssad's pullback of it (`runtime.pullbacks.pullback_jvp`, forward over
reverse), which every function value ssad differentiates once can give.

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
- Second derivatives work in every argument (`y0`, `args`, the times, what the function
  value holds) and in both modes over both: each is the exact second derivative of the
  solution, approximated by solves of the augmented systems at the same tolerances, so
  it agrees with differences of `ssad.grad` to about the solver tolerance. The rules
  read `y`, the solution they are given, as the states they restart from; their own
  derivatives take its tangent or give it an adjoint, as an argument like any other.
  Forward over forward costs one product per state component at each step (the second
  derivative of `f` along two directions is a vector); the other three cost one.
- Third derivatives are refused with an SsadError: take differences of a second one.
- Every call densifies: the solvers take NumPy arrays.
"""

import functools
import inspect
import numbers

import numpy as np
import scipy.integrate
from scipy.integrate._ivp.ivp import OdeResult

from ..runtime.locations import located
from ..registry import adjoint, tangent
from ..runtime.dynamic import call_forward, call_jvp
from ..runtime.pullbacks import pullback_jvp
from ..runtime.structure import fields_of, is_namedtuple, is_record, rebuild, zeros_like_value

_TOLERANCE = 1e-10  # rtol and atol of the backward and sensitivity solves
_MXSTEP = 100000  # odeint's bound on the steps of one output interval, for the augmented system


# ----- The augmented state: float leaves of nested values, flattened into one vector -----
#
# A value's adjoint has the value's structure (tuples, lists, dicts, objects with
# attributes); a function value's adjoint is that of what it holds: a dict of a
# closure's captured values, (bound arguments, {bound keywords}, function) of a partial, the
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
        return [(key, value) for key, value in like.captured.items()
                if getattr(value, "captured", None) is not like.captured]  # not itself, nor one sharing its values
    if isinstance(like, functools.partial):
        return [(0, tuple(like.args)), (1, dict(like.keywords)), (2, like.func)]
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
        if value is None:
            parts.append(np.zeros(np.size(like)))
        elif np.shape(value) == np.shape(like):
            parts.append(np.ravel(np.asarray(value, dtype=np.float64)))
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


def _slope(rhs, y, s):
    """f(y, s) as a flat array."""
    return _vector(rhs.func(*_call_args(y, s, rhs.args, rhs.time_first)), rhs.n)


class _RightHandSide:
    """The user's function with its extra `args`, in either convention, and its first and
    second derivatives made by ssad, on flat float vectors.

    Assumes the state has `n` components and `args` is a tuple. theta, the parameters, are the
    float leaves of `args` then of what the function value holds (`_function_like`), as one
    flat vector of `size`; their tangents are passed as the pair (of args, of the function
    value), structured like those values (`structured`)."""

    def __init__(self, func, args, time_first, n):
        self.func, self.args, self.time_first, self.n = func, tuple(args), time_first, n
        self.func_like = _function_like(func)
        self.size_args = _size(self.args)
        self.size = self.size_args + (_size(self.func_like) if self.func_like is not None else 0)

    def _arguments(self, y, s, args):
        return _call_args(y, s, args, self.time_first)

    def structured(self, theta):
        """(args', the function value's) structured like them, from a flat vector theta."""
        t_args = _unflatten(theta[: self.size_args], self.args)
        t_func = _unflatten(theta[self.size_args :], self.func_like) if self.func_like is not None else None
        return t_args, t_func

    def flat(self, d_args, d_func):
        """The flat theta vector of the adjoints (or tangents) of args and of the function value."""
        parts = [_flatten(d_args, self.args)]
        if self.func_like is not None:
            parts.append(_flatten(d_func, self.func_like))
        return np.concatenate(parts)

    def _split(self, adjoints):
        """(d_y, d_s, d_theta) from a pullback's adjoints of a call (see `call_forward`)."""
        positional = adjoints[1:-1]
        d_s, d_y = positional[:2] if self.time_first else positional[1::-1]
        d_s = 0.0 if d_s is None else float(np.sum(d_s))
        return _flatten(d_y, np.zeros(self.n)), d_s, self.flat(tuple(positional[2:]), adjoints[0])

    def vjp(self, y, s, a):
        """(f(y, s), a . df/dy, a . df/ds, a . df/dtheta)."""
        value, pullback = call_forward(self.func, *self._arguments(y, s, self.args))
        return (_vector(value, self.n),) + self._split(pullback(_like_value(a, value)))

    def jvp(self, y, s, t_y, t_s, t_args, t_func):
        """(the value f returned, f(y, s) and its tangent along t_y, t_s and theta's (t_args, t_func))."""
        primals = self._arguments(y, s, self.args)
        tangents = self._arguments(t_y, t_s, _items(t_args, len(self.args)))
        value, t_value = call_jvp(self.func, t_func, primals, tangents)
        return value, _vector(value, self.n), _vector(0.0 if t_value is None else t_value, self.n)

    def vjp_jvp(self, value, y, s, a, t_a, t_y, t_args, t_func):
        """(a . df/dy, a . df/dtheta) and their tangents along t_a, t_y and theta's; `value` is f(y, s)."""
        adjoints, t_adjoints = pullback_jvp(
            self.func, t_func, _like_value(a, value), _like_value(t_a, value), self._arguments(y, s, self.args),
            self._arguments(t_y, None, _items(t_args, len(self.args))), {}, {},
        )
        d_y, _, d_theta = self._split(adjoints)
        t_d_y, _, t_d_theta = self._split(t_adjoints)
        return d_y, d_theta, t_d_y, t_d_theta


def _items(t_args, count):
    """A tuple of `count` tangents of the extra arguments, from one that may be a zero (None, 0.0)."""
    return tuple(_part(t_args, k) for k in range(count))


def _adjoint_system(rhs):
    """The right-hand side, in odeint's convention, of Z = [y, a, g] backwards in time:
    Z' = [f, -a . df/dy, -a . df/dtheta]."""
    n = rhs.n

    def system(z, s):
        f, d_y, _, d_theta = rhs.vjp(z[:n], s, z[n : 2 * n])
        return np.concatenate([f, -d_y, -d_theta])

    return system


def _sensitivity_system(rhs, t_args, t_func):
    """The right-hand side, in odeint's convention, of W = [y, s], the state and its tangent:
    W' = [f, df/dy s + df/dtheta v] for the parameters' tangents v = (t_args, t_func)."""

    def system(w, s):
        _, f, t_f = rhs.jvp(w[: rhs.n], s, w[rhs.n :], None, t_args, t_func)
        return np.concatenate([f, t_f])

    return system


def _tolerance(given):
    return _TOLERANCE if given is None else min(float(np.min(given)), _TOLERANCE)


# ----- The two sweeps, shared by odeint and solve_ivp -----
#
# `integrate(rhs, z, start, stop)` solves z' = rhs(z, s) from `start` to `stop` and
# returns z(stop); `integrate_at(rhs, z, start, times)` returns z at each of `times`
# (rows).


def _backward(integrate, rhs, outputs, dy, start, y0, record=None):
    """(d_outputs_times, d_start, d_y0 as a vector, d_theta as a flat vector) for outputs
    y_i = outputs[i] at times[i] of the solution from y0 at `start`; `outputs` is (times, rows).

    A list `record` receives, for i = 0, 1, ..., the augmented state [y, a, g] at times[i]
    (after a's jump) and where its interval ends (the state the second derivatives restart from)."""
    times, ys = outputs
    n = ys.shape[1]
    system = _adjoint_system(rhs)
    a, g = np.zeros(n), np.zeros(rhs.size)
    d_times = np.zeros(len(times))
    for i in range(len(times) - 1, -1, -1):
        d_times[i] = dy[i] @ _slope(rhs, ys[i], times[i])
        a = a + dy[i]
        previous = times[i - 1] if i > 0 else start
        z = np.concatenate([ys[i], a, g])
        end = integrate(system, z, times[i], previous) if previous != times[i] else z
        a, g = end[n : 2 * n], end[2 * n :]
        if record is not None:
            record.insert(0, (z, end))
    d_start = -(a @ _slope(rhs, y0, start))
    return d_times, d_start, a, g


def _forward(integrate_at, rhs, t_args, t_func, outputs, start, y0, t_y0, t_start, t_times):
    """The tangents of the outputs (rows), for the tangents of y0, the start time, the output times,
    args and the function value."""
    times, ys = outputs
    n = ys.shape[1]
    first = _vector(0.0 if t_y0 is None else t_y0, n) - _slope(rhs, y0, start) * t_start
    t_ys = integrate_at(_sensitivity_system(rhs, t_args, t_func), np.concatenate([y0, first]), start, times)[:, n:]
    for i in range(len(times)):
        t_ys[i] += _slope(rhs, ys[i], times[i]) * t_times[i]
    return t_ys


def _time_tangents(t_times, times):
    if t_times is None:
        return np.zeros(times.shape)
    return np.broadcast_to(np.asarray(t_times, dtype=np.float64), times.shape)


def _refuse_complex(y0, name):
    if np.iscomplexobj(y0):
        raise located(
            f"the derivative of scipy.integrate.{name} with a complex state is not supported; "
            "integrate its real and imaginary parts as a real state of twice the size"
        )


# ----- Second derivatives: the backward sweep, differentiated again -----
#
# The adjoint rules are the sweep `_backward`: slopes, jumps of `a`, and solves of the
# augmented system Z = [y, a, g] backwards over each output interval,
#
#     Z' = R(Z, s) = [f, -a . df/dy, -a . df/dtheta]      (theta: the args, then the function value's)
#
# Their own tangent rules run the same sweep with forward sensitivities of R alongside
# (its jvp needs a . f''[.], the tangent of ssad's pullback of f: `pullback_jvp`); their
# own adjoint rules run the adjoint of the sweep, forward in time, with the adjoint
# system of R re-integrated from the states the sweep reached. With lam = (lam_y, lam_a, lam_g)
# the adjoint of Z (lam_g is constant: R does not read g),
#
#     lam . R = lam_y . f - a . (df/dy lam_a + df/dtheta lam_g)
#
# so its derivatives are again a jvp of f and the tangent of a pullback of f: both
# orders need only forward-over-reverse products of the user's function, which ssad
# makes for every function value it differentiates once.


def _segment_tangent(integrate, system, system_jvp, z0, t_z0, start, t_start, stop, t_stop):
    """(z(stop), its tangent) for z' = system(z, s), z(start) = z0, along the tangents of z0,
    start and stop (and the parameters `system_jvp(z, t_z, s) -> (z', its tangent)` reads)."""
    size = z0.size

    def joint(w, s):
        return np.concatenate(system_jvp(w[:size], w[size:], s))

    # moving `start` moves the state's start along the flow; moving `stop` moves where it is read
    first = t_z0 - system(z0, start) * t_start if t_start else t_z0
    w = np.concatenate([z0, first])
    if stop != start:
        w = integrate(joint, w, start, stop)
    z, t_z = w[:size], w[size:]
    if t_stop:
        t_z = t_z + system(z, stop) * t_stop
    return z, t_z


def _segment_adjoint(integrate, system_vjp, z_stop, lam_stop, size_q, start, stop):
    """(lam(start), the parameters' adjoint) for z' = system(z, s) from `start` to `stop`, given
    z(stop) and lam(stop), the adjoint of z(stop). `system_vjp(z, lam, s)` returns z' and the
    derivatives of lam . system(z, s) in z and in the `size_q` parameters; z is re-integrated
    from `stop` back to `start` alongside lam' = -lam . dsystem/dz and mu' = -lam . dsystem/dq."""
    size = z_stop.size

    def joint(w, s):
        value, d_z, d_q = system_vjp(w[:size], w[size : 2 * size], s)
        return np.concatenate([value, -d_z, -d_q])

    w = integrate(joint, np.concatenate([z_stop, lam_stop, np.zeros(size_q)]), stop, start)
    return w[size : 2 * size], w[2 * size :]


def _backward_tangent(integrate, rhs, outputs, dy, start, y0, tangents):
    """The tangents of `_backward`'s (d_times, d_start, d_y0, theta's adjoint as a flat vector) along
    `tangents` = (of the outputs' rows, of dy, of the times, of start, of y0, of args, of the
    function value); each may be None for zero."""
    times, ys = outputs
    m, n = ys.shape
    t_ys, t_dy, t_times, t_start, t_y0, t_args, t_func = tangents
    t_ys, t_dy = _rows(t_ys, ys.shape), _rows(t_dy, ys.shape)
    t_times = _time_tangents(t_times, times)
    t_start = 0.0 if t_start is None else float(t_start)
    system = _adjoint_system(rhs)

    def system_jvp(z, t_z, s):
        y, a, t_y, t_a = z[:n], z[n : 2 * n], t_z[:n], t_z[n : 2 * n]
        value, f, t_f = rhs.jvp(y, s, t_y, None, t_args, t_func)
        d_y, d_theta, t_d_y, t_d_theta = rhs.vjp_jvp(value, y, s, a, t_a, t_y, t_args, t_func)
        return np.concatenate([f, -d_y, -d_theta]), np.concatenate([t_f, -t_d_y, -t_d_theta])

    a, g, t_a, t_g = np.zeros(n), np.zeros(rhs.size), np.zeros(n), np.zeros(rhs.size)
    t_d_times = np.zeros(m)
    for i in range(m - 1, -1, -1):
        _, f, t_f = rhs.jvp(ys[i], times[i], t_ys[i], t_times[i], t_args, t_func)
        t_d_times[i] = t_dy[i] @ f + dy[i] @ t_f
        a, t_a = a + dy[i], t_a + t_dy[i]
        previous, t_previous = (times[i - 1], t_times[i - 1]) if i > 0 else (start, t_start)
        z, t_z = _segment_tangent(
            integrate, system, system_jvp, np.concatenate([ys[i], a, g]), np.concatenate([t_ys[i], t_a, t_g]),
            times[i], t_times[i], previous, t_previous,
        )
        a, g, t_a, t_g = z[n : 2 * n], z[2 * n :], t_z[n : 2 * n], t_z[2 * n :]
    _, f, t_f = rhs.jvp(y0, start, _vector(0.0 if t_y0 is None else t_y0, n), t_start, t_args, t_func)
    return t_d_times, -(t_a @ f + a @ t_f), t_a, t_g


def _backward_adjoint(integrate, rhs, outputs, dy, start, y0, weights):
    """The adjoints (of dy, of the outputs' rows, of the times, of start, of y0, of theta as a flat
    vector) of `_backward`'s results weighted by `weights` = (d_times', d_start', d_y0' as a
    vector, theta's adjoint' as a flat vector): the adjoint of the sweep, run forward in time."""
    times, ys = outputs
    m, n = ys.shape
    w_times, w_start, w_a, w_g = weights
    record = []
    a = _backward(integrate, rhs, outputs, dy, start, y0, record)[2]
    lam_args, lam_func = rhs.structured(w_g)

    def weighted_slope(z, lam_y, lam_a, s):
        """lam . R(Z, s) for lam = (lam_y, lam_a, w_g): the derivative of Z's weight along its interval."""
        _, f, t_f = rhs.jvp(z[:n], s, lam_a, None, lam_args, lam_func)
        return lam_y @ f - z[n : 2 * n] @ t_f

    def system_vjp(z, lam, s):
        """R's [y, a] part, and lam . R's derivatives in [y, a] and in theta."""
        y, a, lam_y, lam_a = z[:n], z[n:], lam[:n], lam[n:]
        value, f, t_f = rhs.jvp(y, s, lam_a, None, lam_args, lam_func)
        d_y, _, t_d_y, t_d_theta = rhs.vjp_jvp(value, y, s, a, -lam_y, lam_a, lam_args, lam_func)
        return np.concatenate([f, -d_y]), -np.concatenate([t_d_y, t_f]), -t_d_theta

    d_dy, d_ys, d_times, d_theta = np.zeros((m, n)), np.zeros((m, n)), np.zeros(m), np.zeros(rhs.size)
    lam_a = np.array(w_a, dtype=np.float64)
    # d_start = -(a . f(y0, start))
    f, d_y0, d_start, d_theta_start = rhs.vjp(y0, start, -w_start * a)
    lam_a = lam_a - w_start * f
    d_theta += d_theta_start
    for i in range(m):
        z, end = record[i]
        previous = times[i - 1] if i > 0 else start
        d_previous = weighted_slope(end, np.zeros(n), lam_a, previous)
        lam_y = np.zeros(n)
        if previous != times[i]:
            lam, d_theta_i = _segment_adjoint(
                integrate, system_vjp, end[: 2 * n], np.concatenate([lam_y, lam_a]), rhs.size, times[i], previous
            )
            lam_y, lam_a, d_theta = lam[:n], lam[n:], d_theta + d_theta_i
        d_times[i] -= weighted_slope(z, lam_y, lam_a, times[i])
        if i > 0:
            d_times[i - 1] += d_previous
        else:
            d_start += d_previous
        d_ys[i] += lam_y
        # a = a + dy[i], then d_times[i] = dy[i] . f(ys[i], times[i])
        f, d_y, d_s, d_theta_i = rhs.vjp(ys[i], times[i], w_times[i] * dy[i])
        d_dy[i] = lam_a + w_times[i] * f
        d_ys[i] += d_y
        d_times[i] += d_s
        d_theta += d_theta_i
    return d_dy, d_ys, d_times, d_start, d_y0, d_theta


def _rows(value, shape):
    """A tangent or adjoint of the outputs' rows as a float array of `shape` (None: zeros)."""
    if value is None:
        return np.zeros(shape)
    return np.broadcast_to(np.asarray(value, dtype=np.float64), shape)


# ----- Second derivatives: the forward sweep, differentiated again -----
#
# The tangent rules are the sweep `_forward`: one solve of W = [y, s] from the start,
#
#     W' = S(W, s) = [f, df/dy s + df/dtheta v]      (v: the tangents of theta, parameters of S)
#
# read at the output times. Its tangent needs f''[(s, v), .] applied to a second direction,
# a vector: one tangent of ssad's pullback of f per state component (forward over reverse,
# along each unit vector). Its adjoint needs lam . S's derivatives: with lam = (lam_y, lam_s),
# lam . S = lam_y . f + lam_s . (df/dy s + df/dtheta v), whose derivatives in y and theta are the tangent
# of the pullback of f at lam_s along (s, v), and in s and v the pullback itself.


def _forward_first(first, times, n):
    """`_forward`'s tangents (of y0, of start, of the times, of args, of the function value),
    with None as zeros."""
    t_y0, t_start, t_times, t_args, t_func = first
    t_y0 = _vector(0.0 if t_y0 is None else t_y0, n)
    return t_y0, 0.0 if t_start is None else float(t_start), _time_tangents(t_times, times), t_args, t_func


def _forward_tangent(integrate_at, rhs, outputs, start, y0, first, second):
    """The tangent of `_forward`'s result (the rows of the outputs' tangents) along `second`.

    `first` holds the tangents `_forward` carries (of y0, of start, of the times, of args, of the
    function value); `second` the tangents of the outputs' rows, of the times, of start, of y0,
    of args, of the function value, then of each entry of `first`; each may be None for zero."""
    times, ys = outputs
    m, n = ys.shape
    t_y0, t_start, t_times, v_args, v_func = _forward_first(first, times, n)
    u_ys, u_times, u_start, u_y0, u_args, u_func, u_t_y0, u_t_start, u_t_times, u_v_args, u_v_func = second
    u_ys, u_times = _rows(u_ys, ys.shape), _time_tangents(u_times, times)
    u_y0, u_t_y0, u_t_times = _vector(0.0 if u_y0 is None else u_y0, n), _rows(u_t_y0, (n,)), _rows(u_t_times, (m,))
    u_start, u_t_start = (0.0 if u is None else float(u) for u in (u_start, u_t_start))
    v_theta = rhs.flat(_items(v_args, len(rhs.args)), v_func)
    system = _sensitivity_system(rhs, v_args, v_func)

    def joint(w, s):
        y, t_y, u_y, u_t_y = w[:n], w[n : 2 * n], w[2 * n : 3 * n], w[3 * n :]
        value, f, u_f = rhs.jvp(y, s, u_y, None, u_args, u_func)
        t_f = rhs.jvp(y, s, t_y, None, v_args, v_func)[2]
        moved = rhs.jvp(y, s, u_t_y, None, u_v_args, u_v_func)[2]
        curvature = np.zeros(n)
        for k in range(n):  # f''[(t_y, v), (u_y, u_theta)], one component at a time
            _, _, t_d_y, t_d_theta = rhs.vjp_jvp(value, y, s, np.eye(n)[k], np.zeros(n), u_y, u_args, u_func)
            curvature[k] = t_d_y @ t_y + t_d_theta @ v_theta
        return np.concatenate([f, t_f, u_f, curvature + moved])

    f0, u_f0 = rhs.jvp(y0, start, u_y0, u_start, u_args, u_func)[1:]
    w0 = np.concatenate([y0, t_y0 - f0 * t_start])
    u_w0 = np.concatenate([u_y0, u_t_y0 - u_f0 * t_start - f0 * u_t_start]) - system(w0, start) * u_start
    rows = integrate_at(joint, np.concatenate([w0, u_w0]), start, times)
    result = np.zeros((m, n))
    for i in range(m):
        w, u_w = rows[i, : 2 * n], rows[i, 2 * n :]
        f, u_f = rhs.jvp(ys[i], times[i], u_ys[i], u_times[i], u_args, u_func)[1:]
        result[i] = u_w[n:] + system(w, times[i])[n:] * u_times[i] + u_f * t_times[i] + f * u_t_times[i]
    return result


def _forward_adjoint(integrate, integrate_at, rhs, outputs, start, y0, first, weights):
    """The adjoints of `_forward`'s inputs for the weights (rows) of its result: (of the outputs'
    rows, of the times, of start, of y0, of theta as a flat vector, then of each entry of `first`:
    of t_y0, t_start, the times' tangents, and of theta's tangents as a flat vector)."""
    times, ys = outputs
    m, n = ys.shape
    t_y0, t_start, t_times, v_args, v_func = _forward_first(first, times, n)
    size = rhs.size
    system = _sensitivity_system(rhs, v_args, v_func)

    def system_vjp(w, lam, s):
        """S, and lam . S's derivatives in [y, s] and in [theta, v]."""
        y, t_y, lam_y, lam_s = w[:n], w[n:], lam[:n], lam[n:]
        value, f, t_f = rhs.jvp(y, s, t_y, None, v_args, v_func)
        d_y, d_theta, t_d_y, t_d_theta = rhs.vjp_jvp(value, y, s, lam_s, lam_y, t_y, v_args, v_func)
        return np.concatenate([f, t_f]), np.concatenate([t_d_y, d_y]), np.concatenate([t_d_theta, d_theta])

    w0 = np.concatenate([y0, t_y0 - _slope(rhs, y0, start) * t_start])
    rows = integrate_at(system, w0, start, times)
    lam, d_q = np.zeros(2 * n), np.zeros(2 * size)
    d_ys, d_times, d_t_times, d_start = np.zeros((m, n)), np.zeros(m), np.zeros(m), 0.0
    for i in range(m - 1, -1, -1):
        # the output: rows[i]'s tangent part + f(ys[i], times[i]) t_times[i]
        lam[n:] += weights[i]
        f, d_y, d_s, d_theta = rhs.vjp(ys[i], times[i], weights[i] * t_times[i])
        d_ys[i] += d_y
        d_times[i] += d_s + lam @ system(rows[i], times[i])
        d_q[:size] += d_theta
        d_t_times[i] = weights[i] @ f
        previous, w_previous = (times[i - 1], rows[i - 1]) if i > 0 else (start, w0)
        if previous != times[i]:
            lam, d_q_i = _segment_adjoint(integrate, system_vjp, rows[i], lam, 2 * size, previous, times[i])
            d_q += d_q_i
        d_previous = -(lam @ system(w_previous, previous))
        if i > 0:
            d_times[i - 1] += d_previous
        else:
            d_start += d_previous
    # w0 = [y0, t_y0 - f(y0, start) t_start]
    f0, d_y0, d_s, d_theta = rhs.vjp(y0, start, -t_start * lam[n:])
    d_q[:size] += d_theta
    return d_ys, d_times, d_start + d_s, lam[:n] + d_y0, d_q[:size], lam[n:], -(lam[n:] @ f0), d_t_times, d_q[size:]


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
    rhs = _RightHandSide(func, args, tfirst, y.shape[1])
    d_times, d_start, d_y0, d_theta = _backward(integrate, rhs, (times, y), dy, times[0], y[0])
    d_times[0] += d_start
    d_args, d_func = rhs.structured(d_theta)
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
    rhs = _RightHandSide(func, args, tfirst, y.shape[1])
    return _forward(integrate_at, rhs, t_args, t_func, (times, y), times[0], y[0], t_y0, t_times[0], t_times)


def _refuse_odeint_options(full_output, y0):
    if full_output:
        raise located(
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
        raise located(f"the adjoint or sensitivity solve of solve_ivp failed: {solution.message}")
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
        raise located(
            "the derivative of solve_ivp needs the output times: pass t_eval=... (the times at which "
            "the solution is read) in the function you differentiate"
        )
    if events is not None or dense_output:
        raise located(
            "the derivative of solve_ivp with events or dense_output=True is not supported; "
            "call it with t_eval and without events and dense_output in the function you differentiate"
        )
    if sol.status < 0:
        raise located(f"solve_ivp failed ({sol.message}); its solution has no derivative")
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
    rhs = _RightHandSide(fun, _ivp_args(args), True, ys.shape[1])
    d_times, d_start, d_y0, d_theta = _backward(
        integrate, rhs, (times, ys), d_ys, float(t_span[0]), np.asarray(y0, dtype=np.float64)
    )
    d_args, d_func = rhs.structured(d_theta)
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
    rhs = _RightHandSide(fun, _ivp_args(args), True, y.y.shape[0])
    t_ys = _forward(
        integrate_at, rhs, t_args, t_fun, (times, y.y.T), float(t_span[0]), np.asarray(y0, dtype=np.float64), t_y0,
        t_start, t_times,
    )
    result = OdeResult(zeros_like_value(dict(y)))
    result.t = np.array(t_times, dtype=np.float64)
    result.y = t_ys.T.copy()
    return result


# ----- Second derivatives: rules of the adjoint rules -----
#
# The first-order rules read `y`, the solution, as the states they restart from (the
# tangent rules: the start state and the slopes at the outputs); their own derivatives
# do too (its tangent and adjoint are those of the rows of y), so they are exact
# derivatives of the rules as functions of all their arguments.


@tangent(odeint_adjoint)
def odeint_adjoint_tangent(
    tangents, y, dy, ys, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    t_dy, t_ys, t_func, _, t_times, t_args = _padded(tangents, 6)
    t_ys, t_times = _rows(t_ys, ys.shape), _time_tangents(t_times, times)
    rhs = _RightHandSide(func, args, tfirst, ys.shape[1])
    integrate, _ = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    dy = np.reshape(np.asarray(dy, dtype=np.float64), ys.shape)
    t_d_times, t_d_start, t_a, t_g = _backward_tangent(
        integrate, rhs, (times, ys), dy, times[0], ys[0], (t_ys, t_dy, t_times, t_times[0], t_ys[0], t_args, t_func)
    )
    t_d_times[0] += t_d_start
    t_d_args, t_d_func = rhs.structured(t_g)
    return (t_d_func, _like_input(t_a, y0), _shaped_like(t_d_times, t), t_d_args)


@adjoint(odeint_adjoint)
def odeint_adjoint_adjoint(
    d_adjoints, adjoints, dy, ys, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
    rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12,
    mxords=5, printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    n = ys.shape[1]
    rhs = _RightHandSide(func, args, tfirst, n)
    w_func, w_y0, w_times, w_args = _padded(d_adjoints, 4)
    w_times = _flatten(w_times, times)
    weights = (w_times, w_times[0], _flatten(w_y0, np.zeros(n)), rhs.flat(w_args, w_func))
    integrate, _ = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    dy = np.reshape(np.asarray(dy, dtype=np.float64), ys.shape)
    d_dy, d_ys, d_times, d_start, d_y0, d_theta = _backward_adjoint(
        integrate, rhs, (times, ys), dy, times[0], ys[0], weights
    )
    d_ys[0] += d_y0
    d_times[0] += d_start
    d_args, d_func = rhs.structured(d_theta)
    return (d_dy, d_ys, d_func, None, _shaped_like(d_times, t), d_args)


@tangent(solve_ivp_adjoint)
def solve_ivp_adjoint_tangent(
    tangents, y, dy, sol, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
    vectorized=False, args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None,
    jac_sparsity=None, lband=None, uband=None,
):
    _refuse_ivp_options(sol, t_eval, dense_output, events, y0)
    times, ys = np.asarray(sol.t, dtype=np.float64), sol.y.T
    t_dy, t_sol, t_fun, t_span_tangent, t_y0, _, _, _, _, _, t_args = _padded(tangents, 11)
    t_ys, t_d_ys = _field(t_sol, "y"), _field(t_dy, "y")
    t_ys = None if t_ys is None else _rows(t_ys, sol.y.shape).T
    t_d_ys = None if t_d_ys is None else _rows(t_d_ys, sol.y.shape).T
    d_ys = _field(dy, "y")
    d_ys = np.zeros(ys.shape) if d_ys is None else _rows(d_ys, sol.y.shape).T
    rhs = _RightHandSide(fun, _ivp_args(args), True, ys.shape[1])
    integrate, _ = _ivp_solver(method, rtol, atol, max_step, min_step)
    t_d_times, t_d_start, t_a, t_g = _backward_tangent(
        integrate, rhs, (times, ys), d_ys, float(t_span[0]), np.asarray(y0, dtype=np.float64),
        (t_ys, t_d_ys, _field(t_sol, "t"), _start_tangent(t_span_tangent), t_y0, t_args, t_fun),
    )
    t_d_t = _field(t_dy, "t")
    if t_d_t is not None:
        t_d_times = t_d_times + _rows(t_d_t, times.shape)
    t_d_args, t_d_fun = rhs.structured(t_g)
    return (
        t_d_fun, _span_like(t_d_start, t_span), _like_input(t_a, y0), None, _shaped_like(t_d_times, t_eval),
        None, None, None, _args_like(t_d_args, args),
    )


@adjoint(solve_ivp_adjoint)
def solve_ivp_adjoint_adjoint(
    d_adjoints, adjoints, dy, sol, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
    vectorized=False, args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None,
    jac_sparsity=None, lband=None, uband=None,
):
    _refuse_ivp_options(sol, t_eval, dense_output, events, y0)
    times, ys = np.asarray(sol.t, dtype=np.float64), sol.y.T
    n = ys.shape[1]
    rhs = _RightHandSide(fun, _ivp_args(args), True, n)
    w_fun, w_span, w_y0, _, w_times, _, _, _, w_args = _padded(d_adjoints, 9)
    w_times = _flatten(w_times, times)
    w_start = _flatten(w_span, np.zeros(2))[0]
    w_args = _items(w_args, len(rhs.args))
    weights = (w_times, w_start, _flatten(w_y0, np.zeros(n)), rhs.flat(w_args, w_fun))
    d_ys = _field(dy, "y")
    d_ys = np.zeros(ys.shape) if d_ys is None else _rows(d_ys, sol.y.shape).T
    integrate, _ = _ivp_solver(method, rtol, atol, max_step, min_step)
    d_dy, d_sol_y, d_times, d_start, d_y0, d_theta = _backward_adjoint(
        integrate, rhs, (times, ys), d_ys, float(t_span[0]), np.asarray(y0, dtype=np.float64), weights
    )
    d_args, d_fun = rhs.structured(d_theta)
    return (
        _result_adjoint(dy, d_dy.T, w_times), _result_adjoint(sol, d_sol_y.T, d_times), d_fun,
        _span_like(d_start, t_span), _like_input(d_y0, y0), None, None, None, None, None, _args_like(d_args, args),
    )


def _start_tangent(t_span_tangent):
    """The tangent of t_span[0], from one of t_span that may be a zero (None, 0.0)."""
    if t_span_tangent is None:
        return 0.0
    return float(np.ravel(np.asarray(t_span_tangent, dtype=np.float64))[0])


def _result_adjoint(like, d_y, d_t):
    """The adjoint of the OdeResult or dict `like` whose "y" and "t" entries are `d_y` and `d_t`
    (zeros elsewhere), as first-order code reads it: a dict for the solution (whose adjoint
    `runtime.structure.add_attr` adds to by key), an OdeResult for `dy` (whose adjoint the rule
    of add_attr reads by attribute)."""
    entries = {**zeros_like_value(dict(like)), "y": d_y, "t": d_t}
    return OdeResult(entries) if not isinstance(like, OdeResult) else entries


# ----- Second derivatives: rules of the tangent rules -----


@tangent(odeint_tangent)
def odeint_tangent_tangent(
    tangents, y, first, ys, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    u_first, u_ys, u_func, _, u_times, u_args = _padded(tangents, 6)
    t_func, t_y0, t_times, t_args = _padded(first, 4)
    u_t_func, u_t_y0, u_t_times, u_t_args = _padded(u_first, 4)
    t_times, u_times, u_t_times = (_time_tangents(u, times) for u in (t_times, u_times, u_t_times))
    u_ys = _rows(u_ys, ys.shape)
    rhs = _RightHandSide(func, args, tfirst, ys.shape[1])
    _, integrate_at = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    return _forward_tangent(
        integrate_at, rhs, (times, ys), times[0], ys[0], (t_y0, t_times[0], t_times, t_args, t_func),
        (u_ys, u_times, u_times[0], u_ys[0], u_args, u_func, u_t_y0, u_t_times[0], u_t_times, u_t_args, u_t_func),
    )


@adjoint(odeint_tangent)
def odeint_tangent_adjoint(
    weights, y, first, ys, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5,
    printmessg=0, tfirst=False,
):
    _refuse_odeint_options(full_output, y0)
    times = np.asarray(t, dtype=np.float64)
    t_func, t_y0, t_times, t_args = _padded(first, 4)
    t_times = _time_tangents(t_times, times)
    rhs = _RightHandSide(func, args, tfirst, ys.shape[1])
    integrate, integrate_at = _odeint_solver(rtol, atol, mxstep, hmax, hmin)
    d_ys, d_times, d_start, d_y0, d_theta, d_t_y0, d_t_start, d_t_times, d_v = _forward_adjoint(
        integrate, integrate_at, rhs, (times, ys), times[0], ys[0], (t_y0, t_times[0], t_times, t_args, t_func),
        _rows(weights, ys.shape),
    )
    d_ys[0] += d_y0
    d_times[0] += d_start
    d_t_times[0] += d_t_start
    d_args, d_func = rhs.structured(d_theta)
    d_t_args, d_t_func = rhs.structured(d_v)
    d_first = (d_t_func, _like_input(d_t_y0, y0), _shaped_like(d_t_times, t), d_t_args)
    return (_padded(d_first, len(first)), d_ys, d_func, None, _shaped_like(d_times, t), d_args)


@tangent(solve_ivp_tangent)
def solve_ivp_tangent_tangent(
    tangents, y, first, sol, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
    vectorized=False, args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None,
    jac_sparsity=None, lband=None, uband=None,
):
    _refuse_ivp_options(sol, t_eval, dense_output, events, y0)
    times, ys = np.asarray(sol.t, dtype=np.float64), sol.y.T
    u_first, u_sol, u_fun, u_span, u_y0, _, _, _, _, _, u_args = _padded(tangents, 11)
    t_fun, t_span_tangent, t_y0, _, t_times, _, _, _, t_args = _padded(first, 9)
    u_t_fun, u_t_span, u_t_y0, _, u_t_times, _, _, _, u_t_args = _padded(u_first, 9)
    u_ys = _field(u_sol, "y")
    u_ys = None if u_ys is None else _rows(u_ys, sol.y.shape).T
    rhs = _RightHandSide(fun, _ivp_args(args), True, ys.shape[1])
    _, integrate_at = _ivp_solver(method, rtol, atol, max_step, min_step)
    t_ys = _forward_tangent(
        integrate_at, rhs, (times, ys), float(t_span[0]), np.asarray(y0, dtype=np.float64),
        (t_y0, _start_tangent(t_span_tangent), t_times, t_args, t_fun),
        (u_ys, _field(u_sol, "t"), _start_tangent(u_span), u_y0, u_args, u_fun, u_t_y0, _start_tangent(u_t_span),
         u_t_times, u_t_args, u_t_fun),
    )
    result = OdeResult(zeros_like_value(dict(y)))
    result.t = np.array(_time_tangents(u_t_times, times))
    result.y = t_ys.T.copy()
    return result


@adjoint(solve_ivp_tangent)
def solve_ivp_tangent_adjoint(
    weights, y, first, sol, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
    vectorized=False, args=None, rtol=1e-3, atol=1e-6, first_step=None, max_step=None, min_step=0.0, jac=None,
    jac_sparsity=None, lband=None, uband=None,
):
    _refuse_ivp_options(sol, t_eval, dense_output, events, y0)
    times, ys = np.asarray(sol.t, dtype=np.float64), sol.y.T
    t_fun, t_span_tangent, t_y0, _, t_times, _, _, _, t_args = _padded(first, 9)
    w_y, w_t = _field(weights, "y"), _field(weights, "t")
    rhs = _RightHandSide(fun, _ivp_args(args), True, ys.shape[1])
    integrate, integrate_at = _ivp_solver(method, rtol, atol, max_step, min_step)
    d_ys, d_times, d_start, d_y0, d_theta, d_t_y0, d_t_start, d_t_times, d_v = _forward_adjoint(
        integrate, integrate_at, rhs, (times, ys), float(t_span[0]), np.asarray(y0, dtype=np.float64),
        (t_y0, _start_tangent(t_span_tangent), t_times, t_args, t_fun),
        np.zeros(ys.shape) if w_y is None else _rows(w_y, sol.y.shape).T,
    )
    if w_t is not None:
        d_t_times = d_t_times + _rows(w_t, times.shape)
    d_args, d_fun = rhs.structured(d_theta)
    d_t_args, d_t_fun = rhs.structured(d_v)
    d_first = (
        d_t_fun, _span_like(d_t_start, t_span), _like_input(d_t_y0, y0), None, _shaped_like(d_t_times, t_eval),
        None, None, None, _args_like(d_t_args, args),
    )
    return (
        _padded(d_first, len(first)), _result_adjoint(sol, d_ys.T, d_times), d_fun, _span_like(d_start, t_span),
        _like_input(d_y0, y0), None, None, None, None, None, _args_like(d_args, args),
    )


def _padded(values, count):
    """The first `count` tangents or adjoints of `values`, which may be shorter (None fills it),
    longer (of arguments that carry no derivative, such as tolerances passed positionally),
    or a zero (None, 0.0) standing for all of them."""
    if not isinstance(values, (tuple, list)):
        return (None,) * count
    return (tuple(values) + (None,) * count)[:count]


# ----- Refused: third derivatives -----

_THIRD_ORDER = (
    "a third derivative through an ODE solution (scipy.integrate.{name}) is not supported; second "
    "derivatives are (ssad.hessian(f), ssad.jvp(ssad.grad(f), ...), ssad.grad(ssad.grad(f))): take "
    "central finite differences of one of them"
)


@adjoint(odeint_tangent_tangent)
@tangent(odeint_tangent_tangent)
@adjoint(odeint_tangent_adjoint)
@tangent(odeint_tangent_adjoint)
@adjoint(odeint_adjoint_tangent)
@tangent(odeint_adjoint_tangent)
@adjoint(odeint_adjoint_adjoint)
@tangent(odeint_adjoint_adjoint)
def _odeint_third_order(*args, **kwargs):
    raise located(_THIRD_ORDER.format(name="odeint"))


@adjoint(solve_ivp_tangent_tangent)
@tangent(solve_ivp_tangent_tangent)
@adjoint(solve_ivp_tangent_adjoint)
@tangent(solve_ivp_tangent_adjoint)
@adjoint(solve_ivp_adjoint_tangent)
@tangent(solve_ivp_adjoint_tangent)
@adjoint(solve_ivp_adjoint_adjoint)
@tangent(solve_ivp_adjoint_adjoint)
def _solve_ivp_third_order(*args, **kwargs):
    raise located(_THIRD_ORDER.format(name="solve_ivp"))
