"""Rules: functions as values (`functools.partial`) and sequences (`list`, `tuple`, concatenation).

A function value's adjoint is the adjoint of what it holds (see `ssad.dynamic`): for
`functools.partial(f, a, b, k=c)` it is the triple (adjoints of `a` and `b`, dict of the
adjoint of `c`, adjoint of `f`: what a closure `f` captured). Inside differentiated
code the compiler hands them back itself; this rule serves calls to `partial` through
a variable.

Tangents mirror that format: the tangent of a partial is the triple (tangents of its
bound positional arguments, dict of the tangents of its bound keywords, tangent of its
function). A sequence's tangent
is a sequence of the same type with one tangent per item; a dict's is a dict.
"""

import copy
import functools

import numpy as np

from ..registry import adjoint, impure, nondifferentiable, tangent
from ..runtime import concat, iterated, merged, pack_like, repeated, repeats_summed, zipped
from ..runtime.closures import joined
from ..runtime.defaults import dict_derivative
from ..runtime.partials import made_partial_adjoint, made_partial_tangent
from ..runtime.receivers import not_walked
from ..runtime.replace import fields_at, refuse_derived_fields, replaced, zero_fields
from ..runtime.structure import is_other_array, zeros_like_value


@adjoint(functools.partial)
def partial_adjoint(dy, y, func, *args, **kwargs):
    d_args, _, d_func = made_partial_adjoint(dy, y, func, len(args), tuple(kwargs))
    return (d_func,) + tuple(d_args)


@tangent(functools.partial)
def partial_tangent(tangents, y, func, *args, **kwargs):
    # tangent rules see positional tangents only: bound keywords get zero tangents,
    # just as the adjoint rule gives them no gradient
    return made_partial_tangent(y, func, tangents[0], tuple(tangents[1:]), _keyword_zeros(kwargs))


# The generated code of the statement that makes a partial reads its adjoint and builds
# its tangent through these two (see `runtime.partials`); differentiated again, each is
# linear in its adjoints or tangents, and each is the transpose of the other.


@adjoint(made_partial_adjoint)
def made_partial_adjoint_adjoint(dy, y, d_made, made, function, count, keywords):
    d_args, d_keywords, d_function = _triple(dy, count)
    return (made_partial_tangent(made, function, d_function, d_args, {k: d_keywords.get(k) for k in keywords}),
            None, None, None, None)


@tangent(made_partial_adjoint)
def made_partial_adjoint_tangent(tangents, y, d_made, made, function, count, keywords):
    return made_partial_adjoint(tangents[0], made, function, count, keywords)


@adjoint(made_partial_tangent)
def made_partial_tangent_adjoint(dy, y, made, function, t_function, t_args, t_keywords):
    d_args, d_keywords, d_function = made_partial_adjoint(dy, made, function, len(t_args), tuple(t_keywords))
    return None, None, d_function, tuple(d_args), {k: d_keywords.get(k) for k in t_keywords}


@tangent(made_partial_tangent)
def made_partial_tangent_tangent(tangents, y, made, function, t_function, t_args, t_keywords):
    t_t_args, t_t_keywords, _ = _triple((tangents[3], tangents[4], None), len(t_args))
    return made_partial_tangent(made, function, tangents[2], t_t_args, {k: t_t_keywords.get(k) for k in t_keywords})


def _triple(parts, count):
    """(the `count` bound arguments' parts, {the keywords'}, the function's) of an adjoint or
    tangent of the parts of a partial, None (a zero) standing for each."""
    if not isinstance(parts, tuple):
        return (None,) * count, {}, None
    bound = tuple(parts[0]) if isinstance(parts[0], (tuple, list)) else (None,) * count
    return bound, parts[1] if isinstance(parts[1], dict) else {}, parts[2]


# A nested function made after one that calls it shares its captured values (see
# `runtime.closures.joined`): its adjoint, a dict over them, is the first function's too.
# The call puts it into that dict: it must run even when nothing reads its value.
impure(joined)


