"""Whether a parameter is read only by row gathers: what a row-sparse gradient needs.

Assumes: the parsed function the user differentiates (`frontend.parse.Parsed`).
Guarantees: `check_row_reads(parsed, name)` returns when every use of the parameter
`name` in the function's body (nested functions included) is a row gather
`name[index]` (one index, not a slice or a tuple: an integer, an integer array, a
mask), `np.take(name, index, axis=0)`, or a read of its `shape`, `dtype`, `ndim`
or `size` or `len(name)`; then its adjoint is a sum of rows scattered into zeros,
nonzero only on the rows read. Otherwise it raises an SsadError naming the first
other use, its line, and what to do. The parameter must not be rebound or written.
"""

import gast
import numpy as np

from ..errors import SsadError
from ..frontend.builders import walk
from ..frontend.primitives import gast_path

_METADATA = ("shape", "dtype", "ndim", "size")


def check_row_reads(parsed, name):
    """Raise SsadError unless `name` is read only by row gathers in `parsed`."""
    node = parsed.node
    parents = {}
    for parent in walk(node):
        for child in gast.iter_child_nodes(parent):
            parents[child] = parent
    numpy_names = {k for k, v in parsed.function.__globals__.items() if v is np}
    for found in walk(node):
        if not (isinstance(found, gast.Name) and found.id == name) or found is _parameter(node, name):
            continue
        parent = parents.get(found)
        what = _other_use(found, parent, parents, numpy_names)
        if what is not None:
            raise parsed.unsupported(found, (
                f"sparse gradient of {name}: {what}; a row-sparse gradient needs {name} read only by row "
                f"gathers ({name}[rows] or np.take({name}, rows, axis=0)). Leave {name} out of sparse= for "
                "a dense gradient"
            ))


def row_read_parameters(parsed, names, asked, explicit):
    """The parameters among `asked` (all in `names`, the differentiated ones) that are read
    only by row gathers. With `explicit` (the user named them, or there is one), one that
    is read otherwise raises SsadError naming the line; else it is left out, and SsadError
    is raised only when none qualifies."""
    missing = [n for n in asked if n not in names]
    if missing:
        raise SsadError(f"sparse= names {', '.join(missing)}, which wrt does not: a sparse gradient is one of wrt's")
    chosen = []
    for name in asked:
        try:
            check_row_reads(parsed, name)
        except SsadError:
            if explicit:
                raise
            continue
        chosen.append(name)
    if not chosen:
        check_row_reads(parsed, asked[0])  # none qualifies: say why for the first
    return tuple(chosen)


def _parameter(function, name):
    for arg in function.args.args + function.args.kwonlyargs + function.args.posonlyargs:
        if arg.id == name:
            return arg
    return None


def _other_use(found, parent, parents, numpy_names):
    """None when `found` (a Name) is a row gather or a metadata read; else what it is."""
    name = found.id
    if not isinstance(found.ctx, gast.Load):
        return f"{name} is assigned here"
    if isinstance(parent, gast.Subscript) and parent.value is found:
        if not isinstance(parent.ctx, gast.Load):
            return f"{name} is written into here"
        if isinstance(parent.slice, (gast.Slice, gast.Tuple)):
            return f"{name}[...] here reads a slice or several axes, not whole rows"
        return None
    if isinstance(parent, gast.Attribute) and parent.attr in _METADATA:
        return None
    if isinstance(parent, gast.Call) and found in parent.args:
        func = parent.func
        if isinstance(func, gast.Name) and func.id == "len" and len(parent.args) == 1:
            return None
        if (isinstance(func, gast.Attribute) and func.attr == "take" and isinstance(func.value, gast.Name)
                and func.value.id in numpy_names and parent.args[0] is found and _along_rows(parent)):
            return None
        called = gast_path(func)
        return f"{name} is passed to {called if called != '<expression>' else 'a function'} here"
    return f"{name} is used here other than by a row gather"


def _along_rows(call):
    """Whether np.take(x, index, ...) `call` takes along axis 0 in the default mode."""
    keywords = {k.arg: k.value for k in call.keywords}
    axis = call.args[2] if len(call.args) > 2 else keywords.get("axis")
    if len(call.args) > 3 or set(keywords) - {"axis", "mode"}:
        return False
    mode = keywords.get("mode")
    if mode is not None and not (isinstance(mode, gast.Constant) and mode.value == "raise"):
        return False
    return isinstance(axis, gast.Constant) and axis.value == 0
