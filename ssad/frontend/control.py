"""Stage 3, A-normal form, control flow: `if`, `for` and `while` with atoms for tests and ranges.

Methods of the lowering (see `anf`): an `if` tests a name no branch assigns; a
`for` runs a name over a name holding a range (loops over sequences, `enumerate`
and `zip` become loops over indices); a `while` loop recomputes its test at the end
of its body and leaves through `if stop: break`.

Where paths meet (after an `if`, a conditional expression, around a loop's body), what
the lowering knows of each name is joined (`join_paths`): a number or a list only where
every path leaves one, a name that may hold an object of the module's where any path
may; a loop's body starts from what a later pass may see (`share_across_iterations`).
"""


import gast

from .builders import call as _call, clone
from .builders import is_loop_exit
from .builders import name as _name
from .builders import store as _store
from .builders import walk
from .view_names import CHANGING_METHODS, CONTAINER_READS, VALUE_METHODS, VIEW_METHODS
from .views import expression_sharers, viewed_operands
from .expressions import assigns_name, short_label
from .module_values import returns_module_object
from ..runtime import iterated
from ..runtime.closures import closure, joined

# methods NumPy's arrays, lists and dicts have: what they return is theirs (see `views`)
NUMPY_METHODS = VALUE_METHODS | VIEW_METHODS | CONTAINER_READS | CHANGING_METHODS


