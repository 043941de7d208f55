"""Which names may share array memory, so in-place writes stay exact.

`x += v` and `x[i] = v` write into x's array. Lowering them is exact only when no
other name that is read afterwards shares that memory (a copy of the name, or a
view: a slice, `.T`, `reshape`, ...). `Sharing` tracks, during A-normal form,
which names may share memory and refuses the writes that would make the result
depend on aliasing, with a message that says how to write them instead.
"""

import inspect
import weakref

import gast

from .builders import walk
from .namespace import named_object
from .outputs import is_library

# Methods and NumPy functions whose result may be a view of (or be) their first operand.
VIEW_METHODS = {
    "reshape", "ravel", "transpose", "swapaxes", "squeeze", "view", "diagonal", "T", "mT", "real", "imag",
    "flat", "base", "astype", "__array__", "conj", "conjugate",  # `z.conj()` of a real array is z
}
VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "flip", "fliplr", "flipud", "real", "imag", "asarray_chkfinite", "require", "stop_gradient",
    "matrix_transpose", "permute_dims", "rot90", "trim_zeros", "ascontiguousarray", "asfortranarray",
    "asmatrix", "real_if_close", "as_strided", "sliding_window_view",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack",  # lists of views
    "iterated",  # what a `for` loop walks: the array or list itself
}
# NumPy functions whose result may be a view of any of their operands.
VIEW_OF_ANY = {"broadcast_arrays", "einsum"}  # `np.einsum("ij->ji", a)` is a view of a
# Builtins that build a new container of the operand's items (which may be shared).
NEW_CONTAINERS = (list, tuple, dict, sorted)
# Builtins that build new values (numbers, strings, ranges) rather than hand back an
# operand or its parts, as `list(z)` (the rows of z), `max(a, b)` and `next(it)` do.
FRESH_BUILTINS = {
    "len", "range", "float", "int", "complex", "bool", "str", "repr", "abs", "round", "pow", "sum", "divmod",
    "isinstance", "issubclass", "hasattr", "callable", "print", "any", "all", "hash", "id", "type", "format",
}

AUGMENTED = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.FloorDiv: "//",
    gast.Mod: "%",
}


class Sharing:
    def __init__(self, parameters):
        self.groups = {}  # name -> the set of names that may share its memory now
        self.view_groups = {}  # the same without what containers hold
        # name -> every name that shared its memory at some point: a name rebound later
        # (in a loop, say) still shared the array earlier, which the tape must restore.
        self.ever = {}
        self.parameters = set(parameters)
        self.second_names = {}  # name -> the name it was assigned from (`b = a`)

    def record(self, name, value, is_local, is_static, resolve=None):
        """After `name = value`: remember the locals whose memory `value` may share.

        With `resolve` (the user's code), a list, tuple or dict display shares the arrays it
        holds too (`held = [x, z]`: a write into `z` changes what `held[1]` reads), for the
        refusals; `ever`, which the tape reads, keeps to views and second names."""
        views = viewed_operands(value, is_local, is_static, resolve)
        held = held_operands(value, is_local) if resolve is not None else []
        self.second_names.pop(name, None)
        if isinstance(value, gast.Name) and views:
            self.second_names[name] = views[0]
        _join(self.groups, name, views + held)
        _join(self.view_groups, name, views)
        for member in self.view_groups.get(name, ()):
            self.ever.setdefault(member, set()).update(self.view_groups[name])

    def others(self, name):
        return sorted(n for n in self.groups.get(name, ()) if n != name)

    def same_list(self, name):
        """The other names of the list `name`: what `name.append(v)` changes. An item read
        from the list (`h = hs[-1]`) is not changed by it, as a view of an array would be
        by a write."""

        def root(n):
            seen = set()
            while n in self.second_names and n not in seen:
                seen.add(n)
                n = self.second_names[n]
            return n

        return [n for n in self.others(name) if root(n) == root(name)]

    def shares_a_parameter(self, name):
        return any(n in self.parameters for n in self.groups.get(name, ()) if n != name)


