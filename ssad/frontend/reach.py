"""What a change through a name reaches of a function's parameters (see `views.effects`).

A name may hold the parameter `p` itself, as it was passed (the token `p=`: `z = p`,
`z = p if c else q`), a part of its memory (`p`: a view, `z = p.T`, or a container or value
made from it), one element of `p` itself (`p:`: `t = p[2]`, `t = p[k]` with `k` surely an
integer, `for t in p`), something `p` holds (`p.`: an item at any depth, or a view of one:
`t = p[1:]`, `t = p.T[0]`), a shallow copy of `p` (`p[]`: `y = p.copy()`, a new container
of `p`'s items), or a container the function builds by a display holding `p` itself
(`p+1`: `c = [a, p]`, `{"w": p}`; `p+2`: `[[p]]`), an element of it (`p;1`: `(p[0], 0.5)`)
or a part of its memory (`p~1`: `[p[1:]]`, `items.append(p.T)`), nested k deep (deeper counts
as DEPTH). A change of the name itself reaches `p` for the first four; a change of a
container holding `p` (`c[0] = v`, `c.append(v)`) is none of `p`'s, though a change of
what it holds is. An item read from a container holding `p` is `p` itself one level down
(`c[1]`), an element of it at the last level (`(p[0], 0.5)[0]`), a part of its memory or
something it holds for `p~1`, and something `p` holds for the rest.

An element of `p` itself is told apart for one case: a function that rebinds it (`t /= s`)
changes nothing of the caller's when `p` is a 1-D array of numbers (its elements are
numbers), and changes `p` for a 2-D array (its rows are views) or a list of lists.
"""

import copy
import math

import gast
import numpy as np

from .builders import scope_names, walk


EXACT, ELEMENT, HELD, SHALLOW = "=", ":", ".", "[]"
HOLDS, HOLDS_ELEMENT, HOLDS_PART, DEPTH = "+", ";", "~", 3  # `p+k`, `p;k`, `p~k`: k nested displays, at most DEPTH


def nested(token):  # (p, HOLDS, HOLDS_ELEMENT or HOLDS_PART, k) of `p+k`, `p;k` and `p~k`, else None
    if len(token) > 2 and token[-2] in (HOLDS, HOLDS_ELEMENT, HOLDS_PART) and token[-1].isdigit():
        return token[:-2], token[-2], int(token[-1])
    return None


def base(token):  # `p=`, `p`, `p:`, `p.`, `p[]`, `p+1`, `p;2` -> `p`
    if token.endswith(SHALLOW):
        return token[: -len(SHALLOW)]
    if nested(token) is not None:
        return token[:-2]
    return token[:-1] if token[-1:] in (EXACT, ELEMENT, HELD) else token


def exact(found):  # the parameters `found` may be, as passed
    return {t[:-1] for t in found if t.endswith(EXACT)}


def reached(found):  # the parameters `found` may be, or a part of the memory of (a view)
    return {base(t) for t in found if t == base(t) or t.endswith(EXACT)}


def _innermost(p, kind):  # what the last level of a container `p+k`, `p;k` or `p~k` holds
    return {p + EXACT} if kind == HOLDS else {p + ELEMENT} if kind == HOLDS_ELEMENT else {p, p + HELD}


def _levels(p, kind, depth):  # a container `p+k` (`p;k`, `p~k`) at every level up to k
    return {f"{p}{kind}{k}" for k in range(1, depth + 1)}


def memory(found):  # of a value made from `found` (a call's result): not `p` itself
    made = set()
    for t in found:
        inside = nested(t)
        if inside is None:
            made.add(base(t) if t.endswith(EXACT) else t)
        else:  # a new container of the same items (`list(c)`), or one of them (`max(c)`), at any level
            p, kind, depth = inside
            made |= {base(t) if t.endswith(EXACT) else t for t in _innermost(p, kind)} | _levels(p, kind, depth)
    return made


