"""`ssad.show(f)`: the generated code, and its HTML for Jupyter beside the original function.

`show` and `stages` ask the driver for the generated code (or the pipeline for the
code after one stage) and wrap it in a `Shown`.

Assumes: the generated source and the original functions' sources, as plain text.
Guarantees: `to_html` returns one self-contained HTML fragment: pygments with inline
styles (no CSS classes, no scripts), every piece of text escaped, so it renders the
same in a live notebook and in exported HTML. Each `# grad of:` / `# tangent of:`
comment of the generated code is set apart and names the line(s) of the original it
differentiates; those lines are marked in the original's gutter.
"""

import html
import inspect
import os
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .api import Wrt, checkpoint_strategy, differentiable, normalize_wrt, sparse_names
from .backend.sparse_rows import sparse_entry
from .backend.driver import argument_facts, compiled
from .backend.pipeline import STAGES, build
from .errors import SsadError, display_filename
from .runtime.callables import parameters
from .runtime.handles import GRAD, JVP, VJP
from .runtime.receivers import ARRAY

_COMMENT = re.compile(r"^(\s*)# (grad|tangent) of: (.*)$")

# Colours: pygments' default style for the code, one accent for what ties the two sides.
_ACCENT = "#b45f06"
_ACCENT_BACKGROUND = "#fdf1dc"
_CODE_BACKGROUND = "#f8f8f8"
_MUTED = "#8a8a8a"
# Jupyter's code font where there is one (a CSS variable), a common monospace elsewhere.
_MONOSPACE = (
    "font-family: var(--jp-code-font-family, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace); "
    "font-size: 12.5px"
)


@dataclass(frozen=True)
class Original:
    """The source of one user function, as `show` displays it."""

    name: str  # the function's qualified name
    where: str  # `model.py` or `Cell In[3]`
    path: str  # the full filename, for a tooltip
    first_line: int  # the line number of `source`'s first line in its file or cell
    source: str  # dedented

    def lines_of(self):
        """{stripped text: [line numbers]} for every non-blank line."""
        found = {}
        for number, line in enumerate(_split(self.source), start=self.first_line):
            if line.strip():
                found.setdefault(line.strip(), []).append(number)
        return found


def original_of(f):
    """The `Original` of function `f`, or None when its source cannot be read."""
    try:
        lines, first_line = inspect.getsourcelines(f.__code__)  # not what `__wrapped__` names
    except (OSError, TypeError, AttributeError):
        return None
    filename = f.__code__.co_filename
    where = display_filename(filename)
    if where == filename and not filename.startswith("<"):
        where = os.path.basename(filename)
    source = textwrap.dedent("".join(lines).replace("\r\n", "\n").replace("\r", "\n"))
    return Original(f.__qualname__, where, filename, max(first_line, 1), source)


@dataclass
class Section:
    """A stretch of generated source and the original function its comments refer to."""

    source: str
    original: Original = None
    references: dict = field(default_factory=dict)  # generated line index -> original line numbers


def to_html(title, sections):
    """The HTML of `show`: a title, the originals, and the generated code of `sections`."""
    originals = [s.original for s in sections if s.original is not None]
    generated_lines, marked = _generated_lines(sections)
    left = "".join(_original_block(o, marked.get(id(o), set())) for o in _unique(originals))
    right = _caption("generated", "what ssad runs") + _code_block(generated_lines)
    parts = [
        # Text outside the code boxes inherits the notebook's colours (light or dark theme).
        '<div style="margin: 4px 0">',
        f'<div style="font-weight: bold; margin-bottom: 6px">{_text(title)}</div>',
        '<div style="display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start">',
    ]
    if left:
        parts.append(f'<div style="flex: 0 1 auto; min-width: 0; max-width: 100%">{left}</div>')
    parts.append(f'<div style="flex: 1 1 420px; min-width: 0; max-width: 100%">{right}</div>')
    parts.append("</div></div>")
    return "".join(parts)


def _unique(originals):
    seen, out = set(), []
    for original in originals:
        if id(original) not in seen:
            seen.add(id(original))
            out.append(original)
    return out


def _generated_lines(sections):
    """One HTML row per generated line; and, per original, the line numbers referred to."""
    rows = []
    marked = {}
    main = sections[0].original if sections else None
    for section in sections:
        lookup = section.original.lines_of() if section.original is not None else {}
        # In a callee's code, say whose line: the numbers are in that function's gutter.
        prefix = "" if section.original is main or section.original is None else f"{section.original.name} "
        highlighted = _highlight(section.source)
        for text, markup in zip(_split(section.source), highlighted, strict=True):
            match = _COMMENT.match(text)
            if match is None:
                rows.append(_row(markup))
                continue
            indent, kind, quoted = match.groups()
            numbers = lookup.get(quoted.strip(), [])
            if numbers:
                marked.setdefault(id(section.original), set()).update(numbers)
            rows.append(_comment_row(indent, kind, quoted, numbers, section.original, prefix))
    return rows, marked


