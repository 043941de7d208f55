"""Stage 8, emit: generated gast to Python source, compiled and registered in linecache.

Assumes: a gast Module of plain statements, plus marker statements made by
`comment()` and `blank()`.
Guarantees: `to_source` returns source that compiles, with each marker turned into
a `# ...` comment or a blank line; `compile_module` executes that source in the
given namespace under a filename like ``<ssad grad_loss>`` whose lines are in
`linecache`, so tracebacks, pdb and `inspect.getsource` show the generated code.
"""

import ast
import linecache
import re
import threading

import astor
import gast

from ..frontend.builders import BLANK, COMMENT, blank, comment, is_marker  # noqa: F401  (passes make markers)
from ..runtime import locations

_MARKER = re.compile(rf"^(\s*)(?:{COMMENT}\((.*)\)|{BLANK}\(\))\s*$")

_filenames_lock = threading.Lock()
_filenames = {}  # filename -> source registered under it


def _to_ast(node):
    """The standard library's tree of a gast tree, for the printer: what `gast.gast_to_ast`
    gives (parameters as `ast.arg`, a handler's name as a string) without positions, which
    the printer does not read, and with each negative number constant as unary minus on its
    magnitude, so the printer parenthesizes `(-1.0) ** 2` right. One pass, a few times
    faster than gast's own conversion."""
    cls = node.__class__
    if cls is gast.Name:
        if node.ctx.__class__ is gast.Param:
            return ast.arg(arg=node.id, annotation=_to_ast_or_none(node.annotation), type_comment=node.type_comment)
        return ast.Name(id=node.id, ctx=_CONTEXTS[node.ctx.__class__])
    if cls is gast.Constant:
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value, kind=None))
        return ast.Constant(value=value, kind=node.kind)
    target = _AST_CLASSES.get(cls)
    if target is None:
        target = _AST_CLASSES[cls] = getattr(ast, cls.__name__)
    new = target.__new__(target)
    for field in target._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            value = [_to_ast(item) if isinstance(item, gast.AST) else item for item in value]
        elif isinstance(value, gast.AST):
            value = _to_ast(value)
        setattr(new, field, value)
    if cls is gast.ExceptHandler and node.name is not None:
        new.name = node.name.id
    return new


def _to_ast_or_none(node):
    return None if node is None else _to_ast(node)


_AST_CLASSES = {}  # gast class -> the standard library's class of the same name
_CONTEXTS = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}


def _fill_empty_blocks(statements):
    """A block holding only comments gets a `pass`, so the printed source compiles."""
    for statement in statements:
        for field in ("body", "orelse"):
            block = getattr(statement, field, None)
            if not block:
                continue
            _fill_empty_blocks(block)
            if all(is_marker(s) for s in block):
                block.append(gast.Pass())


def to_source(nodes):
    """Python source for a list of gast statements (markers become comments)."""
    nodes = list(nodes)
    _fill_empty_blocks(nodes)
    module = gast.Module(body=nodes, type_ignores=[])
    tree = _to_ast(module)
    text = astor.to_source(tree, pretty_source=_join)
    lines = []
    for line in text.splitlines():
        match = _MARKER.match(line)
        if match is None:
            lines.append(line)
        elif match.group(2) is None:
            lines.append("")
        else:
            lines.append(f"{match.group(1)}# {ast.literal_eval(match.group(2))}")
    return "\n".join(lines) + "\n"


def _join(pieces):
    # astor wraps long lines at 79 columns mid-expression; one statement per line reads better.
    return "".join(pieces)


def register_source(base_name, source):
    """A `<ssad NAME>` filename holding `source` in linecache (made unique if needed)."""
    with _filenames_lock:
        filename = f"<ssad {base_name}>"
        counter = 1
        while filename in _filenames and _filenames[filename] != source:
            counter += 1
            filename = f"<ssad {base_name} #{counter}>"
        _filenames[filename] = source
        lines = source.splitlines(True)
        linecache.cache[filename] = (len(source), None, lines, filename)
    return filename


def line_origins(nodes, source, where):
    """{line of `source`: where(statement)} for the statements of `nodes` (as printed
    by `to_source`) that carry a location in the user's source. A statement with none
    stands for the line of the last `# grad of: ...` comment before it in its block."""
    located = []

    def visit(block, current):
        for statement in block:
            place = where(statement) if getattr(statement, "lineno", None) is not None else None
            if is_marker(statement):
                current = place or current
                continue
            located.append(place or current)
            for child in _blocks(statement):
                visit(child, current)

    visit(nodes, None)
    printed = []

    def collect(block):
        for statement in block:
            printed.append(statement)
            for child in _blocks(statement):
                collect(child)

    collect(ast.parse(source).body)
    if len(printed) != len(located):  # not the statements printed: no map rather than a wrong one
        return {}
    return {
        line: place
        for statement, place in zip(printed, located, strict=True)
        if place is not None and place[1] is not None
        for line in range(statement.lineno, _header_end(statement) + 1)
    }


def _header_end(statement):
    """The last line of a simple statement, or of the header of a compound one."""
    inner = [block[0].lineno for block in _blocks(statement) if block]
    return min(inner) - 1 if inner else statement.end_lineno


def _blocks(statement):
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list):
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body


def compile_module(base_name, source, namespace, origins=None):
    """Execute `source` in a copy of `namespace`; return that module namespace.
    `origins` maps its lines to the user's (see `line_origins`)."""
    filename = register_source(base_name, source)
    locations.record(filename, origins)
    code = compile(source, filename, "exec")
    scope = dict(namespace)
    scope.setdefault("__name__", "ssad_generated")  # generated code can itself be differentiated
    exec(code, scope)  # noqa: S102 - executing source ssad generated itself
    return scope
