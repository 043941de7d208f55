"""`y[k] += v` where `y` may be a list or a dict: the item changes in place.

ssad lowers `y[k] += v` to a read, an add and a write of the same element: `t = y[k]`,
`y[k] = t + v`. For an array `y` that is what NumPy does. For a list or a dict (or any
container that is not an array) Python's `+=` changes the item `y[k]` itself in place
when it is an array or a list, then stores it back; the lowering stores a new value
instead. The two agree unless something else holds that item and reads it afterwards:

- `y` itself, at another place (`xs = [a, a]`, or a list the caller passed that holds
  one array twice, or views of one array): `changed_item_held_once` checks it where the
  code runs, since what `y` holds is known only then;
- another name (`a` of `xs = [a, w]`, `t = xs[0]` read before): refused where it is read
  afterwards, by the guard `rebound_by_augmented`, which passes for a number (`+=` of a
  number rebinds, as the lowering does);
- another container or record that holds the item too and is read afterwards (`xs` of
  `ys = list(xs)`, `dict(d)`, `{**d}`, `xs[:]`, `[a for a in xs]`, `copy.copy(xs)`, or one
  holding `xs`): whichever name it is, every local read afterwards is looked into where the
  code runs, by `item_held_elsewhere`.

A `y` known to be a NumPy array (assigned once, from a NumPy function that makes one)
needs neither: writes into it are checked as every write is (`aliasing`).
"""

import gast
import numpy as np

from ..runtime.item_guards import changed_item_held_once, item_held_by, item_held_elsewhere, rebound_by_augmented
from .arguments import WritesIntoArguments, copies_arguments
from .builders import walk
from .builders import name as _name
from .sharing import AUGMENTED

# NumPy functions whose result is a new array (never a list or a tuple of them)
_ARRAY_MAKERS = frozenset({
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
    np.array, np.asarray, np.copy, np.arange, np.linspace, np.eye, np.identity, np.diag, np.tile,
    np.repeat, np.concatenate, np.stack, np.vstack, np.hstack, np.column_stack, np.outer, np.dot,
    np.matmul, np.where, np.cumsum, np.cumprod, np.sort,
})


