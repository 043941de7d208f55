"""Generated code rewritten for Numba, line for line.

Assumes: the source of one generated function (`backend.emit`), and its namespace.
Guarantees: `for_numba(source, namespace)` returns source with the same number of
lines, each line standing for the same line of the original (so the map from
generated lines to the user's, `runtime.locations`, holds for it too), in which

- the tape, one list of mixed values, becomes one list per value it records:
  `tape.push(y)` is `tape_y.append(y)` and `y = tape.pop()` is `y = tape_y.pop()`.
  The pushes and pops of one name nest as those of the tape do, so each list is a
  stack of values of one type, which Numba can type;
- `tape.push(shape_only(h))` keeps `h` itself: a compiled function holds typed values;
- `restore_part(x, i, tape.pop())` pops from the list of the parts of `x`;
- `for t in reversed(r)` (`r` a range) runs `range(...)` backward;
- a name bound to `None` only so that its first push has a value to record (a name a
  loop first assigns) is recorded after each assignment rather than before it, and
  read back from the top of its stack: its stack then holds values of one type, not
  `None` and arrays, which Numba would type as optional and refuse to compute with;
- `del a, b` (values released, `optimize.release`) is `pass`: Numba takes no `del`.

Anything else of the tape (a copy of it, a push Numba cannot pair with its pop)
raises `NotNative` naming the line; the caller then keeps the NumPy code.
"""

import ast

import numpy as np

from ..runtime import Tape, broadcast_like, restore_part, saved_part, shape_only
from ..runtime.scatter import add_at, getitem_adjoint
from .stacks import record_after_assignment


def array_of(x):
    """`np.array(x)` of a name, which Numba takes for a list but not for an array (see
    `overloads`): lowered code calls this instead."""
    return np.array(x)


class NotNative(Exception):
    """Generated code that this stage cannot give to Numba: (message, generated line)."""

    def __init__(self, message, line=None):
        super().__init__(message)
        self.message = message
        self.line = line


