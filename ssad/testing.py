"""Numerical checks of derivatives against central finite differences (float64).

`check_rule` tests one adjoint rule on its own, the way every built-in rule is
tested: it draws a random output adjoint `dy`, runs the rule, and compares each
argument's adjoint element by element with central differences of
``sum(dy * f(x))``. Nothing is sanitized before comparing: a NaN is a failure.

Complex inputs are checked in the complex plane, with ssad's convention
(docs/conventions.md, "Complex numbers"): an adjoint ``c`` pairs with a tangent
``t`` as ``Re(c * t)``, so the expected adjoint of a complex argument is
``dL/dx - 1j * dL/dy`` for ``L = Re(sum(dy * f(z)))``, each part by central
differences along the real and the imaginary axis. A real argument's adjoint is
its real part (an imaginary part there means nothing). Tangents are compared in
the complex plane too, and a real output must get a real tangent.
"""

import numbers
import types

import numpy as np

from .registry import REGISTRY, primitive_name


def _is_float_input(x):
    """A float or complex input (Python number, NumPy scalar or array): one that has a gradient."""
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Integral):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and np.issubdtype(np.asarray(x).dtype, np.inexact)


def _is_complex(x):
    return np.iscomplexobj(x)


def _random_like(value, rng):
    if isinstance(value, tuple):  # namedtuples too: their adjoint is a plain tuple
        return tuple(_random_like(v, rng) for v in value)
    if isinstance(value, list):
        return [_random_like(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: _random_like(v, rng) for k, v in value.items()}
    shape = np.shape(value)
    draw = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if _is_complex(value):  # a non-uniform complex direction: every phase is exercised
        draw = draw + 1j * rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        return draw if shape else complex(draw)
    return draw if shape else float(draw)


def _inner(dy, y):
    """The pairing of an adjoint with a value: sum(dy * y), its real part for complex values."""
    if isinstance(dy, (tuple, list)):
        return sum(_inner(a, b) for a, b in zip(dy, y, strict=True))
    if isinstance(dy, dict):
        return sum(_inner(dy[k], y[k]) for k in dy)
    if _is_complex(dy) or _is_complex(y):
        return float(np.real(np.sum(np.asarray(dy, dtype=np.complex128) * np.asarray(y, dtype=np.complex128))))
    return float(np.sum(np.asarray(dy, dtype=np.float64) * np.asarray(y, dtype=np.float64)))


def numerical_gradient(scalar_fn, x, eps=1e-6):
    """Central differences of `scalar_fn` at float or float array `x`, shaped like `x`.

    For complex `x` = u + 1j v: ``d/du - 1j * d/dv``, each part by central differences
    (the adjoint of `x` in ssad's convention).
    """
    if _is_complex(x):
        u, v = np.real(x), np.imag(x)
        d_u = _real_numerical_gradient(lambda w: scalar_fn(w + 1j * v), u, eps)
        d_v = _real_numerical_gradient(lambda w: scalar_fn(u + 1j * w), v, eps)
        return d_u - 1j * d_v
    return _real_numerical_gradient(scalar_fn, x, eps)


def _real_numerical_gradient(scalar_fn, x, eps):
    if np.ndim(x) == 0:
        x = float(x)
        return (scalar_fn(x + eps) - scalar_fn(x - eps)) / (2 * eps)
    x = np.array(x, dtype=np.float64, order="C")  # reshape(-1) below must be a view
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    out = grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = scalar_fn(x.copy())
        flat[i] = old - eps
        down = scalar_fn(x.copy())
        flat[i] = old
        out[i] = (up - down) / (2 * eps)
    return grad


def assert_close(name, got, expected, rtol, atol):
    dtype = np.complex128 if _is_complex(got) or _is_complex(expected) else np.float64
    got_array = np.asarray(got, dtype=dtype)
    expected_array = np.asarray(expected, dtype=dtype)
    if got_array.shape != expected_array.shape:
        raise AssertionError(
            f"{name}: adjoint has shape {got_array.shape}, expected {expected_array.shape}"
        )
    if not np.all(np.isfinite(got_array)):
        raise AssertionError(f"{name}: adjoint is not finite: {got_array}")
    if not np.all(np.isfinite(expected_array)):
        raise AssertionError(f"{name}: finite differences are not finite here: {expected_array}; move the test point")
    error = np.abs(got_array - expected_array)
    bound = atol + rtol * np.abs(expected_array)
    if not np.all(error <= bound):
        worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.ndim else ()
        raise AssertionError(
            f"{name}: worst mismatch at index {worst}: finite differences give "
            f"{expected_array[worst]!r}, got {got_array[worst]!r}"
        )


def _apply(primitive, *args, **kwargs):
    """`primitive(*args, **kwargs)`; an attribute descriptor (`np.ndarray.real`) is read from args[0]."""
    if isinstance(primitive, types.GetSetDescriptorType):
        return primitive.__get__(np.asarray(args[0]))
    return primitive(*args, **kwargs)


def check_rule(primitive, *args, rtol=1e-5, atol=1e-7, seed=0, **kwargs):
    """Check the registered adjoint rule of `primitive` at `args` against central differences.

    Every float positional argument whose adjoint the rule returns is checked,
    element by element; a None the rule returns for one is a zero, checked as such. Raises AssertionError naming the argument and the worst
    mismatch. Returns the adjoints for further assertions.
    """
    rule = REGISTRY.adjoint_rule(primitive)
    name = primitive_name(primitive)
    if rule is None:
        raise AssertionError(f"no adjoint rule is registered for {name}")
    rng = np.random.default_rng(seed)
    y = _apply(primitive, *args, **kwargs)
    dy = _random_like(y, rng)
    adjoints = rule(dy, y, *args, **kwargs)
    if not isinstance(adjoints, tuple):
        raise AssertionError(f"the rule of {name} returned {type(adjoints).__name__}, not a tuple")
    if len(adjoints) > len(args):
        raise AssertionError(
            f"the rule of {name} returned {len(adjoints)} adjoints for {len(args)} positional arguments"
        )
    checked = 0
    for i, arg in enumerate(args):
        if not _is_float_input(arg):
            continue
        if i >= len(adjoints):
            continue

        def scalar_fn(value, i=i):
            moved = list(args)
            moved[i] = value
            return _inner(dy, _apply(primitive, *moved, **kwargs))

        expected = numerical_gradient(scalar_fn, arg)
        got = np.zeros_like(expected) if adjoints[i] is None else adjoints[i]  # None: a zero derivative
        if not _is_complex(arg) and _is_complex(got):
            got = np.real(got)  # a real argument's adjoint is its real part
        assert_close(f"{name} argument {i}", got, expected, rtol, atol)
        checked += 1
    if checked == 0:
        raise AssertionError(f"check_rule({name}) checked no argument: pass at least one float input")
    return adjoints


def tape_records(gradient, *args, **kwargs):
    """Run `gradient` (made by `ssad.grad` or `ssad.value_and_grad`) and return what its tape recorded.

    The result is the list of values pushed, in order. Raises AssertionError when
    the tape is not empty again at the end of the call. Straight-line code and
    loops that overwrite nothing the adjoint needs record nothing.
    """
    import types

    from .runtime import Tape

    function = gradient.variants.for_args(args).function
    log = []
    tapes = []

    class RecordingTape(Tape):
        def __init__(self, *items):
            super().__init__(*items)
            tapes.append(self)

        def push(self, value):
            log.append(value)
            self.append(value)

    scope = dict(function.__globals__)
    for name, value in scope.items():
        if value is Tape:
            scope[name] = RecordingTape
    clone = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__)
    clone.__kwdefaults__ = function.__kwdefaults__
    clone(*args, **kwargs)
    for tape in tapes:
        if len(tape):
            raise AssertionError(f"the tape holds {len(tape)} values after the call")
    return log


