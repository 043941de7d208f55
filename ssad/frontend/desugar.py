"""Stage 1b, desugar: statements that run once and carry no gradient, lowered as the function
is parsed, before the fence sees them.

- `import m as n` inside the function binds the module once (`lower_imports`);
- `assert test, message` becomes a call the forward sweep runs (`lower_asserts`);
- an f-string becomes a call that formats it (`lower_formatted_strings`);
- `raise error` becomes `return raised(error)`, an early return that raises (`lower_raises`);
- `np.fill_diagonal(a, val)` and `np.put_along_axis(a, indices, values, axis)` become
  the indexed writes they are, `a[index] = value` (`lower_index_writes`, with the
  helpers of `runtime.in_place`);
- a part of an index built as a value, `np.s_[:, k]`, is checked to be one where the code
  runs, and carries no gradient (`lower_index_expressions`);
- a list or tuple the function makes, given to a ufunc, is the array it makes
  (`lower_ufunc_displays`).

Assumes: a `Parsed` function whose free names are not resolved yet.
Guarantees: no `Import`, `ImportFrom` or `Assert` statement, no `raise` of an exception and no
f-string is left (a generator function is lowered by `generators`).
"""

import importlib
import inspect

import gast

from ..errors import SsadError
from .builders import list_names, local_names, makes_a_list, walk


def lower_imports(parsed):
    """Remove the `import` statements of the function; {name: module or object} they bind.

    `import numpy as np` inside a function (a notebook cell's habit) binds a module: it
    carries no gradient, and binding it once, here, is what running it does. A name an
    import binds must not be assigned otherwise in the function."""
    imported = {}

    def lower(statement):
        if not isinstance(statement, (gast.Import, gast.ImportFrom)):
            return None
        imported.update(_import(parsed, statement))
        return []

    parsed.node.body = _rewritten(parsed.node.body, lower) or [gast.Pass()]
    clash = sorted(set(imported) & local_names(parsed.node))
    if clash:
        raise SsadError(
            f"{parsed.function.__qualname__} imports `{clash[0]}` and also assigns it; ssad binds an "
            "imported name once for the whole function: use another name for one of them"
        )
    return imported


def _import(parsed, statement):
    package = getattr(inspect.getmodule(parsed.function), "__package__", None)
    try:
        if isinstance(statement, gast.Import):
            bound = {}
            for alias in statement.names:
                module = importlib.import_module(alias.name)
                if alias.asname:
                    bound[alias.asname] = module
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = importlib.import_module(top)
            return bound
        base = "." * statement.level + (statement.module or "")
        module = importlib.import_module(base, package if statement.level else None)
        bound = {}
        for alias in statement.names:
            if alias.name == "*":
                raise parsed.unsupported(statement, "`from ... import *` inside a differentiated function is not "
                                                    "supported; import the names you use")
            try:
                value = getattr(module, alias.name)
            except AttributeError:
                value = importlib.import_module(f"{module.__name__}.{alias.name}")
            bound[alias.asname or alias.name] = value
        return bound
    except ImportError as error:
        raise parsed.unsupported(statement, f"this import fails: {error}") from None


def lower_asserts(parsed):
    """`assert test, message` to `check_assertion(test, text)`: the test runs in the forward
    sweep, as Python runs it (none under `python -O`), and carries no gradient; a failing
    one raises AssertionError with the message when it is a constant string, else the
    assertion's own text and place."""
    from ..runtime.refusals import check_assertion

    def lower(statement):
        if not isinstance(statement, gast.Assert):
            return None
        return [_assertion_call(parsed, statement)] if __debug__ else []

    parsed.node.body = _rewritten(parsed.node.body, lower) or [gast.Pass()]
    if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == _ASSERTION
           for n in walk(parsed.node)):
        parsed.namespace[_ASSERTION] = check_assertion


_ASSERTION = "check_assertion"


def _assertion_call(parsed, statement):
    message = statement.msg
    if isinstance(message, gast.Constant) and isinstance(message.value, str):
        text = message.value
    else:
        filename, line, _, source = parsed.where(statement)
        text = f"{(source or 'assert').strip()} ({filename}, line {line})"
    call = gast.Call(
        func=gast.Name(id=_ASSERTION, ctx=gast.Load(), annotation=None, type_comment=None),
        args=[statement.test, gast.Constant(value=text, kind=None)],
        keywords=[],
    )
    return gast.copy_location(gast.Expr(value=gast.copy_location(call, statement)), statement)


