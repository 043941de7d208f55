"""`ssad.checkpoint(g)`: a call whose backward sweep runs `g` again instead of keeping its tape.

Inside a differentiated function, `h = ssad.checkpoint(block)(h, W)` is a call through
a function value (see `dynamic`) whose value differentiates its own calls: the forward
sweep calls `block` as plain Python, recording nothing, and keeps only the arguments
(in the pullback's closure); the pullback runs `block`'s generated forward part again
on them, which rebuilds its tape, then its backward part. Memory: the arguments instead
of everything `block` records; time: one more forward run of `block`.

Forward mode (`jvp`) and code differentiated again (`grad(grad(f))`, `hessian`) see
`block` itself: a tangent needs no tape, and a second derivative of the call is the
second derivative of `block`.

Assumes: `block` is a function ssad can differentiate (the user's function, a nested
def, a lambda, a bound method, a callable object, a function with a rule).
Guarantees: the pullback gives what `call_forward(block, ...)`'s would (the adjoint of
the function value first, then the arguments', then the keywords'), and a `block` that
would repeat an effect when run again (prints, random draws) raises SsadError at its
first call (see `effects`).
"""

import functools
import types

from .dynamic import call_forward, call_jvp
from .effects import check_replayable


class Checkpointed:
    """`block`, called as itself; differentiated, run again in the backward sweep (see module)."""

    def __init__(self, block):
        self.ssad_checkpointed = block
        functools.update_wrapper(self, block, updated=())

    def __call__(self, *args, **kwargs):
        return self.ssad_checkpointed(*args, **kwargs)

    def __get__(self, instance, owner=None):  # `@ssad.checkpoint` on a method: bound like the method
        if instance is None:
            return self
        return Checkpointed(types.MethodType(self.ssad_checkpointed, instance))

    def __repr__(self):
        return f"ssad.checkpoint({self.ssad_checkpointed!r})"

    def ssad_call_forward(self, *args, **kwargs):
        block = self.ssad_checkpointed
        check_replayable(block)
        value = block(*args, **kwargs)

        def pullback(d_value):
            return call_forward(block, *args, **kwargs)[1](d_value)  # block's forward part again, then its backward

        return value, pullback

    def ssad_call_jvp(self, d_function, primals, tangents, keywords, keyword_tangents):
        return call_jvp(self.ssad_checkpointed, d_function, primals, tangents, keywords, keyword_tangents)


def checkpoint(block):
    """`block`, whose calls inside a differentiated function keep only their arguments for the
    backward sweep, which runs `block` again to rebuild what it needs (rematerialization,
    as `jax.checkpoint` and `torch.utils.checkpoint`). Use it as `ssad.checkpoint(block)(x, W)`
    or as a decorator. `block` must not print or draw random numbers: it runs twice."""
    if isinstance(block, Checkpointed):
        return block
    if not callable(block):
        raise TypeError(f"ssad.checkpoint takes a function; got {type(block).__name__}")
    return Checkpointed(block)
