"""Python's protocols on objects of the user's, made explicit where the kinds are known.

`for v in p` walks what p's `__iter__` gives: A-normal form reads it as `iterated(p)`,
which `primitives.operation` takes for that method on a name that may hold an object.
Python runs the same method for `list(p)`, `tuple(p)`, `sum(p)`, `sorted(p)`, `max(p)`,
`min(p)`, a `zip` over `p`, `items.extend(p)` and an unpacking `a, b = p`; here each
reads `iterated(p)` first, so the method is what runs and is differentiated, never a
rule that takes `p` for a sequence. Likewise `math.sqrt(u)` and `np.float64(u)` convert
`u` by its `__float__` (`float(u)` first), `p[1:3]` and `p[i, j]` give `__getitem__`
a slice or a tuple (made a name first, as the method call takes names), and `a += v`
(which A-normal form writes `a_1 = a + v`, see `Program.augmented`) calls `__iadd__`
first: `a_1 = iadd(a, v)`, which `primitives.operation` takes for that method.

Assumes: a Program in A-normal form whose kinds are settled (`kinds.settle`).
Guarantees: `lower(program)` makes those steps explicit for the names in
`program.objects`, and returns whether it changed anything (the kinds are then settled
again); it leaves code on other values as it was.
"""

import inspect

import gast
import numpy as np

from ..frontend import primitives
from ..frontend.outputs import is_library
from ..frontend.view_names import CHANGING_METHODS, ITEM_READS, VALUE_METHODS, VIEW_METHODS
from ..frontend.views import effects
from ..frontend.builders import assign, call, constant, name
from ..registry import REGISTRY
from ..runtime import concat, iterated, repeated, zipped
from ..runtime.operators import IN_PLACE
from ..runtime.receivers import not_walked
from ..runtime.refusals import fresh_result, list_changed
from .activity import list_mutation, simple_statements

# Builtins that walk their first operand (`max` and `min` when given one)
_WALKING = {list, tuple, sum, sorted, max, min}
# ... or every operand
_WALKING_ALL = {zipped}
# Conversions by `__float__` (a `math` function's operand, a NumPy float's)
_FLOATS = {np.float64, np.float32}


def lower(program):
    """Make the protocols run on objects in `program` explicit (see the module); whether
    anything changed."""
    lowering = _Lowering(program)
    program.node.body = lowering.block(program.node.body)
    return lowering.changed