def lower_raises(parsed):
    """`raise error` (or `raise error from cause`) to `return raised(error)`: `raised`
    raises it, so the function ends there as Python ends it, and to the rest of the
    pipeline the statement is an early return, whose path the derivative code takes only
    up to the call. A bare `raise` (only valid in an `except` block) is left to the fence."""
    from ..runtime import raised

    def lower(statement):
        if not isinstance(statement, gast.Raise) or statement.exc is None:
            return None
        args = [statement.exc] + ([statement.cause] if statement.cause is not None else [])
        call = gast.Call(func=gast.Name(id=_RAISED, ctx=gast.Load(), annotation=None, type_comment=None),
                         args=args, keywords=[])
        gast.copy_location(call.func, statement)
        return [gast.copy_location(gast.Return(value=gast.copy_location(call, statement)), statement)]

    for function in [n for n in walk(parsed.node) if isinstance(n, gast.FunctionDef)]:  # nested ones too
        function.body = _rewritten(function.body, lower) or [gast.Pass()]
    if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == _RAISED
           for n in walk(parsed.node)):
        parsed.namespace[_RAISED] = raised


_RAISED = "raised"


def lower_formatted_strings(parsed):
    """`f"loss {s:.3f} at {x[0]!r}"` to `formatted('loss {0:.3f} at {1!r}', s, x[0])`: the
    string is a value with no gradient, made by a call the rest of the pipeline knows (a
    replacement field of a format specification, `{v:{width}}`, is one more argument)."""
    from ..runtime import formatted

    name = _FORMATTED
    while name in parsed.namespace and parsed.namespace[name] is not formatted or name in local_names(parsed.node):
        name += "_"
    found = []

    class Lower(gast.NodeTransformer):
        def visit_JoinedStr(self, node):
            values = []
            template = _format_template(node, values)
            found.append(node)
            call = gast.Call(func=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                             args=[gast.Constant(value=template, kind=None), *(self.visit(v) for v in values)],
                             keywords=[])
            for made in (call, call.func, call.args[0]):
                gast.copy_location(made, node)
            return call

    Lower().visit(parsed.node)
    if found:
        parsed.namespace[name] = formatted


_FORMATTED = "formatted"


def _format_template(joined, values):
    """The `str.format` template of the f-string `joined`, appending its fields' expressions to `values`."""
    parts = []
    for part in joined.values:
        if isinstance(part, gast.Constant):
            parts.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            continue
        field = str(len(values))
        values.append(part.value)
        if part.conversion not in (-1, None):
            field += "!" + chr(part.conversion)
        if part.format_spec is not None:
            field += ":" + _format_template(part.format_spec, values)
        parts.append("{" + field + "}")
    return "".join(parts)


def lower_index_writes(parsed):
    """`np.fill_diagonal(a, val, wrap)` as `a[diagonal_index(a, wrap)] = diagonal_fill(val, a, wrap)`,
    `np.put_along_axis(a, i, v, axis)` as `a[along_axis_index(a, i, axis)] = v` and
    `np.add.at(a, i, b)` as `a[...] = added_at(a, i, b)`, when `a` is a name: writes ssad
    differentiates, where the calls change an array it cannot follow."""
    import numpy as np

    from ..runtime import added_at
    from ..runtime.in_place import along_axis_index, diagonal_fill, diagonal_index

    functions = {np.fill_diagonal: ("a", "val", "wrap"), np.put_along_axis: ("arr", "indices", "values", "axis"),
                 np.add.at: ("a", "indices", "b")}
    local = local_names(parsed.node)
    helper = _binder(parsed, local)

    def lower(statement):
        if not isinstance(statement, gast.Expr) or not isinstance(statement.value, gast.Call):
            return None
        call = statement.value
        callee = _static(call.func, parsed.namespace, local)
        if getattr(callee, "__self__", None) is np.add and getattr(callee, "__name__", None) == "at":
            callee = np.add.at  # a bound method: another object at each access
        if not any(callee == f for f in functions) or any(isinstance(a, gast.Starred) for a in call.args):
            return None
        parameters = functions[next(f for f in functions if f == callee)]
        given = dict(zip(parameters, call.args, strict=False))
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        array = given.get(parameters[0])
        if not isinstance(array, gast.Name) or len(given) != len(call.args) + len(call.keywords):
            return None

        def load(expr):
            return gast.Name(id=expr.id, ctx=gast.Load(), annotation=None, type_comment=None) if isinstance(
                expr, gast.Name) else expr

        if callee is np.fill_diagonal:
            wrap = given.get("wrap", gast.Constant(value=False, kind=None))
            index = gast.Call(func=helper(diagonal_index), args=[load(array), wrap], keywords=[])
            value = gast.Call(func=helper(diagonal_fill), args=[given["val"], load(array), wrap], keywords=[])
        elif callee == np.add.at:  # the whole array, with b added at the indices (repeated ones accumulate)
            index = gast.Constant(value=Ellipsis, kind=None)
            value = gast.Call(func=helper(added_at), args=[load(array), given["indices"], given["b"]], keywords=[])
        else:
            index = gast.Call(func=helper(along_axis_index),
                              args=[load(array), given["indices"], given["axis"]], keywords=[])
            value = given["values"]
        target = gast.Subscript(value=load(array), slice=index, ctx=gast.Store())
        write = gast.Assign(targets=[target], value=value, type_comment=None)
        return [gast.fix_missing_locations(gast.copy_location(write, statement))]

    parsed.node.body = _rewritten(parsed.node.body, lower) or [gast.Pass()]


