"""`check_grads`: compare ssad's derivatives with central finite differences."""

import numbers

import numpy as np

from .api import grad, normalize_wrt, vjp
from .forward_mode import jvp
from .errors import SsadError
from .testing import _inner, _random_like
from .trees import flatten


def _perturbed(args, position, direction, step):
    moved = list(args)
    if isinstance(args[position], (dict, list, tuple)):  # a structure: moved through its flat vector
        vector, unflatten = flatten(args[position])
        moved[position] = unflatten(vector + step * direction)
        return moved
    moved[position] = np.asarray(args[position], dtype=np.float64) + step * direction
    if isinstance(args[position], numbers.Real):
        moved[position] = float(moved[position])
    return moved


def _direction(arg, rng):
    """A random direction for `arg`: shaped like it, or, for a dict, list or tuple of
    parameters, one entry per number of its flat vector (`ssad.flatten`)."""
    if isinstance(arg, (dict, list, tuple)):
        return rng.standard_normal(flatten(arg)[0].size)
    direction = rng.standard_normal(np.shape(arg))
    return float(direction) if np.ndim(arg) == 0 else direction


def _along(derivative, arg, direction):
    """<derivative, direction>, through the flat vector for a structure."""
    if isinstance(arg, (dict, list, tuple)):
        derivative = flatten(derivative)[0]
    return float(np.sum(np.asarray(derivative, dtype=np.float64) * direction))


def check_grads(f, args, wrt=None, order=1, *, modes=("reverse", "forward"), directions=3, eps=1e-6,
                rtol=1e-5, atol=1e-7, seed=0):
    """Raise AssertionError naming the worst mismatch between ssad and finite differences.

    `args` is the tuple of positional arguments; `wrt` is a parameter index or name,
    or a tuple of them (default: every float positional argument). The output may
    have any shape. Along `directions` random input directions `v` (and, for reverse
    mode, a random non-uniform output adjoint `dy`):

    - reverse mode compares <pullback(dy), v> with the central difference of <dy, f(x + t v)>;
    - forward mode compares <dy, jvp(f, x, v)> with the same difference.

    `order=2` (for scalar-valued f) checks the derivatives of ssad's own gradient the
    same way: second derivatives, by reverse over reverse and forward over reverse.
    """
    args = tuple(args)
    if wrt is None:
        positions = [i for i, a in enumerate(args) if _is_float(a)]
    else:
        names, _ = normalize_wrt(f, wrt)
        parameters = list(f.__code__.co_varnames[: f.__code__.co_argcount])
        positions = [parameters.index(n) for n in names]
    if not positions:
        raise SsadError("check_grads found no float argument to check; pass wrt=")
    if order == 2:
        gradient = grad(f, wrt=tuple(positions))
        check_grads(gradient.variants.general.function, args, wrt=tuple(positions), order=1, modes=modes, directions=directions,
                    eps=eps, rtol=rtol, atol=atol, seed=seed)
        return
    if order != 1:
        raise SsadError(f"check_grads checks order 1 or 2, not {order}")
    unknown = set(modes) - {"reverse", "forward"}
    if unknown:
        raise SsadError(f"check_grads modes are 'reverse' and 'forward', not {sorted(unknown)}")
    rng = np.random.default_rng(seed)
    value, pullback = vjp(f, *args) if "reverse" in modes else (f(*args), None)
    dy = _random_like(value, rng)
    adjoints = pullback(dy) if pullback is not None else None
    worst = None
    for position in positions:
        for _ in range(directions):
            direction = _direction(args[position], rng)
            up = _inner(dy, f(*_perturbed(args, position, direction, eps)))
            down = _inner(dy, f(*_perturbed(args, position, direction, -eps)))
            expected = (up - down) / (2 * eps)
            found = []
            if adjoints is not None:
                found.append(("reverse", _along(adjoints[position], args[position], direction)))
            if "forward" in modes:
                tangent_of_arg = direction
                if isinstance(args[position], (dict, list, tuple)):  # the direction in the structure's shape
                    tangent_of_arg = flatten(args[position])[1](direction)
                tangents = tuple(tangent_of_arg if i == position else None for i in range(len(args)))
                _, tangent = jvp(f, args, tangents)
                found.append(("forward", _inner(dy, tangent)))
            for mode, got in found:
                error = abs(got - expected)
                excess = error - (atol + rtol * abs(expected))
                if not np.isfinite(got) or excess > 0:
                    excess = np.inf if not np.isfinite(got) else excess
                    if worst is None or excess > worst[0]:
                        worst = (excess, position, expected, got, mode)
    if worst is not None:
        _, position, expected, got, mode = worst
        raise AssertionError(
            f"{f.__qualname__}: derivative ({mode} mode) with respect to argument {position} along a "
            f"random direction: finite differences give {expected!r}, ssad gives {got!r}"
        )


def _is_float(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and np.issubdtype(np.asarray(x).dtype, np.floating)
