"""A checker for the tape: the adjoint sweep reads the values of the iteration it reverses.

Reverse mode is correct only if, whenever the adjoint sweep reaches the adjoint of a
statement, every primal name it reads holds the value that name had when the forward
sweep ran that very instance of the statement (the same loop iteration, the same
branch, the same call). The tape pass (`tape`) achieves that by pushing what later
code overwrites and popping it back, and by *not* pushing what it proves unchanged
or recomputed to the same value. This module checks the result independently.

It runs the generated forward and adjoint sweeps symbolically. Every value is a
hash-consed term describing how it was computed (`np.sin` of this, the element
written there), so a value recomputed from the same inputs is recognized as the
same; a call with effects (a random draw, a user function) gives a fresh term every
time. Arrays are objects: views and copies of a name share one, an in-place write
changes it for every name that sees it, a pushed reference sees later writes. Loops
run 0 to 3 times and branches go either way, chosen per scenario by a hash of the
values they test, so equal values always take the same path. Marker statements
(`mark`) placed by the reverse pass before and after each statement, and at the start
and end of each loop iteration, say which forward state each point of the adjoint
sweep mirrors; every read of a primal name in the adjoint sweep is compared with it.

Assumes: the forward and adjoint sweeps after `tape.insert_tape`, with `mark`
markers still in place (the reverse pass places them when `ENABLED`).
Guarantees: `check` raises `MirrorError` naming the first read whose value differs
from the one the forward sweep had at the mirrored point; `strip` removes the markers.
The tests turn `ENABLED` on for everything they compile (tests/conftest.py).
"""


import gast

from ..frontend.builders import clone, MIRROR as _MIRROR, walk
from ..frontend.builders import name as _name
from .mirror_terms import _MAX_TRIPS, MirrorError, Terms, _Obj  # noqa: F401  (MirrorError: raised to the tests)
from ..frontend.views import viewed_operand

ENABLED = False  # set by the test suite: every transformation is then checked

_SCENARIOS = 6
_MUTATORS = {"push", "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse",
             "popitem"}


def mark(kind, key):
    """A marker statement: `kind` is pre/post (of a statement) or start/end (of a loop iteration)."""
    args = [gast.Constant(value=kind, kind=None), gast.Constant(value=key, kind=None)]
    return gast.Expr(value=gast.Call(func=_name(_MIRROR),
                                     args=args, keywords=[]))


def marks(kind, key):
    """`[mark(kind, key)]` while checking is on, else nothing."""
    return [mark(kind, key)] if ENABLED else []


def is_mark(statement):
    return (
        isinstance(statement, gast.Expr)
        and isinstance(statement.value, gast.Call)
        and isinstance(statement.value.func, gast.Name)
        and statement.value.func.id == _MIRROR
    )


def strip(block):
    """`block` without markers, recursively."""
    out = []
    for statement in block:
        if is_mark(statement):
            continue
        for field in ("body", "orelse"):
            if getattr(statement, field, None):
                setattr(statement, field, strip(getattr(statement, field)) or [gast.Pass()])
        out.append(statement)
    return out


def check(program, forward, backward, tape, scalars=frozenset()):
    """Run every scenario; raise MirrorError at the first stale read of the adjoint sweep.
    `scalars`: the names whose every value is a number (rank 0, see `ranks`)."""
    # Only the primal names the adjoint sweep reads are compared, so only they are snapshot.
    primal = (set(program.params) | _stored(forward)) & _loaded(backward)
    primal.discard(tape)
    for seed in range(_SCENARIOS):
        _Run(program, primal, tape, seed, scalars).run(forward, backward)


def _stored(block):
    names = set()
    for statement in block:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                names.add(node.id)
    return names


def _loaded(block):
    names = set()
    for statement in block:
        for node in walk(statement):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Store):
                names.add(node.id)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):  # reads it too
                names.add(node.target.id)
    return names


class _Stop(Exception):
    pass