@adjoint(joined)
def joined_adjoint(dy, y, template, first, name):
    return (None, dy, None)


@tangent(joined)
def joined_tangent(tangents, y, template, first, name):
    return tangents[1]


@adjoint(joined_adjoint)
def joined_adjoint_adjoint(d_adjoints, adjoints, dy, y, template, first, name):
    return (d_adjoints[1], None, None, None, None)


@tangent(joined_adjoint)
def joined_adjoint_tangent(tangents, adjoints, dy, y, template, first, name):
    return (None, tangents[0], None)


# ----- Sequences -----


@adjoint(concat)
def concat_adjoint(dy, y, a, b):
    return (pack_like(a, dy[: len(a)]), pack_like(b, dy[len(a) :]))


@tangent(concat)
def concat_tangent(tangents, y, a, b):
    return pack_like(y, _item_tangents(tangents[0], a) + _item_tangents(tangents[1], b))


@adjoint(repeated)
def repeated_adjoint(dy, y, items, times):
    return (repeats_summed(dy, items, times), None)


@tangent(repeated)
def repeated_tangent(tangents, y, items, times):
    return repeated(pack_like(items, _item_tangents(tangents[0], items)), times)


@adjoint(repeats_summed)
def repeats_summed_adjoint(dz, z, dy, items, times):
    return (pack_like(dy, repeated(list(dz), times)), None, None)


@tangent(repeats_summed)
def repeats_summed_tangent(tangents, z, dy, items, times):
    return repeats_summed(pack_like(dy, _item_tangents(tangents[0], dy)), items, times)


@adjoint(list)
@adjoint(tuple)
def sequence_adjoint(dy, y, iterable=()):
    return (pack_like(iterable, list(dy)),)


@tangent(list)
@tangent(tuple)
def sequence_tangent(tangents, y, iterable=None):
    return type(y)(_item_tangents(tangents[0], iterable))


# ----- Dict views (iterated as lists: `for k, v in d.items()`) -----


@adjoint(dict.items)
def dict_items_adjoint(dy, y, d):
    return ({key: pair[1] for key, pair in zip(d, dy, strict=True)},)


@tangent(dict.items)
def dict_items_tangent(tangents, y, d):
    # a key carries no tangent
    return list(zip([None] * len(d), _value_tangents(tangents[0], d), strict=True))


@adjoint(dict.values)
def dict_values_adjoint(dy, y, d):
    return ({key: d_value for key, d_value in zip(d, dy, strict=True)},)  # a display ssad differentiates again


@tangent(dict.values)
def dict_values_tangent(tangents, y, d):
    return _value_tangents(tangents[0], d)


nondifferentiable(dict.keys)
nondifferentiable(list.index, list.count, tuple.index, tuple.count)  # positions and counts: integers


@adjoint(zipped)
def zipped_adjoint(dy, y, *sequences, strict=False):
    """Item k of sequence i went to tuple k, place i (items past the shortest sequence: none;
    an iterator's items, drawn by zip already, carry none: `zip(itertools.count(), xs)`)."""
    adjoints = []
    for i, sequence in enumerate(sequences):
        if not is_sized(sequence):
            adjoints.append(None)
            continue
        items = []
        for k, item in enumerate(sequence):
            items.append(dy[k][i] if k < len(dy) else zeros_like_value(item))
        adjoints.append(pack_like(sequence, items))
    return tuple(adjoints)


@tangent(zipped)
def zipped_tangent(tangents, y, *sequences, strict=False):
    columns = []
    for i, (t, sequence) in enumerate(zip(tangents, sequences, strict=True)):
        # an iterator's items carry none: zeros like the items zip drew (`zip(itertools.count(), xs)`)
        columns.append(_item_tangents(t, sequence) if is_sized(sequence) else [zeros_like_value(z[i]) for z in y])
    return [tuple(column[k] for column in columns) for k in range(len(y))]


