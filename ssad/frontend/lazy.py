"""Stage 3, A-normal form: values Python computes when they are read, which ssad computes
where they are made.

A generator expression, `map(...)`, `zip(...)`, `filter(...)` and a call of a generator
function become lists where they are made (see `expressions`), and so do a dict's
`.values()`, `.keys()` and `.items()`. That is exact while nothing the Python value would
read later changes before it is read, and while an iterator is read once (Python's is
empty the second time). Where such a value is bound to a name, `LazyLowering` checks
both, and refuses, at the user's line, what would make ssad's list differ from what
Python reads:

    gen = (v * y[0] for v in x)     a generator:
    s = sum(gen) + sum(gen)         read twice (the second sum is 0 in Python): refused
    y[0] = 5.0                      changed in place before it is read: refused
    y = 2.0 * y                     a name it reads assigned again before: refused

    vals = d.values()               a view:
    d["a"] = v                      its dict changed in place: refused

Methods of the lowering (see `anf`); in-place changes are refused by `check_not_shared`
through `hold_for_later` (see `aliasing`).
"""

import inspect

import gast

from .aliasing import read_by_next_iteration
from .builders import walk

_ITERATORS = ("map", "zip", "filter", "reversed")
_VIEWS = ("values", "keys", "items")
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)


class LazyLowering:
    """Mixin of `anf._Lowering`: generators, iterators and dict views bound to names."""

    def check_lazy(self, target, value):
        """Before `target = value`: refuse what would make a lazy `value` read differently
        in Python than the list ssad makes of it where it is made."""
        if not isinstance(target, gast.Name) or self.is_generated():
            return
        where = self.parsed.where(value)[1]
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr in _VIEWS
                and not value.args and isinstance(value.func.value, gast.Name) and value.func.value.id in self.current):
            owner, method = value.func.value.id, value.func.attr
            self.hold_for_later(
                value, [self.current[owner]], f"`{target.id}`, its `.{method}()` taken on line {where}, shows",
                f"Python's view shows the change, the list ssad makes of it where it is taken would not; take "
                f"`{owner}.{method}()` after the change, or make a list of it (`list({owner}.{method}())`)",
            )
            return
        kind = self.lazy_kind(value)
        if kind is None:
            return
        what = f"the {kind} `{target.id}` (line {where})"
        advice = (f"ssad runs a {kind} where it is made, Python when it is read: make it after the change, "
                  f"or where it is read (`sum(v * v for v in xs)`)")
        count, repeated = _reads(self.statements_after(), target.id)
        if count > 1 or repeated or any(read_by_next_iteration(loop, target.id) for loop in self.loops):
            raise self.parsed.unsupported(
                value, f"{what} is read more than once; Python's is empty after the first read, where ssad "
                       f"would read its values again: read it once, or make a list of it (`[...]`) to read it "
                       f"again",
            )
        for user_name in _read_when_run(value):
            if user_name in self.current and self.assigned_later(user_name):
                raise self.parsed.unsupported(
                    value, f"{what} reads `{self.spelled.get(user_name, user_name)}`, which is assigned again later; "
                           f"{advice}")
        held = sorted({n.id for n in walk(value) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                       and n.id in self.current} - _bound_inside(value))
        self.hold_for_later(value, [self.current[n] for n in held], f"{what} reads", advice)

    def lazy_kind(self, value):
        """What sort of lazy value `value` makes ("generator", "map", ...), or None."""
        if isinstance(value, gast.GeneratorExp):
            return "generator"
        for builtin in _ITERATORS:
            if self.is_builtin_call(value, builtin):
                return f"{builtin} object"
        if isinstance(value, gast.Call) and self.is_static(value.func):
            try:
                if inspect.isgeneratorfunction(self.resolve_static(value.func)):
                    return "generator"
            except Exception:  # noqa: BLE001 - a path that names nothing is no generator function
                return None
        return None


def _bound_inside(value):
    """The names a comprehension in `value` binds (its loop variables)."""
    return {n.id for n in walk(value) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _read_when_run(value):
    """The names a generator expression reads when it is run, not when it is made: all but
    its first iterable, which Python evaluates at once."""
    if not isinstance(value, gast.GeneratorExp):
        return set()
    first, *rest = value.generators
    parts = [value.elt, *first.ifs, *rest]
    return {n.id for part in parts for n in walk(part)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)} - _bound_inside(value)


def _reads(statements, name):
    """(how many times running `statements` once reads `name`, at most, on one path; whether a
    read may run more than once: in a loop's body, a function or a comprehension's body)."""
    count, repeated = 0, False
    for statement in statements:
        if isinstance(statement, gast.If):
            test = _expression_reads(statement.test, name)
            body, orelse = _reads(statement.body, name), _reads(statement.orelse, name)
            count += test[0] + max(body[0], orelse[0])
            repeated |= test[1] or body[1] or orelse[1]
        elif isinstance(statement, (gast.For, gast.While)):
            head = _expression_reads(statement.iter if isinstance(statement, gast.For) else statement.test, name)
            inside = _reads(statement.body + statement.orelse, name)
            count += head[0] + inside[0]
            repeated |= head[1] or inside[0] > 0 or (isinstance(statement, gast.While) and head[0] > 0)
        else:
            found = _expression_reads(statement, name)
            count += found[0]
            repeated |= found[1]
    return count, repeated


def _expression_reads(node, name):
    """(how many times evaluating `node` once reads `name`, whether a read may run more than once)."""
    if isinstance(node, gast.Name):
        return (1, False) if node.id == name and isinstance(node.ctx, gast.Load) else (0, False)
    if isinstance(node, (gast.Lambda, gast.FunctionDef)):
        inside = sum(1 for n in walk(node) if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load))
        return inside, inside > 0
    if isinstance(node, _COMPREHENSIONS):
        first, *rest = node.generators
        count, repeated = _expression_reads(first.iter, name)
        parts = [*first.ifs, *rest] + ([node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt])
        inside = sum(_expression_reads(part, name)[0] for part in parts)
        return count + inside, repeated or inside > 0
    count, repeated = 0, False
    for child in gast.iter_child_nodes(node):
        found = _expression_reads(child, name)
        count += found[0]
        repeated |= found[1]
    return count, repeated