class _Run(Terms):
    def __init__(self, program, primal, tape, seed, scalars):
        self.program = program
        self.scalars = scalars
        self.values = program.namespace.values
        self.primal = primal
        self.tape_name = tape
        self.seed = seed
        self.terms = {}  # term tuple -> id
        self.by_id = []  # id -> term tuple
        self.env = {name: _Obj(self.term("param", name)) for name in program.params}
        self.tape = []
        self.snapshots = {}  # (kind, key) -> stack of {name: term}
        self.mirror = None
        self.backward = False
        self.fresh = 0
        self.comment = None  # the `# grad of:` line the adjoint sweep is in

    # ----- terms -----

    # ----- the two sweeps -----

    def run(self, forward, backward):
        self.block(forward)
        self.backward = True
        self.block(backward)

    def block(self, statements):
        for statement in statements:
            self.statement(statement)

    def statement(self, s):
        if is_mark(s):
            kind, key = (a.value for a in s.value.args)
            if self.backward:
                stack = self.snapshots.get((kind, key))
                if not stack:
                    raise MirrorError(f"the adjoint sweep reaches a point ({kind} {key}) the forward sweep did not")
                self.mirror = stack.pop()
            else:
                env, value = self.env, self.value
                snapshot = {name: value(env[name]) for name in self.primal if name in env}
                self.snapshots.setdefault((kind, key), []).append(snapshot)
        elif _comment(s) is not None:
            self.comment = _comment(s)
        elif isinstance(s, gast.Assign):
            self.assign(s.targets[0], s.value)
        elif isinstance(s, gast.AugAssign):
            value = gast.BinOp(left=_load(s.target), op=s.op, right=s.value)
            self.assign(s.target, value)
        elif isinstance(s, gast.Expr):
            self.effect(s.value)
        elif isinstance(s, gast.If):
            test = self.expr(s.test)
            self.block(s.body if self.truth(test, 2) else s.orelse)
        elif isinstance(s, gast.For):
            iterable = self.expr(s.iter)
            for item in self.items(iterable):
                self.bind(s.target, _Obj(item))
                try:
                    self.block(s.body)
                except _Stop:
                    break
        elif isinstance(s, gast.While):
            for _ in range(_MAX_TRIPS + 1):
                if not self.truth(self.expr(s.test), 4):
                    break
                try:
                    self.block(s.body)
                except _Stop:
                    break
        elif isinstance(s, gast.Break):
            raise _Stop()
        elif isinstance(s, (gast.Pass, gast.Return)):
            pass
        else:
            raise MirrorError(f"the checker does not know statement {type(s).__name__}")

    # ----- statements -----

    def bind(self, target, obj):
        if isinstance(target, gast.Name):
            self.env[target.id] = obj
        elif isinstance(target, (gast.Tuple, gast.List)):
            whole = self.value(obj)
            for k, element in enumerate(target.elts):
                self.bind(element, _Obj(self.term("item", whole, k)))
        elif isinstance(target, gast.Subscript):
            self.write(target.value, self.expr(target.slice), self.value(obj))
        elif isinstance(target, gast.Attribute):
            self.write(target.value, self.term("attr", target.attr), self.value(obj))
        else:
            raise MirrorError(f"the checker does not know target {type(target).__name__}")

    def write(self, owner, index, value):
        """`owner[index] = value`: every name that sees owner's memory sees the change."""
        if not isinstance(owner, gast.Name):
            self.expr(owner)
            return
        obj = self.read(owner)
        base = self.root(obj)
        base.term = self.term("write", base.term, obj.key, index, value)

    def assign(self, target, value):
        if isinstance(target, gast.Name) and isinstance(value, gast.Name) and value.id in self.env:
            self.read(value)
            self.env[target.id] = self.env[value.id]  # the same object
            return
        pop = self.popped(value)
        if pop is not None:
            self.bind(target, pop)
            return
        if isinstance(value, gast.Call):
            changed = self.mutation(value)
            if changed is not None:
                self.bind(target, _Obj(changed))
                return
        source = self.viewed(value)
        element = isinstance(value, gast.Subscript) and isinstance(target, gast.Name) and target.id in self.scalars
        if source is not None and (element or self.is_container(self.root(self.env[source]).term)):
            # an item of a list, tuple or dict: a later `items[k] = v` puts another object
            # in its place and leaves the one read as it was, so the read is a value; so is
            # an element of an array read as a number (see `ranks`), a NumPy scalar
            self.bind(target, _Obj(self.expr(value)))
        elif source is not None:
            # the view's key is its expression with the viewed name as a placeholder, so
            # writes into the base change the view's value, never its shape
            for node in walk(value):  # what the view reads is checked like any read
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    self.read(node)
            base, mirrored = self.env[source], self.mirror
            self.env[source], self.mirror = _Obj(self.term("viewed",)), None
            try:
                key = self.expr(value)
            finally:
                self.env[source], self.mirror = base, mirrored
            self.bind(target, _Obj(None, base=base, key=key))
        else:
            self.bind(target, _Obj(self.expr(value)))

    def is_container(self, term):
        """Whether `term` is a list, tuple or dict display, as changed since."""
        parts = self.parts(term)
        while parts[0] in ("write", "restored", "append", "insert", "pop", "extend", "mutate"):
            parts = self.parts(parts[1])
        return parts[0] in ("list", "tuple", "dict")

    def viewed(self, value):
        """The object `value` may be a view of (a slice, `.T`, a reshape...), or None."""

        def is_local(name):
            return name in self.env and name not in self.values

        def is_static(func):
            while isinstance(func, gast.Attribute):
                func = func.value
            return isinstance(func, gast.Name) and func.id in self.values

        return viewed_operand(value, is_local, is_static)

    def popped(self, value):
        if self.is_tape_call(value, "pop"):
            if not self.tape:
                raise MirrorError("the adjoint sweep pops more than the forward sweep pushed")
            return self.tape.pop()
        return None

    def is_tape_call(self, value, method):
        return (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Attribute)
            and value.func.attr == method
            and isinstance(value.func.value, gast.Name)
            and value.func.value.id == self.tape_name
        )

    def effect(self, call):
        if self.is_tape_call(call, "push"):
            (pushed,) = call.args
            if isinstance(pushed, gast.Name):
                self.tape.append(self.read(pushed))  # a reference: later writes show through
            else:
                helper = self.helper(pushed)
                if helper == "saved_part":
                    owner, index = pushed.args
                    term = self.term("part", self.value(self.root(self.read(owner))), self.expr(index))
                elif helper == "shape_only":
                    term = self.term("shape", self.expr(pushed.args[0]))
                else:
                    term = self.expr(pushed)
                self.tape.append(_Obj(term))
            return
        if not isinstance(call, gast.Call):
            self.expr(call)
            return
        if self.helper(call) == "restore_part":
            owner, index, source = call.args
            saved = self.popped(source)
            index = self.expr(index)
            base = self.root(self.read(owner))
            parts = self.parts(saved.term)
            written = self.parts(base.term)
            if parts[0] == "part" and written[0] == "write" and written[1] == parts[1] and written[3] == index:
                base.term = parts[1]  # exactly the write being undone
            else:
                base.term = self.term("restored", base.term, index, saved.term)
            return
        if self.helper(call) == "drop_last":  # undoes an extend
            base = self.root(self.read(call.args[0]))
            contents = self.parts(base.term)
            self.expr(call.args[1])
            base.term = contents[1] if contents[0] == "extend" else self.term("dropped", base.term, self.new("drop"))
            return
        if self.mutation(call) is None:
            self.expr(call)

    def mutation(self, call):
        """`items.append(v)`, `items.pop()` and friends: change the container; the call's term.

        A pop right after an append undoes it exactly (the adjoint sweep pops what the
        forward sweep appended); any other change makes a new container value.
        """
        func = call.func
        if self.helper(call) == "put_back" and isinstance(call.args[0], gast.Name):  # undoes a pop, as insert
            owner, method, arguments = call.args[0], "insert", tuple(self.expr(a) for a in call.args[1:])
        elif (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.value.id in self.env
            and func.attr in _MUTATORS
        ):
            owner, arguments = func.value, tuple(self.expr(a) for a in call.args)
            method = "append" if func.attr == "push" else func.attr  # a user's Tape-like list
        else:
            return None
        base = self.root(self.read(owner))
        contents = self.parts(base.term)
        nothing = self.term("const", "NoneType", "None")
        # the adjoint sweep undoes each change with its inverse: pop an append, append a pop...
        if method == "pop" and contents[0] in ("append", "insert") and arguments == contents[3:]:
            base.term = contents[1]
            return contents[2]
        if method in ("append", "insert") and contents[0] == "pop":
            position = arguments[:-1]  # append(v) undoes pop(), insert(i, v) undoes pop(i)
            if position == contents[2:] and arguments[-1] == self.term("popped", *contents[1:]):
                base.term = contents[1]
                return nothing
        if method == "append":
            base.term = self.term("append", base.term, arguments[0])
            return nothing
        if method == "insert":
            base.term = self.term("insert", base.term, arguments[1], arguments[0])
            return nothing
        if method == "pop" and len(arguments) <= 1:
            old = base.term
            base.term = self.term("pop", old, *arguments)
            return self.term("popped", old, *arguments)
        if method == "extend":
            base.term = self.term("extend", base.term, arguments[0])
            return nothing
        base.term = self.term("mutate", base.term, method, arguments, self.new("effect"))
        return self.term("item of", base.term)

    def helper(self, call):
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Name):
            value = self.values.get(call.func.id)
            return getattr(value, "__name__", None)
        return None

    # ----- expressions -----


def _comment(statement):
    if (
        isinstance(statement, gast.Expr)
        and isinstance(statement.value, gast.Call)
        and isinstance(statement.value.func, gast.Name)
        and statement.value.func.id == "__ssad_comment__"
        and statement.value.args
    ):
        return statement.value.args[0].value
    return None


def _load(target):
    node = clone(target)
    for n in walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node
