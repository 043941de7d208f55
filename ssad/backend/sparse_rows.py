"""Row-sparse adjoints: generated code whose adjoint of a parameter collects rows.

Assumes: a `Compiled` from `assemble` (grad, value_and_grad or vjp) of a function
that reads the parameters named only by row gathers (`analysis.row_reads`).
Guarantees: `sparse_entry(entry, f, names)` returns a Compiled whose code computes
the adjoints of `names` as `runtime.rows.RowParts` instead of dense arrays, line for
line with `entry` (so `runtime.locations` still maps its lines to the user's):

    d_V = zeros_like_value(V)             ->  d_V = zero_rows(V)
    d_V = getitem_adjoint(g, V, rows)     ->  d_V = row_adjoint(g, V, rows)
    d_V = _untake(g, V, rows, 0, 'raise') ->  d_V = row_adjoint(g, V, rows)
    d_V = add_at(d_V, rows, g)            ->  d_V = add_rows(d_V, row_adjoint(g, V, rows))
    d_V[row] = d_V[row] + g               ->  d_V = add_rows(d_V, row_adjoint(g, V, row))
    d_V = add_adjoint(d_V, <one of these>), d_V += ..., d_V = d_V + ...  ->  add_rows
    d_V = copy_adjoint(d_V)               ->  d_V = copy_rows(d_V)

Any other statement that reads or writes such an adjoint raises SsadError: the code
would otherwise treat the rows as an array.
"""

import ast

from ..errors import SsadError
from ..rules.shape import _untake
from ..runtime import locations
from ..runtime.handles import VALUE_AND_GRAD, VJP
from ..runtime.rows import add_rows, copy_rows, row_adjoint, zero_rows
from ..runtime.scatter import add_at, copy_adjoint, getitem_adjoint
from ..runtime.structure import add_adjoint, zeros_like_value
from . import emit
from .assemble import Compiled, _with_defaults

_HELPERS = {"zero_rows": zero_rows, "row_adjoint": row_adjoint, "add_rows": add_rows, "copy_rows": copy_rows}


def sparse_entry(entry, f, names, variant):
    """`entry` with the adjoints of the parameters `names` built as rows (cached on it)."""
    key = ("sparse", names)
    made = entry.natives.get(key)
    if made is None:
        made = entry.natives[key] = _rewritten(entry, f, names, variant)
    return made


def _rewritten(entry, f, names, variant):
    function = entry.backward if variant == VJP else entry.function
    scope = function.__globals__
    tree = ast.parse(entry.source)
    target = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function.__name__)
    helper = {key: value for key, value in scope.items()
              if callable(value) and any(value is h for h in (zeros_like_value, getitem_adjoint, _untake, add_at,
                                                               add_adjoint, copy_adjoint))}
    lines = entry.source.splitlines()
    rewriter = _Rewriter(helper, lines, entry.function.__code__.co_filename)
    for parameter in names:
        adjoint = _adjoint_name(target, entry.wrt.index(parameter), len(entry.wrt), variant)
        rewriter.rewrite(target, adjoint, parameter)
    for number, text in rewriter.changed.items():
        lines[number - 1] = text
    source = "\n".join(lines) + "\n"
    origins = locations.ORIGINS.get(entry.function.__code__.co_filename)
    namespace = {**scope, **_HELPERS}
    made = emit.compile_module(f"sparse_{function.__name__}", source, namespace, origins)
    forward = _with_defaults(made[entry.function.__name__], f)
    backward = made[entry.backward.__name__] if entry.backward is not None else None
    return Compiled(source, forward, backward, entry.wrt, entry.positions, entry.writes_in_place, entry.callees)


