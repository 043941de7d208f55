"""The adjoint sweep of reverse mode: statement adjoints in reverse order, control flow replayed.

Methods of the reverse-mode pass (see `reverse`): a block's adjoint visits its
statements last to first; an `if` is replayed on its test; a `for` loop runs over
`reversed(...)` of its range (cut to the trips it ran when it can stop early), a
`while` loop over `range(trips)`. Where the two paths of an `if` or the ends of a
loop body disagree on which adjoints exist, the side that lacks one gets a zero.
"""



import gast

from ..analysis.activity import list_mutation

from . import mirror
from ..frontend.builders import assign, call, clone, is_loop_exit, name, store
from ..runtime import copy_adjoint, list_adjoint


def _walk_statements(block):
    for statement in block:
        yield statement
        for field_name in ("body", "orelse"):
            yield from _walk_statements(getattr(statement, field_name, []) or [])


def _changed_lists(block):
    """Names `append`, `extend`, `insert` or `pop` changes inside `block`."""
    names = set()
    for statement in _walk_statements(block):
        mutation = list_mutation(statement)
        if mutation is not None:
            names.add(mutation[0])
        value = getattr(statement, "value", None)
        if isinstance(statement, gast.Assign) and isinstance(value, gast.Call) and isinstance(
                value.func, gast.Attribute) and value.func.attr == "pop" and isinstance(value.func.value, gast.Name):
            names.add(value.func.value.id)
    return names


def _indexed_names(block):
    """Names read or written by index inside `block` (their adjoints are updated in place)."""
    names = _changed_lists(block)
    for statement in _walk_statements(block):
        if not isinstance(statement, gast.Assign):
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, gast.Subscript):
            names.add(target.value.id)
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            names.add(value.value.id)
    return names


class AdjointSweep:
    """The adjoint sweep of reverse mode: statement adjoints in reverse order, control flow replayed."""

    def backward_block(self, statements, depth):
        saved_out, self.out = self.out, []
        for statement in reversed(statements):
            if is_loop_exit(statement):
                continue
            self.out += mirror.marks("post", id(statement))
            self.statement_adjoint_block(statement, depth)
            self.out += mirror.marks("pre", id(statement))
        code, self.out = self.out, saved_out
        return code

    def statement_adjoint_block(self, statement, depth):
        if isinstance(statement, gast.Expr):
            self.statement_adjoint(statement)  # `items.append(v)` and friends
        elif isinstance(statement, gast.Assign):
            self.statement_adjoint(statement)
            key = id(statement)
            if key in self.sites:
                self.out.append(self.sites[key][1])
        elif isinstance(statement, gast.If):
            self.if_adjoint(statement, depth)
        elif isinstance(statement, (gast.For, gast.While)):
            self.loop_adjoint(statement, depth)

    def state(self):
        return dict(self.adjoint), set(self.owned)

    def set_state(self, state):
        self.adjoint, self.owned = dict(state[0]), set(state[1])

    def if_adjoint(self, statement, depth):
        entry = self.state()
        self.last_comment_line = None
        body = self.backward_block(statement.body, depth + 1)
        after_body = self.state()
        self.set_state(entry)
        self.last_comment_line = None
        orelse = self.backward_block(statement.orelse, depth + 1)
        after_else = self.state()
        joined = set(after_body[0]) | set(after_else[0])
        for code, state in ((body, after_body), (orelse, after_else)):
            self.set_state(state)
            for primal in sorted(joined - set(state[0])):
                self.materialize_zero(primal, code)
        self.set_state(after_body)
        body_owned = set(self.owned) | (joined - set(after_body[0]))
        else_owned = set(after_else[1]) | (joined - set(after_else[0]))
        self.adjoint = {p: self.adjoint_names[p] for p in joined}
        self.owned = body_owned & else_owned
        if not body and not orelse:
            return
        self.out.append(gast.copy_location(
            gast.If(test=clone(statement.test), body=body or [gast.Pass()], orelse=orelse), statement
        ))

    backward_loops = 0  # how many loops the adjoint sweep being written is inside

    def loop_adjoint(self, loop, depth):
        entry = self.state()
        indexed = _indexed_names(loop.body)
        head_nonzero = set(entry[0])
        head_owned = set(entry[1]) | (indexed & head_nonzero)
        namer_state = self.namer.snapshot()
        while True:
            self.namer.restore(namer_state)
            self.adjoint = {p: self.adjoint_names[p] for p in head_nonzero}
            self.owned = set(head_owned)
            self.last_comment_line = None
            self.backward_loops += 1
            body = self.backward_block(loop.body, depth + 1)
            self.backward_loops -= 1
            end_nonzero, end_owned = set(self.adjoint), set(self.owned)
            new = end_nonzero - head_nonzero
            lost = head_owned - end_owned - (head_nonzero - end_nonzero)
            if not new and not lost:
                break
            head_nonzero |= new
            head_owned = (head_owned - lost) | (indexed & new) | new
        # At the end of the body, whatever the head expects but the body consumed is zero again.
        for primal in sorted(head_nonzero - end_nonzero):
            self.materialize_zero(primal, body)
        # Before the loop: zeros for adjoints the loop accumulates into, private copies
        # of adjoints it updates in place.
        self.set_state(entry)
        for primal in sorted(head_nonzero - set(entry[0])):
            self.materialize_zero(primal, self.out)
        changed = _changed_lists(loop.body)  # their adjoints must be lists (an array is split)
        for primal in sorted(head_owned & set(entry[0])):
            if primal in changed:
                copied = call(self.helper("list_adjoint", list_adjoint), name(self.adjoint_names[primal]), name(primal))
            elif primal not in entry[1]:
                copied = call(self.helper("copy_adjoint", copy_adjoint), name(self.adjoint_names[primal]))
            else:
                continue
            self.out.append(assign(self.adjoint_names[primal], copied))
        self.adjoint = {p: self.adjoint_names[p] for p in head_nonzero}
        self.owned = set(head_owned)
        header = self.backward_header(loop)
        body = mirror.marks("end", id(loop)) + body + mirror.marks("start", id(loop))
        if body:  # markers included: pops inside the loop must run even without adjoint code
            header.body = body
            self.out.append(gast.copy_location(header, loop))
            self.adjoint_loops[id(loop)] = header
        # Pops mirror the pushes before the loop: the counter's, then the loop variable's.
        start = self.sites.get(("start", id(loop)))
        if start is not None and id(start) in self.sites:
            self.out.append(self.sites[id(start)][1])
        key = id(loop)
        if key in self.sites:
            self.out.append(self.sites[key][1])

    def backward_header(self, loop):
        counter = self.counters.get(id(loop))
        if isinstance(loop, gast.While):
            ignored = self.namer.fresh("_")
            rng = call(self.helper("range", range), name(counter))
            return gast.For(target=store(ignored), iter=rng, body=[], orelse=[], type_comment=None)
        iterations = clone(loop.iter)
        if counter is not None:
            iterations = gast.Subscript(
                value=iterations, slice=gast.Slice(lower=None, upper=name(counter), step=None), ctx=gast.Load()
            )
        rng = call(self.helper("reversed", reversed), iterations)
        return gast.For(target=clone(loop.target), iter=rng, body=[], orelse=[], type_comment=None)
