"""`dataclasses.replace(p, b=v)` and a namedtuple's `p._replace(b=v)`, read as one operation.

The front end lowers both, with keywords it names, to `replaced(p, ("b",), (v,))` (see
`frontend.expressions`). Its rules (`rules.functional`) are written with it and with
`fields_at`, the fields it sets read back, each the other's transpose, so a derivative of
a rule is made of them again: the adjoint of `replaced` is the record's adjoint with the
named fields zero, and those fields' adjoints. A dataclass whose `__post_init__` computes
from its fields is refused where a derivative goes through it, as its constructor is.
"""

import dataclasses

from ..errors import MissingRuleError
from .locations import caller_location
from .structure import is_namedtuple, zeros_like_value


def replaced(record, names, values):
    """`record` with the fields `names` set to `values`, as `dataclasses.replace` or a
    namedtuple's `_replace` makes it."""
    changes = dict(zip(names, values, strict=True))
    if is_namedtuple(record):
        return record._replace(**changes)
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.replace(record, **changes)
    raise MissingRuleError(
        f"`._replace(...)` of a {type(record).__name__}, which is no namedtuple: ssad reads `_replace` as a "
        "namedtuple's method; give your own method another name", *caller_location())


def fields_at(record, names):
    """The fields `names` of `record`, a tuple."""
    return tuple(getattr(record, name) for name in names)


def zero_field(value):
    """The zero of a field: None for one that holds None (a gradient's field that is no number)."""
    return None if value is None else zeros_like_value(value)


def zero_fields(record, names):
    return tuple(zero_field(getattr(record, name)) for name in names)


def refuse_derived_fields(record):
    """A dataclass whose `__post_init__` computes from its fields: `replace` runs it again."""
    if dataclasses.is_dataclass(record) and hasattr(type(record), "__post_init__"):
        raise MissingRuleError(
            f"`dataclasses.replace` of a {type(record).__name__} whose values carry derivatives is not supported: "
            "its `__post_init__` computes from the fields, which ssad does not differentiate; construct the new "
            "value with the fields computed before, or make the computation a function of yours",
            *caller_location())