def _adjoint_name(function, position, count, variant):
    """The name the generated `function` returns as the adjoint of its `position`-th wrt."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    if len(returns) != 1:
        raise SsadError("internal: sparse gradients need generated code with one return")
    value = returns[0].value
    if variant == VALUE_AND_GRAD:  # (value, gradients)
        value = value.elts[1]
    if isinstance(value, ast.Tuple):
        value = value.elts[position]
    elif count != 1:
        raise SsadError("internal: the generated code returns its adjoints in a form sparse gradients do not read")
    if not isinstance(value, ast.Name):
        raise SsadError("internal: the generated code returns an adjoint that is not a name")
    return value.id


class _Rewriter:
    def __init__(self, helper, lines, filename):
        self.helper, self.lines, self.filename = helper, lines, filename
        self.changed = {}

    def refuse(self, statement, adjoint):
        where = locations.ORIGINS.get(self.filename, {}).get(statement.lineno)
        place = f" (from {where[0]}:{where[1]}: `{where[3].strip()}`)" if where and where[3] else ""
        raise SsadError(
            f"a sparse gradient cannot be built here{place}: the generated code treats {adjoint} as an array "
            f"(`{ast.unparse(statement).strip()}`). Take a dense gradient of this parameter"
        )

    def is_call(self, node, function, arguments=None):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and self.helper.get(node.func.id) is function and not node.keywords
                and (arguments is None or len(node.args) == arguments))

    def gathered(self, node, parameter):
        """`row_adjoint(...)` for an expression that is the adjoint of a gather of `parameter`; else None."""
        def reads(arg):
            return isinstance(arg, ast.Name) and arg.id == parameter
        if self.is_call(node, getitem_adjoint, 3) and reads(node.args[1]):
            return f"row_adjoint({ast.unparse(node.args[0])}, {parameter}, {ast.unparse(node.args[2])})"
        if (self.is_call(node, _untake, 5) and reads(node.args[1])
                and isinstance(node.args[3], ast.Constant) and node.args[3].value == 0
                and isinstance(node.args[4], ast.Constant) and node.args[4].value == "raise"):
            return f"row_adjoint({ast.unparse(node.args[0])}, {parameter}, {ast.unparse(node.args[2])})"
        return None

    def rewrite(self, function, adjoint, parameter):
        for statement in ast.walk(function):
            if not isinstance(statement, ast.stmt) or isinstance(statement, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
                continue
            if not any(isinstance(n, ast.Name) and n.id == adjoint for n in ast.walk(statement)):
                if any(self.gathered(n, parameter) for n in ast.walk(statement)):
                    self.refuse(statement, adjoint)  # a gather's adjoint that flows elsewhere
                continue
            if isinstance(statement, ast.Return):
                continue
            text = self.statement(statement, adjoint, parameter)
            if text is None or statement.lineno != statement.end_lineno:
                self.refuse(statement, adjoint)
            line = self.lines[statement.lineno - 1]
            self.changed[statement.lineno] = line[: len(line) - len(line.lstrip())] + text

    def statement(self, statement, adjoint, parameter):
        def is_adjoint(node):
            return isinstance(node, ast.Name) and node.id == adjoint

        if isinstance(statement, ast.AugAssign) and is_adjoint(statement.target) and isinstance(statement.op, ast.Add):
            more = self.gathered(statement.value, parameter)
            return f"{adjoint} = add_rows({adjoint}, {more})" if more else None
        added = _row_added_in_place(statement, is_adjoint)
        if added is not None:  # d_V[row] = d_V[row] + part: the adjoint of V[row] added in place
            rows, part = added
            return f"{adjoint} = add_rows({adjoint}, row_adjoint({part}, {parameter}, {rows}))"
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and is_adjoint(statement.targets[0])):
            return None
        value = statement.value
        more = self.gathered(value, parameter)
        if more:
            return f"{adjoint} = {more}"
        if self.is_call(value, zeros_like_value, 1) and isinstance(value.args[0], ast.Name) and value.args[0].id == parameter:
            return f"{adjoint} = zero_rows({parameter})"
        if self.is_call(value, copy_adjoint, 1) and is_adjoint(value.args[0]):
            return f"{adjoint} = copy_rows({adjoint})"
        if self.is_call(value, add_at, 3) and is_adjoint(value.args[0]):
            rows, part = ast.unparse(value.args[1]), ast.unparse(value.args[2])
            return f"{adjoint} = add_rows({adjoint}, row_adjoint({part}, {parameter}, {rows}))"
        if self.is_call(value, add_adjoint, 2) and is_adjoint(value.args[0]):
            more = self.gathered(value.args[1], parameter)
            return f"{adjoint} = add_rows({adjoint}, {more})" if more else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and is_adjoint(value.left):
            more = self.gathered(value.right, parameter)
            return f"{adjoint} = add_rows({adjoint}, {more})" if more else None
        return None


def _row_added_in_place(statement, is_adjoint):
    """(row, part) as source for `d_V[row] = d_V[row] + part` with one index (a row), else None."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if not (isinstance(target, ast.Subscript) and is_adjoint(target.value) and not isinstance(target.slice, ast.Tuple)):
        return None
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and isinstance(value.left, ast.Subscript)):
        return None
    read = value.left
    if not is_adjoint(read.value) or ast.dump(read.slice) != ast.dump(target.slice):
        return None
    return ast.unparse(target.slice), ast.unparse(value.right)