def holding(found):  # of a display (`[a, p]`, `(p[0], 0.5)`, `{"w": p}`) holding `found`
    made = set()
    for t in found:
        inside = nested(t)
        if t.endswith((EXACT, ELEMENT)):
            made.add(base(t) + (HOLDS if t.endswith(EXACT) else HOLDS_ELEMENT) + "1")
        elif inside is not None:
            made.add(f"{inside[0]}{inside[1]}{min(inside[2] + 1, DEPTH)}")
        elif not t.endswith(SHALLOW):  # a part of `p`'s memory, or something it holds
            made.add(base(t) + HOLDS_PART + "1")
        else:
            made |= memory({t})
    return made


def _unnested(p, kind, depth):  # what an element of a container `p+k`, `p;k` or `p~k` holds: one level down
    down = {f"{p}{kind}{depth - 1}"} if depth > 1 else _innermost(p, kind)
    return down | ({f"{p}{kind}{depth}"} if depth == DEPTH else set())  # DEPTH: that deep or deeper


def items(found):  # an item at any depth, or a view of one
    made = set()
    for t in found:
        inside = nested(t)
        made.add(base(t) + HELD)
        if inside is not None:
            p, kind, depth = inside
            made |= _innermost(p, kind) | _levels(p, kind, depth)
    return made


def elements(found):  # `z[k]`, `for t in z`: an element of `p` itself (or of a shallow copy: the same), else held
    made = set()
    for t in found:
        inside = nested(t)
        made |= _unnested(*inside) if inside is not None else {base(t) + (ELEMENT if t.endswith((EXACT, SHALLOW)) else HELD)}
    return made


def walked(target, iterated, of, called):
    """[(target, what it may share)] for `for target in iterated`: an element of what it
    walks (`of(expr)`: what `expr` may share; `called(f)`: the object the static function
    expression `f` names, or None)."""
    walker = called(iterated.func) if isinstance(iterated, gast.Call) else None
    arguments = iterated.args if walker is not None else []
    if any(isinstance(a, gast.Starred) for a in arguments) or any(k.arg not in ("start", "strict") for k in (
            iterated.keywords if walker is not None else [])):
        walker = None
    if walker is enumerate and len(arguments) in (1, 2) and isinstance(target, gast.Tuple) and len(target.elts) == 2:
        return [(target.elts[1], elements(of(arguments[0])))]  # the count: a new int
    if walker is zip and isinstance(target, gast.Tuple) and len(target.elts) == len(arguments):
        return [(t, elements(of(a))) for t, a in zip(target.elts, arguments, strict=True)]
    if walker is reversed and len(arguments) == 1:
        return [(target, elements(of(arguments[0])))]
    return [(target, elements(of(iterated)))]


def shallow(found):  # a copy of a container holding `p` holds `p` as well
    return {t if nested(t) is not None else base(t) + SHALLOW for t in found}


def whole(found):  # the parameters whose memory a change of `found` itself reaches
    return {base(t) for t in found if not t.endswith(SHALLOW)}


def changed_by(found):  # ... where a change of a container holding `p` (`p+k`, `p;k`, `p~k`) is none of p's
    return {base(t) for t in found if not t.endswith(SHALLOW) and nested(t) is None}


def split_rebound(node, tokens):
    """A copy of the function `node` in which a parameter bound anew by a statement at its
    top level (`a = a.copy()`, one name) is another name from that statement on: there it
    holds what the new value holds, whatever came before. Not for a parameter a nested
    function or lambda mentions (it may run after the statement)."""
    nested = [n for n in walk(node) if n is not node and isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))]
    captured = {n.id for f in nested for n in walk(f) if isinstance(n, gast.Name)}
    split, renamed = {}, None
    for position, statement in enumerate(node.body):
        if (isinstance(statement, (gast.Assign, gast.AnnAssign)) and statement.value is not None
                and len(getattr(statement, "targets", [None])) == 1):
            target = statement.targets[0] if isinstance(statement, gast.Assign) else statement.target
            if isinstance(target, gast.Name) and target.id in tokens and target.id not in captured | set(split):
                renamed = renamed or copy.deepcopy(node)
                split[target.id] = target.id + SPLIT
                for later in renamed.body[position:]:
                    for n in walk(later):
                        if isinstance(n, gast.Name) and n.id == target.id and (later is not renamed.body[position] or n.ctx.__class__ is gast.Store):
                            n.id = split[target.id]
    return renamed or node


