"""What a value may share with the names it is computed from: views, containers, calls.

`viewed_operands(value, ...)` names the locals whose memory a value of A-normal form may
share: a second name, a subscript, a view method or NumPy function (`.T`, `reshape`,
`np.split`, ...), and, in the user's own code, a call of a function that may return its
argument or part of it. `effects(f)` reads that from the source of a function of the
user's (what its result may share, which parameters it changes in place), through the
functions it calls; `expression_sharers` does it for nested source expressions.
`sharing.Sharing` keeps the groups of names that may share memory.
"""

import copy
import inspect
import weakref

import gast

from ..runtime.closures import closure, joined
from .builders import parameter_names, positional_parameters, read_names, walk
from .namespace import named_object
from .outputs import is_library
from .reach import ELEMENT, EXACT, HELD, elements, integer_names, memory, reached, surely_integer, walked
from .reach import filled_by_call, filled_by_store, fixed_displays, holding as _holding
from .reach import base as _base, items as _items, may_resize as _may_resize, split_rebound as _split_rebound
from .reach import changed_by as _changed_by, shallow as _shallow, whole as _whole
from .view_names import (
    CHANGING_METHODS, CONTAINER_READS, FRESH_BUILTINS, chooses_an_operand, ITEM_READS, RESIZING_METHODS, VALUE_METHODS, VIEW_METHODS,
    VIEW_OF_ANY, copies, shares_attribute, views_first,
)


def viewed_operand(value, is_local, is_static, resolve=None):
    """The local name whose memory `value` may share, or None for a fresh value (the first
    of `viewed_operands`)."""
    sources = viewed_operands(value, is_local, is_static, resolve)
    return sources[0] if sources else None


def viewed_operands(value, is_local, is_static, resolve=None):
    """The local names whose memory `value` may share: [] for a fresh value.

    With `resolve` (a static function expression -> the object it names), calls are
    judged in full, as in the user's own code: a function of the user's may return a view
    of a parameter (`return v[:2]`), which `returned_views` finds in its source; a
    function value (a nested `def`, a lambda, a parameter) or an object ssad cannot read
    may return any operand. Without it, only NumPy's views are known (generated code)."""

    def local(expr):
        return [expr.id] if isinstance(expr, gast.Name) and is_local(expr.id) else []

    def every(exprs):
        return [n for expr in exprs for n in local(expr)]

    if isinstance(value, gast.Name):
        return local(value)
    if isinstance(value, gast.Subscript):
        return local(value.value)
    if isinstance(value, gast.Attribute) and shares_attribute(value.attr):
        return local(value.value)
    if not isinstance(value, gast.Call):
        return []
    func = value.func
    operands = list(value.args) + [k.value for k in value.keywords]
    if isinstance(func, gast.Attribute) and not is_static(func):
        if func.attr in VIEW_METHODS or func.attr in CONTAINER_READS:
            return local(func.value)
        # a method of your object (`o.head()` may return `self.a[:2]`); in generated code, NumPy's
        return [] if func.attr in VALUE_METHODS or resolve is None else local(func.value) + every(operands)
    if not is_static(func):  # a function value: a nested `def`, a lambda, a parameter, a bound method, a partial
        return every(operands) + local(func) if resolve is not None else []  # and what it holds (`o` of `o.head`)
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    callee = resolve(func) if resolve is not None else None
    if callee is copy.deepcopy or callee is copy.copy:
        return []  # a new value (the items `copy.copy` shares are held, as `list(xs)`'s are)
    if callee is closure or callee is joined:
        return [n for expr in _captured_returned(value, resolve) for n in local(expr)]
    if callee is None or is_library(callee):
        if name in VIEW_OF_ANY or (name == "meshgrid" and not copies(value)):
            return every(operands)
        return local(value.args[0]) if value.args and views_first(name, value) else []
    if getattr(callee, "__module__", None) == "builtins" or callee.__class__.__name__ == "builtin_function_or_method":
        # not `max`: `max(m)` of an (n, 1) array is one of its rows, `max(a, b)` of 1-element arrays a or b
        return [] if name in FRESH_BUILTINS else every(operands)
    returned = returned_views(callee)
    if returned is None or any(isinstance(a, gast.Starred) for a in value.args):
        return every([a.value if isinstance(a, gast.Starred) else a for a in operands])
    positional, parameters = positional_parameters(callee), parameter_names(callee)
    chosen = []
    for position, arg in enumerate(value.args):
        name = positional[position] if position < len(positional) else "*"
        if name in returned:
            chosen += local(arg)
    for keyword in value.keywords:
        name = keyword.arg if keyword.arg in parameters else "**"
        if name in returned:
            chosen += local(keyword.value)
    return chosen


