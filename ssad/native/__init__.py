"""Generated gradients compiled with Numba (`grad(f, compile=True)`).

    generated source -> lower (the tape as typed lists) -> Numba, per argument types

`lower` rewrites the generated code line for line into code Numba types;
`overloads` gives Numba compiled forms of ssad's runtime helpers; `compile` runs
Numba, keeps what it makes in memory and on disk, and falls back to the NumPy code,
saying why and where, when Numba cannot compile something. Numba is optional:
nothing here is imported until a gradient asks to be compiled.
"""

from .compile import native_function, native_halves, native_source, vjp_halves  # noqa: F401
