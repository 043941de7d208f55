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
import weakref
from dataclasses import dataclass, field

import gast

from ..errors import SsadError, UnsupportedSyntaxError
from ..registry import REGISTRY
from ..runtime.locations import user_place
from ..runtime.reads import names_read
from .builders import clone, local_names, scope_names, walk  # noqa: F401  (local_names: read from here by other stages)
from .closures import ORIGINS
from .deletes import lower_deletes, without_deletes
from .desugar import (lower_asserts, lower_formatted_strings, lower_imports, lower_index_expressions, lower_index_writes,
                      lower_raises, lower_ufunc_displays)
from .distributions import lower_frozen_distributions
from .generators import lower_generator
from .methods import lower_iter_returns, lower_zero_argument_super
from .namespace import refuse_array_subclasses


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
        """The refusal of `node`, at the user's line: for code ssad generated (differentiated
        again for a higher derivative), at the line of the user's source it stands for."""
        place = self.where(node)
        origin = user_place(place)
        if origin is not place:
            message = f"in the derivative ssad made of this line, {message}"
        return UnsupportedSyntaxError(message, *origin)


def require_python_function(f):
    """Raise SsadError unless `f` is a `def` function ssad can read."""
    if not inspect.isfunction(f):
        raise SsadError(
            f"ssad differentiates Python functions defined with `def`; got {f!r}. "
            "For a builtin or C function, register a rule with @ssad.adjoint instead."
        )


def refuse_a_generator(f, api):
    """Raise UnsupportedSyntaxError, at its first `yield`, when `f` (the function passed to
    `ssad.<api>`) is a generator function: ssad differentiates a generator only where
    the function it differentiates consumes it."""
    if not (inspect.isfunction(f) and inspect.isgeneratorfunction(f)):
        return
    parsed = parse_function(f)
    node = parsed.node
    first = next((n for n in walk(node) if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                  and isinstance(n.func.value, gast.Name) and n.func.attr in ("append", "extend")
                  and n.func.value.id.startswith("yielded")), node)
    raise parsed.unsupported(
        first,
        f"{f.__qualname__} is a generator function, and ssad.{api} differentiates a function that returns a "
        f"value; differentiate a function that consumes it (`sum({f.__name__}(...))`, `list({f.__name__}(...))`, "
        "a `for` over it)",
    )


def parse_function(f):
    """Parse `f` into a `Parsed`, raising SsadError when its source is unavailable.

    The result is the caller's to change. A function is parsed once while the objects its
    free names denote stay the same (`grad(f)` checks it, the first call compiles it, `show`
    prints it): later readings get a copy of the first."""
    return _copy(parsed_to_read(f))


def parsed_to_read(f):
    """`parse_function(f)` for a caller that changes nothing in it: the kept parse itself."""
    require_python_function(f)
    snapshot = free_objects(f)
    try:
        memo = _PARSED.get(f)
    except TypeError:
        memo = None
    if memo is not None and same_objects(memo[0], snapshot):
        return memo[1]
    parsed = _parse_function(f)
    try:
        _PARSED[f] = (snapshot, parsed)
    except TypeError:
        pass
    return parsed


# function -> (its free objects when parsed, the Parsed as it was then)
_PARSED = weakref.WeakKeyDictionary()


def free_objects(f):
    """What parsing `f` reads, as (name, object) pairs: its code, its closure cells' contents,
    the module globals its code names, and the rule registry's version (frozen distributions
    are lowered by the rules there). Held, so identities cannot be reused."""
    pairs = [("", REGISTRY.version), ("<code>", f.__code__)]
    if f.__closure__:
        for name, cell in zip(f.__code__.co_freevars, f.__closure__, strict=True):
            try:
                pairs.append((name, cell.cell_contents))
            except ValueError:  # the cell is still empty
                pairs.append((name, _EMPTY))
    module = f.__globals__
    pairs.extend((name, module[name]) for name in names_read(f.__code__) if name in module)
    return pairs


_EMPTY = object()