def lower_index_expressions(parsed):
    """`np.s_[:, k]` (or `np.index_exp[...]`), an index built as a value, as
    `np.s_[:, index_only(k, ...)]`: a part of an index carries no gradient, and `index_only`
    checks where the code runs that `k` is one (an integer, an integer array, ...), raising
    SsadError at the user's line where it is not. The parts of a gradient's own indices
    (`add_at(d_Q, np.s_[:, k], g)`) are then known to carry none when it is differentiated."""
    import numpy as np

    from ..runtime.refusals import index_only

    local = local_names(parsed.node)
    helper = _binder(parsed, local)

    class Lower(gast.NodeTransformer):
        def visit_Subscript(self, node):
            self.generic_visit(node)
            if not isinstance(node.ctx, gast.Load) or not isinstance(
                    _static(node.value, parsed.namespace, local), type(np.s_)):
                return node
            parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
            checks = [check(part) for part in parts]
            if isinstance(node.slice, gast.Tuple):
                node.slice.elts = checks
            else:
                node.slice = checks[0]
            return node

    def check(part):
        if isinstance(part, (gast.Slice, gast.Constant)) or not any(isinstance(n, gast.Name) for n in walk(part)):
            return part
        filename, line, col, _ = parsed.where(part)
        facts = [gast.Constant(value=v, kind=None) for v in (gast.unparse(part).strip(), filename, line, col)]
        return gast.copy_location(gast.Call(func=helper(index_only), args=[part, *facts], keywords=[]), part)

    Lower().visit(parsed.node)


def lower_ufunc_displays(parsed):
    """`np.add([a, b], [c, d])` as `np.add(np.asarray([a, b]), np.asarray([c, d]))`: a ufunc
    takes a list or tuple display as the array it makes of it, and its rules compute with
    arrays (the tangent `d_x + d_y` of two lists would join them; the adjoint `d * 2 * xs`
    of `np.square(xs)` would repeat one). So does a name that holds a list or tuple the
    function makes (a display, a comprehension, `list(...)`, a list it appends to)."""
    import numpy as np

    local = local_names(parsed.node)
    helper = _binder(parsed, local)
    held = list_names(parsed.node)

    class Lower(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if isinstance(_static(node.func, parsed.namespace, local), np.ufunc):
                node.args = [gast.copy_location(gast.Call(func=helper(np.asarray), args=[a], keywords=[]), a)
                             if makes_a_list(a) or (isinstance(a, gast.Name) and a.id in held) else a
                             for a in node.args]
            return node

    Lower().visit(parsed.node)


def _binder(parsed, local):
    """`helper(value)`: a Name for the runtime `value`, bound in the function's namespace
    under a name no local or free name of the function takes."""
    taken = local | set(parsed.namespace)
    names = {}

    def helper(value):
        if value not in names:
            base = value.__name__
            fresh = next(n for n in (base, *(f"{base}_{k}" for k in range(2, 1000))) if n not in taken)
            taken.add(fresh)
            parsed.namespace[fresh] = value
            names[value] = fresh
        return gast.Name(id=names[value], ctx=gast.Load(), annotation=None, type_comment=None)

    return helper


def _static(func, namespace, local):
    """The live object the path `func` names from a free name (`np.fill_diagonal`), or None."""
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name) or func.id in local or func.id not in namespace:
        return None
    value = namespace[func.id]
    for attr in reversed(path):
        value = getattr(value, attr, None)
    return value


def _rewritten(block, rewrite):
    """`block` with each statement for which `rewrite` returns a list replaced by that list,
    and the blocks of the others (not those of nested functions) rewritten the same way."""
    out = []
    for statement in block:
        replacement = rewrite(statement)
        if replacement is not None:
            out.extend(replacement)
            continue
        if not isinstance(statement, gast.FunctionDef):
            for field in ("body", "orelse"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    setattr(statement, field, _rewritten(inner, rewrite) or ([gast.Pass()] if field == "body" else []))
        out.append(statement)
    return out
