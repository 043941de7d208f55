"""Which line of the user's source each line of generated code stands for.

An error raised while generated code runs (a call through a function value to
something with no rule) is found by the runtime, far from the compiler that knew
the user's line. The compiler leaves, for each generated file, a map from its line
numbers to the user's (filename, line, column, text); `caller_location()` reads the
innermost generated frame on the stack and gives its user location.
"""

import os
import sys

from ..errors import SourceError

ORIGINS = {}  # generated filename -> {generated line: (filename, lineno, col, line text)}

_NOWHERE = (None, None, None, None)


def record(filename, origins):
    """Keep `origins` for `filename`; a place in generated code (code ssad made from its
    own output, as for second derivatives) stands for the user's line that code stands for."""
    if origins:
        ORIGINS[filename] = {line: _first_origin(place) for line, place in origins.items()}


def user_place(place):
    """`place` (filename, lineno, col, text), or the place in the user's source it stands
    for where it is a line of generated code."""
    origins = ORIGINS.get(place[0])
    if origins is None or place[1] not in origins:
        return place
    return origins[place[1]]


def _first_origin(place):
    seen = set()
    while place[0] in ORIGINS and place[:2] not in seen:
        seen.add(place[:2])
        place = ORIGINS[place[0]].get(place[1], place)
    return place


def caller_location():
    """(filename, lineno, col, line text) in the user's source of the innermost
    generated code on the stack, or four Nones when there is none. Generated code that
    stands for ssad's own source (a rule's code, differentiated again for a higher
    derivative) is passed over for the user's code that runs it, where there is one."""
    frame = sys._getframe(1)
    found = None
    while frame is not None:
        origins = ORIGINS.get(frame.f_code.co_filename)
        if origins is not None:
            place = origins.get(frame.f_lineno, _NOWHERE)
            if not _in_ssad(place[0]):
                return place
            found = found or place
        frame = frame.f_back
    return found or _NOWHERE


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_ssad(filename):
    return filename is not None and filename.startswith(_PACKAGE)


def located(message):
    """A `SourceError` saying `message` at the user's line that the generated code running
    now stands for (see `caller_location`): how a rule refuses a call when it runs."""
    return SourceError(message, *caller_location())


def source_line(filename, lineno):
    """The text of line `lineno` of the file `filename`, for an error about it (None where
    either is not known)."""
    import linecache

    return linecache.getline(filename, lineno) if filename and lineno else None
