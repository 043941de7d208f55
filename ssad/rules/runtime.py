"""Rules: ssad's own runtime helpers, so generated code can be differentiated again.

`grad(grad(f))`, `hessian(f)` and `jvp` of a gradient transform code ssad generated,
which calls the helpers below. Each gets an adjoint and a tangent rule; all are
linear in their array arguments. `add_at` updates its first argument in place in
generated code; when generated code is itself differentiated, ssad reads it as the
pure `added_at` (see `parse`), which these rules describe.
"""

import numpy as np

from ..registry import adjoint, impure, nondifferentiable, tangent
from ..runtime.checkpoints import Checkpoints, copy_state, keep, reversal, restore, segments
from ..runtime.in_place import along_axis_index, diagonal_fill, diagonal_index
from ..runtime.rematerialize import checkpoint
from ..runtime import (
    add_at,
    added_at,
    broadcast_like,
    chosen_position,
    copy_adjoint,
    formatted,
    list_adjoint,
    getitem_adjoint,
    insert_position,
    is_missing,
    is_other_array,
    owned,
    pack_like,
    raised,
    restored_value,
    saved_part,
    seed,
    shape_only,
    size,
    summed_at,
    take_part,
    kept,
    written_mask,
    written_part,
    unbroadcast,
    unspent,
    zero_at,
    zeros_like_value,
)
from ..runtime.dynamic import call_jvp, method_jvp
from ..runtime.pullbacks import (
    call_forward_packed,
    method_forward_packed,
    packed_adjoint,
    packed_tangent,
    third_order_error,
)
from ..runtime.passed import keeps_arguments, keeps_globals, output_is_none
from ..runtime.receivers import not_walked, numpy_member
from ..runtime.item_guards import changed_item_held_once, item_held_by, item_held_elsewhere, rebound_by_augmented
from ..runtime.refusals import (
    check_assertion, discrete_only, elements_unchanged_by_call, held_list_kept, index_only, keeps_length,
    keys_unchanged, list_changed, fresh_result, items_unchanged_by_call, not_a_view_of, not_changed_in_place, unshared_with, rule_adjoints, unchanged_by_call, walk_unchanged,
)
from ..runtime.structure import (
    add_adjoint, add_attr, attribute_part, field_position, field_tangent, is_zero_number, owned_argument,
    record_tangent,
)
from .functional import _item_tangents

nondifferentiable(seed, zeros_like_value, shape_only, size, is_other_array)  # is_other_array: a type test
nondifferentiable(is_missing, insert_position, chosen_position)  # a test of a saved part, a list position
nondifferentiable(formatted)  # a string
nondifferentiable(check_assertion, pure=False)  # an `assert`: it must run where the function runs it
nondifferentiable(raised, pure=False)  # a `raise`: it ends the function where it stands
nondifferentiable(index_only, pure=False)  # a part of an index built as a value (`np.s_[:, k]`): a test that raises
nondifferentiable(unchanged_by_call, items_unchanged_by_call, elements_unchanged_by_call, keeps_arguments,
                  keeps_globals, output_is_none, pure=False)  # a test that raises: it must run where the call runs
nondifferentiable(not_a_view_of, unshared_with, fresh_result, pure=False)  # the same, where a tuple assignment or a write may change what another name reads
nondifferentiable(changed_item_held_once, item_held_by, item_held_elsewhere, pure=False)  # the same, where `y[k] += v` changes an item
nondifferentiable(rebound_by_augmented, pure=False)  # the same, where `t += v` may write
nondifferentiable(walk_unchanged, keys_unchanged, held_list_kept, pure=False)  # the same, where a loop changes what it walks
nondifferentiable(not_changed_in_place, pure=False)  # the same, where a method's value is used
nondifferentiable(keeps_length, pure=False)  # the same, where a slice of a list is assigned
nondifferentiable(list_changed, not_walked, pure=False)  # the same, where a method named like a list's may be an object's
nondifferentiable(numpy_member, pure=False)  # the same, where NumPy's member was taken for an object's
nondifferentiable(discrete_only, pure=False)  # the same, where an argument a rule gives no derivative may be a float


