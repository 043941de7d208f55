"""The one error hierarchy of ssad.

Every error ssad raises on purpose derives from `SsadError`. Errors about the
user's source carry the file, line, column and source text of the construct, and
their message says what to do next.
"""


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


def _where(filename, lineno, col):
    if filename is None:
        return ""
    if lineno is None:
        return filename
    if col is None:
        return f"{filename}:{lineno}"
    return f"{filename}:{lineno}:{col + 1}"