def for_numba(source, namespace, reductions=None):
    """(`source` rewritten as the module docstring says, {name: value} it reads besides
    `namespace`). `reductions` maps (NumPy reduction, keepdims) to the function that
    computes it along an axis in compiled code."""
    tree = ast.parse(source)
    bindings = {}
    changed = _lower_reductions(tree, namespace, reductions or {}, bindings)
    lowered = (Tape, restore_part, saved_part, shape_only, getitem_adjoint, add_at)
    helpers = {name: value for name, value in namespace.items() if any(value is v for v in lowered)}
    helper_name = {value: name for name, value in helpers.items()}
    tapes = _tape_names(tree, helper_name.get(Tape))
    numpy_names = {name for name, value in namespace.items() if value is np}
    lines = source.splitlines()
    stacks = []
    rewritten = {}  # line number -> new text
    creations = []

    named = {}  # key -> the name of its stack
    pushes, pops = {}, {}  # name -> the lines that push it, that pop into it
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}

    def stack_of(key, base=None):
        if key not in named:
            name = f"{base or key}_stack"
            while name in namespace or name in bound or name in stacks:
                name = "_" + name
            named[key] = name
            stacks.append(name)
        return named[key]

    def part_stack(container, index):
        """The stack of the parts of `container` at `index`: parts at other indices differ in type."""
        key = (container, ast.unparse(index))
        count = sum(1 for k in named if isinstance(k, tuple) and k[0] == container and k != key)
        return stack_of(key, f"{container}_parts{count or ''}")

    def is_tape_call(node, method):
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in tapes
            and node.func.attr == method
        )

    def is_helper_call(node, helper):
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and helper_name.get(helper) == node.func.id
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.args.kwonlyargs:
            rewritten[node.lineno] = _without_keyword_only(node, lines[node.lineno - 1])
            continue
        if isinstance(node, ast.For) and _is_reversed_range(node.iter):
            # `for t in reversed(r)`, which Numba does not take, as a range running backward
            r, count = _range_and_count(node.iter.args[0])
            header = lines[node.lineno - 1]
            indent = header[: len(header) - len(header.lstrip())]
            backward = f"range({r}.start + ({count} - 1) * {r}.step, {r}.start - {r}.step, -{r}.step)"
            rewritten[node.lineno] = f"{indent}for {ast.unparse(node.target)} in {backward}:"
            continue
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.For, ast.While, ast.If)):
            continue
        text = None
        if isinstance(node, ast.Delete):
            text = "pass"  # Numba refuses `del`, and frees what compiled code made by itself
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if isinstance(node.targets[0], ast.Name) and node.targets[0].id in tapes:
                creations.append(node.lineno)  # `tape = Tape()`: the lists are made here, once all are known
                text = "pass"
            elif is_tape_call(node.value, "pop") and isinstance(node.targets[0], ast.Name):
                pops.setdefault(node.targets[0].id, []).append(node.lineno)
                text = f"{node.targets[0].id} = {stack_of(node.targets[0].id)}.pop()"
        elif isinstance(node, ast.Expr) and is_tape_call(node.value, "push") and len(node.value.args) == 1:
            pushed = node.value.args[0]
            if is_helper_call(pushed, shape_only):
                pushed = pushed.args[0]
            if isinstance(pushed, ast.Name):
                pushes.setdefault(pushed.id, []).append(node.lineno)
                text = f"{stack_of(pushed.id)}.append({pushed.id})"
            elif is_helper_call(pushed, saved_part) and isinstance(pushed.args[0], ast.Name):
                text = f"{part_stack(pushed.args[0].id, pushed.args[1])}.append({ast.unparse(pushed)})"
        elif isinstance(node, ast.Expr) and is_helper_call(node.value, restore_part):
            container, index, old = node.value.args
            if isinstance(container, ast.Name) and is_tape_call(old, "pop"):
                stack = part_stack(container.id, index)
                text = f"{ast.unparse(node.value.func)}({container.id}, {ast.unparse(index)}, {stack}.pop())"
        if text is None:
            text = _basic_scatter(node, helper_name, numpy_names)
        if text is None and node.lineno in changed:
            text = ast.unparse(node)
        if text is None:
            if any(isinstance(n, ast.Name) and n.id in tapes for n in ast.walk(node)):
                if isinstance(node, ast.Return):
                    raise NotNative("the tape of a loop handed from the forward half to the backward half "
                                    "(compiled halves pass no tape yet)", node.lineno)
                raise NotNative("a use of the tape this stage does not pair with a push and a pop", node.lineno)
            continue
        if node.end_lineno != node.lineno:
            raise NotNative("a statement of the tape over several lines", node.lineno)
        indent = lines[node.lineno - 1][: len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())]
        rewritten[node.lineno] = indent + text
    _paired_by_name(pushes, pops)
    record_after_assignment(tree, tapes, helper_name.get(shape_only), named, lines, rewritten)
    made = "; ".join(f"{stack} = []" for stack in stacks) or "pass"
    for number in creations:
        rewritten[number] = rewritten[number].replace("pass", made)
    for number, text in rewritten.items():
        lines[number - 1] = text
    return "\n".join(lines) + "\n", bindings


def _paired_by_name(pushes, pops):
    """NotNative unless every name the tape records is restored into that name, at as many
    places: one list per name then pairs each pop with the push the tape would give it. A
    value recorded under one name and restored into another (`tape.push(A_matmul_v)`,
    later `v = tape.pop()`, where a copy was renamed away) would be popped from the wrong
    list."""
    for name in sorted(set(pushes) | set(pops)):
        if len(pushes.get(name, ())) != len(pops.get(name, ())):
            line = min(pushes.get(name, []) + pops.get(name, []))
            raise NotNative(f"the tape restores a value it records as `{name}` under another name (one list a "
                            "name would pair the wrong values)", line)


