"""Stage 1, parse: a live Python function to a gast tree plus its live namespace.

Assumes: `f` is a plain Python function (not a builtin, lambda or method of a C type).
Guarantees: `Parsed.node` is the function's `gast.FunctionDef` with decorators
removed and line numbers matching the original file; `Parsed.namespace` maps every
free name the body reads to the live object it denotes (closure cells first, then
the function's globals, then builtins), so `np.sin`, `numpy.sin` and
`from numpy import sin` all lead to the same object; `Parsed.where(node)` gives
file, line, column and source text for error messages.
"""

import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

import gast

from ..errors import SsadError, UnsupportedSyntaxError


@dataclass
class Parsed:
    function: object
    node: gast.FunctionDef
    filename: str
    line_offset: int  # add to a node's lineno to get the file's line number
    col_offset: int  # add to a node's col_offset to get the file's column
    source_lines: list  # the file's lines (or the cell's), for messages and comments
    namespace: dict = field(default_factory=dict)

    @property
    def name(self):
        return self.node.name

    def where(self, node):
        """(filename, lineno, col, line text) of `node` in the user's file."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return self.filename, None, None, None
        file_line = lineno + self.line_offset
        col = getattr(node, "col_offset", None)
        if col is not None:
            col += self.col_offset
        return self.filename, file_line, col, self.line_text(file_line)

    def line_text(self, file_line):
        if 1 <= file_line <= len(self.source_lines):
            return self.source_lines[file_line - 1].rstrip("\n")
        return None

    def unsupported(self, node, message):
        return UnsupportedSyntaxError(message, *self.where(node))


def require_python_function(f):
    """Raise SsadError unless `f` is a `def` function ssad can read."""
    if not inspect.isfunction(f):
        raise SsadError(
            f"ssad differentiates Python functions defined with `def`; got {f!r}. "
            "For a builtin or C function, register a rule with @ssad.adjoint instead."
        )


def parse_function(f):
    """Parse `f` into a `Parsed`, raising SsadError when its source is unavailable."""
    require_python_function(f)
    try:
        source_lines, first_line = inspect.getsourcelines(f)
    except (OSError, TypeError) as error:
        raise SsadError(
            f"cannot read the source of {f.__qualname__} (defined in "
            f"{f.__code__.co_filename}): {error}. ssad needs the function's source: define it "
            "in a file, a Jupyter cell, or register generated source with linecache."
        ) from None
    source = "".join(source_lines)
    dedented = textwrap.dedent(source)
    col_offset = _indent_width(source_lines[0]) - _indent_width(dedented.splitlines(True)[0])
    try:
        module = gast.parse(dedented)
    except SyntaxError:
        raise SsadError(
            f"cannot parse the source of {f.__qualname__} on its own (at {f.__code__.co_filename}:"
            f"{f.__code__.co_firstlineno}); define it with `def` at the start of a line"
        ) from None
    node = module.body[0]
    if f.__name__ == "<lambda>":
        node = _lambda_as_def(module, f)
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SsadError(f"the source of {f.__qualname__} is not a `def` statement")
    node.decorator_list = []
    filename = f.__code__.co_filename
    all_lines = linecache.getlines(filename) or source_lines
    first_line = max(first_line, 1)
    parsed = Parsed(
        function=f,
        node=node,
        filename=filename,
        line_offset=first_line - 1,
        col_offset=col_offset,
        source_lines=all_lines if len(all_lines) >= first_line else source_lines,
    )
    if parsed.source_lines is source_lines:
        parsed.line_offset = 0
    if isinstance(node, gast.AsyncFunctionDef):
        raise parsed.unsupported(
            node,
            f"{f.__qualname__} is an `async def` function, which ssad cannot differentiate; await "
            "the values outside and differentiate a plain `def` function of them",
        )
    parsed.namespace = resolve_free_names(f, node)
    return parsed


def _lambda_as_def(module, f):
    """The one lambda of `module` that is `f`, as `def lambda_<line>(...): return ...`."""
    code = f.__code__
    parameters = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    candidates = [
        n
        for n in gast.walk(module)
        if isinstance(n, gast.Lambda)
        and [a.id for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == parameters
    ]
    if len(candidates) != 1:
        raise SsadError(
            f"cannot tell which lambda at {code.co_filename}:{code.co_firstlineno} is being "
            "differentiated; define it with `def`"
        )
    lam = candidates[0]
    function = gast.FunctionDef(
        name=f"lambda_{code.co_firstlineno}",
        args=lam.args,
        body=[gast.copy_location(gast.Return(value=lam.body), lam)],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return gast.copy_location(function, lam)


def _indent_width(line):
    return len(line) - len(line.lstrip())


def local_names(node):
    """Every name the function binds: parameters and assignment targets."""
    names = set()
    for arg in _all_args(node.args):
        names.add(arg.id)
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, (gast.Store, gast.Del, gast.Param)):
            names.add(child.id)  # parameters of nested functions and lambdas too
        elif isinstance(child, gast.FunctionDef) and child is not node:
            names.add(child.name)  # a nested def binds its name; the function's own name is global
    return names


def _all_args(args):
    out = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    if args.vararg is not None:
        out.append(args.vararg)
    if args.kwarg is not None:
        out.append(args.kwarg)
    return out


def loaded_names(node):
    return {
        child.id
        for child in gast.walk(node)
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load)
    }


def resolve_free_names(f, node):
    """Map each free name of `node` to its live object (closure, globals, builtins)."""
    closure = {}
    if f.__closure__:
        for name, cell in zip(f.__code__.co_freevars, f.__closure__, strict=True):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # the cell is still empty
                pass
    namespace = {}
    bound = local_names(node)
    for name in sorted(loaded_names(node) - bound):
        if name in closure:
            namespace[name] = closure[name]
        elif name in f.__globals__:
            namespace[name] = f.__globals__[name]
        elif hasattr(builtins, name):
            namespace[name] = getattr(builtins, name)
        # A name that resolves nowhere is reported where it is used (see fence).
    return {name: _pure_twin(value) for name, value in namespace.items()}


def _pure_twin(value):
    """Generated code updates adjoints in place with `add_at`; read again, it is the pure form."""
    from ..runtime import add_at, added_at

    return added_at if value is add_at else value