class ItemChangeLowering:
    """Mixin of `anf._Lowering`: the checks of `y[k] += v` on a container's item."""

    def check_item_changed_in_place(self, user_name, item, statement):
        """Before `user_name[k] op= v`, whose item `item` (the name it was read into) Python
        may change in place: the guards of the module docstring."""
        container = self.current.get(user_name)
        if (self.is_generated() or not isinstance(item, gast.Name) or container is None
                or container in self.numbers or self._known_array(user_name)):
            return
        op = AUGMENTED.get(type(statement.op), "?")
        written = f"{user_name}[...] {op}= ..."
        fix = f"write `{user_name}[k] = {user_name}[k] {op} ...` for a new value"
        self.emit_guard(changed_item_held_once, [_name(container), _name(item.id)], (
            f"`{written}` changes the item of `{user_name}` in place where it is an array or a list (as "
            f"`{op}=` does), and `{user_name}` holds that array at another place too (or a view of it), which "
            f"would see the change that ssad's lowering (a new value stored at that place) does not show; {fix}"
        ), statement)
        users = {ssa: user for user, ssa in self.current.items()}
        container_names = set(self.sharing.same_list(container)) | {container}
        holders = sorted(users[n] for n in self.sharing.groups.get(item.id, ())
                         if n in users and n != item.id and n not in container_names)
        later = [u for u in holders if u != user_name and self.read_later(u)]
        guarded = {user_name, *later}
        for source in sorted(self.sharing.copied_by_method(container)):
            user = users.get(source)
            if user is not None and user != user_name and self.current.get(user) == source and self.read_later(user):
                guarded.add(user)
                self.emit_guard(item_held_by, [_name(item.id), _name(source)], (
                    f"`{written}` changes the item of `{user_name}` in place where it is an array or a list (as "
                    f"`{op}=` does), and `{user_name}` is a `.copy()` of `{user}`, a dict or a list holding that "
                    f"item too, which is read afterwards, where ssad's lowering (a new value stored in "
                    f"`{user_name}`) would not show the change; {fix}, or copy the items too"
                ), statement)
        if later:
            self.emit_guard(rebound_by_augmented, [_name(item.id)], (
                f"`{written}` changes the item of `{user_name}` in place where it is an array or a list (as "
                f"`{op}=` does), and `{later[0]}` holds that item too and is read afterwards, where ssad's "
                f"lowering (a new value stored in `{user_name}`) would not show the change; {fix} "
                f"(`{later[0]}` then keeps its own), or change `{later[0]}` by its own name"
            ), statement)
        self._check_callers_item(user_name, container, item.id, written, fix, statement)
        holders = self._later_holders(guarded | {users.get(n) for n in container_names},
                                      self._possible_holders(container, item.id))
        if holders:
            names = gast.Constant(value=" ".join(label for label, _ in holders), kind=None)
            self.emit_guard(item_held_elsewhere, [_name(container), _name(item.id), names] + [
                _name(ssa) for _, ssa in holders], (
                f"`{written}` changes the item of `{user_name}` in place where it is an array or a list (as "
                f"`{op}=` does), and `{{holder}}` holds that item too (or is it, or a view of it) and may see "
                f"the change afterwards (read afterwards, captured by a function made earlier, or defined "
                f"outside the function), where ssad's lowering (a new value stored in `{user_name}`) would "
                f"not show it; {fix}, or copy the item first"
            ), statement)

    def _check_callers_item(self, user_name, container, item, written, fix, statement):
        """`y[k] += v` where the item may be one the caller passed in (`y = xs.copy()`, `dict(d)`,
        a parameter `xs`'s items): the caller holds it, and would see the change. A function
        passed to the API copies those arguments first (`owned_argument`, see `arguments`); any
        other function checks where the code runs that the item is none of theirs."""
        related = {container, item, *self.sharing.same_list(container), *self.sharing.others(item),
                   *self.sharing.copies.get(container, ()), *(self.sharing.holds.get(container) or ())}
        parameters = set().union(*(self.roots.get(n, set()) for n in related
                                   if n in self.callers and n not in self.sharing.owned))
        if not parameters:
            return
        message = (
            f"`{written}` changes the item of `{user_name}` in place where it is an array or a list (as "
            f"`{written.split()[1][:-1]}=` does), and that item may be one of `{{holder}}`, which the caller "
            f"passed in and would see changed, where ssad's lowering (a new value stored in `{user_name}`) "
            f"would not show it; {fix}, or copy the item first"
        )
        if copies_arguments(self.parsed.function):
            raise WritesIntoArguments(parameters, self.parsed.unsupported(statement, message))
        names = sorted(parameters)
        self.emit_guard(item_held_elsewhere, [_name(container), _name(item), gast.Constant(
            value=" ".join(names), kind=None)] + [_name(n) for n in names], message, statement)

    def _possible_holders(self, container, item):
        """The names that may hold `item`, read from `container`, or share its memory, as the
        sharing analysis knows them (with those of the module where one of them holds a
        value of the module's); None where it does not know what `container` holds: a value
        of no known items that is not the caller's (a call's result, an item of an unknown
        container), or a display holding a value of no local name. A caller's container is
        copied before it is written into (`owned_argument`), so what holds its items is
        what the function puts them into, which the analysis follows."""
        held = self.sharing.holds.get(container)
        callers = container in self.callers or container in self.sharing.owned
        if (held is None and not callers) or (held is not None and None in held):
            return None
        possible = set(self.sharing.others(item)) | {item}
        copies = self.sharing.copies  # `zs = ys.copy()` of a list holds its items, of an array none
        possible |= {c for c, of in copies.items() if of & (possible | {container} | set(self.sharing.same_list(container)))}
        if possible & self.module_level:
            possible |= set(self.namespace.values)
        return possible

    def _later_holders(self, skipped, possible):
        """What may hold an item `y[k] += v` changes and see the change afterwards, as (its
        name in the user's code, its name in the lowered code): the locals read afterwards
        (other than those in `skipped`), the values a function made earlier captured, and the
        lists, dicts, tuples and records the function reads from outside it (a global list,
        a closure's dict); of those, where `possible` is known, the ones in it (a large list
        read in the loop is not looked into at each pass unless it may hold the item)."""
        def may(ssa):
            return possible is None or ssa in possible

        users = {ssa: user for user, ssa in self.current.items()}
        holders = {ssa: user for user, ssa in sorted(self.current.items())
                   if user not in skipped and ssa in self.defined and ssa not in self.numbers and may(ssa)
                   and self.read_later(user)}
        for ssa in sorted(self.captured):
            if users.get(ssa) not in skipped and ssa not in self.numbers and may(ssa):
                holders.setdefault(ssa, users.get(ssa, ssa))
        for free, value in sorted(self.namespace.values.items()):
            if free not in self.current and free not in self.defined and _may_hold_items(value) and may(free):
                holders.setdefault(free, free)
        return [(user, ssa) for ssa, user in holders.items()]

    def check_items_of_copies(self, user_name, statement, written):
        """Before a change in place of `user_name` (`w[0] = v`, `w += v`, `w.append(v)`) where it
        may be an item of `p = x.copy()` and `x` is read afterwards (or of `x`, and `p`, or an
        item read from it before, `w = p["v"]`, is read afterwards): a dict's or a list's copy
        holds the same items, so the change is one of `x`'s too, which ssad would not show
        there; an array's copy holds none of its arrays. Which one `x` is, is known where the
        code runs: `item_held_by(w, x)` raises for the first."""
        name = self.current.get(user_name)
        if name is None or self.is_generated():
            return
        users = {ssa: user for user, ssa in self.current.items()}
        holders = self.sharing.others(name)
        pairs = [(copy, source, "a `.copy()` of `{}`") for copy in holders
                 for source in sorted(self.sharing.copied_by_method(copy))]
        # and the other way round: `zs = ys.copy()` of a list `ys` holding `w` holds it too
        pairs += [(source, copy, "copied to `{}` by `.copy()`") for source in holders
                  for copy in sorted(self.sharing.copies) if source in self.sharing.copied_by_method(copy)]
        for copy, source, how in pairs:
            user = users.get(source)
            if user is None or user == user_name or self.current.get(user) != source:
                continue
            # `source` read afterwards, or an item read from it before (`w = c["v"]`)
            readers = [user] + [users[n] for n in self.sharing.others(source) if n in users and n != name]
            later = [u for u in readers if u != user_name and self.read_later(u)]
            if not later:
                continue
            self.emit_guard(item_held_by, [_name(name), _name(source)], (
                f"`{written}` would change an item of `{users.get(copy, copy)}`, {how.format(user)}, "
                f"and a dict's or a list's copy holds the same items: `{later[0]}`, read afterwards, would see "
                f"the change, which ssad would not show there; copy the item first "
                f"(`{user_name} = {user_name}.copy()`)"
            ), statement)

    def _known_array(self, user_name):
        """Whether the local `user_name` surely holds a NumPy array: assigned once in the
        function, from a NumPy function that makes a new array (`y = np.zeros(n)`)."""
        assignments = [node for node in walk(self.parsed.node)
                       if isinstance(node, gast.Name) and node.id == user_name
                       and isinstance(node.ctx, (gast.Store, gast.Del))]
        if len(assignments) != 1:
            return False
        for statement in walk(self.parsed.node):
            if isinstance(statement, gast.Assign) and statement.targets[0] is assignments[0]:
                value = statement.value
                return (isinstance(value, gast.Call) and self.is_static(value.func)
                        and _makes_array(self.resolve_static(value.func)))
        return False


def _may_hold_items(value):
    """Whether `value`, read from outside a function, is a container that may hold an array
    or a list (a list, dict or tuple, or a dataclass record; a module, a function and a
    number hold none that `+=` could change)."""
    import dataclasses

    return isinstance(value, (list, dict, tuple)) or (dataclasses.is_dataclass(value) and not isinstance(value, type))


def _makes_array(function):
    try:
        return function in _ARRAY_MAKERS or isinstance(function, np.ufunc)
    except TypeError:  # an unhashable callable
        return False