# ----- checkpointing -----
# The helpers of checkpointed loops keep and restore state: impure, so no pass moves or
# drops them. Code that calls them is not differentiated again (`backend.pipeline`).
impure(Checkpoints, keep, restore, segments, reversal, copy_state)


@adjoint(checkpoint)
def _checkpoint_adjoint(dy, y, block):
    return (dy,)  # the adjoint of the block (what a closure captured, a method's receiver)


@tangent(checkpoint)
def _checkpoint_tangent(tangents, y, block):
    return tangents[0]


@adjoint(rule_adjoints)
def _rule_adjoints_adjoint(dy, y, adjoints, active, label, filename, lineno, col, line):
    return (dy,)  # what an adjoint rule returned, checked and passed on


@tangent(rule_adjoints)
def _rule_adjoints_tangent(tangents, y, adjoints, active, label, filename, lineno, col, line):
    return tangents[0]


@adjoint(saved_part)
def saved_part_adjoint(dy, y, container, index):
    return (getitem_adjoint(dy, container, index), None)


@tangent(saved_part)
def saved_part_tangent(tangents, y, container, index):
    return saved_part(tangents[0], index)


@adjoint(restored_value)
def restored_value_adjoint(dy, y, old):
    return (dy,)


@tangent(restored_value)
def restored_value_tangent(tangents, y, old):
    return tangents[0]


@adjoint(owned)
def owned_adjoint(dy, y, x):
    return (dy,)


@tangent(owned)
def owned_tangent(tangents, y, x):
    return owned(tangents[0])


@adjoint(owned_argument)
def owned_argument_adjoint(dy, y, x):
    return (dy,)


@tangent(owned_argument)
def owned_argument_tangent(tangents, y, x):
    return owned_argument(tangents[0])  # the tangent is written into where the argument is


@adjoint(unspent)
def unspent_adjoint(dy, y, residuals):
    return (dy,)


@tangent(unspent)
def unspent_tangent(tangents, y, residuals):
    return unspent(tangents[0])

# ----- Shapes -----


@adjoint(unbroadcast)
def unbroadcast_adjoint(dy, y, g, x):
    # g summed down to x's shape gets dy spread back; a g smaller than x (a scalar adjoint
    # set to 0.0, spread up to x's shape) gets dy summed down to its own shape
    return (broadcast_like(unbroadcast(dy, g), g), None)


@tangent(unbroadcast)
def unbroadcast_tangent(tangents, y, g, x):
    return unbroadcast(tangents[0], x)


@adjoint(broadcast_like)
def broadcast_like_adjoint(dy, y, t, like):
    return (unbroadcast(dy, t), None)


@tangent(broadcast_like)
def broadcast_like_tangent(tangents, y, t, like):
    return broadcast_like(tangents[0], like)


# ----- Accumulation and scatter -----


@adjoint(added_at)
@adjoint(add_at)
def added_at_adjoint(dy, y, d_x, index, d_part):
    part = take_part(dy, index)
    # a list's items added over a slice of a list: no broadcasting to undo
    return (dy, None, part if isinstance(d_part, (list, tuple)) else unbroadcast(part, d_part))


@adjoint(summed_at)
def summed_at_adjoint(dy, y, positions, weights, size):
    return (None, np.take(dy, positions), None)


@tangent(summed_at)
def summed_at_tangent(tangents, y, positions, weights, size):
    return summed_at(positions, tangents[1], size)


@adjoint(getitem_adjoint)
def getitem_adjoint_adjoint(dy, y, d_part, x, index):
    part = take_part(dy, index)
    # an item of a list that is itself a sequence (a row of `zip`): no broadcasting to undo
    return (part if isinstance(d_part, (list, tuple)) else unbroadcast(part, d_part), None, None)


