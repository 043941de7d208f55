"""Loop checkpointing at run time: snapshots of a loop's state, and the order of its reversal.

Generated code with `checkpoint=` (see `transform.checkpoints`) runs a loop's forward
sweep without recording anything, calling `keep(checkpoints, state...)` at the start of
each iteration; the `Checkpoints` object stores the state when the strategy says so.
The backward sweep then asks it for the segments to reverse, last first. For each one
it restores the snapshot, runs the segment again while recording on the tape, and
reverses it:

- `"sqrt"`: a snapshot every ceil(sqrt(n)) iterations of a loop of n; each segment is
  recorded whole. Memory: about 2 sqrt(n) states; time: one more forward sweep.
- `("every", k)`: a snapshot every k iterations; works when the trip count is known only
  at the end (a `while` loop).
- `("revolve", s)`: binomial checkpointing (Griewank) with at most `s` snapshots: each
  iteration is reversed alone, after re-running from the nearest snapshot, which places
  new snapshots in the slots freed so far so that no iteration runs more than r times,
  r the least with C(s + r, s) >= n.

Assumes: `keep` is called once at the start of every iteration the loop runs (the
forward sweep, and the re-runs `reversal` asks for), `restore` before each segment.
Guarantees: `segments()`/`reversal()` cover the iterations that ran, each exactly once,
from the last to the first; at most `s` snapshots are held at once under revolve.
"""

import math

import numpy as np


class Checkpoints:
    """The snapshots of one loop's state, and the order in which its segments are reversed."""

    def __init__(self, strategy, trips=None):
        self.strategy = strategy
        self.trips = trips  # the loop's trip count when known on entry (a range's length), else None
        self.position = 0  # the iteration the next `keep` belongs to
        self.snapshots = {}  # iteration -> the state at its start
        if strategy == "sqrt":
            self.every = max(1, math.isqrt(max(trips - 1, 0)) + 1)
        elif strategy[0] == "every":
            self.every = strategy[1]
        else:
            self.every = None
            self.slots = strategy[1]
            self.planned = {0} | set(_descent(0, trips, self.slots - 1))

    def keep(self, *state):
        """Store `state`, the loop's state at the start of the current iteration, if the strategy says so."""
        position = self.position
        if (position % self.every == 0) if self.every is not None else (position in self.planned):
            self.snapshots.setdefault(position, state)
        self.position = position + 1

    def restore(self, position):
        """The state stored at the start of iteration `position`; the iterations that follow
        are run again from there."""
        self.position = position
        if self.every is not None:
            return self.snapshots.pop(position)  # each segment is restored once
        return self.snapshots[position]

    def segments(self):
        """(first, stop) of each segment to reverse, the last first (`sqrt` and `every`)."""
        starts = sorted(self.snapshots)
        for first, stop in reversed(list(zip(starts, starts[1:] + [self.position], strict=False))):
            yield first, stop

    def reversal(self):
        """(restart, first, stop) for each iteration to reverse, the last first (`revolve`):
        restore the snapshot at `restart`, run on to `first` keeping the snapshots planned
        on the way, then record and reverse iterations [first, stop)."""
        for j in reversed(range(self.position)):
            restart = max(p for p in self.snapshots if p <= j)
            free = self.slots - len(self.snapshots)
            self.planned = set(_descent(restart, j + 1, free))
            yield restart, j, j + 1
            if restart == j:
                del self.snapshots[j]

    def unspent(self):
        """A copy whose reversal can run again (see `runtime.unspent`)."""
        copied = Checkpoints.__new__(Checkpoints)
        copied.__dict__.update(self.__dict__)
        copied.snapshots = dict(self.snapshots)
        return copied


# What generated code calls (functions, not methods: the code stays code ssad reads).


def keep(checkpoints, *state):
    """`checkpoints.keep(*state)`: a snapshot of the loop's state when one is due."""
    checkpoints.keep(*state)


def restore(checkpoints, position):
    """The state at the start of iteration `position`, from its snapshot."""
    return checkpoints.restore(position)


def segments(checkpoints):
    """The segments to reverse, the last first (`sqrt`, `every`)."""
    return checkpoints.segments()


def reversal(checkpoints):
    """The iterations to reverse and where to re-run them from, the last first (`revolve`)."""
    return checkpoints.reversal()


def copy_state(value):
    """A copy of a value the loop writes into in place, for a snapshot that must not change."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [copy_state(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_state(v) for k, v in value.items()}
    return value


def _reachable(free, repeats):
    """How many iterations can be reversed from one snapshot with `free` more slots, when
    no iteration may be re-run more than `repeats` times: C(free + repeats + 1, free + 1)."""
    return math.comb(free + repeats + 1, free + 1)


def _descent(start, stop, free):
    """Where to place snapshots while running from `start` towards `stop` with `free` slots.

    The binomial split: with r the least number of re-runs that reaches `stop`, the
    next snapshot goes as far on as leaves the iterations before it reversible with
    r - 1 re-runs each, then the same for the rest with one slot fewer.
    """
    placed = []
    while stop - start > 1 and free > 0:
        length, repeats = stop - start, 0
        while _reachable(free, repeats) < length:
            repeats += 1
        start += min(_reachable(free, repeats - 1), length - 1)
        placed.append(start)
        free -= 1
    return placed


def validate(strategy):
    """`strategy` as generated code passes it, or SsadError text saying what is accepted."""
    if strategy == "sqrt":
        return strategy
    if isinstance(strategy, (tuple, list)) and len(strategy) == 2 and strategy[0] in ("revolve", "every"):
        kind, count = strategy
        if isinstance(count, (int, np.integer)) and not isinstance(count, bool) and count >= 1:
            return (kind, int(count))
    raise ValueError(
        f"checkpoint={strategy!r}: use \"sqrt\", (\"revolve\", s) with s >= 1 snapshots, or (\"every\", k) with k >= 1"
    )