def _captured_returned(made, resolve):
    """Of `closure(g_template, z=z, ...)` (a nested function or lambda, `frontend.closures`): the
    captured values a call of it may hand back (`lambda: z[1:]`), which the function value holds;
    all where the template cannot be read or captures functions made after it; of `joined(g_template,
    f, "g")`, the function `f` whose captured values it shares."""
    if made.func is not None and resolve(made.func) is joined:
        return made.args[1:2]
    template = resolve(made.args[0]) if made.args and isinstance(made.args[0], gast.Name) else None
    found = effects(template) if inspect.isfunction(template) else None
    if found is None or any(not isinstance(k.value, gast.Name) for k in made.keywords):
        return [k.value for k in made.keywords]
    return [k.value for k in made.keywords if k.arg in found.returned]


class Effects:
    """What a function of the user's does to the arrays it is passed: `returned`, the
    parameters its result may share ("*" and "**" for `*args` and `**kwargs`), and of
    those `returned_elements`, the ones it may be only an element of (`return v[2]`); `changed`,
    each parameter it may change in place by an augmented assignment (`v /= s`: for an
    array, a write into the caller's array) -> the line in its file that does; `changed_items`,
    the same for an item of it, or a part (`t = v[1:]; t *= s`); `changed_elements`, the
    same for an element of the parameter itself (`t = v[0]; t *= s`: of a 1-D array of
    numbers, nothing of the caller's; see `reach`); `written`,
    the same for any change in place (also `v[i] = e`, `v.append(e)`); `resized`, the same
    for a change that may make a list longer or shorter (`v.append(e)`, `del v[i]`,
    `v[1:] = e`, `v += e`: not `v /= s` or `v[i] = e`)."""

    def __init__(self, returned, changed, written, resized=None, changed_items=None, changed_elements=None,
                 returned_elements=frozenset()):
        self.returned, self.changed, self.written = returned, changed, written
        self.returned_elements = returned_elements
        self.resized = written if resized is None else resized
        self.changed_items = {} if changed_items is None else changed_items
        self.changed_elements = {} if changed_elements is None else changed_elements


_EFFECTS = weakref.WeakKeyDictionary()  # function -> (its free objects, its Effects)
_WORKING = set()  # the code objects being analysed: a recursive call assumes everything


def effects(function):
    """The `Effects` of the user's `function`, or None when ssad cannot read it."""
    from .parse import free_objects, parsed_to_read, same_objects

    if not inspect.isfunction(function):
        return None
    if function.__code__ in _WORKING:
        return Effects(set(parameter_names(function)) | {"*", "**"}, {}, {})
    snapshot = free_objects(function)
    known = _EFFECTS.get(function)
    if known is not None and same_objects(known[0], snapshot):
        return known[1]
    try:
        parsed = parsed_to_read(function)
    except Exception:  # noqa: BLE001 - no source: a function made at run time
        return None
    _WORKING.add(function.__code__)
    try:
        found = _analyse(parsed)
    finally:
        _WORKING.discard(function.__code__)
    _EFFECTS[function] = (snapshot, found)
    return found


def returned_views(function):
    """The parameters whose memory the result of the user's `function` may share, or None."""
    found = effects(function)
    return None if found is None else found.returned