def _lower_reductions(tree, namespace, reductions, bindings):
    """`np.max(x, axis=1, keepdims=True)` and the like, which Numba does not take, as calls
    of `reductions`' functions (bound in `bindings`); the lines changed."""
    numpy_names = {name for name, value in namespace.items() if value is np}
    changed = set()

    class Reductions(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            func = node.func
            keywords = {k.arg: k.value for k in node.keywords}
            if (isinstance(func, ast.Attribute) and func.attr == "sum" and not node.args and set(keywords) ==
                    {"axis", "keepdims"} and isinstance(keywords["keepdims"], ast.Constant)
                    and keywords["keepdims"].value is True and ("sum", True) in reductions and numpy_names
                    and not (isinstance(func.value, ast.Name) and func.value.id in numpy_names)):
                # `g.sum(axis=1, keepdims=True)`, an adjoint summed back to a column
                node = ast.copy_location(ast.Call(
                    func=ast.Attribute(ast.Name(min(numpy_names), ast.Load()), "sum", ast.Load()),
                    args=[func.value], keywords=node.keywords), node)
                func = node.func
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id in numpy_names and (func.attr, False) in reductions):
                return node
            if set(keywords) - {"axis", "keepdims"} or len(node.args) > 2 or (len(node.args) == 2 and "axis" in keywords):
                return node
            keepdims = keywords.get("keepdims", ast.Constant(False))
            axis = node.args[1] if len(node.args) == 2 else keywords.get("axis")
            if axis is None or not isinstance(keepdims, ast.Constant) or not isinstance(keepdims.value, bool):
                return node
            if isinstance(axis, ast.Constant) and axis.value is None and not keepdims.value:
                changed.add(node.lineno)  # over all elements: Numba's own, which takes no axis=None
                return ast.copy_location(ast.Call(func=func, args=[node.args[0]], keywords=[]), node)
            if func.attr == "sum" and not keepdims.value:
                return node  # Numba's own
            function = reductions[(func.attr, keepdims.value)]
            name = function.__name__
            while name in namespace and namespace[name] is not function:
                name = "_" + name
            bindings[name] = function
            changed.add(node.lineno)
            return ast.copy_location(ast.Call(func=ast.Name(name, ast.Load()), args=[node.args[0], axis], keywords=[]), node)

    Reductions().visit(tree)

    def bound(function):
        name = function.__name__
        while name in namespace and namespace[name] is not function:
            name = "_" + name
        bindings[name] = function
        return name

    def numpy_call(node, attribute, count):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in numpy_names
                and node.func.attr == attribute and len(node.args) == count and not node.keywords)

    class Arrays(ast.NodeTransformer):
        """`np.array(x)` of a name as `array_of(x)`, which copies an array as NumPy does;
        `np.broadcast_to(t, np.shape(y))` as `broadcast_like(t, y)`, which Numba compiles
        for a number `y` too (its `np.broadcast_to` fails on the empty shape)."""

        def visit_Call(self, node):
            self.generic_visit(node)
            if numpy_call(node, "broadcast_to", 2) and numpy_call(node.args[1], "shape", 1):
                changed.add(node.lineno)
                call = ast.Call(ast.Name(bound(broadcast_like), ast.Load()), [node.args[0], node.args[1].args[0]], [])
                return ast.copy_location(call, node)
            func = node.func
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id in numpy_names and func.attr == "array"
                    and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name)):
                return node
            changed.add(node.lineno)
            return ast.copy_location(ast.Call(ast.Name(bound(array_of), ast.Load()), node.args, []), node)

    Arrays().visit(tree)

    class Indices(ast.NodeTransformer):
        """`np.s_[1:, k]`, an index passed as a value, as `(slice(1, None), k)`, which Numba
        holds; one with `None` (a new axis) stays, for `_basic_scatter` or for Numba to refuse."""

        def visit_Subscript(self, node):
            self.generic_visit(node)
            if not (isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)
                    and node.value.value.id in numpy_names and node.value.attr == "s_"):
                return node
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(i, ast.Constant) and i.value is None for i in items) or not all(
                    isinstance(i, (ast.Slice, ast.Name, ast.Constant)) for i in items):
                return node
            changed.add(node.lineno)
            values = [_slice_call(i) if isinstance(i, ast.Slice) else i for i in items]
            made = ast.Tuple(values, ast.Load()) if isinstance(node.slice, ast.Tuple) else values[0]
            return ast.copy_location(made, node)

    Indices().visit(tree)
    return changed


def _slice_call(piece):
    parts = [piece.lower, piece.upper] + ([piece.step] if piece.step is not None else [])
    return ast.Call(ast.Name("slice", ast.Load()), [p if p is not None else ast.Constant(None) for p in parts], [])