class _Lowering:
    def __init__(self, program):
        self.program = program
        self.objects = getattr(program, "objects", set())
        self.changed = False

    def block(self, statements):
        out = []
        for statement in statements:
            if isinstance(statement, gast.If):
                statement.body = self.block(statement.body)
                statement.orelse = self.block(statement.orelse)
            elif isinstance(statement, (gast.For, gast.While)):
                statement.body = self.block(statement.body)
            else:
                self.before = []
                self.statement(statement)
                out.extend(gast.copy_location(s, statement) for s in self.before)
            out.append(statement)
        return out

    def statement(self, statement):
        value = getattr(statement, "value", None)
        if isinstance(statement, gast.Expr) and isinstance(value, gast.Call) and isinstance(
                value.func, gast.Attribute) and value.func.attr == "extend" and value.args:
            value.args[0] = self.walked(value.args[0])  # `items.extend(p)`
            return
        if not isinstance(statement, gast.Assign):
            return
        target = statement.targets[0]
        if isinstance(target, gast.Name) and target.id in self.program.augmented and isinstance(value, gast.BinOp) and (
                self.holds_object(value.left) or self.holds_object(value.right)):
            method = "__i" + primitives.DUNDERS[primitives.BINARY[type(value.op)]][2:]  # `a += v`: __iadd__ first
            statement.value = call(self.helper(method.strip("_"), IN_PLACE[method]), value.left, value.right)
            self.changed = True
        elif isinstance(target, gast.Tuple):
            statement.value = self.walked(value)  # `a, b = p`
        elif isinstance(value, gast.Subscript) and self.holds_object(value.value):
            value.slice = self.index(value.slice)
        elif isinstance(value, gast.Call) and any(self.holds_object(a) for a in value.args) and primitives.is_static(
                value.func, self.program):
            self.call(value)

    def call(self, value):
        try:
            callee = primitives.static_value(value.func, self.program)
        except Exception:  # noqa: BLE001 - no such attribute: the front end reports it
            return
        if callee in _WALKING and (len(value.args) == 1 or callee in (sum, list, tuple, sorted)) and value.args:
            value.args[0] = self.walked(value.args[0])
        elif callee in _WALKING_ALL:
            value.args = [self.walked(a) for a in value.args]
        elif callee in _FLOATS or getattr(callee, "__module__", None) == "math" and REGISTRY.has_rule(
                callee, getattr(self.program, "mode", "reverse")):
            value.args = [self.converted(a) for a in value.args]

    def holds_object(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.objects

    def walked(self, atom):
        """A name for `iterated(atom)` when `atom` may hold an object, else `atom`."""
        if not self.holds_object(atom):
            return atom
        return self.made(f"iterated_{atom.id}", call(self.helper("iterated", iterated), name(atom.id)))

    def converted(self, atom):
        """A name for `float(atom)` when `atom` may hold an object, else `atom`."""
        if not self.holds_object(atom):
            return atom
        return self.made(f"float_{atom.id}", call(self.helper("float", float), name(atom.id)))

    def index(self, index):
        """`index` as an atom: a slice made by `slice(...)`, a tuple by its display."""
        if isinstance(index, gast.Slice):
            bounds = [part if part is not None else constant(None) for part in (index.lower, index.upper, index.step)]
            return self.made("part", call(self.helper("slice", slice), *bounds))
        if isinstance(index, gast.Tuple):
            parts = [self.index(part) for part in index.elts]
            return self.made("index", gast.Tuple(elts=parts, ctx=gast.Load()))
        return index

    def made(self, hint, value):
        self.changed = True
        fresh = self.program.namer.fresh(hint)
        self.before.append(assign(fresh, value))
        return name(fresh)

    def helper(self, preferred, value):
        return name(self.program.namespace.bind(preferred, value))


# ----- list changes on what may be an object of the user's -----


def guard_list_changes(program):
    """Put `list_changed(r, ...)` before each `r.append(v)` (`extend`, `insert`, `push`) and
    `t = r.pop(...)` whose receiver `r` is not known to hold a list (a parameter, an attribute,
    an item, a call's result): A-normal form reads them as changes of a list by their
    method's name alone, and an object of the user's with a method so named is refused
    where the code runs (see `runtime.refusals.list_changed`)."""
    lists = None
    helper = None

    def guarded(block):
        nonlocal helper, lists
        out = []
        for statement in block:
            if isinstance(statement, gast.If):
                statement.body, statement.orelse = guarded(statement.body), guarded(statement.orelse)
            elif isinstance(statement, (gast.For, gast.While)):
                statement.body = guarded(statement.body)
            else:
                change = _list_change(statement, program)
                if change is not None and lists is None:
                    lists = _known_lists(program)
                if change is not None and change[0] not in lists:
                    receiver, method = change
                    helper = helper or program.namespace.bind("list_changed", list_changed)
                    filename, lineno, col, _ = program.parsed.where(statement)
                    text = f".{method}(...)"
                    check = call(name(helper), name(receiver), *map(constant, (method, text, filename, lineno, col)))
                    out.append(gast.copy_location(gast.Expr(value=check), statement))
            out.append(statement)
        return out

    program.node.body = guarded(program.node.body)


def _list_change(statement, program):
    """(receiver, method) of `r.append(v)`-like statements and of `t = r.pop(...)`, else None."""
    mutation = list_mutation(statement)
    if mutation is not None:
        return mutation[0], statement.value.func.attr
    value = getattr(statement, "value", None)
    if isinstance(statement, gast.Assign) and isinstance(value, gast.Call) and isinstance(
            value.func, gast.Attribute) and value.func.attr == "pop":
        op = primitives.operation(value, program)
        if op.kind == primitives.POP and isinstance(op.args[0], gast.Name):
            return op.args[0].id, "pop"
    return None


def guard_shared_results(program):
    """Put `fresh_result(r, v, ...)` after each `r = v.copy()` (`v.sum()`, any method named like
    one of an array, a list, a dict, a set, a string or a tuple) whose receiver `v` is not
    known to be a NumPy value, in a function that may change a value in place: A-normal form
    reads the method as theirs, a new value, and a method of the user's class so named that
    returns a field is refused where the code runs (see `runtime.refusals.fresh_result`)."""
    if not _may_change_in_place(program):
        return
    helper = None

    def guarded(block):
        nonlocal helper
        out = []
        for statement in block:
            out.append(statement)
            if isinstance(statement, gast.If):
                statement.body, statement.orelse = guarded(statement.body), guarded(statement.orelse)
            elif isinstance(statement, (gast.For, gast.While)):
                statement.body = guarded(statement.body)
            elif _named_like_a_value_method(statement, program):
                value = statement.value
                helper = helper or program.namespace.bind("fresh_result", fresh_result)
                filename, lineno, col, _ = program.parsed.where(statement)
                text = f".{value.func.attr}(...)"
                check = call(name(helper), name(statement.targets[0].id), name(value.func.value.id),
                             *map(constant, (value.func.attr, text, filename, lineno, col)))
                out.append(gast.copy_location(gast.Expr(value=check), statement))
        return out

    program.node.body = guarded(program.node.body)


def _named_like_a_value_method(statement, program):
    """Whether `statement` is `r = v.method(...)`, the method named as above, `v` a local not
    known to be a NumPy value."""
    value = getattr(statement, "value", None)
    if not (isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name)
            and isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name)):
        return False
    method, receiver = value.func.attr, value.func.value
    return (method in VALUE_METHODS and method not in VIEW_METHODS and method not in ITEM_READS
            and receiver.id not in program.arrays and not primitives.is_static(receiver, program))