SPLIT = "'"  # not in any Python name


def may_resize(statement, target):
    """Whether `statement`, changing `target` in place, may make a list longer or shorter:
    `v += e` and `v *= n` (a list's extend and repeat), `del v[i]`, `v[a:b] = e`."""
    if isinstance(statement, gast.AugAssign) and isinstance(target, gast.Subscript):
        return isinstance(target.slice, gast.Slice)  # `v[a:b] += e` of a list
    if isinstance(statement, gast.AugAssign):
        return isinstance(statement.op, (gast.Add, gast.Mult)) and isinstance(target, gast.Name)
    if isinstance(statement, gast.Delete):
        return isinstance(target, gast.Subscript)
    return isinstance(target, gast.Subscript) and isinstance(target.slice, gast.Slice)


_INTEGER_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod, gast.LShift, gast.RShift,
                gast.BitAnd, gast.BitOr, gast.BitXor)


# NumPy's functions whose result is an integer, or with an axis an array of integers (as an
# index, an element of the array or a new array: `z[np.argmin(a)]`)
_INDICES = (np.argmin, np.argmax, np.nanargmin, np.nanargmax)


def surely_integer(expr, names, called):
    """Whether `expr` is an `int` wherever it runs (or an array of them, which as an index
    makes a new array): a constant (not a bool: `z[True]` is a view), a name of `names`,
    `len(...)`, `int(...)`, `math.floor(...)`, `np.argmin(...)`, and arithmetic on those.
    `called(f)`: the object the static function expression `f` names, or None."""
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, int) and not isinstance(expr.value, bool)
    if isinstance(expr, gast.Name):
        return expr.id in names
    if isinstance(expr, gast.UnaryOp):
        return isinstance(expr.op, (gast.USub, gast.UAdd, gast.Invert)) and surely_integer(expr.operand, names, called)
    if isinstance(expr, gast.BinOp):
        return isinstance(expr.op, _INTEGER_OPS) and all(surely_integer(e, names, called) for e in (expr.left, expr.right))
    if isinstance(expr, gast.IfExp):
        return all(surely_integer(e, names, called) for e in (expr.body, expr.orelse))
    if isinstance(expr, gast.Call) and not any(isinstance(a, gast.Starred) for a in expr.args):
        callee = called(expr.func)
        return callee in _INDICES or (not expr.keywords and len(expr.args) == 1 and callee in (len, int, math.floor, math.ceil))
    return False


