"""The public NumPy, SciPy and Python names the rule registry covers, by the names users
write (``np.fft.rfft``, ``scipy.stats.norm.logpdf``, ``x.sum``), read off the registry
itself: `docs/supported-functions.md` is this module's `markdown()` (a test keeps the
two equal) and ``ssad rules`` prints it.

A name is listed when the registry holds an adjoint rule for the object it names
(``reverse``, and ``forward`` when it also holds a tangent rule) or declares it
non-differentiable (``no gradient``: its result carries none, and nothing flows back
through it). SciPy's names are listed when SciPy is installed; its rules are registered
once the subpackage is imported, so this module imports the subpackages it lists.
"""

import builtins
import importlib
import math
import operator

import numpy as np

from ..registry import REGISTRY

_NUMPY = [("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft), ("np.random", np.random)]
_PYTHON = [("", builtins), ("math", math), ("operator", operator)]
_SCIPY = ["special", "linalg", "signal", "integrate"]


def _status(value):
    try:
        if REGISTRY.adjoint_rule(value) is not None:
            return "reverse, forward" if REGISTRY.tangent_rule(value) is not None else "reverse"
        if REGISTRY.is_nondifferentiable(value):
            return "no gradient"
    except TypeError:  # an object the registry cannot look up (unhashable)
        return None
    return None


def _names(prefix, namespace):
    rows = []
    for name in sorted(dir(namespace)):
        if name.startswith("_"):
            continue
        try:
            value = getattr(namespace, name)
        except AttributeError:  # a deprecated name that raises when read
            continue
        if not callable(value):
            continue
        status = _status(value)
        if status is not None:
            rows.append((f"{prefix}.{name}" if prefix else name, status))
    return rows


def _ndarray_methods():
    rows = []
    for name in sorted(dir(np.ndarray)):
        if name.startswith("_") and name not in ("__getitem__", "__setitem__"):
            continue
        status = _status(getattr(np.ndarray, name))
        if status is not None:
            rows.append((f"ndarray.{name}" if callable(getattr(np.ndarray, name)) else f"ndarray.{name} (attribute)",
                         status))
    return rows


def _scipy():
    """{section title: rows} for SciPy's subpackages and distributions; empty without SciPy."""
    try:
        importlib.import_module("scipy")
    except ImportError:
        return {}
    sections = {}
    for package in _SCIPY:
        module = importlib.import_module(f"scipy.{package}")
        sections[f"scipy.{package}"] = _names(f"scipy.{package}", module)
    stats = importlib.import_module("scipy.stats")
    rows = []
    for name in sorted(dir(stats)):
        distribution = getattr(stats, name, None)
        if isinstance(distribution, (stats.rv_continuous, stats.rv_discrete)) or type(distribution).__module__.startswith(
            "scipy.stats._multivariate"
        ):
            rows += _names(f"scipy.stats.{name}", distribution)
    sections["scipy.stats"] = rows + _names("scipy.stats", stats)
    return sections


def catalog():
    """{section title: [(name, status)]}: every covered public name, by namespace."""
    sections = {prefix: _names(prefix, module) for prefix, module in _NUMPY}
    sections["ndarray methods and attributes"] = _ndarray_methods()
    sections.update(_scipy())
    sections["Python builtins, math, operator"] = [row for prefix, module in _PYTHON for row in _names(prefix, module)]
    return {title: rows for title, rows in sections.items() if rows}


def markdown():
    """The catalog as the page docs/supported-functions.md."""
    sections = catalog()
    differentiable = sum(status != "no gradient" for rows in sections.values() for _, status in rows)
    silent = sum(status == "no gradient" for rows in sections.values() for _, status in rows)
    lines = [
        "# Supported NumPy, SciPy and Python functions",
        "",
        "<!-- generated from the rule registry by `ssad rules`; tests/test_catalog.py keeps it current -->",
        "",
        "Every public function ssad has a rule for, by the name you write. *reverse* means",
        "`ssad.grad`, `ssad.vjp` and the other reverse-mode functions differentiate it; *forward*",
        "means `ssad.jvp` does; second derivatives go through every rule listed with both",
        "(see [forward-and-higher-order.md](forward-and-higher-order.md) for the few refused on",
        "purpose). *no gradient* means the function is known to carry no derivative (shapes,",
        "comparisons, integer results, random draws): its result is a constant to the",
        "derivative. A call of anything not listed here, and not a function whose source ssad can",
        "read, is refused with a `MissingRuleError` that says how to register a rule",
        "([rules.md](rules.md)). SciPy's rules are registered when a function you differentiate",
        "has imported the subpackage.",
        "",
        f"{differentiable} names with derivatives and {silent} with no gradient, in {len(sections)} sections.",
    ]
    for title, rows in sections.items():
        lines += ["", f"## {title}", "", "| name | derivative |", "|---|---|"]
        lines += [f"| `{name}` | {status} |" for name, status in rows]
    return "\n".join(lines) + "\n"
