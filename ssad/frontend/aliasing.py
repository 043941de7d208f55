"""In-place writes during A-normal form: refuse those whose result would depend on
aliasing.

`x += v`, `x[i] = v` and `items.append(v)` change an object in place. The lowering
keeps them exact only when no other name that is read afterwards shares that object
(see `sharing`), and when it is not the caller's (then the gradient works on a copy, see
`arguments`). `AliasingLowering` is the part of the lowering that checks this.
"""


import gast

from .arguments import WritesIntoArguments
from ..runtime.refusals import not_a_view_of, rebound_by_augmented, unshared_with
from .builders import clone, walk
from .builders import name as _name
from .expressions import assigns_name, reads_name
from .globals_changed import GlobalChanges
from .items import ItemChangeLowering
from .passing import CallArgumentChecks
from .sharing import copy_method_source
from .outputs import is_library
from .view_names import CONTAINER_READS, NEW_CONTAINERS, VALUE_METHODS, VIEW_METHODS, VIEW_SOMETIMES, views_first
from .views import effects


class AliasingLowering(ItemChangeLowering, CallArgumentChecks, GlobalChanges):
    """Mixin of `anf._Lowering`: the checks of writes into shared arrays and lists."""

    def check_statement(self, statement):
        """Before `statement` is lowered: what the calls in it change of their arguments
        (`passing`), and a read of a global the function changed (`globals_changed`)."""
        self.check_calls_keep_arguments(statement)
        self.check_global_changes(statement)

    def share_item(self, stored, source, position):
        """Record that `stored`, unpacked from the local `source`, may share its memory."""
        item = gast.Subscript(value=clone(source), slice=gast.Constant(value=position, kind=None), ctx=gast.Load())
        if source.id in self.callers:
            self.callers.add(stored)
            self.roots[stored] = self.roots.get(source.id, set())
        self.sharing.record(stored, item, lambda n: n in self.defined and n not in self.numbers, self.is_static)
        # the items of an element read (`x, v = traj[i]`) are numbers, or rows of a matrix
        (self.maybe_numbers.add if source.id in self.maybe_numbers else self.maybe_numbers.discard)(stored)
        (self.uncertain.add if source.id in self.uncertain else self.uncertain.discard)(stored)

    def check_not_shared(self, user_name, statement, written, write=False, list_change=False, index=None):
        """Refuse an in-place write to an array (or a change of a list, `list_change`) another
        name shares and reads afterwards, or that an enclosing loop walks (see `walks`);
        `index`, lowered, of a write `user_name[index] = v`."""
        self._check_not_shared(user_name, statement, written, write, list_change)
        self.check_items_of_copies(user_name, statement, written)
        if self.current.get(user_name) is not None:
            self.check_walked(self.current[user_name], user_name, statement, written, index, list_change)

    def _check_not_shared(self, user_name, statement, written, write, list_change):
        name = self.current.get(user_name)
        if name is None:
            return
        users = {ssa: user for user, ssa in self.current.items()}
        self.refuse_changing_what_is_captured(
            name, statement, written, sorted(set(self.sharing.others(name)) | set(self.sharing.same_list(name))))
        now = self.sharing.others(name, now=not self.is_generated())
        if list_change:
            others = self.sharing.same_list(name)
        elif write or self.is_generated():  # generated code: `d_t += v` judged by the arrays `d_t` shares
            others = now
        else:  # `t += v` extends a list in place (`*=` repeats it) as it writes into an array
            others = sorted(set(now) | set(self.sharing.same_list(name)))
        lists = {users[n] for n in set(others) - set(self.sharing.others(name)) if n in users}
        sharing = [users[n] for n in others if n in users]
        changes_shared = not (list_change and name in self.new_containers)
        # a value that may be any of its sources (`t = min(z[0], s)`, what a method returned) is the
        # caller's where `s` is: `z` is not, and what a write into `z` does to `t` is checked below
        holders = [n for n in [name, *self.sharing.others(name)] if n in self.callers and (n == name or n not in self.uncertain)]
        if write and changes_shared and holders:
            parameters = set().union(*(self.roots.get(n, set()) for n in holders))
            refusal = self.parsed.unsupported(
                statement,
                f"`{written}` would change an array or list the caller passed in; copy it first "
                f"(`{user_name} = {user_name}.copy()`) so the gradient function leaves the input unchanged",
            )
            raise WritesIntoArguments(parameters, refusal) if parameters and not self.is_generated() else refusal
        holders = [n for n in [name, *self.sharing.others(name)] if n in self.module_level]
        guarded = not list_change and not self.is_generated() and name not in self.views
        if holders and changes_shared and name not in self.numbers and not self.is_generated():
            raise self.parsed.unsupported(
                statement,
                f"`{written}` would change an array or list defined outside the function (`{user_name}` "
                f"holds it, or a part of it, or may: what a function or an object's method passed in returns "
                f"may be one), which "
                f"ssad reads as a constant; copy it first (`{user_name} = {user_name}.copy()`)",
            )
        # For arrays `+=` and `x[i] = v` write in place: a sharing name read afterwards would
        # see the change, which the rebinding ssad makes of `x += v` would not show.
        later = [u for u in sharing if u != self.early_result and self.read_later(u)]
        if later and guarded and name in self.uncertain:  # which of them it shares, the running code tells
            self.emit_unshared(user_name, later, statement,
                               f"`{written}` would change {'an array' if write else 'an array or a list'} that `{{}}` "
                               f"holds or shares (what a call returned may be a view of it, or it itself); "
                               f"copy it first (`{user_name} = {user_name}.copy()`)")
            return
        if later:
            fix = (f"write `{user_name} = {user_name} {written.split()[1][:-1]} ...` for a new value (`{later[0]}` "
                   f"then keeps its own), or change `{later[0]}` by its own name") if not write else (
                f"copy it first (`{user_name} = {user_name}.copy()`)"
            )
            message = (
                f"`{written}` would change {'a list' if later[0] in lists else 'an array'} that `{later[0]}` shares (a copy of the name, a "
                f"view such as .T, a slice or reshape, a list or dict holding it, or a call's result that "
                f"may be one of these); {fix}"
            )
            if list_change:
                message = (
                    f"`{written}` would change a list or dict that `{later[0]}` also reads (a second name "
                    f"of it, or a list or dict holding it), which ssad would not see there; build it under "
                    f"one name and put it into `{later[0]}` when it is complete"
                )
            if guarded and all(self.current.get(u) in self.uncertain for u in later):
                self.emit_unshared(user_name, later, statement, message.replace(f"`{later[0]}`", "`{}`", 1))
                return
            if guarded and all(self.current.get(u) in self.maybe_numbers for u in later):
                # `v = t[1]` then `t[0] = 5.0` (or `t *= s`): an element read of a vector is a number,
                # which the write leaves alone; of a matrix, a row the write changes. Which one is known
                # when the code runs: `not_a_view_of(v, t, ...)` before the write raises for a row;
                # for a value that may be an element or another (`max(pairs, key=f)[0]`), `unshared_with`
                for user in later:
                    if self.sharing.is_element(self.current.get(user)):
                        self.emit_guard(not_a_view_of, [self.load(user), self.load(user_name)], message, statement)
                    else:
                        self.emit_unshared(user_name, [user], statement, message.replace(f"`{later[0]}`", "`{}`", 1))
                return
            if write or self.is_generated() or list_change or name in self.views:
                raise self.parsed.unsupported(statement, message)
            # `t += v` changes what `t` shares only when `t` holds an array (or a list): a number
            # (`t = y[2]` of a vector, `t = min(items, key=abs)`, a parameter `s`, `t = s * 2`) is
            # rebound, as ssad's lowering does. Which one it holds is known when the code runs;
            # a view (`t = x.T`, `t = x[1:]`) is an array, refused here.
            self.emit_guard(rebound_by_augmented, [self.load(user_name)], message, statement)

    def note_view(self, name, value):
        """After `name = value`: whether `name` is surely a view (`views`), or a value whose sharing
        only the running code tells (`uncertain`): what a method of your object returns (`o.head()`
        may be `self.a[:2]`, or a new array), or a call through a function value (`f = o.head;
        f()`, a partial, a lambda), `np.diag(m)` (of a matrix a view, of a vector a new
        one), a scalar type called (`np.float64(a)`), `max(m)`; and a second name of such a value.
        A name stays uncertain once bound to one: `choice = min(a, b)` on one path and `choice = s`
        on another is either (a guard where the code runs is right for both)."""
        (self.views.add if self.is_view(value) else self.views.discard)(name)
        func = value.func if isinstance(value, gast.Call) else None
        uncertain = isinstance(value, gast.Name) and value.id in self.uncertain
        if isinstance(func, gast.Attribute) and not self.is_static(func):
            uncertain = func.attr not in VALUE_METHODS and func.attr not in VIEW_METHODS and func.attr not in CONTAINER_READS
        elif func is not None and not self.is_static(func):  # a call through a function value
            uncertain = not self.is_generated()
        elif func is not None and self.is_static(func) and not self.is_generated():
            callee = self.resolve_static(func)
            uncertain = callee in (min, max) or (is_library(callee) and views_first(_called_name(func), value)
                                                  and _called_name(func) in VIEW_SOMETIMES)
        if uncertain:  # kept when the name is bound again: on another path it may still hold that value
            self.uncertain.add(name)

    def is_view(self, value):
        """Whether `value` is a view of an array (so an array itself): a slice, `.T`, `.reshape(...)`,
        `np.reshape(...)` and the like (see `views`)."""
        if isinstance(value, gast.Subscript):
            parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
            return any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and p.value in (None, Ellipsis))
                       for p in parts)
        if isinstance(value, gast.Attribute):
            return value.attr in VIEW_METHODS
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            if self.is_static(value.func):
                attr = value.func.attr
                return views_first(attr, value) and attr not in ("iterated", "stop_gradient") and attr not in VIEW_SOMETIMES
            return value.func.attr in VIEW_METHODS
        return False

    def refuse_changing_captured(self, node, name, template, captured):
        """A nested function or lambda that changes a value it captures in place (`z[0] = v`,
        `z *= c`, `items.append(v)`) changes the enclosing function's value where ssad,
        which captures values when the function is made, would not see it."""
        found = effects(template)
        changed = [c for c in captured if found is not None and c in found.written]
        if changed:
            label = "the lambda" if isinstance(node, gast.Lambda) else f"the nested function {name}"
            raise self.parsed.unsupported(
                node,
                f"{label} changes `{changed[0]}`, which it captures, in place (line {found.written[changed[0]]}); "
                f"ssad captures values when the function is made and would not see the change: pass "
                f"`{changed[0]}` as an argument and return the changed value",
            )

    def keep_captured(self, node, name, held):
        """A nested function or lambda made here holds the values of `held` (names, with what
        its defaults read): a call reads them as they are then, and the derivative of a call
        reads them as they were when the function was made. An in-place change to one of them
        afterwards (`y[0] = v`, `items.append(v)`, through any name sharing it) would give
        the two different values: `check_not_shared` refuses it, and so is one that an
        enclosing loop makes before the function is made, in its next iteration."""
        label = "the lambda" if isinstance(node, gast.Lambda) and name == "function" else (
            f"the lambda {name}" if isinstance(node, gast.Lambda) else f"the nested function {name}")
        self.hold_for_later(node, held, f"{label} made on line {self.parsed.where(node)[1]} captured",
                            "ssad captures values when a function is made, and the derivative of a call "
                            "reads them as they were then; make the function after the change, or pass "
                            "`{name}` to it as an argument")

    def hold_for_later(self, node, held, what, advice):
        """The value made by `node` reads the values of `held` (names) later, as they are then,
        where ssad reads them now: refuse an in-place change to one of them from now on
        (`check_not_shared`), and one an enclosing loop makes before `node`, in its next
        iteration. `what` and `advice` (with `{name}`) say so in the refusal."""
        users = {ssa: user for user, ssa in self.current.items()}
        for ssa in held:
            if ssa not in self.numbers:
                self.captured.setdefault(ssa, (what, users.get(ssa, ssa), advice))
        for loop in self.loops:
            for ssa in held:
                user_name = users.get(ssa, ssa)
                if changes_in_place(loop, user_name):
                    raise self.parsed.unsupported(node, _captured_message(
                        f"the loop on line {self.parsed.where(loop)[1]}", user_name, (what, user_name, advice)))

    def refuse_changing_what_is_captured(self, name, statement, written, others):
        """Refuse `written`, an in-place change of `name`'s value, when a function made
        earlier holds it, or a value sharing it (see `keep_captured`)."""
        if self.is_generated():
            return
        user_name = {ssa: user for user, ssa in self.current.items()}.get(name, name)
        for held in [name, *others]:
            if held in self.captured:
                raise self.parsed.unsupported(statement, _captured_message(f"`{written}`", user_name, self.captured[held]))

    def emit_unshared(self, written, readers, node, message):
        """Before a write into `written` where which of `readers` it shares is known only when the
        code runs: `unshared_with(written, reader, ...)` raises for one that reaches its memory."""
        for reader in readers:
            self.emit_guard(unshared_with, [self.load(written), self.load(reader)], message.format(reader), node)

    def emit_guard(self, test, operands, message, node):
        """`test(*operands, message, file, line, column)`: a check the generated code runs
        where the user's `node` runs, raising `UnsupportedSyntaxError` with `message` there."""
        filename, lineno, col, _ = self.parsed.where(node)
        guard = gast.Call(
            func=_name(self.namespace.bind(test.__name__, test)),
            args=operands + [gast.Constant(value=v, kind=None) for v in (message, filename, lineno, col)],
            keywords=[],
        )
        self.guards.add(id(guard))
        self.emit(gast.Expr(value=guard))

    def refuse_views_of_written(self, value, atoms, written):
        """`y[0], y[1] = y[1], y[0]` reads every element before it writes: right for numbers,
        but an element that is a view of `y` (a row, a slice) would be read after the first
        write changed it, which NumPy does and ssad's lowering would not show. Which one an
        element is, is known when the code runs: `not_a_view_of(element, y, ...)` raises for
        a view. (An element that is a name, or a new value, is not guarded.)"""
        if self.is_generated():
            return
        text = _unparsed(value)
        for expr, atom in list(zip(value.elts, atoms, strict=True))[1:]:  # the first is stored first
            if not isinstance(expr, (gast.Subscript, gast.Attribute)) or not isinstance(atom, gast.Name):
                continue
            for user_name in written:
                array = self.current.get(user_name)
                if array is None:
                    continue
                message = (
                    f"the assignment of `{text}` reads `{_unparsed(expr)}`, a view of `{user_name}` (a row or "
                    f"a slice), which an earlier target changes before it is stored: NumPy then stores the "
                    f"changed values, which ssad's lowering would not show; swap with an index array "
                    f"(`y[[0, 1]] = y[[1, 0]]`) or copy the part first (`{_unparsed(expr)}.copy()`)"
                )
                self.emit_guard(not_a_view_of, [clone(atom), _name(array)], message, value)

    def record_held(self, user_name, method, call):
        """After `items.append(v)`, `items.insert(k, v)`, `items.extend(vs)`: `items` may hold
        what was added (an array `v`, whose writes then change what `items` reads)."""
        container = self.current.get(user_name)
        added = [a for a in call.args[-1:] if isinstance(a, gast.Name) and a.id in self.defined
                 and a.id not in self.numbers]
        if container is None or not added or method not in ("append", "insert", "extend"):
            return
        item = added[0].id
        if method == "append":
            self.sharing.hold(container, item)
        elif method == "insert":
            self.sharing.hold(container, item, at_end=False)
        else:
            for held in sorted(self.sharing.items_of(item) or {item}):  # an unknown list: anything it holds
                self.sharing.hold(container, held, at_end=False)

    def makes_new_container(self, value):
        """Whether `value` is a new list, tuple or dict: a display, or `list(...)`, `dict(...)` and the like."""
        return isinstance(value, (gast.List, gast.Tuple, gast.Dict)) or (
            isinstance(value, gast.Call) and self.is_static(value.func) and self.resolve_static(value.func) in NEW_CONTAINERS)

    def copied_from(self, value):
        """The local containers whose items the new container `value` holds (a tuple, empty for
        none): a slice of a list or tuple whose items are known (generated code writes through
        no item the user's code did not; a slice of an array is a view), or `list(xs)`,
        `tuple(xs)`, `sorted(xs)`, `dict(d)`, `{**d, **e}` (`merged(d, e)`) in the user's code,
        which hold the items of `xs` (the rows of an array), of `d` and `e`, and are never
        those themselves; so do `xs + ys`, `xs * n` and `zip(xs, ys)` (`concat`, `repeated`,
        `zipped`), whose tuples hold the items of `xs` and `ys`."""
        if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice):
            source = value.value
            known = isinstance(source, gast.Name) and source.id in self.sequences and (
                self.sharing.items_of(source.id) is not None or self.is_generated())
            return (source.id,) if known else ()
        if not isinstance(value, gast.Call):
            return ()
        source = copy_method_source(value)  # `ys = xs.copy()` of a list or dict whose items are known
        if source is not None and source in self.defined and self.sharing.items_of(source) is not None:
            return (source,)
        operands = [*value.args, *(k.value for k in value.keywords)]
        if (value.args and all(isinstance(a, gast.Constant) or (isinstance(a, gast.Name) and a.id in self.defined)
                               for a in operands)
                and not self.is_generated() and self.is_static(value.func)
                and self.resolve_static(value.func) in NEW_CONTAINERS):
            return tuple(a.id for a in operands if isinstance(a, gast.Name))  # `dict(d, k=v)` holds v too
        return ()

    def items_copied(self, copied):
        """What a container copied from the containers `copied` holds: their items where known;
        else, in the user's code, (parts of) those containers themselves."""
        held = set()
        for source in copied:
            items = self.sharing.items_of(source)
            held |= items if items is not None else set() if self.is_generated() else {source}
        return held

    def read_later(self, user_name):
        """Whether `user_name` is read after the current statement (or again by an enclosing loop,
        or by the statement holding the comprehension the current statement comes from)."""
        return any(reads_name(statement, user_name) for statement in self.statements_after()) or any(
            read_by_next_iteration(loop, user_name) for loop in self.loops) or any(
            user_name in self.read_in_rest.get(id(statements[position]), ()) for statements, position in self.context)

    def statements_after(self):
        """The statements after the current one in its block and in each enclosing block."""
        return [statement for statements, position in self.context for statement in statements[position + 1 :]]