def integer_names(node, parameters, called):
    """The local names of the function `node` that hold an `int` wherever they are bound:
    each binding is `k = <int>`, `k += <int>`, `for k in range(...)`, or the count of
    `for k, v in enumerate(...)` (in a comprehension too). Not a parameter, nor a name a
    nested function takes as its own, declares global or nonlocal; and bound in the function's
    own scope (a name bound only in a comprehension or a nested function is another name in
    the function: a global, say)."""
    bindings, excluded, local = {}, set(parameters), scope_names(node)["bound"]
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Param):
            excluded.add(n.id)
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            excluded.update(n.names)
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            bindings.setdefault(n.id, [])
    for n in walk(node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
            bindings[n.targets[0].id].append(n.value)
        elif isinstance(n, (gast.AugAssign, gast.AnnAssign)) and isinstance(n.target, gast.Name) and n.value is not None:
            bindings[n.target.id].append(n.value if isinstance(n, gast.AnnAssign) or isinstance(n.op, _INTEGER_OPS)
                                         else None)
            bindings[n.target.id].append(n.target)  # `k += 1`: k's value before counts too
        elif isinstance(n, (gast.For, gast.comprehension)):
            walked = called(n.iter.func) if isinstance(n.iter, gast.Call) else None
            if walked is range and isinstance(n.target, gast.Name):
                bindings[n.target.id].append(gast.Constant(value=0, kind=None))
            elif walked is enumerate and isinstance(n.target, gast.Tuple) and len(n.target.elts) == 2:
                count = n.target.elts[0]
                if isinstance(count, gast.Name):
                    bindings[count.id].append(gast.Constant(value=0, kind=None))
    # every other binding (`a, k = ...`, `with ... as k`, a walked value) leaves a Store the above did not count
    counted = {}
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            counted[n.id] = counted.get(n.id, 0) + 1
    for name, values in bindings.items():
        own = len([v for v in values if not (isinstance(v, gast.Name) and v.id == name)])
        if own != counted[name]:
            excluded.add(name)
    names = {n for n in bindings if n not in excluded and n in local}
    while True:  # the largest set whose every binding is an int given the set
        kept = {n for n in names if all(v is not None and surely_integer(v, names, called) for v in bindings[n])}
        if kept == names:
            return names
        names = kept


def fixed_displays(node, parameters):
    """{name: {key: item}} of the names the function `node` binds once, by `name = <display>`
    (a list or tuple display with no `*`, a dict display with constant keys), in its own
    scope, and reads only by a constant index or key (`d["w"]`, `items[-1]`): such a read is
    that item's expression, whatever the order of the statements (no other statement changes
    the container)."""
    stores, bases, spoiled = {}, set(), set(parameters)
    for n in walk(node):
        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load) and isinstance(n.value, gast.Name) and (
                isinstance(n.slice, gast.Constant)):
            bases.add(id(n.value))
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            spoiled.update(n.names)
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in bases:
            spoiled.add(n.id)
        elif isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores.setdefault(n.id, []).append(n)
    own = scope_names(node)["bound"]
    found = {}
    for n in walk(node):
        if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)):
            continue
        name, value = n.targets[0].id, n.value
        if name in spoiled or name not in own or stores.get(name) != [n.targets[0]]:
            continue
        if isinstance(value, (gast.List, gast.Tuple)) and not any(isinstance(e, gast.Starred) for e in value.elts):
            size = len(value.elts)
            found[name] = {**{k - size: e for k, e in enumerate(value.elts)}, **dict(enumerate(value.elts))}
        elif isinstance(value, gast.Dict) and all(isinstance(k, gast.Constant) for k in value.keys):
            found[name] = {k.value: v for k, v in zip(value.keys, value.values, strict=True)}
    return found



def filled_by_call(call, of, local):
    """[(name, what it may then hold)] for a call that puts a value into the local container
    `name` (`local(name)`): `items.append(v)`, `insert`, `setdefault`, `add`; its items for
    `extend` and `update`. `of(expr)`: what an expression may share."""
    func, args = call.func, call.args
    if not isinstance(func, gast.Attribute) or not isinstance(func.value, gast.Name) or not local(func.value.id) or any(
            isinstance(a, gast.Starred) for a in args):
        return []
    one = {"append": 0, "add": 0, "insert": 1, "setdefault": 1}.get(func.attr)
    if one is not None and len(args) > one:
        return [(func.value.id, holding(of(args[one])))]
    if func.attr in ("extend", "update"):
        return [(func.value.id, set().union(*(shallow(of(a)) for a in args[:1]), *(holding(of(k.value)) for k in call.keywords)))]
    return []


def filled_by_store(target, found, local):
    """The same for a store into a part of a local container: `d[k] = v`, `o.w = v`,
    `d[k][j] = v` (deeper), and its items for `d[a:b] = vs` (`found`: what the value may share)."""
    depth, root = 0, target
    while isinstance(root, (gast.Subscript, gast.Attribute)):
        depth, root = depth + 1, root.value
    if depth == 0 or not isinstance(root, gast.Name) or not local(root.id):
        return []
    held = shallow(found) if isinstance(target, gast.Subscript) and isinstance(target.slice, gast.Slice) else holding(found)
    for _ in range(depth - 1):
        held = holding(held)
    return [(root.id, held)]