def check_tangent(primitive, *args, rtol=1e-5, atol=1e-7, seed=0, **kwargs):
    """Check the registered tangent rule of `primitive` at `args` against central differences.

    For every float or complex positional argument, alone (the other tangents zero)
    and all together, a random tangent `dx` is drawn (complex for a complex argument)
    and the rule's output compared with
    (f(x + eps dx) - f(x - eps dx)) / (2 eps), component by component for tuple
    outputs. Raises AssertionError naming the worst mismatch; returns nothing.
    """
    rule = REGISTRY.tangent_rule(primitive)
    name = primitive_name(primitive)
    if rule is None:
        raise AssertionError(f"no tangent rule is registered for {name}")
    rng = np.random.default_rng(seed)
    floats = [i for i, a in enumerate(args) if _is_float_input(a)]
    if not floats:
        raise AssertionError(f"check_tangent({name}) checked no argument: pass at least one float input")
    y = _apply(primitive, *args, **kwargs)
    directions = {i: _random_like(args[i], rng) for i in floats}
    eps = 1e-6
    for chosen in [[i] for i in floats] + ([floats] if len(floats) > 1 else []):
        tangents = tuple(
            directions[i] if i in chosen else (np.zeros_like(np.asarray(a, dtype=_dtype_of(a))) if i in floats else None)
            for i, a in enumerate(args)
        )
        got = rule(tangents, y, *args, **kwargs)

        def moved(step, chosen=chosen):
            shifted = list(args)
            for i in chosen:
                shifted[i] = np.asarray(args[i], dtype=_dtype_of(args[i])) + step * np.asarray(directions[i])
                if np.ndim(args[i]) == 0:
                    shifted[i] = complex(shifted[i]) if _is_complex(args[i]) else float(shifted[i])
            return _apply(primitive, *shifted, **kwargs)

        up, down = moved(eps), moved(-eps)
        label = f"{name} tangent of argument(s) {chosen}"
        if isinstance(y, tuple):
            if not isinstance(got, tuple) or len(got) != len(y):
                raise AssertionError(f"{label}: expected a tuple of {len(y)} tangents, got {type(got).__name__}")
            for k, (u, d, g) in enumerate(zip(up, down, got, strict=True)):
                if not np.issubdtype(np.asarray(y[k]).dtype, np.inexact):
                    continue  # an integer component (a sign) has no tangent
                expected = (np.asarray(u, dtype=_dtype_of(u)) - np.asarray(d, dtype=_dtype_of(d))) / (2 * eps)
                _assert_real_tangent(f"{label}, component {k}", g, y[k])
                assert_close(f"{label}, component {k}", g if g is not None else np.zeros_like(expected), expected, rtol, atol)
        else:
            expected = (np.asarray(up, dtype=_dtype_of(up)) - np.asarray(down, dtype=_dtype_of(down))) / (2 * eps)
            _assert_real_tangent(label, got, y)
            assert_close(label, got, expected, rtol, atol)