def same_objects(old, new):
    """Whether two `free_objects` lists name the same objects."""
    return len(old) == len(new) and all(
        a[0] == b[0] and (a[1] is b[1] or (not a[0] and a[1] == b[1])) for a, b in zip(old, new, strict=True)
    )


def _copy(parsed):
    return Parsed(
        function=parsed.function, node=clone(parsed.node), filename=parsed.filename,
        line_offset=parsed.line_offset, col_offset=parsed.col_offset, source_lines=parsed.source_lines,
        namespace=dict(parsed.namespace),
    )


def _parse_function(f):
    if f.__name__ == "<lambda>":
        parsed = _parse_lambda_in_its_file(f)
        if parsed is not None:
            return parsed
    if f.__code__.co_filename in ORIGINS:  # a nested function: its nodes, at their places in the user's file
        parsed = _parse_template(f)
        if parsed is not None:
            return parsed
    source_lines, first_line, col_offset, module = _read(f)
    # the read tree stays as parsed: each reading gets its own copy
    node = _lambda_as_def(clone(module), f) if f.__name__ == "<lambda>" else clone(module.body[0])
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
    return _finish(parsed)


# code object -> what `_read` read: a function is parsed once for every stage that reads it
# (`grad(f)` checks, then its first call compiles, `show` prints).
_READ = weakref.WeakKeyDictionary()


def _read(f):
    """(source lines, first line, column offset, gast module) of a function with source."""
    code = f.__code__
    try:
        return _READ[code]
    except (KeyError, TypeError):
        pass
    try:
        # the code's own source: of `f`, inspect would follow `__wrapped__` (functools.wraps) elsewhere
        source_lines, first_line = inspect.getsourcelines(code)
    except (OSError, TypeError) as error:
        raise SsadError(
            f"cannot read the source of {f.__qualname__} (defined in "
            f"{code.co_filename}): {error}. ssad needs the function's source: define it "
            "in a file, a Jupyter cell, or register generated source with linecache."
        ) from None
    source = "".join(source_lines)
    dedented = textwrap.dedent(source)
    col_offset = _indent_width(source_lines[0]) - _indent_width(dedented.splitlines(True)[0])
    try:
        module = gast.parse(dedented)
    except SyntaxError:
        raise SsadError(
            f"cannot parse the source of {f.__qualname__} on its own (at {code.co_filename}:"
            f"{code.co_firstlineno}); define it with `def` at the start of a line"
        ) from None
    read = (source_lines, first_line, col_offset, module)
    try:
        _READ[code] = read
    except TypeError:
        pass
    return read


def _finish(parsed):
    """`parsed` with its free names resolved, and its imports, frozen distributions, asserts,
    f-strings, index writes and indices built as values, yields, `iter` in `__iter__` and raises lowered."""
    if parsed.filename.startswith("<ssad ") and not parsed.filename.startswith("<ssad closure"):
        without_deletes(parsed.node)  # generated code releases values it no longer reads
    else:
        lower_deletes(parsed)
    lower_zero_argument_super(parsed)
    parsed.namespace = resolve_free_names(parsed.function, parsed.node, lower_imports(parsed))
    refuse_array_subclasses(parsed)
    lower_frozen_distributions(parsed)
    lower_asserts(parsed)
    lower_formatted_strings(parsed)
    lower_index_writes(parsed)
    lower_index_expressions(parsed)
    lower_ufunc_displays(parsed)
    if inspect.isgeneratorfunction(parsed.function):
        lower_generator(parsed)
    lower_iter_returns(parsed)
    lower_raises(parsed)
    return parsed


def _parse_template(f):
    """The template of a nested function (or a `def` nested in one) from the nodes it was made
    of, with the user's file and positions; None where it cannot be told which."""
    template, enclosing = ORIGINS[f.__code__.co_filename]
    if f.__code__.co_name == template.name:
        node = template
    else:
        inner = [n for n in walk(template) if isinstance(n, gast.FunctionDef) and n is not template
                 and n.name == f.__code__.co_name]
        if len(inner) != 1:
            return None
        node = inner[0]
    node = clone(node)
    node.decorator_list = []
    parsed = Parsed(function=f, node=node, filename=enclosing.filename, line_offset=enclosing.line_offset,
                    col_offset=enclosing.col_offset, source_lines=enclosing.source_lines)
    return _finish(parsed)