def _analyse(parsed):
    """Flow-insensitive: which parameters each local may share, to a fixed point; then the
    union over the values returned, and the augmented assignments to sharing names. A
    shallow copy of `p` (`y = p.copy()`) shares `p + "[]"`: a change of an item (`y[k] += v`,
    `t = y.pop(); t *= s`) is one of `p`'s, of the copy itself (`y.append(v)`) none. A
    parameter bound anew at the top level (`a = a.copy()`) is another name from there on.
    An element of a parameter itself (`p[k]` with `k` surely an integer, what `for` walks)
    is told apart from other parts (see `reach`)."""
    node, namespace = parsed.node, parsed.namespace
    arguments = node.args
    tokens = {a.id: a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    if arguments.vararg is not None:
        tokens[arguments.vararg.id] = "*"
    if arguments.kwarg is not None:
        tokens[arguments.kwarg.id] = "**"
    node = _split_rebound(node, tokens)
    shares = {name: {token + EXACT} for name, token in tokens.items()}
    assigned = {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def is_static(func):
        while isinstance(func, gast.Attribute):
            func = func.value
        return isinstance(func, gast.Name) and func.id not in shares and func.id not in assigned and func.id in namespace

    def resolve(func):
        return named_object(func, namespace)

    def called(func):
        return resolve(func) if is_static(func) else None

    def is_local(name):
        return name in shares or name in assigned

    integers = integer_names(node, tokens, called)

    displays, resolving = fixed_displays(node, tokens), set()

    def element(found, index, held_by=None):
        """What `held_by[index]` may share, where `held_by` has `found`."""
        known = displays.get(getattr(held_by, "id", None), {})
        if isinstance(index, gast.Constant) and index.value in known and held_by.id not in resolving:
            key = index.value  # `d["w"]` of `d = {"w": v, ...}`: v
            resolving.add(held_by.id)
            try:
                return of(known[key])
            finally:
                resolving.discard(held_by.id)
        return elements(found) if surely_integer(index, integers, called) else _items(found)

    def of(expr):
        """The parameters `expr` may share."""
        return expression_sharers(expr, lambda n: shares.get(n, ()), is_static, resolve, _items, _shallow, element)

    changed = True
    while changed:
        changed = False
        for statement in walk(node):
            pairs = []
            if isinstance(statement, (gast.Assign, gast.AnnAssign)) and statement.value is not None:
                targets = statement.targets if isinstance(statement, gast.Assign) else [statement.target]
                pairs = [(t, of(statement.value)) for t in targets]
            elif isinstance(statement, (gast.For, gast.comprehension)):
                pairs = walked(statement.target, statement.iter, of, called)
            elif isinstance(statement, gast.NamedExpr):
                pairs = [(statement.target, of(statement.value))]
            elif isinstance(statement, gast.FunctionDef) and statement is not node:  # holds what it reads
                held = _holding(set().union(*(of(n) for n in read_names(statement))))
                pairs = [(gast.Name(id=statement.name, ctx=gast.Store(), annotation=None, type_comment=None), held)]
            elif isinstance(statement, gast.AugAssign) and isinstance(statement.value, (gast.List, gast.Tuple)):
                pairs = [(statement.target, _shallow(of(statement.value)))]  # `items += [v]`: items holds v
            # a value put into a container (`d[k] = v`, `items.append(v)`): the container holds it
            fills = [f for t, found in pairs for f in filled_by_store(t, found, is_local)] + (
                filled_by_call(statement, of, is_local) if isinstance(statement, gast.Call) else [])
            for target, found in [*pairs, *((gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None), f)
                                             for n, f in fills)]:
                for stored in walk(target):
                    if isinstance(stored, gast.Name) and isinstance(stored.ctx, gast.Store) and found:
                        before = shares.setdefault(stored.id, set())
                        if not found <= before:
                            before |= found
                            changed = True
    returned, changed, changed_items, changed_elements = set(), {}, {}, {}
    handed_back = set()  # what the values returned may share
    written = {}  # any change in place: `v[i] = e`, `v.attr = e`, `v += e`, `v.append(e)`, `del v[i]`
    resized = {}  # a change that may make a list longer or shorter

    def note(places, found, where):
        for parameter in found:
            places.setdefault(parameter, where)

    def note_rebound(found, where):
        """`t += v` (here, or in a function called) where `t` may be what `found` says."""
        note(changed, reached(found), where)  # the parameter itself
        note(changed_items, {t[:-1] for t in found if t.endswith(HELD)}, where)
        note(changed_elements, {t[:-1] for t in found if t.endswith(ELEMENT)}, where)

    for statement in walk(node):
        if isinstance(statement, gast.Return) and statement.value is not None:
            handed_back |= of(statement.value)
            returned |= _whole(handed_back)
        elif isinstance(statement, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Delete)):
            targets = statement.targets if isinstance(statement, (gast.Assign, gast.Delete)) else [statement.target]
            for target in targets:
                if isinstance(target, (gast.Subscript, gast.Attribute)):
                    found = _changed_by(of(target.value))  # a change of a copy or a display itself is none of `p`'s
                    note(resized, found if _may_resize(statement, target) else (), statement)
                    if isinstance(statement, gast.AugAssign) and not isinstance(getattr(target, "slice", None), gast.Slice):
                        found |= _whole(of(target))  # `y[k] += v` may change the item `y[k]` itself in place
                elif isinstance(statement, gast.AugAssign):
                    found = of(target)
                    note_rebound(found, statement)
                    found = reached(found) | {t[:-1] for t in found if t.endswith((HELD, ELEMENT))}
                    note(resized, found if _may_resize(statement, target) else (), statement)
                else:
                    continue
                note(written, found, statement)
        elif (isinstance(statement, gast.Call) and isinstance(statement.func, gast.Attribute)
              and statement.func.attr in CHANGING_METHODS and not is_static(statement.func)):
            found = _changed_by(of(statement.func.value))
            note(written, found, statement)
            note(resized, found if statement.func.attr in RESIZING_METHODS else (), statement)
        elif isinstance(statement, gast.Call) and is_static(statement.func):
            callee = resolve(statement.func)
            inner = effects(callee) if inspect.isfunction(callee) and not is_library(callee) else None
            passed = list(zip(positional_parameters(callee), statement.args, strict=False)) if inner is not None else []
            passed += [(k.arg, k.value) for k in statement.keywords if k.arg is not None] if inner is not None else []
            for parameter_name, arg in passed:
                found = of(arg)
                # the callee's `t += v` on its parameter, an item of it, an element of it: on those of `found`
                for inner_places, rebound in ((inner.changed, found), (inner.changed_items, _items(found)),
                                              (inner.changed_elements, elements(found))):
                    if parameter_name in inner_places:
                        note_rebound(rebound, inner_places[parameter_name])
                every_part = {_base(t) for t in found}
                if parameter_name in inner.written:
                    note(written, every_part, inner.written[parameter_name])
                if parameter_name in inner.resized:
                    note(resized, reached(found), inner.resized[parameter_name])
    for parameter, where in [*changed.items(), *changed_items.items(), *changed_elements.items()]:
        written.setdefault(parameter, where)

    def lines(places):
        return {p: where if isinstance(where, int) else parsed.line_offset + where.lineno for p, where in places.items()}

    only_elements = {_base(t) for t in handed_back if t.endswith(ELEMENT)} - {
        _base(t) for t in handed_back if not t.endswith(ELEMENT)}
    return Effects(returned, lines(changed), lines(written), lines(resized), lines(changed_items),
                   lines(changed_elements), only_elements)