class ControlFlowLowering:
    """Stage 3, A-normal form, control flow: `if`, `for` and `while` with atoms for tests and ranges."""

    def lower_if(self, statement):
        test = self.test_atom(statement.test, statement.body + statement.orelse)
        before, kinds = self.sharing.snapshot(), self.path_kinds()
        body = self.nested(statement.body)
        after_body, kinds_after_body = self.sharing.snapshot(), self.path_kinds()
        if not self.is_generated():  # each branch starts from what was shared before the `if`
            self.sharing.join(before)
            self.join_paths(kinds)
        orelse = self.nested(statement.orelse) if statement.orelse else []
        if not self.is_generated():  # after it, a name shares what it shares on either branch
            self.sharing.join(after_body, self.sharing.snapshot())
            self.join_paths(kinds_after_body, self.path_kinds())
        self.emit(gast.If(test=test, body=body, orelse=orelse))

    def path_kinds(self):
        """What the names surely hold now, and what they may (see `join_paths`)."""
        return set(self.numbers), set(self.maybe_numbers), set(self.sequences), set(self.module_level)

    def join_paths(self, *states):
        """After paths meet (`path_kinds` of each): a name surely holds a number, or a list or a
        tuple, where it does on every path; it may hold a number, or an object of the module's,
        where it may on any. `t = y[1:3]` on one path and `t = 0.5` on the other is no number (a
        second name of it shares `y`); `t = W` on one and `t = x * 1.0` on the other may be the
        global W, which a later `t[0] = v` would change; `t = [a, b]` on one and `t = a * b` on
        the other may be an array, which `t + t` adds."""
        self.numbers = set.intersection(*(s[0] for s in states))
        self.maybe_numbers = set().union(*(s[1] | s[0] for s in states)) - self.numbers
        self.sequences = set.intersection(*(s[2] for s in states))
        self.module_level = set().union(*(s[3] for s in states))

    def track_module_level(self, name, value, resolve):
        """Whether `name = value` may hold an object of the module's (a global array, an item
        of a global list, a view of one) or of a name that does."""
        if resolve is None:  # generated code
            return
        sources = viewed_operands(value, lambda n: n in self.defined, self.is_static, resolve)
        if self.module_root(value, resolve) or self.module_returned(value, resolve) or any(
                s in self.module_level for s in sources):
            self.module_level.add(name)
        else:
            self.module_level.discard(name)
        maker = resolve(value.func) if isinstance(value, gast.Call) and value.args and self.is_static(value.func) else None
        template = value.args[0] if maker is closure else None  # `pick = closure(pick_template, ...)` for a nested def
        if isinstance(template, gast.Name) and returns_module_object(self.namespace.values.get(template.id)):
            self.module_returners.add(name)
        else:
            self.module_returners.discard(name)
        (self.made_here.add if maker is closure or maker is joined else self.made_here.discard)(name)

    def module_returned(self, value, resolve, names=None):
        """Whether `value` calls a function of the user's, or a nested function (by its name, in
        `names` where the code is the user's), that may return an object of the module's; or a
        function value the caller passed in (`g(z)` with `g` a parameter, an item of one, or a
        method of an object passed in, `m.weights()`), whose source ssad does not read: it may
        return a global (`lambda: W`)."""
        if not isinstance(value, gast.Call):
            return False
        func = value.func
        if self.is_static(func):
            return returns_module_object(resolve(func))
        if isinstance(func, gast.Name):
            return (names or {}).get(func.id, func.id) in self.module_returners or self.passed_in(func.id, names)
        return (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.attr not in NUMPY_METHODS
                and self.passed_in(func.value.id, names))

    def passed_in(self, user_or_ssa, names=None):
        """Whether a local holds what the caller passed (a parameter, a copy of one, a part of
        one, a method of one), not a function made here."""
        name = (names or {}).get(user_or_ssa, user_or_ssa)
        return name not in self.made_here and bool(
            {name, *self.sharing.others(name)} & (self.callers | self.sharing.owned))

    def module_root(self, value, resolve):
        """Whether `value` is an object of the module's (not a number or a string), an item of
        one or a view of one (`G`, `G[0]`, `G.T[1:]`)."""
        root = value
        while isinstance(root, (gast.Subscript, gast.Attribute)) and (
                isinstance(root, gast.Subscript) or root.attr in VIEW_METHODS):
            root = root.value
        return isinstance(root, gast.Name) and self.is_static(root) and not isinstance(
            resolve(root), (int, float, complex, str, bool, type(None)))

    def share_across_iterations(self, loop):
        """Before a loop's body is lowered: a name assigned in the body may, from the second
        iteration on, share what it was assigned (`y[0] = v` then `y = z`: the second
        iteration writes into z). Returns what was shared before the loop, which it may
        also leave as it was (no iteration)."""
        before = self.sharing.snapshot()
        if self.is_generated():
            return before, None
        assigned = {self.current.get(n.id) for n in walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        # a later pass may see what the body assigns: a number, what is no list, a global
        self.maybe_numbers |= self.numbers & assigned
        self.numbers -= assigned
        pairs = _assignments(loop)
        self.sequences -= self.sequences_lost(pairs)
        self.lengths_across_iterations(loop, pairs)
        kinds = self.path_kinds()
        resolve = self.resolve_static

        def lookup(user):
            name = self.current.get(user)
            return {name} if name is not None and name not in self.numbers else set()

        for target, value in pairs:
            sources = expression_sharers(value, lookup, self.is_static, resolve)
            item_read = isinstance(value, gast.Subscript) and not isinstance(value.slice, gast.Slice)
            for stored in _stored_names(target) if sources else ():
                if stored in self.current:
                    self.sharing.add(self.current[stored], sources - {self.current[stored]}, item_read)
        # `t = W` (or `t = a` after `a = W[0:4]`) late in the body: t is W's in the next pass
        globals_held, grown = set(), True  # the users' names of them

        def held(user):
            return lookup(user) | ({_GLOBAL} if user in globals_held else set())

        while grown:
            grown = False
            for target, value in pairs:
                sources = expression_sharers(value, held, self.is_static, resolve)
                if self.module_root(value, resolve) or self.module_returned(value, resolve, self.current) or sources & (
                        self.module_level | {_GLOBAL}):
                    found = set(_stored_names(target)) - globals_held
                    globals_held |= found
                    grown |= bool(found)
        self.module_level |= {self.current[n] for n in globals_held if n in self.current}
        return before, kinds

    def sequences_lost(self, pairs):
        """The names holding a list or a tuple before the loop that may hold something else in a
        later pass (`t = [a, b]`, then in the loop `u = t + t; t = np.array(u) * c`): each
        assignment in the loop keeps one only where it makes a list or a tuple of them."""
        users = {user for user, name in self.current.items() if name in self.sequences}
        assigned = {n for target, _ in pairs for n in _stored_names(target)}
        # a name first bound in the loop holds what its assignments there make (`ys = xs + [v]`)
        kept = {n for n in assigned if n in users or n not in self.current}

        def makes_one(value):
            if isinstance(value, (gast.List, gast.Tuple, gast.ListComp)):
                return True
            if isinstance(value, gast.Name):
                return value.id in kept or (value.id in users and value.id not in assigned)
            if isinstance(value, gast.Subscript):
                return isinstance(value.slice, gast.Slice) and makes_one(value.value)
            if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
                return makes_one(value.left) or makes_one(value.right)
            if isinstance(value, gast.IfExp):
                return makes_one(value.body) and makes_one(value.orelse)
            return self.is_builtin_call(value, "list") or self.is_builtin_call(value, "tuple")

        shrunk = True
        while shrunk:
            lost = {n for target, value in pairs for n in _stored_names(target)
                    if n in kept and not (isinstance(target, gast.Name) and makes_one(value))}
            kept -= lost
            shrunk = bool(lost)
        return {self.current[n] for n in users & assigned - kept}

    def after_loop(self, before):
        if not self.is_generated():
            self.sharing.join(before[0], self.sharing.snapshot())
            self.join_paths(before[1], self.path_kinds())

    def test_atom(self, expr, statements):
        """The test of an `if` as a name that no statement of the `if` assigns."""
        atom = self.atom(expr)
        users = {ssa: user for user, ssa in self.current.items()}
        if isinstance(atom, gast.Name) and any(assigns_name(s, users.get(atom.id, atom.id)) for s in statements):
            copy_name = self.namer.fresh(f"{atom.id}_was")
            self.defined.add(copy_name)
            self.emit_assign(copy_name, atom)
            atom = _name(copy_name)
        return atom

    def lower_for(self, statement):
        self.loops.append(statement)
        iterable = statement.iter
        target = statement.target
        assignments = []
        walked = None if self.is_generated() else []  # what the loop walks (see `walks`)
        if self.is_builtin_call(iterable, "range") and isinstance(target, gast.Name):
            indices = self.atom(iterable)
            index = target.id
        else:
            length, element = self.sequence(iterable, walked)
            indices = self.atom_of_simple(_call(self.builtin("range"), length), name_hint="indices")
            probe = element(_name("__index__"))
            if (
                isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[0], gast.Name)
                and isinstance(probe, gast.Tuple)
                and isinstance(probe.elts[0], gast.Name)
                and probe.elts[0].id == "__index__"
            ):
                # `for i, x in enumerate(xs)`: the loop runs over i itself.
                index = target.elts[0].id
                assignments.append((target.elts[1], lambda k, element=element: element(k).elts[1]))
            else:
                index = self.namer.fresh("index")
                assignments.append((target, element))
        index_name = self.current[index] if index in self.current else self.define(index)
        self.defined.add(index_name)
        before = self.share_across_iterations(statement)
        self.numbers.add(index_name)  # range() yields ints
        self.depth += 1
        saved, self.out = self.out, []
        for assigned, value in assignments:
            self.assign(assigned, value(_name(index_name)))
        # the body changes what the loop walks only where the change is exact (see `walks`); the
        # loop's index is its position, unless the body assigns it (`for i, v in enumerate(y): i = 0`)
        position = None if any(assigns_name(s, index) for s in statement.body) else index_name
        walks, self.walks = self.walks, self.walking(statement, walked or [], position)
        self.block(statement.body)
        self.walks = walks
        body = self.out or [gast.copy_location(gast.Pass(), statement)]
        self.out = saved
        self.depth -= 1
        self.after_loop(before)
        self.loops.pop()
        loop = gast.For(target=_store(index_name), iter=indices, body=body, orelse=[], type_comment=None)
        self.emit(loop)

    def sequence(self, iterable, walked=None, backwards=False):
        """(length atom, element(index) -> expr or None) for what a `for` loop walks over; the
        list `walked`, when given, gets what each part walks (see `walks`); `backwards`: under
        `reversed(...)`."""
        if self.is_builtin_call(iterable, "enumerate"):
            length, inner = self.sequence(iterable.args[0], walked, backwards)
            start = iterable.args[1] if len(iterable.args) > 1 else next(
                (k.value for k in iterable.keywords if k.arg == "start"), None
            )
            start = self.atom(start) if start is not None else None

            def element(index, start=start, inner=inner):
                counter = index if start is None else gast.BinOp(left=index, op=gast.Add(), right=start)
                return gast.Tuple(elts=[counter, inner(index)], ctx=gast.Load())

            return length, element
        if self.is_builtin_call(iterable, "zip") and not any(isinstance(a, gast.Starred) for a in iterable.args):
            # (`zip(*rows)` walks as the list of tuples it makes: the number of rows is known where it runs)
            parts = [self.sequence(a, walked, backwards) for a in iterable.args]
            lengths = [p[0] for p in parts]
            length = lengths[0] if len(lengths) == 1 else self.atom_of_simple(
                _call(self.builtin("min"), *lengths), name_hint="length"
            )

            def element(index, parts=parts):
                return gast.Tuple(elts=[p[1](index) for p in parts], ctx=gast.Load())

            return length, element
        if self.is_builtin_call(iterable, "reversed"):
            length, inner = self.sequence(iterable.args[0], walked, not backwards)
            last = self.atom_of_simple(gast.BinOp(left=length, op=gast.Sub(), right=gast.Constant(value=1, kind=None)))

            def element(index, inner=inner, last=last):
                return inner(gast.BinOp(left=last, op=gast.Sub(), right=index))

            return length, element
        # what the loop walks, and the dict whose keys it walks (checked in the body, see `walks`)
        written, owner, attr = iterable, None, None
        live = isinstance(iterable, gast.Name) and self.current.get(iterable.id) in self.sequences
        if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Attribute) and iterable.func.attr in (
            "items", "values", "keys"
        ):
            # dict views cannot be indexed: walk a list of them
            if not iterable.args:
                owner, attr = self.walked_as_started(self.atom(iterable.func.value)), iterable.func.attr
                iterable = gast.Call(func=gast.Attribute(value=owner, attr=attr, ctx=gast.Load()), args=[], keywords=[])
            iterable = gast.Call(func=self.builtin("list"), args=[iterable], keywords=[])
        elif not (self.is_builtin_call(iterable, "list") or self.is_builtin_call(iterable, "tuple")
                  or isinstance(iterable, (gast.List, gast.Tuple, gast.ListComp)) or live):
            # a dict walks its keys, a set or a generator its items: index what iterating gives
            if isinstance(iterable, gast.Name) and iterable.id in self.current:
                owner, attr = self.walked_as_started(self.load(iterable.id)), "keys"
                iterable = owner
            iterable = gast.Call(func=_name(self.namespace.bind("iterated", iterated)), args=[iterable], keywords=[])
        items = self.atom(iterable)
        walked_as_started = self.walked_as_started(items)
        live = live and walked_as_started is items
        items = walked_as_started
        if walked is not None:
            walked.extend(self.walked_parts(written, items, live, backwards, owner, attr))
        length = self.atom_of_simple(_call(self.builtin("len"), items), name_hint=f"length_{short_label(items)}")

        def element(index, items=items):
            return gast.Subscript(value=items, slice=index, ctx=gast.Load())

        return length, element

    def walked_as_started(self, items):
        """`items`, or a copy of the name where the loop assigns it (`for v in x: ... x = ...`):
        Python walks the x the loop started with."""
        users = {ssa: user for user, ssa in self.current.items()}
        if isinstance(items, gast.Name) and self.loops and assigns_name(self.loops[-1], users.get(items.id, items.id)):
            walked = self.namer.fresh(f"{items.id}_walked")
            self.defined.add(walked)
            self.emit_assign(walked, items)
            return _name(walked)
        return items

    def lower_while(self, statement):
        self.loops.append(statement)
        saved, self.out = self.out, []
        test = self.atom(statement.test)
        test_statements, self.out = self.out, saved
        self.out.extend(test_statements)
        before = self.share_across_iterations(statement)
        self.depth += 1
        saved, self.out = self.out, []
        self.block(statement.body)
        # The test is computed again at the end of each iteration, by the same statements;
        # after a `break` it is not (`if stop: break` stays last).
        again = [clone(s) for s in test_statements]
        exit_test = self.out.pop() if self.out and is_loop_exit(self.out[-1]) else None
        if exit_test is not None and again:
            running = self.atom_of_simple(gast.UnaryOp(op=gast.Not(), operand=clone(exit_test.test)))
            self.emit(gast.If(test=running, body=again, orelse=[]))
        else:
            self.out.extend(again)
        if exit_test is not None:
            self.out.append(exit_test)
        body = self.out or [gast.copy_location(gast.Pass(), statement)]
        self.out = saved
        self.depth -= 1
        self.after_loop(before)
        self.loops.pop()
        self.emit(gast.While(test=test, body=body, orelse=[]))


_GLOBAL = object()  # what a name holding an object of the module's may share (see share_across_iterations)


def _assignments(loop):
    """(target, value) for each assignment in the loop's body, the targets of `for` loops nested
    in it included (`x += v` keeps what x holds), and those of functions made there (which
    counts more names than their own scope binds: never fewer)."""
    pairs = []
    for node in walk(loop):
        if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
            pairs += [(t, node.value) for t in (node.targets if isinstance(node, gast.Assign) else [node.target])]
        elif isinstance(node, gast.For) and node is not loop:
            pairs.append((node.target, node.iter))
        elif isinstance(node, gast.NamedExpr):
            pairs.append((node.target, node.value))
    return pairs


def _stored_names(target):
    """The names an assignment target binds (`a`, `a, (b, c)`), not those it reads (`y[j]`)."""
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, (gast.Tuple, gast.List)):
        return [n for element in target.elts for n in _stored_names(element)]
    if isinstance(target, gast.Starred):
        return _stored_names(target.value)
    return []