@adjoint(iterated)
def iterated_adjoint(dy, y, xs):
    if walked_as_is(xs):
        return (dy,)
    not_walked(xs)  # an object of the user's, walked by its own `__iter__`
    return (zeros_like_value(xs),)  # a dict's keys, a set's items: they carry no gradient


@tangent(iterated)
def iterated_tangent(tangents, y, xs):
    if walked_as_is(xs):
        return tangents[0]
    not_walked(xs)
    return zeros_like_value(y)  # a dict's keys: one zero tangent each (indexed by the loop)


def walked_as_is(xs):
    """Whether `iterated(xs)` is xs itself (never by identity: saved values may be copies)."""
    return isinstance(xs, (list, tuple, np.ndarray, range, str)) or is_other_array(xs)


def is_sized(xs):
    """Whether `xs` has a length (a sequence, an array, a dict), not an iterator drawn as it is read."""
    return hasattr(type(xs), "__len__")


nondifferentiable(walked_as_is, is_sized)


@adjoint(merged)
def merged_adjoint(dy, y, a, b):
    """`{**a, **b}`: each key's adjoint goes to the dict whose value the result holds (none to a
    key a defaultdict made later, reading it: the result does not hold it)."""
    d_a, d_b = {}, {}
    for k in a:
        d_a[k] = dy[k] if k in dy and k not in b else zeros_like_value(a[k])
    for k in b:
        d_b[k] = dy[k] if k in dy else zeros_like_value(b[k])
    return (d_a, d_b)


@tangent(merged)
def merged_tangent(tangents, y, a, b):
    return {**dict(zip(a, _value_tangents(tangents[0], a), strict=True)),
            **dict(zip(b, _value_tangents(tangents[1], b), strict=True))}


# ----- dict(d): a copy of a dict; dict(pairs): each key's last value -----


@adjoint(dict)
def dict_adjoint(dy, y, iterable=()):
    if isinstance(iterable, dict):
        return (merged_adjoint(dy, y, iterable, {})[0],)
    return (pack_like(iterable, _pairs_adjoint(dy, list(iterable))),)


@tangent(dict)
def dict_tangent(tangents, y, iterable=()):
    if isinstance(iterable, dict):
        return merged_tangent((tangents[0], {}), y, iterable, {})
    pairs = list(iterable)
    return {pair[0]: _item_tangents(t, pair)[1] for pair, t in zip(pairs, _item_tangents(tangents[0], pairs), strict=True)}


# The derivative of a dict made beside it (a defaultdict's reads a key it lacks as zero):
# linear in the items it holds, differentiated again where jvp is taken of a jvp.


@adjoint(dict_derivative)
def dict_derivative_adjoint(dy, y, x, items, zero):
    return (None, None if dy is None else dict(dy), None)


@tangent(dict_derivative)
def dict_derivative_tangent(tangents, y, x, items, zero):
    t_items = tangents[1] if isinstance(tangents[1], dict) else {k: zero(v) for k, v in items.items()}
    return dict_derivative(x, dict(t_items), zero)


def _pairs_adjoint(dy, pairs):
    """One adjoint per `(key, value)` pair: its key's adjoint in `dy` where it is the last pair
    of its key (the value the dict holds), zero where a later pair replaced it."""
    last = {pair[0]: position for position, pair in enumerate(pairs)}
    adjoints = []
    for position, pair in enumerate(pairs):
        key, value = pair
        d_value = dy[key] if last[key] == position else zeros_like_value(value)
        adjoints.append(pack_like(pair, [zeros_like_value(key), d_value]))
    return adjoints


@adjoint(dict.get)
def dict_get_adjoint(dy, y, d, key, default=None):
    """`d.get(key, default)`: the value read (d's, or the default's where key is missing)."""
    if key in d:
        return ({k: (dy if k == key else zeros_like_value(v)) for k, v in d.items()}, None, zeros_like_value(default))
    return ({k: zeros_like_value(v) for k, v in d.items()}, None, dy)


@tangent(dict.get)
def dict_get_tangent(tangents, y, d, key, default=None):
    if key in d:
        return _value_tangents(tangents[0], d)[list(d).index(key)]
    return tangents[2] if len(tangents) > 2 else None


