"""Which functions of the user's may return an object defined outside them (a global array).

ssad reads a global array as a constant: a write into it (`t = W; t[0] = v`) would change
what the gradient takes to be fixed, so the lowering refuses a write through any name that
may hold one (`module_level` in `control`). A name can get one from a call, too: a helper
that returns `W` on some path (`return W if flag else x * 1.0`), a view of it (`W[1:]`), a
field of a global object (`MODEL.w`), or what another such helper returns. This module
reads that from the helper's source, flow-insensitively (a local that may hold one on any
path counts); a function ssad cannot read counts as returning none (it is refused or
treated as a primitive elsewhere).

Assumes: the user's function has source ssad can parse (`parse.parsed_to_read`).
Guarantees: `returns_module_object(f)` is True where a value `f` returns may be, hold or
view an array, list, dict, set or object found in its globals, or in a function it
calls whose source ssad reads.
"""

import inspect
import types
import weakref

import gast
import numpy as np

from .builders import read_names, walk
from .namespace import named_object
from .outputs import is_library
from .view_names import CONTAINER_READS, VIEW_METHODS, shares_attribute

_KNOWN = weakref.WeakKeyDictionary()  # function -> (its globals' ids, the answer)
_WORKING = set()  # code objects being read: a recursive call adds nothing
_NOT_STATE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, np.ufunc,
              int, float, complex, str, bytes, bool, type(None))


def returns_module_object(function):
    """Whether a value `function` returns may be an object of its module's (see the module)."""
    if not inspect.isfunction(function) or is_library(function) or function.__code__ in _WORKING:
        return False
    from .parse import free_objects, parsed_to_read, same_objects

    snapshot = free_objects(function)
    known = _KNOWN.get(function)
    if known is not None and same_objects(known[0], snapshot):
        return known[1]
    try:
        parsed = parsed_to_read(function)
    except Exception:  # noqa: BLE001 - no source: a function made at run time
        return False
    _WORKING.add(function.__code__)
    try:
        found = _reads_module_object(parsed.node, parsed.namespace)
    finally:
        _WORKING.discard(function.__code__)
    _KNOWN[function] = (snapshot, found)
    return found


def is_state(value):
    """Whether `value` is an object whose memory a write may change (an array, a list, an
    object of the user's), not a number, a string, a function or a module."""
    return not isinstance(value, _NOT_STATE) and not callable(value) or isinstance(value, np.ndarray)


def _own_nodes(node):
    """The nodes of the function `node`'s body, not those of functions defined in it."""
    stack = list(node.body)
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            stack.extend(gast.iter_child_nodes(current))


def _reads_module_object(node, namespace):
    arguments = node.args
    local = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    local |= {a.id for a in (arguments.vararg, arguments.kwarg) if a is not None}
    local |= {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def is_static(expr):
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id not in local and expr.id in namespace

    holders = set()  # the locals that may hold one

    def may_be(expr):
        if isinstance(expr, gast.Name):
            return expr.id in holders or (is_static(expr) and is_state(namespace[expr.id]))
        if isinstance(expr, (gast.Subscript, gast.Starred, gast.NamedExpr)):
            return may_be(expr.value)
        if isinstance(expr, gast.Attribute):
            return shares_attribute(expr.attr) and may_be(expr.value) or (
                is_static(expr) and is_state(named_object(expr, namespace)))
        if isinstance(expr, gast.IfExp):
            return may_be(expr.body) or may_be(expr.orelse)
        if isinstance(expr, gast.BoolOp):
            return any(may_be(v) for v in expr.values)
        if isinstance(expr, (gast.Tuple, gast.List, gast.Set)):
            return any(may_be(e) for e in expr.elts)
        if isinstance(expr, gast.Dict):
            return any(may_be(v) for v in expr.values)
        if isinstance(expr, gast.Lambda):  # a function value: a call of it may return what it reads
            return any(may_be(n) for n in read_names(expr))
        if isinstance(expr, gast.Call):
            func = expr.func
            if isinstance(func, gast.Name) and func.id in holders:  # `g = lambda: W; g()`
                return True
            if is_static(func):
                callee = named_object(func, namespace)
                if inspect.isfunction(callee) and not is_library(callee):
                    return returns_module_object(callee)
                return any(may_be(a) for a in _shared_operands(expr, is_static, namespace))
            if isinstance(func, gast.Attribute) and (func.attr in VIEW_METHODS or func.attr in CONTAINER_READS):
                return may_be(func.value)  # `W.reshape(...)`, `G.get(k)`, `G.pop()`
        return False

    grown = True
    while grown:
        grown = False
        for statement in _own_nodes(node):
            pairs = []
            if isinstance(statement, (gast.Assign, gast.AnnAssign)) and statement.value is not None:
                targets = statement.targets if isinstance(statement, gast.Assign) else [statement.target]
                pairs = [(t, statement.value) for t in targets]
            elif isinstance(statement, (gast.For, gast.comprehension)):
                pairs = [(statement.target, statement.iter)]
            elif isinstance(statement, gast.NamedExpr):
                pairs = [(statement.target, statement.value)]
            elif isinstance(statement, gast.FunctionDef) and statement.name not in holders:
                if any(may_be(n) for n in read_names(statement)):  # a nested function holds what it reads
                    holders.add(statement.name)
                    grown = True
            for target, value in pairs:
                if may_be(value):
                    stored = {n.id for n in walk(target) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
                    grown |= not stored <= holders
                    holders |= stored
    return any(isinstance(s, gast.Return) and s.value is not None and may_be(s.value) for s in _own_nodes(node))


def _shared_operands(call, is_static, namespace):
    """The operands of a library call its result may share (`np.asarray(W)` is W)."""
    from .views import _operands_shared

    return _operands_shared(call, is_static, lambda f: named_object(f, namespace))