def expression_sharers(expr, lookup, is_static, resolve, item=None, shallow=None, element=None):
    """What the value of the source expression `expr` may share: the union of `lookup(n)`
    over the names `n` whose memory it may hand back, through views, containers and calls
    (as `viewed_operands`, for nested expressions). With `item` and `shallow` (each a map of
    such sets), a part of a value (`y[k]`, `y.f`, `y.pop()`, what `for` walks) has
    `item(of(y))`, and a shallow copy (`y.copy()`, `copy.copy(y)`) `shallow(of(y))`; with
    `element`, `y[k]` has `element(of(y), k)`, a display holding `y` (`[a, y]`) `holding(of(y))`,
    and `max(a, y)` what `a` or `y` has (`max(items)` what an element of `items` has). A value
    made from `y` (a call's result) has `memory(of(y))`: not `y` itself (see `reach`)."""
    item = item or (lambda found: found)
    # a display's value, a container of the items; a call's result, made from its operands (plain
    # names, and markers of the caller's, are what they are without `element`)
    holds, made = (_holding, memory) if element is not None else (set, set)

    def of(expr):
        if isinstance(expr, gast.Name):
            return set(lookup(expr.id))
        if isinstance(expr, gast.Subscript) and element is not None:
            return element(of(expr.value), expr.slice, expr.value)
        if isinstance(expr, (gast.Subscript, gast.Starred)):
            return item(of(expr.value))
        if isinstance(expr, gast.NamedExpr):
            return of(expr.value)
        if isinstance(expr, gast.Attribute):
            return item(of(expr.value)) if shares_attribute(expr.attr) else set()
        if shallow is not None and isinstance(expr, gast.Call):
            func = expr.func
            if isinstance(func, gast.Attribute) and not is_static(func) and func.attr in ITEM_READS:
                return item(of(func.value))
            if isinstance(func, gast.Attribute) and not is_static(func) and func.attr == "copy" and not expr.args:
                return shallow(of(func.value))
            if is_static(func) and resolve(func) is copy.copy and len(expr.args) == 1:
                return shallow(of(expr.args[0]))
        if isinstance(expr, (gast.Tuple, gast.List, gast.Set)):
            return holds(set().union(*(of(e) for e in expr.elts)))
        if isinstance(expr, gast.Dict):
            return holds(set().union(*(of(v) for v in expr.values)))
        if isinstance(expr, gast.IfExp):
            return of(expr.body) | of(expr.orelse)
        if isinstance(expr, gast.BoolOp):
            return set().union(*(of(v) for v in expr.values))
        if isinstance(expr, gast.Call) and element is not None and chooses_an_operand(expr, is_static, resolve):
            # `max(a, b)` is a or b itself, `max(items, key=f)` one item, as an integer index reads
            chosen = [of(a) for a in expr.args] if len(expr.args) > 1 else [element(of(expr.args[0]), _AN_INT)]
            return set().union(*chosen, *(of(k.value) for k in expr.keywords if k.arg == "default"))
        if isinstance(expr, gast.Lambda):  # a function value holds what it reads of the enclosing function's
            return holds(set().union(*(of(n) for n in read_names(expr))))
        if isinstance(expr, gast.Call):  # `helper(b)` that returns `b[2]`: an element of what `b` has
            one = _returned_elements(expr, is_static, resolve) if element is not None else set()
            # through a function value (`g = lambda: z`, `g = make(z)`): what it holds, too
            held = made(of(expr.func)) if isinstance(expr.func, gast.Name) and not is_static(expr.func) else set()
            return held.union(*(element(of(a), _AN_INT) if id(a) in one else made(of(a))
                                for a in _operands_shared(expr, is_static, resolve)))
        return set()  # arithmetic, comparisons, constants: new values

    return of(expr)


