"""Stage 3, A-normal form: `for` loops that change what they walk.

`for v in y:` becomes a loop over indices reading `v = items[k]` (see `control`), where
`items` is what the loop walks: the user's list itself, read through its name (a *live*
walk), or a second name of it: `iterated(y)` (y itself for an array, a list of its keys
for a dict: which one is known when the code runs), a list display, `list(d.values())`.
Python's loop reads each item when it reaches it; ssad reads the items of a second name
as the loop began (the writes go through the user's names, not through `items`). The
two agree while

    no change reaches an item the loop has still to read:
        for i, v in enumerate(y): y[i] = 2.0 * v     exact: the item just read
        for v in y: y[2] = y[2] * 10.0               refused, where it would reach y[2]
    and the length of a list it walks stays:
        for v in xs: xs.append(2.0 * v)              refused

`WalkLowering` keeps the walks of the loops being lowered and checks each in-place change
made in them, through any name that may share what a loop walks (`check_walked`, from
`check_not_shared`; calls of the user's functions that change an argument in place,
`check_calls_keep_walks`). A change of a live list's length is refused where it stands;
whether a change reaches what a second name walks depends on the loop's position and on
what the names hold, so it is checked where the code runs (`walk_unchanged`). A generator,
`map` or `filter` in a loop's header reads its values as the loop runs, where ssad makes
them when the loop starts: a change of what it reads, in the loop, is refused.
"""

import dataclasses
import inspect
from dataclasses import dataclass

import gast

from ..runtime.refusals import held_list_kept, keys_unchanged, walk_unchanged
from .builders import call as _call
from .builders import clone, walk
from .builders import name as _name
from .outputs import is_library
from .views import effects

LIVE, COPY, KEYS, KEY_SET, LAZY = "live", "copy", "keys", "key set", "lazy"


@dataclass(frozen=True)
class Walk:
    """What a loop being lowered walks: `items`, the name it indexes (or, for `KEYS`, the dict
    whose values or items it walks; for `LAZY`, a name a generator in its header reads)."""

    items: str
    kind: str  # LIVE, COPY, KEYS (its values read by the order of its keys), KEY_SET (its keys) or LAZY
    backwards: bool  # under `reversed(...)`
    text: str  # what the loop walks, as the user wrote it
    lazy: str = ""  # LAZY: "generator", "map object", ...
    source: str = None  # COPY of a name (`iterated(y)`): y, the array or list itself where it is one
    loop: object = None  # the user's `for` statement
    position: str = None  # the name of the loop's index; None where the body assigns it


