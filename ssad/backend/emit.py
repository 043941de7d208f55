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


def _negative_literals(tree):
    """Each `-1.0` constant as unary minus on 1.0, so the printer parenthesizes `(-1.0) ** 2`
    correctly (one pass over the tree, in place)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                if _is_negative(value):
                    setattr(node, field, _negated(value))
                else:
                    todo.append(value)
            elif value.__class__ is list:
                for k, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        if _is_negative(item):
                            value[k] = _negated(item)
                        else:
                            todo.append(item)
    return tree


def _is_negative(node):
    if node.__class__ is not ast.Constant:
        return False
    value = node.value
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0


def _negated(node):
    return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-node.value))


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
    tree = _negative_literals(gast.gast_to_ast(module))  # the printer needs no line numbers
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