def _parse_lambda_in_its_file(f):
    """`f` (a lambda) found in its whole file by the positions of its code, or None.

    Two lambdas on one line, or lambdas inside a multi-line literal or call, cannot be
    told apart by their first line: the columns their instructions come from can."""
    code = f.__code__
    lines = linecache.getlines(code.co_filename)
    # every instruction of the body (RESUME and the like come from nowhere: column 0 to 0)
    spots = [(line, col) for line, _, col, end in code.co_positions()
             if line is not None and col is not None and (col, end) != (0, 0)]
    if not lines or not spots:
        return None
    module = _parsed_file(code.co_filename, "".join(lines))
    if module is None:
        return None
    parameters = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])

    def span(node):
        return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)

    candidates = []
    for node in walk(module):
        if not isinstance(node, gast.Lambda) or getattr(node, "end_lineno", None) is None:
            continue
        if [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs] != parameters:
            continue
        start, end = span(node)
        if all(start <= spot <= end for spot in spots):
            candidates.append(node)
    if not candidates:
        return None
    # nested lambdas: the innermost one that holds every instruction is `f`
    lam = min(candidates, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
    node = _as_def(clone(lam), code)  # the cached tree stays as parsed
    parsed = Parsed(function=f, node=node, filename=code.co_filename, line_offset=0, col_offset=0,
                    source_lines=lines)
    return _finish(parsed)


_FILES = {}  # (filename, source) -> gast module, or None where the file does not parse


def _parsed_file(filename, source):
    key = (filename, source)
    if key not in _FILES:
        try:
            _FILES[key] = gast.parse(source)
        except (SyntaxError, ValueError):
            _FILES[key] = None
        while len(_FILES) > 32:
            del _FILES[next(iter(_FILES))]
    return _FILES[key]


def _lambda_as_def(module, f):
    """The one lambda of `module` that is `f`, as `def lambda_<line>(...): return ...`."""
    code = f.__code__
    parameters = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    candidates = [
        n
        for n in walk(module)
        if isinstance(n, gast.Lambda)
        and [a.id for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == parameters
    ]
    if len(candidates) != 1:
        raise SsadError(
            f"cannot tell which lambda at {code.co_filename}:{code.co_firstlineno} is being "
            "differentiated; define it with `def`"
        )
    return _as_def(candidates[0], code)


def _as_def(lam, code):
    """`lam` as `def lambda_<line>(...): return ...`."""
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


def loaded_names(node):
    return {
        child.id
        for child in walk(node)
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load)
    }


def resolve_free_names(f, node, imported=None):
    """Map each free name of `node` to its live object (`imported` in the function, closure,
    globals, builtins)."""
    imported = imported or {}
    closure = {}
    if f.__closure__:
        for name, cell in zip(f.__code__.co_freevars, f.__closure__, strict=True):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # the cell is still empty
                pass
    namespace = {}
    bound = local_names(node)
    own = scope_names(node)  # a name bound only in a comprehension or nested function is free in the function
    for name in sorted((loaded_names(node) - bound) | (own["read"] - own["bound"])):
        if name in imported:
            namespace[name] = imported[name]
        elif name in closure:
            namespace[name] = closure[name]
        elif name in f.__globals__:
            namespace[name] = f.__globals__[name]
        elif hasattr(builtins, name):
            namespace[name] = getattr(builtins, name)
        # A name that resolves nowhere is reported where it is used (see fence).
    return {name: _pure_twin(value) for name, value in namespace.items()}


def _pure_twin(value):
    """Generated code updates adjoints in place with `add_at` and `clear_at`; read again, they
    are their pure forms."""
    from ..runtime import add_at, added_at, clear_at, zero_at

    return added_at if value is add_at else zero_at if value is clear_at else value
