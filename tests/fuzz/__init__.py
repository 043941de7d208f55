"""Random differentiable programs, checked against central finite differences.

`generate` builds the source of small, well-formed NumPy programs from a stream of
choices (drawn by hypothesis in `test_fuzz.py`, or from a seeded `random.Random`
by `python -m tests.fuzz`); `harness` runs one program through `ssad.grad` and
`ssad.jvp` and compares both with central differences.
"""
