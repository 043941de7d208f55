"""The shape of a per-rule numerical check, shared by the rule test modules."""

from typing import Any, NamedTuple


class Case(NamedTuple):
    """Check the adjoint rule of `primitive` at `args`/`kwargs` with ssad.testing.check_rule."""

    primitive: Any
    args: tuple
    kwargs: dict = {}
    id: str = ""


def case_id(case):
    return case.id or getattr(case.primitive, "__name__", repr(case.primitive))
