"""Which line of the user's source each line of generated code stands for.

An error raised while generated code runs (a call through a function value to
something with no rule) is found by the runtime, far from the compiler that knew
the user's line. The compiler leaves, for each generated file, a map from its line
numbers to the user's (filename, line, column, text); `caller_location()` reads the
innermost generated frame on the stack and gives its user location.
"""

import sys

ORIGINS = {}  # generated filename -> {generated line: (filename, lineno, col, line text)}

_NOWHERE = (None, None, None, None)


def record(filename, origins):
    """Keep `origins` for `filename`; a place in generated code (code ssad made from its
    own output, as for second derivatives) stands for the user's line that code stands for."""
    if origins:
        ORIGINS[filename] = {line: _first_origin(place) for line, place in origins.items()}


def _first_origin(place):
    seen = set()
    while place[0] in ORIGINS and place[:2] not in seen:
        seen.add(place[:2])
        place = ORIGINS[place[0]].get(place[1], place)
    return place


def caller_location():
    """(filename, lineno, col, line text) in the user's source of the innermost
    generated code on the stack, or four Nones when there is none."""
    frame = sys._getframe(1)
    while frame is not None:
        origins = ORIGINS.get(frame.f_code.co_filename)
        if origins is not None:
            return origins.get(frame.f_lineno, _NOWHERE)
        frame = frame.f_back
    return _NOWHERE