def _tape_names(tree, tape_class):
    """The names bound to `Tape()` in `tree`."""
    if tape_class is None:
        return set()
    return {
        node.targets[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == tape_class
    }


def _basic_scatter(statement, helper_name, numpy_names):
    """`d_x = getitem_adjoint(g, x, np.s_[:, None])` and `d_x = add_at(d_x, np.s_[1:], g)`,
    whose index Numba cannot hold as a value, written out on one line as a write into
    zeros (or into the adjoint) at that index; None when `statement` is neither."""
    if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
            and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    call = statement.value
    if not isinstance(call.func, ast.Name) or len(call.args) != 3 or call.keywords:
        return None
    reading = call.func.id == helper_name.get(getitem_adjoint)
    if not reading and call.func.id != helper_name.get(add_at):
        return None
    index = call.args[2] if reading else call.args[1]
    if not (isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute)
            and isinstance(index.value.value, ast.Name) and index.value.value.id in numpy_names
            and index.value.attr == "s_"):
        return None
    items = index.slice.elts if isinstance(index.slice, ast.Tuple) else [index.slice]
    if not all(isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and i.value is None)
               or isinstance(i, (ast.Name, ast.Constant)) for i in items):
        return None
    # x[items] has one axis per slice and per None (a name or number drops one): the
    # values written are the adjoint with the None axes taken at 0
    kept = [i for i in items if not (isinstance(i, ast.Constant) and i.value is None)]
    read = [ast.Constant(0) if isinstance(i, ast.Constant) and i.value is None else ast.Slice()
            for i in items if isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and i.value is None)]
    target = statement.targets[0].id
    written = ", ".join(ast.unparse(i) for i in kept) if kept else "..."
    adjoint = ast.unparse(call.args[0] if reading else call.args[2])
    part = f"{adjoint}[{', '.join(ast.unparse(i) for i in read)}]" if read else adjoint
    if reading:
        x, numpy = ast.unparse(call.args[1]), min(numpy_names)
        return f"{target} = {numpy}.zeros({numpy}.shape({x})); {target}[{written}] = {part}"
    return f"{target} = {ast.unparse(call.args[0])}; {target}[{written}] += {part}"


def _without_keyword_only(function, header):
    """`def jvp_f(x, *, d_x):` as `def jvp_f(x, d_x=None):`: Numba binds no keyword-only
    parameter, and callers pass these by keyword."""
    if function.args.vararg is not None or function.args.kwarg is not None or not header.rstrip().endswith(":"):
        raise NotNative("a signature with keyword-only parameters and *args or **kwargs", function.lineno)
    given = function.args.kw_defaults
    # after a parameter with a default, each needs one (None: callers pass them all)
    needed = function.args.defaults or any(d is not None for d in given)
    defaults = function.args.defaults + [d or ast.Constant(None) for d in given] if needed else []
    arguments = ast.arguments(
        posonlyargs=function.args.posonlyargs, args=function.args.args + function.args.kwonlyargs,
        vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=defaults,
    )
    indent = header[: len(header) - len(header.lstrip())]
    return f"{indent}def {function.name}({ast.unparse(arguments)}):"


def _is_reversed_range(node):
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "reversed"
        and len(node.args) == 1
        and (isinstance(node.args[0], ast.Name) or _is_plain_range(node.args[0]) or _is_range_head(node.args[0]))
    )


def _is_range_head(node):
    """`r[:trips]`, the iterations a loop that breaks ran, `r` and `trips` names."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.step is None
        and isinstance(node.slice.upper, (ast.Name, ast.Constant))
    )


def _range_and_count(node):
    """(the text of a range, the text of how many of its values `reversed(node)` runs over)."""
    if _is_range_head(node):
        r = node.value.id
        return r, f"min(len({r}), {ast.unparse(node.slice.upper)})"
    r = ast.unparse(node)
    return r, f"len({r})"


def _is_plain_range(node):
    """`range(...)` of names and numbers: evaluating it again gives the same range."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and not node.keywords
        and all(isinstance(a, (ast.Name, ast.Constant)) or (isinstance(a, ast.UnaryOp) and isinstance(a.operand, ast.Constant))
                for a in node.args)
    )