_AN_INT = gast.Constant(value=0, kind=None)



def _returned_elements(call, is_static, resolve):
    """The ids of the operands of `call`, to a function of the user's, of which it may
    return only an element (`return b[2]`: see `Effects`)."""
    if not is_static(call.func) or any(isinstance(a, gast.Starred) for a in call.args):
        return set()
    callee = resolve(call.func)
    found = effects(callee) if inspect.isfunction(callee) and not is_library(callee) else None
    if found is None or not found.returned_elements:
        return set()
    parameters = parameter_names(callee)
    return {id(a) for name, a in zip(positional_parameters(callee), call.args, strict=False) if name in found.returned_elements} | {
        id(k.value) for k in call.keywords if k.arg in parameters and k.arg in found.returned_elements}


def _operands_shared(call, is_static, resolve):
    """The operands of `call` whose memory its result may share."""
    operands = list(call.args) + [k.value for k in call.keywords]
    if any(isinstance(a, gast.Starred) for a in call.args):
        return operands
    if isinstance(call.func, gast.Attribute) and not is_static(call.func):  # a method: its receiver
        if call.func.attr in VIEW_METHODS or call.func.attr in CONTAINER_READS:
            return [call.func.value]
        return [] if call.func.attr in VALUE_METHODS else [call.func.value, *operands]  # or your object's
    # a constant stays itself (`copy=True` tells `np.array` to copy), and shares nothing
    placeholders = [o if isinstance(o, gast.Constant) else _placeholder(k) for k, o in enumerate(operands)]
    keywords = zip(call.keywords, placeholders[len(call.args):], strict=True)
    stand_in = gast.Call(func=call.func, args=placeholders[: len(call.args)],
                         keywords=[gast.keyword(arg=k.arg, value=p) for k, p in keywords])
    chosen = viewed_operands(stand_in, lambda n: n.startswith(_PLACEHOLDER), is_static, resolve)
    return [operands[int(n[len(_PLACEHOLDER):])] for n in chosen]


_PLACEHOLDER = "__ssad_operand_"


def _placeholder(k):
    return gast.Name(id=f"{_PLACEHOLDER}{k}", ctx=gast.Load(), annotation=None, type_comment=None)
