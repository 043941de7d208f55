"""The derivative of a `collections.defaultdict`: a dict that reads a missing key as zero.

Reading a key a defaultdict lacks stores its default there (`acc[k] += v` on a new key
reads `acc[k]` first). The tangent (or adjoint) ssad keeps beside the dict must hold that
key too, with a zero: `ZeroDefaults` stores, for a key it lacks, the zero of what the
dict itself holds there, which generated code has just read (so the default is made by
the dict alone, its factory never called again for a derivative).
"""

import collections


class ZeroDefaults(dict):
    """The derivative of the defaultdict `primal`; `zero(value)` is the zero derivative of a value."""

    def __init__(self, items, primal, zero):
        super().__init__(items)
        self.primal, self.zero = primal, zero

    def __missing__(self, key):
        value = self[key] = self.zero(self.primal[key])
        return value

    def copy(self):
        return ZeroDefaults(self, self.primal, self.zero)

    def __reduce__(self):  # copy.copy and pickle keep the kind of dict and what it refers to
        return (ZeroDefaults, (dict(self), self.primal, self.zero))


def dict_derivative(x, items, zero):
    """The derivative of the dict `x` holding `items` (a plain dict): for a defaultdict, one
    that reads a key it lacks as zero (`zero(value)` is the zero derivative of a value)."""
    return ZeroDefaults(items, x, zero) if isinstance(x, collections.defaultdict) else items
