"""Stages 5-6, the transformation: derivative code for a Program, with its tape.

Assumes: a Program in A-normal form and its Activity (`analysis`).
Guarantees: `reverse` returns the forward sweep and the adjoint sweep (statement
adjoints from `adjoints`, rules inlined by `inline` and folded by `fold`, calls of
the user's functions split by `calls`), with `tape` pushing exactly what the
adjoint sweep needs and cannot recompute; `mirror` checks that claim on every
transformation when the test suite enables it. `forward` returns the function with
each value's tangent computed beside it. Zeros are symbolic throughout.
"""