@tangent(getitem_adjoint)
def getitem_adjoint_tangent(tangents, y, d_part, x, index):
    return getitem_adjoint(tangents[0], x, index)


def _base_tangent(t_base, d_x):
    """A zero tangent may arrive as the literal 0.0: give it the base's shape (or structure: a
    list of differently shaped arrays) to index into."""
    if _is_number(t_base) and not _is_number(d_x):
        return zeros_like_value(d_x)
    return t_base


def _is_number(value):
    """Whether `value` is a number, a 0-d array or None (never np.ndim, which a ragged list breaks)."""
    if value is None or isinstance(value, (int, float, complex, np.generic)):
        return True
    return getattr(value, "ndim", None) == 0


@tangent(added_at)
@tangent(add_at)
def added_at_tangent(tangents, y, d_x, index, d_part):
    return added_at(_base_tangent(tangents[0], d_x), index, tangents[2])


@adjoint(add_adjoint)
def add_adjoint_adjoint(dy, y, a, b):
    return (dy, dy)


@tangent(add_adjoint)
def add_adjoint_tangent(tangents, y, a, b):
    return add_adjoint(tangents[0], tangents[1])


@adjoint(copy_adjoint)
def copy_adjoint_adjoint(dy, y, d_x):
    return (dy,)


@tangent(copy_adjoint)
def copy_adjoint_tangent(tangents, y, d_x):
    return copy_adjoint(tangents[0])


@adjoint(list_adjoint)
def list_adjoint_adjoint(dy, y, whole, items):
    # linear in the list's adjoint `whole`: the items' adjoints, gathered into its shape
    if isinstance(whole, list) or not isinstance(items, list) or is_zero_number(whole):
        return (dy, None)
    return (unbroadcast(np.asarray(dy) if dy else np.zeros(np.shape(items)), whole), None)


@tangent(list_adjoint)
def list_adjoint_tangent(tangents, y, whole, items):
    if tangents[0] is None or is_zero_number(tangents[0]):
        return zeros_like_value(y)  # a list (or a dict) the adjoint of `pop` puts an item back into
    return list_adjoint(tangents[0], items)


@adjoint(zero_at)
def zero_at_adjoint(dy, y, d_x, index):
    return (zero_at(dy, index), None)


@tangent(zero_at)
def zero_at_tangent(tangents, y, d_x, index):
    return zero_at(tangents[0], index)


nondifferentiable(written_mask)  # which elements a write keeps: no derivative
nondifferentiable(diagonal_index, along_axis_index)  # indices


@adjoint(diagonal_fill)
def diagonal_fill_adjoint(dy, y, val, a, wrap=False):
    # each element of `val` is written at every position whose count modulo its size it is
    positions = np.arange(np.shape(dy)[0]) % np.size(val)
    summed = np.bincount(positions, np.real(dy), np.size(val))
    if np.iscomplexobj(dy):
        summed = summed + 1j * np.bincount(positions, np.imag(dy), np.size(val))
    return (np.reshape(summed, np.shape(val)) if np.ndim(val) else summed[0], None)


@tangent(diagonal_fill)
def diagonal_fill_tangent(tangents, y, val, a, wrap=False):
    return np.resize(np.ravel(tangents[0]), np.shape(y)[0])


@adjoint(written_part)
def written_part_adjoint(dy, y, d_x, index):
    return (added_at(zeros_like_value(d_x), index, kept(dy, d_x, index)), None)


@adjoint(kept)
def kept_adjoint(dy, y, part, x, index):
    return (kept(dy, x, index), None, None)  # a mask of zeros and ones: its own transpose


@tangent(kept)
def kept_tangent(tangents, y, part, x, index):
    return kept(tangents[0], x, index)


@tangent(written_part)
def written_part_tangent(tangents, y, d_x, index):
    return written_part(tangents[0], index)


@adjoint(take_part)
def take_part_adjoint(dy, y, d_x, index):
    return (added_at(zeros_like_value(d_x), index, dy), None)


@tangent(take_part)
def take_part_tangent(tangents, y, d_x, index):
    return take_part(tangents[0], index)