def _dtype_of(x):
    return np.complex128 if _is_complex(x) else np.float64


def _assert_real_tangent(label, tangent, y):
    if not _is_complex(y) and _is_complex(tangent):
        raise AssertionError(f"{label}: the output is real, but its tangent is complex: {tangent!r}")


# ----- Second order: a rule's own code differentiated again -----

_OBJECTIVE_SOURCE = """\
def second_order_objective({parameters}):
    y = {call}
    return {weighed}


def second_order_pairing({parameters}):
    g = gradient({parameters})
    return {pairing}
"""


def check_second_order(primitive, *args, rtol=1e-5, atol=1e-7, seed=0, **kwargs):
    """Check that ssad differentiates the rules of `primitive` again, at `args`.

    Builds ``L(x) = <w, y> + <u, y * y>`` for ``y = primitive(*args, **kwargs)`` and
    random `w`, `u` (real parts for complex `y`; integer components of a tuple output
    are left out), takes ``g = ssad.grad(L)`` over every float argument, and compares a
    Hessian-vector product along a random direction `v`, made both ways ssad has
    (forward over reverse: ``ssad.jvp(g)``; reverse over reverse: the gradient of
    ``<g, v>``, for real arguments), with central differences of `g`. The primitive's
    adjoint rule is then itself differentiated, in both modes, so a rule whose code
    ssad cannot read again fails here with ssad's own error. Raises AssertionError
    naming the worst mismatch.
    """
    import linecache

    from . import api, forward_mode

    name = primitive_name(primitive)
    floats = [i for i, a in enumerate(args) if _is_float_input(a)]
    if not floats:
        raise AssertionError(f"check_second_order({name}) checked no argument: pass at least one float input")
    rng = np.random.default_rng(seed)
    y = _apply(primitive, *args, **kwargs)
    w, u = _random_like(y, rng), _random_like(y, rng)
    primals = tuple(args[i] for i in floats)
    direction = tuple(_random_like(p, rng) for p in primals)

    parameters = ", ".join(f"x{i}" for i in floats)
    arguments = [f"x{i}" if i in floats else f"c{i}" for i in range(len(args))] + [f"{k}=k_{k}" for k in kwargs]
    call = f"primitive({', '.join(arguments)})"
    if isinstance(primitive, types.GetSetDescriptorType):  # np.ndarray.real: an attribute of the first argument
        call = f"{arguments[0]}.{primitive.__name__}"
    pairing = " + ".join(f"np.sum(np.real(g[{k}] * v{k}))" for k in range(len(floats)))
    parts = [f"y[{k}]" for k, v in enumerate(y) if _is_float_input(v)] if isinstance(y, (tuple, list)) else ["y"]
    weighed = " + ".join(f"np.sum(np.real(w{k} * {p} + u{k} * {p} * {p}))" for k, p in enumerate(parts))
    ws, us = (list(w), list(u)) if isinstance(y, (tuple, list)) else ([w], [u])
    if isinstance(y, (tuple, list)):
        kept = [k for k, v in enumerate(y) if _is_float_input(v)]
        ws, us = [ws[k] for k in kept], [us[k] for k in kept]
    source = _OBJECTIVE_SOURCE.format(
        parameters=parameters, call=call, pairing=pairing, weighed=weighed
    )
    filename = f"<ssad second-order check of {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {
        "np": np,
        "primitive": primitive,
        **{f"w{k}": v for k, v in enumerate(ws)},
        **{f"u{k}": v for k, v in enumerate(us)},
        **{f"c{i}": a for i, a in enumerate(args) if i not in floats},
        **{f"k_{k}": v for k, v in kwargs.items()},
        **{f"v{k}": v for k, v in enumerate(direction)},
    }
    exec(compile(source, filename, "exec"), namespace)
    wrt = tuple(range(len(floats)))
    gradient = namespace["gradient"] = api.grad(namespace["second_order_objective"], wrt=wrt)

    eps = 1e-6
    up = gradient(*(_shift(p, d, eps) for p, d in zip(primals, direction, strict=True)))
    down = gradient(*(_shift(p, d, -eps) for p, d in zip(primals, direction, strict=True)))
    expected = [(np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(up, down, strict=True)]
    results = [("forward over reverse", forward_mode.jvp(gradient, primals, direction)[1])]
    if not any(_is_complex(p) for p in primals):
        results.append(("reverse over reverse", api.grad(namespace["second_order_pairing"], wrt=wrt)(*primals)))
    for label, got in results:
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            if not _is_complex(primals[k]) and _is_complex(g):
                g = np.real(g)
            assert_close(f"{name} {label}, argument {floats[k]}", g, e, rtol, atol)


def _shift(value, direction, step):
    moved = np.asarray(value) + step * np.asarray(direction)
    if np.ndim(value) == 0:
        return complex(moved) if _is_complex(moved) else float(moved)
    return moved
