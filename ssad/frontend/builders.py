"""Small gast builders and questions every pass asks, written once.

Builders: `name(id)`, `store(id)`, `param(id)`, `assign(target, value)`,
`call(func, *args)`, `constant(value)`, and the marker statements `comment(text)`
and `blank()` that `backend.emit` prints as a comment and an empty line.
Traversal: `walk(node)`, `ast.walk`'s order without its generator layers (every pass
walks trees, often the same ones many times, and this is most of compile time), and
`clone(node)`, a deep copy.
Questions: `local_names(function)`, `assigned_names(statements)`, `stored_names(statements)`,
`loaded_names(statements)`, `is_loop_exit(statement)`, `written_arrays(targets)`,
`constant_key(key)`.
"""

import copy
from collections import deque

import gast

COMMENT = "__ssad_comment__"
BLANK = "__ssad_blank__"
MIRROR = "__ssad_mirror__"  # checker markers (see `transform.mirror`), removed before emitting


def name(identifier):
    """`identifier`, read."""
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def store(identifier):
    """`identifier`, assigned."""
    return gast.Name(id=identifier, ctx=gast.Store(), annotation=None, type_comment=None)


def param(identifier):
    """`identifier`, a parameter."""
    return gast.Name(id=identifier, ctx=gast.Param(), annotation=None, type_comment=None)


def assign(target, value):
    """`target = value`; `target` is a name or a gast target."""
    target = store(target) if isinstance(target, str) else target
    return gast.Assign(targets=[target], value=value, type_comment=None)


def call(func, *args):
    """`func(*args)`; `func` is a name or a gast expression."""
    func = name(func) if isinstance(func, str) else func
    return gast.Call(func=func, args=list(args), keywords=[])


def constant(value):
    return gast.Constant(value=value, kind=None)


# ----- markers -----


def comment(text):
    """A statement that becomes `# text` in the emitted source."""
    return gast.Expr(value=call(COMMENT, constant(text)))


def blank():
    """A statement that becomes an empty line in the emitted source."""
    return gast.Expr(value=call(BLANK))


def is_marker(statement):
    return (
        isinstance(statement, gast.Expr)
        and isinstance(statement.value, gast.Call)
        and isinstance(statement.value.func, gast.Name)
        and statement.value.func.id in (COMMENT, BLANK, MIRROR)
    )


# ----- traversal -----

_AST = gast.AST


def clone(node):
    """A deep copy of a gast tree, or of a list of them: what `copy.deepcopy` gives, about
    five times faster (the compiler copies rule bodies and operands many times a function).
    Values in the nodes that are not nodes (a constant's value, a name's id) are shared."""
    if node.__class__ is list:
        return [clone(n) for n in node]
    if not isinstance(node, _AST):
        return copy.deepcopy(node)
    new = node.__class__.__new__(node.__class__)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, _AST):
            fields[key] = clone(value)
        elif value.__class__ is list:
            fields[key] = [clone(item) if isinstance(item, _AST) else item for item in value]
        else:
            fields[key] = value
    return new


def walk(node):
    """Every node of the tree under `node` (itself included), in `ast.walk`'s order."""
    todo = deque((node,))
    pop, append = todo.popleft, todo.append
    while todo:
        node = pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, _AST):
                append(value)
            elif value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
        yield node


# ----- questions -----


def assigned_names(statements):
    """The names `statements` assign anywhere, in the order they first appear."""
    names = []
    for statement in statements:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id not in names:
                names.append(node.id)
    return names


def local_names(node):
    """Every name the function binds: parameters and assignment targets."""
    names = set()
    for arg in _all_args(node.args):
        names.add(arg.id)
    for child in walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, (gast.Store, gast.Del, gast.Param)):
            names.add(child.id)  # parameters of nested functions and lambdas too
        elif isinstance(child, gast.FunctionDef) and child is not node:
            names.add(child.name)  # a nested def binds its name; the function's own name is global
    return names


def scope_names(node):
    """{"bound": ..., "read": ...}: the names the function `node` binds (its parameters, nested
    `def`s and assignment targets) and reads in its own scope, not in a comprehension's,
    lambda's or nested function's (a comprehension's first `in` runs in the function's)."""
    bound, read = {arg.id for arg in _all_args(node.args)}, set()
    todo = list(node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, gast.Name):
            (read if isinstance(n.ctx, gast.Load) else bound).add(n.id)
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bound.add(n.name)
            todo.extend(n.decorator_list)
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):  # defaults run here
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
        elif isinstance(n, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            todo.append(n.generators[0].iter)
        elif not isinstance(n, gast.ClassDef):
            todo.extend(gast.iter_child_nodes(n))
    return {"bound": bound, "read": read}


def makes_a_list(expr):
    """Whether `expr` makes a list or tuple: a display, a list comprehension, `list(...)`, `tuple(...)`."""
    return isinstance(expr, (gast.List, gast.Tuple, gast.ListComp)) or (
        isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and expr.func.id in ("list", "tuple"))


def list_names(function):
    """The names the function assigns a list or tuple it makes, or appends to."""
    names = set()
    for node in walk(function):
        if (isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and makes_a_list(node.value)):
            names.add(node.targets[0].id)
        elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name)
              and node.func.attr in ("append", "extend", "insert")):
            names.add(node.func.value.id)
    return names


def _all_args(args):
    out = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    if args.vararg is not None:
        out.append(args.vararg)
    if args.kwarg is not None:
        out.append(args.kwarg)
    return out


def stored_names(statements):
    """The set of names `statements` assign anywhere."""
    return {n.id for s in statements for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def loaded_names(statements):
    """The set of names `statements` read anywhere."""
    return {n.id for s in statements for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def is_loop_exit(statement):
    """True for the `if stop: break` a loop body ends with when it can stop early."""
    return (
        isinstance(statement, gast.If)
        and len(statement.body) == 1
        and isinstance(statement.body[0], gast.Break)
        and not statement.orelse
    )


def written_arrays(targets):
    """The names an assignment to `targets` (a tuple's elements) writes into: `y` of `y[0]`."""
    return sorted({
        t.value.id for target in targets for t in walk(target)
        if isinstance(t, gast.Subscript) and isinstance(t.ctx, gast.Store) and isinstance(t.value, gast.Name)
    })


def constant_key(key):
    """A dict display's key written as a literal (`'W'`, `-1`, `(0, 1)`) as one constant node
    (a tuple is one value), else None: a key computed when the code runs."""
    if isinstance(key, gast.Constant):
        return key
    try:
        value = gast.literal_eval(key)
        hash(value)
    except (ValueError, TypeError, SyntaxError):  # not a literal, or a list or a dict (no key)
        return None
    return gast.copy_location(gast.Constant(value=value, kind=None), key)


def read_names(function):
    """The names a nested function or lambda reads that are not its own parameters: what it
    may hold of the enclosing function's (a superset: names it assigns itself count)."""
    arguments = function.args
    own = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    own |= {a.id for a in (arguments.vararg, arguments.kwarg) if a is not None}
    body = [function.body] if isinstance(function, gast.Lambda) else function.body
    return [n for statement in body for n in walk(statement)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in own]


def positional_parameters(function):
    """The names of the live `function`'s parameters that take positional arguments, in order."""
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount])


def parameter_names(function):
    """The names of the live `function`'s parameters that take arguments by name (not `*args`)."""
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