# ----- sorted: a permutation of the items, chosen by values that carry no gradient -----


def sort_order(items, key=None, reverse=False):
    """The positions of `items` in the order `sorted(items, key=key, reverse=reverse)` puts them
    (stable, as `sorted` is: equal items keep their order)."""
    values = [key(item) for item in items] if key is not None else list(items)
    return sorted(range(len(values)), key=values.__getitem__, reverse=reverse)


def inverse_order(order):
    """Where each item went: `inverse[order[j]] == j`."""
    inverse = [0] * len(order)
    for position, item in enumerate(order):
        inverse[item] = position
    return inverse


nondifferentiable(sort_order, inverse_order)


@adjoint(sorted)
def sorted_adjoint(dy, y, iterable, key=None, reverse=False):
    inverse = inverse_order(sort_order(iterable, key, reverse))
    return (pack_like(iterable, [dy[k] for k in inverse]),)


@tangent(sorted)
def sorted_tangent(tangents, y, iterable, key=None, reverse=False):
    items = _item_tangents(tangents[0], iterable)
    return [items[k] for k in sort_order(iterable, key, reverse)]


# ----- Helpers -----


def _keyword_zeros(kwargs):
    """Zero tangents for the keywords bound by a partial (None for non-float values)."""
    return {key: zeros_like_value(value) for key, value in kwargs.items()}


def _item_tangents(t, x):
    """The tangent `t` of the sequence (or array) `x` as a list, one tangent per item.

    A tangent that is not itself a sequence (a scalar zero, or None for a sequence with
    nothing to differentiate) stands for every item.
    """
    if isinstance(t, (list, tuple, np.ndarray)):
        return list(t)
    if isinstance(t, dict):
        return [None] * len(x)  # list(d) holds d's keys, which carry no tangent
    not_walked(x)  # an object of the user's taken for a sequence (its tangent an object of its class)
    return [t] * len(x)


def _value_tangents(t, d):
    """The tangents of the values of dict `d`, in key order, from the dict tangent `t`."""
    if isinstance(t, dict):
        return [t.get(key) for key in d]
    return [t] * len(d)



@adjoint(replaced)
def replaced_adjoint(dy, y, record, names, values):
    refuse_derived_fields(record)
    dy = zeros_like_value(y) if dy is None else dy
    return (replaced(dy, names, zero_fields(record, names)), None, fields_at(dy, names))


@tangent(replaced)
def replaced_tangent(tangents, y, record, names, values):
    refuse_derived_fields(record)
    t_record = zeros_like_value(record) if tangents[0] is None else tangents[0]
    t_values = tangents[2] if isinstance(tangents[2], tuple) else zero_fields(record, names)
    return replaced(t_record, names, t_values)


@adjoint(fields_at)
def fields_at_adjoint(dy, y, record, names):
    d_fields = zero_fields(record, names) if dy is None else dy
    return (replaced(zeros_like_value(record), names, d_fields), None)


@tangent(fields_at)
def fields_at_tangent(tangents, y, record, names):
    return zero_fields(record, names) if tangents[0] is None else fields_at(tangents[0], names)


nondifferentiable(refuse_derived_fields, zero_fields)  # a check that refuses an input; zeros


@adjoint(copy.deepcopy)
def deepcopy_adjoint(dy, y, x, memo=None):
    return (dy,)  # a copy: its adjoint is its value's, held in the same structure


@tangent(copy.deepcopy)
def deepcopy_tangent(tangents, y, x, memo=None):
    return copy.deepcopy(zeros_like_value(x) if tangents[0] is None else tangents[0])


@adjoint(copy.copy)
def copy_adjoint_rule(dy, y, x):
    return (dy,)  # a new container of the same items: its adjoint is its value's


@tangent(copy.copy)
def copy_tangent(tangents, y, x):
    return copy.copy(zeros_like_value(x) if tangents[0] is None else tangents[0])