def _join(groups, name, sources):
    """`name` now shares the memory of `sources` (and of whatever shares theirs). The names
    that shared its old value keep it in their groups: under control flow the old value may
    still be the one it holds. A name rebound since (its own group dropped) stays out."""
    groups.pop(name, None)
    if not sources:
        return
    group = groups.setdefault(sources[0], {sources[0]})
    for source in sources[1:]:
        other = groups.get(source, {source})
        if other is group:
            continue
        for member in other:
            if member == source or groups.get(member) is other:
                groups[member] = group
        group |= other
    group.add(name)
    groups[name] = group


def held_operands(value, is_local):
    """The local names a list, tuple or dict display holds."""
    if isinstance(value, (gast.Tuple, gast.List)):
        items = value.elts
    elif isinstance(value, gast.Dict):
        items = value.values
    else:
        return []
    return [item.id for item in items if isinstance(item, gast.Name) and is_local(item.id)]


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
    if isinstance(value, gast.Attribute) and value.attr in VIEW_METHODS:
        return local(value.value)
    if not isinstance(value, gast.Call):
        return []
    func = value.func
    operands = list(value.args) + [k.value for k in value.keywords]
    if isinstance(func, gast.Attribute) and not is_static(func):
        return local(func.value) if func.attr in VIEW_METHODS else []
    if not is_static(func):  # a function value: a nested `def`, a lambda, a parameter
        return every(operands) if resolve is not None else []
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    callee = resolve(func) if resolve is not None else None
    if callee is None or is_library(callee):
        if name in VIEW_OF_ANY:
            return every(operands)
        return local(value.args[0]) if name in VIEW_FUNCTIONS and value.args else []
    if getattr(callee, "__module__", None) == "builtins" or callee.__class__.__name__ == "builtin_function_or_method":
        return [] if name in FRESH_BUILTINS else every(operands)
    returned = returned_views(callee)
    if returned is None or any(isinstance(a, gast.Starred) for a in value.args):
        return every([a.value if isinstance(a, gast.Starred) else a for a in operands])
    positional, parameters = _positional(callee), _parameter_list(callee)
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


def _positional(function):
    """The names of `function`'s parameters that take positional arguments, in order."""
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount])


def _parameter_list(function):
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


class Effects:
    """What a function of the user's does to the arrays it is passed: `returned`, the
    parameters its result may share ("*" and "**" for `*args` and `**kwargs`); `changed`,
    each parameter it may change in place by an augmented assignment (`v /= s`: for an
    array, a write into the caller's array) -> the line in its file that does."""

    def __init__(self, returned, changed):
        self.returned, self.changed = returned, changed


_EFFECTS = weakref.WeakKeyDictionary()  # function -> (its free objects, its Effects)
_WORKING = set()  # the code objects being analysed: a recursive call assumes everything


