"""Endless iterators walked by a loop: `for k, v in zip(itertools.count(1), xs)`.

ssad walks a loop by index over what iterating gives (`iterated`), which for an iterator
is the list of its items: for `itertools.count`, `cycle` or `repeat` without a count that
list never ends. `Endless` stands for it instead: its length is `sys.maxsize`, so the
loop over a `zip` walks as far as the shortest sequence, as `zip` does, and a loop over
it alone runs until its `break`, as Python's does; indexed, it draws items up to the index
and keeps them, for the adjoint sweep to read again.
"""

import itertools
import operator
import sys


class Endless:
    """The items of an endless iterator, drawn when indexed (a position at a time, in order)."""

    __slots__ = ("iterator", "drawn")  # no attributes of its own: not a record of the user's

    def __init__(self, iterator, first):
        self.iterator, self.drawn = iterator, [first]

    def __len__(self):
        return sys.maxsize

    def __getitem__(self, index):
        while len(self.drawn) <= index:
            self.drawn.append(next(self.iterator))
        return self.drawn[index]


def endless(xs):
    """`Endless(xs)` for an iterator of itertools that never stops (`cycle` of items, `count`,
    `repeat` without a count), else None (`cycle([])` stops at once: an empty list)."""
    kind = type(xs)
    if kind is itertools.count or kind is itertools.cycle or (
            kind is itertools.repeat and operator.length_hint(xs, -1) < 0):
        first = next(xs, _NOTHING)
        return [] if first is _NOTHING else Endless(xs, first)
    return None


_NOTHING = object()