# ----- Structures -----


@adjoint(pack_like)
def pack_like_adjoint(dy, y, x, items):
    if isinstance(x, dict):  # a dict's adjoint never came from its items (its keys)
        return (None, pack_like(items, [zeros_like_value(item) for item in items]))
    # a list of items gets a list of adjoints; a zero number (an entry written over later) is every item's
    return (None, pack_like(items, [dy] * len(items) if is_zero_number(dy) else list(dy)))


@tangent(pack_like)
def pack_like_tangent(tangents, y, x, items):
    # x is read for its type and shape only; the items' tangent may be a scalar zero
    return pack_like(x, _item_tangents(tangents[1], items))


@adjoint(add_attr)
def add_attr_adjoint(dy, y, d_x, name, d_part, x=None):
    # x (the object, for its structure) gets none; nothing of d_part went into a class's constant
    return (dy, None, attribute_part(dy, name, x), None)


@tangent(add_attr)
def add_attr_tangent(tangents, y, d_x, name, d_part, x=None):
    return add_attr(_base_tangent(tangents[0], d_x), name, tangents[2], x)


@adjoint(attribute_part)
def attribute_part_adjoint(dy, y, d_x, name, x=None):
    return (add_attr(zeros_like_value(d_x), name, dy, x), None, None)


@tangent(attribute_part)
def attribute_part_tangent(tangents, y, d_x, name, x=None):
    return attribute_part(tangents[0], name, x)


@adjoint(field_tangent)
def field_tangent_adjoint(dy, y, d_x, name, x=None):
    position = field_position(d_x, name, x)
    if position is not None:  # a plain tuple, the tangent of the namedtuple x: its item there
        return (tuple(dy if k == position else zeros_like_value(v) for k, v in enumerate(d_x)), None, None)
    return (add_attr(zeros_like_value(d_x), name, dy, x), None, None)


@tangent(field_tangent)
def field_tangent_tangent(tangents, y, d_x, name, x=None):
    return field_tangent(_base_tangent(tangents[0], d_x), name, x)


@adjoint(record_tangent)
def record_tangent_adjoint(dy, y, value, tangents):
    # linear in the fields' tangents; `value` gives only the structure
    return (None, {name: 0.0 if is_zero_number(dy) else attribute_part(dy, name) for name in tangents})


@tangent(record_tangent)
def record_tangent_tangent(tangents, y, value, given):
    return record_tangent(value, {} if is_zero_number(tangents[1]) or tangents[1] is None else tangents[1])


# Calls through function values, read again (see runtime.pullbacks): the tangent and the
# adjoint of a `Pullback` are those of its call's inputs, (function, (args), {kwargs}).


@tangent(call_forward_packed)
def call_forward_packed_tangent(tangents, y, function, args, kwargs):
    return packed_tangent(function, tangents[0], args, tangents[1], kwargs, tangents[2])


@adjoint(call_forward_packed)
def call_forward_packed_adjoint(dy, y, function, args, kwargs):
    return packed_adjoint(dy[0], dy[1], function, args, kwargs)


@tangent(method_forward_packed)
def method_forward_packed_tangent(tangents, y, receiver, method, args, kwargs):
    bound = y[1].function  # the method bound to the receiver, whose tangent is the receiver's
    return packed_tangent(bound, tangents[0], args, tangents[2], kwargs, tangents[3])


@adjoint(method_forward_packed)
def method_forward_packed_adjoint(dy, y, receiver, method, args, kwargs):
    d_receiver, d_args, d_kwargs = packed_adjoint(dy[0], dy[1], y[1].function, args, kwargs)
    return d_receiver, None, d_args, d_kwargs


def _third_order(*args, **kwargs):
    raise third_order_error()


# What the second-order code calls for a function value: no derivative of its own.
for _helper in (packed_tangent, packed_adjoint, call_jvp, method_jvp):
    adjoint(_helper)(_third_order)
    tangent(_helper)(_third_order)
