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
import sys
import types
import weakref

import gast
import numpy as np

from .builders import read_names, walk
from .namespace import named_object
from .outputs import LIBRARIES, is_library
from .view_names import CHANGING_METHODS, CONTAINER_READS, VIEW_METHODS, shares_attribute

_KNOWN = weakref.WeakKeyDictionary()  # function -> (its globals' ids, the answer)
_WORKING = set()  # code objects being read: a recursive call adds nothing
_NOT_STATE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, np.ufunc,
              int, float, complex, str, bytes, bool, type(None))


def returns_module_object(function):
    """Whether a value `function` returns may be an object of its module's (see the module)."""
    return _read_once(function, _KNOWN, lambda parsed: _reads_module_object(parsed.node, parsed.namespace), False)


def _read_once(function, known, analyse, nothing):
    """`analyse(parsed)` of the user's `function`, kept in `known` while the objects its free
    names denote stay the same; `nothing` for a library function, one being read already (a
    recursive call adds nothing) or one whose source ssad cannot read."""
    if not inspect.isfunction(function) or is_library(function) or function.__code__ in _WORKING:
        return nothing
    from .parse import free_objects, parsed_to_read, same_objects

    snapshot = free_objects(function)
    found = known.get(function)
    if found is not None and same_objects(found[0], snapshot):
        return found[1]
    try:
        parsed = parsed_to_read(function)
    except Exception:  # noqa: BLE001 - no source: a function made at run time
        return nothing
    _WORKING.add(function.__code__)
    try:
        result = analyse(parsed)
    finally:
        _WORKING.discard(function.__code__)
    known[function] = (snapshot, result)
    return result


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


_OBJECTS = weakref.WeakKeyDictionary()  # function -> (its globals' ids, (changed, read))


def module_objects(function):
    """({id: name} of the objects of its module's (arrays, lists, dicts, objects) the user's
    `function` may change in place, {id: name} of those it may read), through the functions it
    calls by name; ({}, {}) for a library function or one ssad cannot read."""
    return _read_once(function, _OBJECTS, lambda parsed: _objects_of(parsed.node, parsed.namespace), ({}, {}))


def _objects_of(node, namespace):
    arguments = node.args
    local = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    local |= {a.id for a in (arguments.vararg, arguments.kwarg) if a is not None}
    local |= {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def global_value(name):
        return namespace[name.id] if name.id not in local and name.id in namespace else NO_GLOBAL

    def callee_of(call):
        if isinstance(call.func, gast.Name) and call.func.id not in local:
            callee = namespace.get(call.func.id)
            if inspect.isfunction(callee) and not is_library(callee):
                return callee
        return None

    changed, read = object_effects(node, global_value, callee_of)
    return {key: name for key, (name, _) in changed.items()}, {key: name for key, (name, _) in read.items()}


# what a call of an operator's method by name changes (`W.__setitem__(0, v)`, `xs.__iadd__(ys)`)
_CHANGING_DUNDERS = frozenset({"__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                               "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__", "__ior__", "__iand__", "__ixor__",
                               "__setattr__", "__delattr__"})
NO_GLOBAL = object()  # what `global_value` gives for a name that is no global


def object_effects(node, global_value, callee_of):
    """({key: (name, node)} of the objects defined outside the function that the code `node`
    changes in place, {key: (name, node)} of those it reads), with what the functions of the
    user's it calls change and read (`module_objects`, by their source).

    `global_value(name_node)` is the object a global name denotes (`NO_GLOBAL` for a local
    or an unknown name), `callee_of(call)` the function of the user's a call calls, or None.
    A key is the id of an array, list, dict or object of the user's (`is_state`), or
    `(id(module), attribute)` for an attribute of a module or a class of the user's:
    `config.S = v` (or `Config.S = v`) changes what `config.S` reads, and
    `config.A[0] = v` changes the array `config.A` (its id too). The receiver of a change
    (`LOG` of `LOG.append(v)`) is no read."""
    changes, reads, receivers, read_by_callees = {}, {}, set(), {}
    for current in walk(node):
        root, under = None, None  # what is changed, and the node whose .value it is
        if isinstance(current, gast.Call) and isinstance(current.func, gast.Attribute) and (
                current.func.attr in CHANGING_METHODS or current.func.attr in _CHANGING_DUNDERS):
            root, under = current.func.value, current.func
        elif isinstance(current, (gast.Subscript, gast.Attribute)) and isinstance(current.ctx, (gast.Store, gast.Del)):
            root, under = current.value, current
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            under, root = root, root.value
        if isinstance(root, gast.Name):
            for key, name in _keys(root, under, global_value, whole=under is current):
                changes.setdefault(key, (name, current))
                receivers.add(id(under if _is_namespace(global_value(root)) else root))
        if isinstance(current, gast.Call):
            callee = callee_of(current)
            if callee is not None:
                changed_there, read_there = module_objects(callee)
                for key, name in changed_there.items():
                    changes.setdefault(key, (name, current))
                for key, name in read_there.items():
                    read_by_callees.setdefault(key, (name, current))
    for current in walk(node):
        if id(current) in receivers:
            continue
        if isinstance(current, gast.Name) and isinstance(current.ctx, gast.Load):
            value = global_value(current)
            if value is not NO_GLOBAL and is_state(value):
                reads.setdefault(id(value), (current.id, current))
        elif isinstance(current, gast.Attribute) and isinstance(current.ctx, gast.Load) and isinstance(
                current.value, gast.Name) and _is_namespace(global_value(current.value)):
            for key, name in _keys(current.value, current, global_value, whole=False):
                reads.setdefault(key, (name, current))
    for key, read in read_by_callees.items():  # a read of the function's own comes first in messages
        reads.setdefault(key, read)
    return changes, reads


def _keys(root, under, global_value, whole):
    """(key, name) of what a change through the global name `root` changes (see `object_effects`):
    `under` is the node on it (`config.A` of `config.A[0] = v`), `whole` where that node is
    itself the target (`config.S = v`: the attribute is bound anew, no object changes)."""
    value = global_value(root)
    if value is NO_GLOBAL:
        return []
    if is_state(value):
        return [(id(value), root.id)]
    if _is_namespace(value) and isinstance(under, gast.Attribute) and under.value is root:
        name = f"{root.id}.{under.attr}"
        keys = [((id(value), under.attr), name)]
        member = getattr(value, under.attr, None)
        if not whole and is_state(member):
            keys.append((id(member), name))
        return keys
    return []


def _is_namespace(value):
    """Whether `value` is a module or a class of the user's (not NumPy's, SciPy's or the
    standard library's), whose attributes code reads and binds by name (`config.S`, `Config.S`)."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
    elif isinstance(value, type):
        name = value.__module__ or ""
    else:
        return False
    top = name.split(".")[0]
    return top not in LIBRARIES and top not in sys.stdlib_module_names and top != "builtins"