def _highlight(source):
    """pygments HTML of `source`, one balanced fragment per source line."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    count = len(_split(source))
    if not source.strip():
        return [""] * count
    lexer = PythonLexer(stripnl=False, ensurenl=True)
    markup = highlight(source, lexer, HtmlFormatter(noclasses=True, nowrap=True))
    return (markup.split("\n") + [""] * count)[:count]


def _split(source):
    """The lines of `source` as pygments counts them (only `\\n` ends a line)."""
    lines = source.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _row(markup, style=""):
    # One block per line inside a `white-space: pre` box: no newline characters between
    # rows, so a marked row can carry a background across the whole width.
    return f'<div style="min-height: 1.25em{style}">{markup or " "}</div>'


def _comment_row(indent, kind, quoted, numbers, original, prefix=""):
    comment = f"# {kind} of: {quoted}"
    reference = ""
    if numbers:
        label = "line" if len(numbers) == 1 else "lines"
        where = f"{original.name}, {original.where}"
        tooltip = f"{where}, {label} {', '.join(map(str, numbers))}: {quoted.strip()}"
        reference = (
            f'<span title="{_attribute(tooltip)}" style="color: {_MUTED}; font-weight: normal; margin-left: 1.5em">'
            f"&larr; {_text(prefix)}{label} {', '.join(map(str, numbers))}</span>"
        )
    markup = f'{indent}<span style="color: {_ACCENT}; font-weight: bold">{_text(comment)}</span>{reference}'
    style = f"; background: {_ACCENT_BACKGROUND}; box-shadow: inset 3px 0 0 {_ACCENT}"
    return _row(markup, style)


def _code_block(rows, background=_CODE_BACKGROUND):
    return (
        f'<div style="{_MONOSPACE}; color: #1f1f1f; background: {background}; white-space: pre; '
        "overflow-x: auto; line-height: 1.25em; padding: 6px 10px; border: 1px solid #e4e4e4; "
        f'border-radius: 4px">{"".join(rows)}</div>'
    )


def _original_block(original, marked):
    rows = []
    numbered = enumerate(_highlight(original.source), start=original.first_line)
    width = len(str(original.first_line + len(_split(original.source))))
    for number, markup in numbered:
        if number in marked:
            gutter = f'<span style="color: {_ACCENT}; font-weight: bold">{number:>{width}}</span>'
        else:
            gutter = f'<span style="color: {_MUTED}">{number:>{width}}</span>'
        rows.append(_row(f'<span style="user-select: none; margin-right: 1em">{gutter}</span>{markup}'))
    caption = _caption(original.name, original.where, original.path)
    return f'<div style="margin-bottom: 10px">{caption}{_code_block(rows)}</div>'


def _caption(name, where, path=""):
    title = f' title="{_attribute(path)}"' if path else ""
    detail = f' <span style="color: {_MUTED}"{title}>{_text(where)}</span>' if where else ""
    return (
        f'<div style="margin: 0 0 3px 2px"><span style="{_MONOSPACE}; font-weight: bold">{_text(name)}</span>'
        f"{detail}</div>"
    )


def _text(value):
    return html.escape(value, quote=False)


def _attribute(value):
    return html.escape(value, quote=True)


# ----- show -----


class Shown:
    """What `show` returns: `str()` and `.source` are the generated source, exactly.

    `.title` says what was differentiated; `.originals` holds the source of the
    function and of every function of yours the generated code differentiates too;
    `.original` is the function's own. In Jupyter, `_repr_html_()` shows the original
    beside the generated code, highlighted, each `# grad of:` comment pointing back to
    the line it differentiates.
    """

    def __init__(self, source, title="", sections=None):
        self.source = source
        self.title = title
        self._sections = list(sections) if sections is not None else [Section(source)]
        self.originals = list({id(s.original): s.original for s in self._sections if s.original}.values())
        self.original = self.originals[0].source if self.originals else None

    def __str__(self):
        return self.source

    def __repr__(self):
        return self.source

    def _repr_html_(self):
        return to_html(self.title or "generated source", self._sections)


def show(
    f: Callable[..., Any], wrt: Wrt = 0, *, mode: str = "reverse", optimize: bool = True, stage: str | None = None,
    compile: bool = False, sparse: bool | int | str | tuple = False, checkpoint: str | tuple | None = None,
    args: tuple | None = None,
) -> Shown:
    """The generated gradient source of `f` (what `grad(f, wrt)` runs).

    With `args`, the code specialized on their shape classes (which are real scalars, which
    real arrays of which rank), as `grad(f)(*args)` runs it; without, the general code.

    `mode="forward"` shows the jvp instead. `stage` (one of "parse", "fence",
    "jumps", "anf", "cse", "activity", "reverse", "tape", "optimized") shows the code
    after that pipeline stage, for debugging the compiler; in forward mode "reverse"
    names the tangent code before the optimizer and there is no "tape". With `compile=True`,
    the code Numba compiles for `grad(f, wrt, compile=True)` (its tape as typed lists).
    With `sparse=`, the code of `grad(f, wrt, sparse=...)`, whose adjoints of the
    parameters read by row gathers collect rows. With `checkpoint=`, the code of
    `grad(f, wrt, checkpoint=...)`: its snapshots, its segments run again, their reversal. The result prints as the source and renders in Jupyter as the original function
    beside the generated code.
    """
    f = differentiable(f, "show")
    if mode not in ("reverse", "forward"):
        raise SsadError(f"show(mode={mode!r}): mode is 'reverse' or 'forward'")
    if stage is not None and stage not in STAGES:
        raise SsadError(f"stage must be one of {', '.join(STAGES)}; got {stage!r}")
    if stage == "tape" and mode == "forward":
        raise SsadError("forward mode records nothing: it has no tape stage (its code before the optimizer is "
                        "stage='reverse')")
    names, is_tuple = normalize_wrt(f, wrt)
    # without arguments, the code for NumPy arrays of any shape (see `runtime.receivers`)
    facts = argument_facts(parameters(f)[0], args) if args is not None else frozenset(
        (p, ARRAY) for p in parameters(f)[0] + parameters(f)[1])
    checkpoint = checkpoint_strategy(checkpoint)
    if checkpoint is not None and (mode == "forward" or compile or sparse is not False):
        raise SsadError("show(checkpoint=...) shows reverse-mode NumPy code; leave out mode=, compile= and sparse=")
    kind = "jvp" if mode == "forward" else "grad"
    title = f"{kind} of {f.__qualname__} with respect to {', '.join(names)}"
    if stage is not None:
        title += f", after the {stage} stage"
    originals = {}
    rows = sparse_names(f, names, sparse)
    if rows and (mode == "forward" or stage is not None):
        raise SsadError("show(sparse=...) shows the gradient code after every stage; leave out mode= and stage=")
    if compile:
        if stage is not None:
            raise SsadError("show(compile=True) shows the code Numba compiles, after every stage; leave out stage=")
        variant = JVP if mode == "forward" else GRAD
        entry = compiled(f, names, variant, optimize, facts, as_tuple=is_tuple and variant == GRAD)
        if rows:
            entry = sparse_entry(entry, f, rows, GRAD)
        return _shown(f, _native_source(entry), [], title + ", as Numba compiles it", originals)
    if rows:
        entry = sparse_entry(compiled(f, names, GRAD, optimize, facts, as_tuple=is_tuple), f, rows, GRAD)
        return _shown(f, entry.source, _callee_sections(entry, None, originals), title + ", row-sparse", originals)
    if mode == "forward":
        if stage is None:
            entry = compiled(f, names, JVP, optimize, facts)
            return _shown(f, entry.source, _callee_sections(entry, JVP, originals), title, originals)
        return _shown(f, build(f, names, JVP, optimize, stage, scalars=facts), [], title, originals)
    if stage is None or stage == "optimized":
        entry = compiled(f, names, GRAD, optimize, facts, as_tuple=is_tuple, checkpoint=checkpoint)
        source = entry.source if stage is None else build(
            f, names, GRAD, True, stage, scalars=facts, as_tuple=is_tuple, checkpoint=checkpoint
        )
        return _shown(f, source, _callee_sections(entry, None, originals), title, originals)
    return _shown(f, build(f, names, GRAD, optimize, stage, scalars=facts, as_tuple=is_tuple, checkpoint=checkpoint),
                  [], title, originals)


def _native_source(entry):
    try:
        import numba  # noqa: F401
    except ImportError:
        raise SsadError("show(compile=True) needs Numba: pip install 'ssad[numba]'") from None
    from .native import native_source

    return native_source(entry)


def _shown(f, source, callee_sections, title, originals):
    main = Section(source, _original(f, originals))
    sections = [main] + callee_sections
    return Shown("".join(s.source for s in sections), title, sections)


def _original(function, originals):
    """The displayed source of `function`, read once per `show`."""
    if function not in originals:
        originals[function] = original_of(function)
    return originals[function]


def _callee_sections(entry, variant, originals):
    """The generated code of every user function `entry` calls, transitively, once each."""
    seen = set()
    pending = list(entry.callees or [])
    sections = []
    while pending:
        function, wrt = pending.pop(0)
        if (function, wrt) in seen:
            continue
        seen.add((function, wrt))
        callee = compiled(function, wrt, variant or VJP)
        header = f"# {function.__qualname__}, differentiated with respect to {', '.join(wrt)}"
        sections.append(Section(f"\n\n{header}\n{callee.source}", _original(function, originals)))
        pending.extend(callee.callees or [])
    return sections


def stages(f, wrt=0):
    """The source after every pipeline stage, as {stage: source}."""
    return {stage: str(show(f, wrt, stage=stage)) for stage in STAGES}