def effects(function):
    """The `Effects` of the user's `function`, or None when ssad cannot read it."""
    from .parse import free_objects, parsed_to_read, same_objects

    if not inspect.isfunction(function):
        return None
    if function.__code__ in _WORKING:
        return Effects(set(_parameter_list(function)) | {"*", "**"}, {})
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
    union over the values returned, and the augmented assignments to sharing names."""
    node, namespace = parsed.node, parsed.namespace
    arguments = node.args
    shares = {a.id: {a.id} for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    if arguments.vararg is not None:
        shares[arguments.vararg.id] = {"*"}
    if arguments.kwarg is not None:
        shares[arguments.kwarg.id] = {"**"}
    assigned = {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def is_static(func):
        while isinstance(func, gast.Attribute):
            func = func.value
        return isinstance(func, gast.Name) and func.id not in shares and func.id not in assigned and func.id in namespace

    def resolve(func):
        return named_object(func, namespace)

    def operands_shared(call):
        """The operands of `call` whose memory its result may share."""
        operands = list(call.args) + [k.value for k in call.keywords]
        if any(isinstance(a, gast.Starred) for a in call.args):
            return operands
        if isinstance(call.func, gast.Attribute) and not is_static(call.func):  # a method: its receiver
            return [call.func.value] if call.func.attr in VIEW_METHODS else []
        placeholders = [_placeholder(k) for k in range(len(operands))]
        keywords = zip(call.keywords, placeholders[len(call.args):], strict=True)
        stand_in = gast.Call(func=call.func, args=placeholders[: len(call.args)],
                             keywords=[gast.keyword(arg=k.arg, value=p) for k, p in keywords])
        chosen = viewed_operands(stand_in, lambda n: n.startswith(_PLACEHOLDER), is_static, resolve)
        return [operands[int(n[len(_PLACEHOLDER):])] for n in chosen]

    def of(expr):
        """The parameters `expr` may share."""
        if isinstance(expr, gast.Name):
            return set(shares.get(expr.id, ()))
        if isinstance(expr, (gast.Subscript, gast.Starred, gast.NamedExpr)):
            return of(expr.value)
        if isinstance(expr, gast.Attribute):
            return of(expr.value) if expr.attr in VIEW_METHODS else set()
        if isinstance(expr, (gast.Tuple, gast.List, gast.Set)):
            return set().union(*(of(e) for e in expr.elts))
        if isinstance(expr, gast.Dict):
            return set().union(*(of(v) for v in expr.values))
        if isinstance(expr, gast.IfExp):
            return of(expr.body) | of(expr.orelse)
        if isinstance(expr, gast.BoolOp):
            return set().union(*(of(v) for v in expr.values))
        if isinstance(expr, gast.Call):
            return set().union(*(of(a) for a in operands_shared(expr)))
        return set()  # arithmetic, comparisons, constants: new values

    changed = True
    while changed:
        changed = False
        for statement in walk(node):
            pairs = []
            if isinstance(statement, (gast.Assign, gast.AnnAssign)) and statement.value is not None:
                targets = statement.targets if isinstance(statement, gast.Assign) else [statement.target]
                pairs = [(t, statement.value) for t in targets]
            elif isinstance(statement, gast.For):
                pairs = [(statement.target, statement.iter)]
            elif isinstance(statement, gast.NamedExpr):
                pairs = [(statement.target, statement.value)]
            for target, value in pairs:
                found = of(value)
                for stored in walk(target):
                    if isinstance(stored, gast.Name) and isinstance(stored.ctx, gast.Store) and found:
                        before = shares.setdefault(stored.id, set())
                        if not found <= before:
                            before |= found
                            changed = True
    returned, changed = set(), {}
    for statement in walk(node):
        if isinstance(statement, gast.Return) and statement.value is not None:
            returned |= of(statement.value)
        elif isinstance(statement, gast.AugAssign) and isinstance(statement.target, gast.Name):
            for parameter in shares.get(statement.target.id, ()):
                changed.setdefault(parameter, statement)
        elif isinstance(statement, gast.Call) and is_static(statement.func):
            callee = resolve(statement.func)
            inner = effects(callee) if inspect.isfunction(callee) and not is_library(callee) else None
            if inner is None or not inner.changed:
                continue
            passed = list(zip(_positional(callee), statement.args, strict=False))
            passed += [(k.arg, k.value) for k in statement.keywords if k.arg is not None]
            for parameter_name, arg in passed:
                if parameter_name in inner.changed:
                    for parameter in of(arg):
                        changed.setdefault(parameter, inner.changed[parameter_name])
    lines = {p: parsed.line_offset + statement.lineno for p, statement in changed.items()
             if not isinstance(statement, int)}
    lines.update({p: line for p, line in changed.items() if isinstance(line, int)})
    return Effects(returned, lines)


_PLACEHOLDER = "__ssad_operand_"


def _placeholder(k):
    return gast.Name(id=f"{_PLACEHOLDER}{k}", ctx=gast.Load(), annotation=None, type_comment=None)


def reads_after(statements, position, names, enclosing_loops):
    """Whether any of `names` is read by statements[position + 1:] or in an enclosing loop."""
    later = statements[position + 1 :] + list(enclosing_loops)
    for statement in later:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
                return True
    return False
