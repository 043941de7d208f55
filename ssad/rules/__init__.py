"""Built-in rules, one module per domain. Importing this package registers them all."""

from . import elementwise, functional, linalg, reductions, runtime, scalar, shape  # noqa: F401  (registration)