def _may_change_in_place(program):
    """Whether the user's function may change a value in place: `y[k] = v`, `t += v`, a method
    that changes its object (`r.fill(0)`), NumPy's `out=`, a call of a function of the user's
    that changes what it is given, or of a function value."""
    for node in gast.walk(program.parsed.node):
        if isinstance(node, gast.AugAssign) or (isinstance(node, gast.Subscript)
                                                and isinstance(node.ctx, (gast.Store, gast.Del))):
            return True
        if not isinstance(node, gast.Call):
            continue
        if any(k.arg == "out" for k in node.keywords) or (
                isinstance(node.func, gast.Attribute) and node.func.attr in CHANGING_METHODS):
            return True
        if not primitives.is_static(node.func, program):
            if not isinstance(node.func, gast.Attribute):
                return True  # a function value
            continue
        try:
            callee = primitives.static_value(node.func, program)
        except Exception:  # noqa: BLE001 - no such attribute: the front end reports it
            continue
        if inspect.isfunction(callee) and not is_library(callee):
            found = effects(callee)
            if found is None or found.written:
                return True
    return False


_LIST_MAKERS = {list, sorted, concat, repeated}


def _known_lists(program, displays=(gast.List,)):
    """The local names every assignment of which makes a list (a display, `list(...)`,
    `sorted(...)`, a join or a repetition, a copy of such a name): a greatest fixed point.
    With more `displays` (a tuple's, a dict's), the names of those containers too."""
    sources = {}  # name -> the names it is copied from; None once an assignment makes something else
    for statement in simple_statements(program.body):
        if not isinstance(statement, gast.Assign):
            continue
        for target in statement.targets:
            for n in gast.walk(target):
                if not isinstance(n, gast.Name) or not isinstance(n.ctx, gast.Store) or sources.get(n.id, ()) is None:
                    continue
                made = _made(statement.value, program, displays) if target is n else None
                sources[n.id] = None if made is None else sources.get(n.id, set()) | made
    lists = {n for n, copied in sources.items() if copied is not None} - set(program.params)
    changed = True
    while changed:
        changed = False
        for target in list(lists):
            if not sources[target] <= lists:
                lists.discard(target)
                changed = True
    return lists


def _made(value, program, displays):
    """The names `value` copies (empty for a list it makes), or None where it may be another thing."""
    if isinstance(value, displays):
        return set()
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, gast.Call) and primitives.is_static(value.func, program):
        try:
            return set() if primitives.static_value(value.func, program) in _LIST_MAKERS else None
        except Exception:  # noqa: BLE001 - no such attribute: the front end reports it
            return None
    return None


# ----- forward mode: walks and subscripts of what may be an object of the user's -----


def guard_walks(program, activity):
    """In forward mode, put `not_walked(v)` before each statement that indexes, unpacks or
    walks by `extend` a value `v` ssad cannot tell the kind of (an attribute, an item, a
    call's result) where a tangent flows through it: the tangent code indexes and unpacks
    the tangent of `v` as Python does, and the tangent of an object of the user's is an
    object of its class, whose own `__getitem__` or `__iter__` would run on it. Reverse
    mode's rules check the value itself (`runtime.receivers.not_walked`)."""
    told = set(program.arrays) | set(program.objects) | set(program.params)
    made = []  # the names of the containers ssad sees made, found once a statement asks

    def guarded(block, known):
        out = []
        for statement in block:
            if isinstance(statement, gast.If):
                statement.body, statement.orelse = guarded(statement.body, set(known)), guarded(statement.orelse,
                                                                                                   set(known))
            elif isinstance(statement, (gast.For, gast.While)):
                _forget_assigned(known, statement)
                statement.body = guarded(statement.body, set(known))
            else:
                walked = _walked_name(statement, program, activity)
                if walked is not None and walked not in told and not made:
                    made.append(_known_lists(program, (gast.List, gast.Tuple, gast.Dict)))
                if walked is not None and walked not in told and walked not in made[0] and walked not in known:
                    known.add(walked)
                    check = call(name(program.namespace.bind("not_walked", not_walked)), name(walked))
                    out.append(gast.copy_location(gast.Expr(value=check), statement))
                _forget_assigned(known, statement)
            out.append(statement)
        return out

    program.node.body = guarded(program.node.body, set())


def _forget_assigned(known, statement):
    """Drop from `known` (names checked) those `statement` assigns."""
    if known:
        known.difference_update(n.id for n in gast.walk(statement) if isinstance(n, gast.Name)
                                and isinstance(n.ctx, gast.Store))


def _walked_name(statement, program, activity):
    """The name `t = v[i]`, `a, b = v` or `items.extend(v)` indexes or walks where a tangent
    flows through it, else None."""
    mutation = list_mutation(statement)
    if mutation is not None:
        items, method, operands = mutation
        walked = operands[0] if method == "extend" and operands else None
        return walked.id if isinstance(walked, gast.Name) and activity.is_active(walked) else None
    if not isinstance(statement, gast.Assign) or not isinstance(statement.value, (gast.Name, gast.Subscript)):
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, gast.Tuple) and isinstance(value, gast.Name):
        walked = value
    elif isinstance(target, gast.Name) and isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        walked = value.value
        if primitives.operation(value, program).kind != primitives.GETITEM:
            return None
    else:
        return None
    return walked.id if activity.is_active(walked) else None
