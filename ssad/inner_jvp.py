"""`ssad.jvp` called inside a function being differentiated: its adjoint and tangent rules.

`grad` of a function that calls `ssad.jvp(f, primals, tangents)` differentiates that call
by reverse mode over f's generated jvp code (`_jvp_adjoint`); `jvp` of it by forward mode
over the same code (`_jvp_tangent`), which gives second directional derivatives. A third
derivative through such a call is refused with the way around.
"""

import inspect
import threading
import weakref

import gast
import numpy as np

from .forward_mode import _jvp_entry, jvp
from .backend import emit
from .backend.driver import compiled
from .errors import SsadError
from .registry import adjoint, tangent
from .runtime.callables import parameters, tangent_parameter
from .runtime.dynamic import call_forward
from .runtime.handles import JVP, Handle
from .runtime.pullbacks import third_order_error
from .runtime.structure import zeros_like_value


@adjoint(jvp)
def _jvp_adjoint(dy, y, f, primals, tangents):
    """Reverse over forward: the pullback of the generated jvp of `f` gives the adjoints of
    the primals and of the tangents."""
    primals, tangents = tuple(primals), tuple(tangents)
    entry, keywords = _jvp_entry(f, primals, tangents)
    _, pullback = call_forward(entry.function, *primals, **keywords)
    adjoints = pullback(tuple(zeros_like_value(v) if d is None else d for d, v in zip(dy, y, strict=True)))
    d_keywords = adjoints[-1]
    positional = parameters(entry.function)[0]  # the jvp's positional parameters are f's
    d_tangents = tuple(
        d_keywords.get(tangent_parameter(n)) if t is not None else None
        for n, t in zip(positional, tangents, strict=False)
    )
    return None, tuple(adjoints[1:-1]), d_tangents


@tangent(jvp)
def _jvp_tangent(tangents, y, f, primals, tangents_of_f):
    """Forward over forward: along primal tangents dx and tangent tangents dt, the tangent of
    `(f(x), J(x) t)` is `(J(x) dx, f''(x)[t, dx] + J(x) dt)`: the jvp of f's generated jvp
    code, whose tangent parameters are renamed so that theirs do not collide with them."""
    primals, tangents_of_f = tuple(primals), tuple(tangents_of_f)
    entry, keywords = _jvp_entry(f, primals, tangents_of_f)
    renamed, new_names = _tangents_renamed(entry)
    d_primals = _per_item(tangents[1], len(primals))
    d_tangents = _per_item(tangents[2], len(tangents_of_f))
    positional = parameters(renamed)[0]
    given = {n: d for n, d in zip(positional, d_primals, strict=False) if d is not None}
    for n, t, d in zip(positional, tangents_of_f, d_tangents, strict=False):
        if t is not None and d is not None:
            given[new_names[tangent_parameter(n)]] = d
    passed = {new_names[k]: v for k, v in keywords.items()}
    if not given:
        return zeros_like_value(y)
    order = list(inspect.signature(renamed).parameters)
    try:
        second = compiled(renamed, tuple(sorted(given, key=order.index)), JVP)
        _, d_y = second.function(*primals, **passed, **{tangent_parameter(n): d for n, d in given.items()})
    except SsadError as error:
        if getattr(error, "message", None) != third_order_error().message:
            raise
        raise SsadError(  # the tangent of the jvp of a call of a function value: one order too many there
            "forward mode over ssad.jvp of a function that calls a function value (a closure, a partial, "
            "a method, a function passed as an argument) is not supported; call that function by its name, "
            "or take ssad.grad of the function that calls ssad.jvp (reverse over forward)"
        ) from None
    return d_y


def _per_item(tangent, count):
    """The tangent of a tuple argument, item by item; None for an item that carries none (a
    zero written as the number 0.0, which forward mode gives a constant of any structure)."""
    if isinstance(tangent, (tuple, list)):
        return tuple(None if _is_zero_number(t) else t for t in tangent)
    return (None,) * count


def _is_zero_number(t):
    return t is None or (isinstance(t, (int, float, np.generic)) and t == 0)


_renamed = weakref.WeakKeyDictionary()  # generated jvp function -> (renamed copy, {old: new name})
_renamed_lock = threading.Lock()


def _tangents_renamed(entry):
    """A copy of the generated jvp function `jvp_f(x, *, d_x)` with its tangent parameters
    renamed (`jvp_f(x, *, tangent_x)`), so that forward mode over it can name the tangent of
    `x` `d_x`; and the map from the old names to the new. The jvp code of the functions it
    calls (`jvp_g(x, d_x=d_x)`) is copied and renamed alike, and the copies call each other."""
    kept = _renamed.get(entry.function)
    if kept is not None:
        return kept
    entries, pending = {}, [entry]  # every jvp code this one calls, transitively (recursion included)
    while pending:
        current = pending.pop()
        if current.function not in entries:
            entries[current.function] = current
            pending.extend(h.entry() for h in current.function.__globals__.values() if _is_jvp_handle(h))
    new_names = {function: _new_names(e) for function, e in entries.items()}
    copies, links = {}, []
    for function, current in entries.items():
        node = gast.parse(current.source).body[0]
        names = new_names[function]
        for child in gast.walk(node):
            if isinstance(child, gast.Name) and child.id in names:
                child.id = names[child.id]
            elif isinstance(child, gast.Call) and isinstance(child.func, gast.Name):
                handle = function.__globals__.get(child.func.id)
                if _is_jvp_handle(handle):  # `jvp_g(x, d_x=t)`: the renamed copy of jvp_g, by its names
                    callee = handle.entry().function
                    for keyword in child.keywords:
                        keyword.arg = new_names[callee].get(keyword.arg, keyword.arg)
                    child.func.id = f"{child.func.id}_renamed"
                    links.append((function, child.func.id, callee))
        node.name = f"{node.name}_renamed"
        scope = emit.compile_module(node.name, emit.to_source([node]), function.__globals__)
        renamed = scope[node.name]
        renamed.__defaults__ = function.__defaults__
        renamed.__kwdefaults__ = {names.get(k, k): v for k, v in (function.__kwdefaults__ or {}).items()} or None
        copies[function] = renamed
    for caller, global_name, callee in links:  # bound once every copy exists
        copies[caller].__globals__[global_name] = copies[callee]
    with _renamed_lock:
        for function, renamed in copies.items():
            _renamed.setdefault(function, (renamed, new_names[function]))
        return _renamed[entry.function]


def _is_jvp_handle(value):
    return isinstance(value, Handle) and value.variant == JVP and value.half is None


def _new_names(entry):
    """{`d_x`: `tangent_x`} for each parameter x of `entry` with a tangent, avoiding every name
    its code uses (and the name `d_tangent_x` forward mode over it will give the new one)."""
    node = gast.parse(entry.source).body[0]
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(entry.function.__globals__)
    new_names = {}
    for parameter in entry.wrt:
        base, n = f"tangent_{parameter}", 1
        new = base
        while new in taken or tangent_parameter(new) in taken:
            n += 1
            new = f"{base}_{n}"
        taken |= {new, tangent_parameter(new)}
        new_names[tangent_parameter(parameter)] = new
    return new_names


@adjoint(_jvp_adjoint)
@tangent(_jvp_adjoint)
@adjoint(_jvp_tangent)
@tangent(_jvp_tangent)
def _third_order_through_jvp(*args, **kwargs):
    raise SsadError(
        "a third derivative through ssad.jvp called inside differentiated code is not supported; "
        "take ssad.jacobian(ssad.hessian(f)) of the function instead"
    )
