"""The one error hierarchy of ssad.

Every error ssad raises on purpose derives from `SsadError`. Errors about the
user's source carry the file, line, column and source text of the construct, and
their message says what to do next. A Jupyter or IPython cell is named as IPython
names it in tracebacks (`Cell In[3], line 2`), not by the temporary file behind it.
"""

import sys


class SsadError(Exception):
    """Base of every error ssad raises on purpose."""


class SourceError(SsadError):
    """An error tied to a place in the user's source."""

    def __init__(self, message, filename=None, lineno=None, col=None, line=None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.line = line
        super().__init__(self._format())

    def _format(self):
        where = _where(self.filename, self.lineno, self.col)
        text = f"{where}: {self.message}" if where else self.message
        if self.line:
            text += f"\n    {self.line.strip()}"
        return text


class UnsupportedSyntaxError(SourceError, SyntaxError):
    """A construct ssad does not differentiate, rejected where it stands."""

    def __init__(self, message, filename=None, lineno=None, col=None, line=None):
        SourceError.__init__(self, message, filename, lineno, col, line)
        # SyntaxError's own fields, so tools that render SyntaxErrors show the place.
        self.msg = message
        self.offset = None if col is None else col + 1
        self.text = line
        self.args = (self._format(),)

    def __str__(self):
        return self._format()


class MissingRuleError(SourceError):
    """A call whose active arguments reach a function with no rule and no source."""


class NativeWarning(UserWarning):
    """A gradient asked for with `compile=True` runs as NumPy code; the message says why
    and names the user's line (`compile="strict"` raises an SsadError instead)."""


def display_filename(filename):
    """`filename` as a reader knows it: `Cell In[3]` for an IPython or Jupyter cell."""
    ipython = sys.modules.get("IPython")  # never imported here: only a running shell has cells
    get_shell = getattr(ipython, "get_ipython", None)
    shell = get_shell() if get_shell is not None else None
    cells = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(cells, dict) and filename in cells:
        return f"Cell In[{cells[filename]}]"
    return filename


def _where(filename, lineno, col):
    if filename is None:
        return ""
    shown = display_filename(filename)
    if shown != filename:  # a cell: IPython's own wording, so both read alike
        if lineno is None:
            return shown
        return f"{shown}, line {lineno}" + ("" if col is None else f", column {col + 1}")
    if lineno is None:
        return filename
    if col is None:
        return f"{filename}:{lineno}"
    return f"{filename}:{lineno}:{col + 1}"