class WalkLowering:
    """Mixin of `anf._Lowering`: in-place changes of what enclosing `for` loops walk."""

    walks = ()  # the walks of the loops being lowered, outermost first

    def walked_parts(self, written, items, live, backwards, owner=None, attr=None):
        """The walks of one part of a loop's header (`written`, as the user wrote it), which
        the lowering indexes as `items`; `owner`, what may be a dict whose keys it walks
        (`attr`: through `.keys()`, `.values()` or `.items()`; "keys" for the dict itself)."""
        text = gast.unparse(written).strip()
        source = owner.id if isinstance(owner, gast.Name) and isinstance(written, gast.Name) else None
        parts = [Walk(items.id, LIVE if live else COPY, backwards, text, source=source)] \
            if isinstance(items, gast.Name) else []
        if isinstance(owner, gast.Name):  # named as the user wrote it: `d` of `d.values()`
            of = gast.unparse(written.func.value).strip() if isinstance(written, gast.Call) else text
            parts.append(Walk(owner.id, KEY_SET if attr == "keys" else KEYS, backwards, of))
        kind = self.lazy_kind(written)
        if kind is not None:
            bound = {n.id for n in walk(written) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            read = sorted({n.id for n in walk(written) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                           and n.id in self.current} - bound)
            parts += [Walk(self.current[n], LAZY, backwards, text, lazy=kind) for n in read]
        return parts

    def walking(self, loop, parts, position):
        """The walks being lowered, with `loop`'s `parts` (see `walked_parts`) added: `loop`'s
        body is lowered under them."""
        return self.walks + tuple(dataclasses.replace(p, loop=loop, position=position) for p in parts)

    def check_walked(self, name, user_name, statement, written, index=None, list_change=False, note=""):
        """Before an in-place change of `name` (`user_name` in the code): `user_name[index] = v`
        (`index` lowered), or with `index` None a change of the whole (`t += v`, a list's
        `append` or `pop`, `list_change`: True, or "maybe" for `b += e` in a function of the
        user's it is given to, where `note` says which)."""
        if not self.walks or self.is_generated():
            return
        related = {name, *self.sharing.others(name), *self.sharing.same_list(name)}
        for walked in self.walks:
            if walked.items not in related and walked.source not in related:
                continue  # (a list is its own source: what `iterated(xs)` shares are its items)
            line = self.parsed.where(walked.loop)[1]
            if walked.kind == LAZY:
                raise self.parsed.unsupported(statement, (
                    f"`{written}` changes `{user_name}` in place{note}, which the {walked.lazy} `{walked.text}` the "
                    f"loop on line {line} walks reads as the loop runs; ssad makes its items when the loop starts: "
                    f"make a list of them first (`[...]` for `(...)`) to read the values as they were, or "
                    f"compute each one in the loop's body"))
            if walked.kind == LIVE and walked.items == name:
                if index is None and list_change:
                    raise self.parsed.unsupported(statement, (
                        f"`{written}` changes the length of `{user_name}`{note}, which the loop on line {line} "
                        f"walks; Python's loop then runs another number of times, which ssad does not follow: walk "
                        f"a copy (`for v in list({walked.text}):`) to see the items as they were, or loop while an "
                        f"index is in range (`k = 0`, `while k < len({walked.text}):`, `v = {walked.text}[k]`, "
                        f"`k += 1`) to see the list as it changes"))
                continue  # an item written that the loop reads through the same name, as Python does
            holders = set(self.sharing.others(name))
            if index is None and list_change and name not in (walked.items, walked.source) and (
                    walked.items in holders or walked.source in holders):
                changes = "changes" if list_change is True else "may change"
                message = (
                    f"`{written}` {changes} the length of `{user_name}`{note}, a list held by `{walked.text}`, which "
                    f"the loop on line {line} walks; ssad follows a list made longer or shorter only under the name "
                    f"that holds it: walk the indices and put the longer list where it is held (`rows[k] = rows[k] + "
                    f"[v]` in a loop over `range(len(rows))`)")
                if list_change is True:
                    raise self.parsed.unsupported(statement, message)
                # `b += e` in a helper: a list made longer, or arithmetic; known where the code runs
                self.emit_guard(held_list_kept, [_name(walked.items), _name(name)], message, statement)
            if (walked.source == name and not walked.backwards and walked.position is not None
                    and isinstance(index, gast.Name) and index.id == walked.position):
                continue  # `for i, v in enumerate(y): y[i] = ...`: the item the loop has just read
            if walked.kind == KEY_SET:
                message = (f"`{written}` adds or removes a key of `{user_name}`{note} in the loop on line {line}, "
                           f"which walks the keys of `{walked.text}`: Python stops such a loop with RuntimeError "
                           f"(the dictionary changed size during iteration); walk a copy of the keys (`for k in "
                           f"list({walked.text}):`), or change the keys after the loop")
                operands = [_name(walked.items), _name(name), self.runtime_index(index)]
                self.emit_guard(keys_unchanged, operands, message, statement)
                continue
            if walked.kind == KEYS:
                advice = (f"walk its keys (`for k in list({walked.text}):`, then read the value by its key), which "
                          f"reads each value as it is then")
            else:
                advice = (f"walk the indices (`for k in range(len({walked.text})):`, then `{walked.text}[k]`), which "
                          f"reads each item as it is then, or walk a copy (`list(...)`, `.copy()`) to read them as "
                          f"they were")
            walks = f"the values of `{walked.text}`" if walked.kind == KEYS else f"`{walked.text}`"
            message = (
                f"`{written}` changes `{user_name}`{note} in the loop on line {line}, which walks {walks}: "
                f"the change reaches an item the loop has still to read, or the length of the list it walks, "
                f"and Python's loop reads the change, where ssad reads the items as they were when the loop "
                f"began; {advice}"
            )
            position = _name(walked.position) if walked.position else gast.Constant(value=None, kind=None)
            operands = [_name(walked.items), position, gast.Constant(value=walked.backwards, kind=None), _name(name),
                        self.runtime_index(index)]
            self.emit_guard(walk_unchanged, operands, message, statement)

    def runtime_index(self, index):
        """The lowered index `index` (atoms, slices of atoms, tuples of them; None) as one atom
        holding the index the write uses."""
        if index is None:
            return gast.Constant(value=None, kind=None)
        if isinstance(index, gast.Slice):
            bounds = [clone(b) if b is not None else gast.Constant(value=None, kind=None)
                      for b in (index.lower, index.upper, index.step)]
            return self.atom_of_simple(_call(self.builtin("slice"), *bounds), name_hint="part")
        if isinstance(index, gast.Tuple):
            return self.atom_of_simple(gast.Tuple(elts=[self.runtime_index(e) for e in index.elts], ctx=gast.Load()))
        return clone(index)

    def check_calls_keep_walks(self, statement):
        """A call of a function of the user's that changes an argument in place (`bump(y)`, with
        `a[1] = v` in bump) inside a loop that walks what the argument may share: checked as
        the change of the whole argument it may be (see `check_walked`)."""
        if not self.walks or self.is_generated():
            return
        if isinstance(statement, (gast.If, gast.While)):
            evaluated = [statement.test]
        elif isinstance(statement, gast.For):
            evaluated = [statement.iter]
        elif isinstance(statement, (gast.Assign, gast.AnnAssign, gast.AugAssign, gast.Expr, gast.Return)):
            evaluated = [statement.value] if statement.value is not None else []
        else:
            evaluated = []
        for expr in evaluated:
            for call in walk(expr):
                if isinstance(call, gast.Call) and self.is_static(call.func):
                    self._check_call_keeps_walks(call)

    def _check_call_keeps_walks(self, call):
        callee = self.resolve_static(call.func)
        found = effects(callee) if inspect.isfunction(callee) and not is_library(callee) else None
        if found is None or not found.written:
            return
        code = callee.__code__
        passed = list(zip(code.co_varnames[: code.co_argcount], call.args, strict=False))
        passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
        for parameter, arg in passed:
            if parameter in found.written and isinstance(arg, gast.Name) and arg.id in self.current:
                note = (f" (through {callee.__name__}, which changes its parameter `{parameter}` in place at line "
                        f"{found.written[parameter]})")
                self.check_walked(self.current[arg.id], arg.id, call, f"{callee.__name__}(...)",
                                  list_change="maybe" if parameter in found.resized else False, note=note)
