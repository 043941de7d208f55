"""Built-in rules, one module per domain. Importing this package registers them all;
the rules for each SciPy subpackage are registered once it is imported (see `registry.Registry.defer`)."""

from ..registry import REGISTRY
from . import elementwise, functional, linalg, reductions, runtime, scalar, shape  # noqa: F401  (registration)
from . import assembly, decompositions, fft, objects, polynomials, signal, statistics  # noqa: F401  (registration)

for _library in ("special", "stats", "linalg", "signal", "integrate"):
    REGISTRY.defer(f"scipy.{_library}", f"ssad.rules.scipy_{_library}")