def read_by_next_iteration(loop, name):
    """Whether the next iteration of `loop` may read `name` before assigning it again
    (a read after `name = ...` reads the new value)."""
    if isinstance(loop, gast.While) and reads_name(loop.test, name):
        return True
    return _read_before_assigned(loop.body, name)[0]


def _read_before_assigned(statements, name):
    """(whether `statements` may read `name` before assigning it, whether they surely assign it)."""
    for statement in statements:
        if isinstance(statement, gast.If):
            if reads_name(statement.test, name):
                return True, False
            read_body, assigned_body = _read_before_assigned(statement.body, name)
            read_else, assigned_else = _read_before_assigned(statement.orelse, name)
            if read_body or read_else:
                return True, False
            if assigned_body and assigned_else:
                return False, True
        elif isinstance(statement, (gast.For, gast.While)):
            head = statement.iter if isinstance(statement, gast.For) else statement.test
            if reads_name(head, name) or _read_before_assigned(statement.body + statement.orelse, name)[0]:
                return True, False  # a loop may run no time: it assigns nothing for sure
        elif reads_name(statement, name):
            return True, False
        elif isinstance(statement, gast.Assign) and any(assigns_name(t, name) for t in statement.targets):
            return False, True  # `name = ...`, `a, name = ...`
    return False, False


def _captured_message(change, user_name, captured):
    what, captured_name, advice = captured
    shared = "" if user_name == captured_name else f" (which shares `{captured_name}`)"
    return f"{change} changes `{user_name}`{shared} in place, which {what}: {advice.format(name=captured_name)}"


_CHANGING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                               "popitem", "sort", "reverse", "fill", "put", "resize", "itemset", "partition"})


def changes_in_place(node, user_name):
    """Whether `node` may change `user_name`'s value in place: `y[i] = v`, `y[i] += v`,
    `del y[i]`, `y.append(v)` and the other methods that change a list, dict or array."""
    for child in walk(node):
        if isinstance(child, gast.Subscript) and isinstance(child.ctx, (gast.Store, gast.Del)):
            root = child.value
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name) and root.id == user_name:
                return True
        if (isinstance(child, gast.Call) and isinstance(child.func, gast.Attribute)
                and child.func.attr in _CHANGING_METHODS and isinstance(child.func.value, gast.Name)
                and child.func.value.id == user_name):
            return True
    return False


def _unparsed(expr):
    return gast.unparse(expr)


def _called_name(func):
    return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
