"""Stage 5 (forward mode): the tangent of every value, computed next to the value.

Assumes: a Program in A-normal form (stage 3) and the names of the parameters whose
tangents are given.
Guarantees: `Tangents.body` runs the function with, after each statement whose
operands carry tangents, the statement computing its target's tangent `d_<name>`:
a primitive's tangent rule (inlined with the operands substituted, zero tangents
folded away, or called), `d_t = d_x[i]` for a read, `d_x[i] = d_v` for an in-place
write (on a private copy of the tangent), the tangents of tuples, lists and dicts
built alongside, `t, d_t = jvp_g(a, d_a=...)` for a call to the user's function,
`t, d_t = call_jvp(f, ...)` for a call through a variable. Control flow is kept as
it is: forward mode needs no tape. Zeros are symbolic; where a branch or a loop body
gives a tangent the other path lacks, that path gets an explicit zero.
"""

from dataclasses import dataclass

import gast

from ..frontend import primitives
from ..analysis.activity import list_mutation, simple_statements
from ..analysis.shapes import scalar_names
from ..frontend.builders import assign, assigned_names, call, clone, comment, constant, is_loop_exit, name, store, walk
from .adjoints import index_value
from .forward_calls import Before, Replace, TangentCalls
from .tangent_sharing import shared_tangents, view_bases
from ..runtime import copy_adjoint, zeros_like_value
from ..runtime.partials import made_partial_tangent
from ..runtime.structure import field_tangent, record_tangent
from .tape import unbound_zero_reads


@dataclass
class Tangents:
    body: list  # statements: the function, with tangent statements interleaved
    result_tangent: object  # gast expression of the result's tangent
    callees: list  # (function, wrt) whose jvp the code calls
    names: dict  # primal name -> the name of its tangent variable


def forward(program, wrt, varied, scalar_params=()):
    """The forward-mode body of `program` for tangents of the parameters `wrt`.

    `scalar_params` names the parameters the caller passes scalars for: a tangent of a
    value known to be scalar (see `shapes`) needs no `broadcast_like` to its shape."""
    tangents = _Forward(program, varied)
    tangents.scalars = scalar_names(program, scalar_params)
    tangents.views = view_bases(program, tangents.scalars)
    return tangents.run(wrt)


class _Forward(TangentCalls):
    def __init__(self, program, varied):
        self.program = program
        self.namer = program.namer
        self.namespace = program.namespace
        self.varied = varied
        self.tangent = {}  # primal name -> name of its nonzero tangent
        self.owned = set()  # primal names whose tangent array may be written in place
        self.copied = set()  # primal names whose tangent the block being made copies to own it
        self.names = {}
        self.callees = []
        self.loop_heads = []  # per enclosing loop: the primals whose tangents its iterations carry
        self.last_comment_line = None
        self.seen = set(program.params)  # names assigned so far, in the order of the source
        for primal in program.params + _assigned(program.body):
            if primal not in self.names:
                self.names[primal] = self.namer.adjoint_name(primal)

    def helper(self, preferred, value):
        return self.namespace.bind(preferred, value)

    def run(self, wrt):
        for param in wrt:
            self.tangent[param] = self.names[param]
        body = self.block(self.program.body[:-1])
        result = self.program.result
        if isinstance(result, gast.Name) and result.id in self.tangent:
            result_tangent = name(self.tangent[result.id])
        else:
            result_tangent = call(self.helper("zeros_like_value", zeros_like_value), clone(result))
        body = unbound_zero_reads(body + [gast.Expr(value=result_tangent)], self.program.params, self.namespace) + body
        return Tangents(body, result_tangent, self.callees, self.names)

    # ----- blocks and control flow -----

    def block(self, statements):
        out = []
        for statement in statements:
            if isinstance(statement, gast.If):
                if is_loop_exit(statement) and self.loop_heads:
                    out.extend(self.zeros_before_exit())
                out.append(self.branch(statement))
            elif isinstance(statement, (gast.For, gast.While)):
                out.extend(self.loop(statement))
            else:
                self.seen.update(_assigned([statement]))
                extra = self.statement(statement)
                note = self.comment_for(statement) if extra else None
                if note is not None:
                    out.append(note)
                if extra and isinstance(extra[0], Before):
                    out.extend(extra[0].statements)  # zeros shaped like the list before it changes
                    extra = extra[1:]
                if extra and isinstance(extra[0], Replace):
                    out.append(extra[0].statement)  # `t, d_t = jvp_g(...)` computes both
                    extra = extra[1:]
                else:
                    out.append(statement)
                out.extend(extra)
        return out

    def state(self):
        return dict(self.tangent), set(self.owned)

    def set_state(self, state):
        self.tangent, self.owned = dict(state[0]), set(state[1])

    def zero(self, primal):
        """An explicit zero tangent for `primal` (where symbolic zeros meet a nonzero one)."""
        self.tangent[primal] = self.names[primal]
        self.owned.add(primal)
        return assign(self.names[primal], call(self.helper("zeros_like_value", zeros_like_value), name(primal)))

    def zeros_before_exit(self):
        """Zero tangents for what the loop carries but this iteration has dropped so far.

        The end of the loop body zeroes them too, but a `break` leaves before it.
        """
        return [self.zero(primal) for primal in sorted(self.loop_heads[-1] - set(self.tangent))]

    def branch(self, statement):
        if is_loop_exit(statement):
            return statement
        entry = self.state()
        body = self.block(statement.body)
        after_body = self.state()
        self.set_state(entry)
        orelse = self.block(statement.orelse)
        after_else = self.state()
        joined = set(after_body[0]) | set(after_else[0])
        for code, state in ((body, after_body), (orelse, after_else)):
            self.set_state(state)
            for primal in sorted(joined - set(state[0])):
                code.append(self.zero(primal))
        owned = (after_body[1] | (joined - set(after_body[0]))) & (after_else[1] | (joined - set(after_else[0])))
        self.tangent = {p: self.names[p] for p in joined}
        self.owned = owned
        new = gast.If(test=statement.test, body=body or [gast.Pass()], orelse=orelse)
        return gast.copy_location(new, statement)

    def loop(self, statement):
        entry = self.state()
        seen_before = set(self.seen)
        head = set(entry[0])
        # A tangent private at the loop's start and again at the end of its body stays
        # private in every iteration: a list tangent is copied once, not once a pass.
        owned_head = {p for p in entry[1] if p in head and entry[0][p] == self.names[p]}
        # One the body copies before writing into it is copied once, before the loop, when
        # it is private again at the body's end (a backward loop's `d_y[i] = ...`).
        hoisted, tried = set(), set()
        copied_outside = self.copied
        snapshot = self.namer.snapshot()
        while True:
            self.namer.restore(snapshot)
            self.tangent = {p: self.names[p] for p in head}
            self.owned = set(owned_head)
            self.copied = set()
            self.loop_heads.append(head)
            body = self.block(statement.body)
            self.loop_heads.pop()
            end = set(self.tangent)
            new = end - head
            still_owned = owned_head & {p for p in self.owned if self.tangent.get(p) == self.names[p]}
            hoist = {p for p in self.copied - owned_head - tried if p in head and entry[0].get(p) == self.names[p]}
            wasted = hoisted & (self.copied | (owned_head - still_owned))  # the body copies it all the same
            if not new and still_owned == owned_head and not hoist and not wasted:
                break
            tried |= hoist
            head |= new
            hoisted = (hoisted - wasted) | hoist
            owned_head = (still_owned - wasted) | new | hoist  # each new one starts at a fresh zero made before the loop
        self.copied = copied_outside | self.copied | hoisted
        # A tangent the loop's start expects but its body dropped (`x = y * 2.0` with no
        # tangent for y) is zero from there on, not the tangent x had before.
        for primal in sorted(head - end):
            body.append(self.zero(primal))
        prologue = []
        self.set_state(entry)
        for primal in sorted(hoisted):
            copied = call(self.helper("copy_adjoint", copy_adjoint), name(self.tangent[primal]))
            prologue.extend(self.set_tangent(primal, copied, owned=True))
        for primal in sorted(head - set(entry[0])):
            if primal in seen_before:
                prologue.append(self.zero(primal))
            else:  # first made inside the loop: no value yet, and no tangent read before it is set
                self.tangent[primal] = self.names[primal]
                prologue.append(assign(self.names[primal], constant(0.0)))
        self.tangent = {p: self.names[p] for p in head}
        self.owned = set(owned_head)
        if isinstance(statement, gast.For):
            new_loop = gast.For(target=statement.target, iter=statement.iter, body=body, orelse=[], type_comment=None)
        else:
            new_loop = gast.While(test=statement.test, body=body, orelse=[])
        return prologue + [gast.copy_location(new_loop, statement)]

    # ----- one statement -----

    def statement(self, statement):
        """The statements computing the tangents `statement` produces."""
        mutation = list_mutation(statement)
        if mutation is not None:
            return self.mutation(*mutation)
        if not isinstance(statement, gast.Assign):
            return []
        target = statement.targets[0]
        if isinstance(target, gast.Tuple):
            return self.unpack(target, statement.value)
        if isinstance(target, gast.Subscript):
            return self.write(target, statement.value)
        generated = self.assignment(statement, target.id)
        # a copy, a part or a popped item shares with its operand in the tangent just as in
        # the primal (`d_v = d_items.pop()` is an item, never the list: a tape's tangent stays
        # private through the pops of a backward loop, not copied once a pass)
        if primitives.operation(statement.value, self.program).kind not in (primitives.COPY, primitives.GETITEM, primitives.POP):
            self.disown_shared(generated, target.id)
        return generated

    def disown_shared(self, generated, target):
        """The private tangents the tangent code just made may share are private no longer
        (see `tangent_sharing`). (A value that is its operand or a view of it, `b = a` or `t = a[1:]`,
        shares the memory of the primal as well: the front end refuses a write into `a` that
        such a name read afterwards would see.)"""
        held = {self.tangent[p]: p for p in self.owned if p != target and p in self.tangent}
        bases = {}  # the tangent of a view (`d_t = d_a[1:]`) -> the private tangents it views
        for viewer, viewed in self.views.items():
            private = (viewed & self.owned) - {target}
            if viewer in self.tangent and private:
                bases[self.tangent[viewer]] = private
                held.setdefault(self.tangent[viewer], viewer)
        for shared in shared_tangents(generated, held, self.program):
            self.owned.discard(held[shared])
            self.owned -= bases.get(shared, set())

    def comment_for(self, statement):
        parsed = self.program.parsed
        text = parsed.line_text(statement.lineno + parsed.line_offset)
        if text is None or statement.lineno == self.last_comment_line:
            return None
        self.last_comment_line = statement.lineno
        return gast.copy_location(comment(f"tangent of: {text.strip()}"), statement)

    def d(self, operand):
        """The tangent of an operand, or None when it is zero."""
        if isinstance(operand, gast.Name) and operand.id in self.tangent:
            return name(self.tangent[operand.id])
        return None

    def d_or_zero(self, operand):
        tangent = self.d(operand)
        if tangent is not None:
            return tangent
        return call(self.helper("zeros_like_value", zeros_like_value), clone(operand))

    def set_tangent(self, primal, expr, owned=False):
        self.tangent[primal] = self.names[primal]
        if owned:
            self.owned.add(primal)
        else:
            self.owned.discard(primal)
        return [assign(self.names[primal], expr)]

    def drop(self, primal):
        self.tangent.pop(primal, None)
        self.owned.discard(primal)
        return []

    def assignment(self, statement, target):
        op = primitives.operation(statement.value, self.program)
        operands = op.operands()
        if op.kind == primitives.POP and self.d(op.args[0]) is not None and target not in self.varied:
            # the popped value carries no tangent, but the tangent list must shrink with the list
            return self.pop_tangent(op) + self.drop(target)
        if target not in self.varied or not primitives.is_differentiable(op):
            return self.drop(target)  # no tangent reaches it, or it never reaches the result
        if not any(self.d(o) is not None for o in operands):
            return self.drop(target)
        kind = op.kind
        if kind == primitives.COPY:
            return self.set_tangent(target, self.d(op.args[0]))
        if kind == primitives.INDEXED:
            raise primitives.indexed_error(op, self.program, statement)
        if kind == primitives.GETITEM:
            part = gast.Subscript(value=self.d(op.args[0]), slice=clone(statement.value.slice), ctx=gast.Load())
            return self.set_tangent(target, part)
        if kind == primitives.PACK:
            items = [self.d_or_zero(e) for e in op.args]
            display = gast.List if isinstance(statement.value, gast.List) else gast.Tuple
            return self.set_tangent(target, display(elts=items, ctx=gast.Load()), owned=display is gast.List)
        if kind == primitives.DICT:
            keys = [constant(k) for k in op.keys]
            return self.set_tangent(target, gast.Dict(keys=keys, values=[self.d_or_zero(v) for v in op.args]), True)
        if kind == primitives.ATTRIBUTE:
            # the object itself tells its fields from its class's constants, and names the field's
            # position where a rule's tangent is a plain tuple
            part = call(self.helper("field_tangent", field_tangent), self.d(op.args[0]), constant(op.keys[0]),
                        clone(op.args[0]))
            return self.set_tangent(target, part)
        if kind == primitives.CONSTRUCT:
            if primitives.spreads_carried(op, lambda v: isinstance(v, gast.Name) and self.d(v) is not None):
                raise primitives.spread_record_error(op, self.program, statement)
            # the built object with the tangents of the fields given it, zero for the rest (defaults)
            given = {**dict(zip(op.keys, op.args, strict=False)), **op.keywords}
            tangents = {k: self.d(v) for k, v in given.items() if isinstance(v, gast.Name) and self.d(v) is not None}
            table = gast.Dict(keys=[constant(k) for k in tangents], values=list(tangents.values()))
            return self.set_tangent(target, call(self.helper("record_tangent", record_tangent), name(target), table))
        if kind == primitives.CLOSURE:
            keys = [constant(k) for k in op.keywords]
            # a function calling itself captures `closures.SELF`, whose tangent is the closure's
            # own, which `call_jvp` gives it (see `runtime.closures.own_tangents`)
            values = [self.d_or_zero(v) if isinstance(v, gast.Name) else constant(None) for v in op.keywords.values()]
            return self.set_tangent(target, gast.Dict(keys=keys, values=values))
        if kind == primitives.PARTIAL:
            bound = gast.Tuple(elts=[self.d_or_zero(a) for a in op.args[1:]], ctx=gast.Load())
            table = gast.Dict(keys=[constant(k) for k in op.keywords], values=[self.d_or_zero(v) for v in op.keywords.values()])
            function = self.d(op.args[0]) if isinstance(op.args[0], gast.Name) else None
            function = constant(None) if function is None else function  # a closure's: what it captured
            helper = self.helper("made_partial_tangent", made_partial_tangent)  # see `runtime.partials`
            return self.set_tangent(target, call(helper, name(target), clone(op.args[0]), function, bound, table))
        if kind == primitives.POP:
            popped = self.pop_tangent(op)
            return popped[:-1] + self.set_tangent(target, popped[-1].value)
        if kind == primitives.USER_CALL:
            return self.user_call(statement, op, target)
        if kind in (primitives.DYNAMIC_CALL, primitives.METHOD_CALL):
            return self.dynamic_call(statement, op, target)
        return self.primitive(statement, op, target)

    def pop_tangent(self, op):
        """Statements popping the tangent list of `items.pop(...)` (the pop last, as an Expr)."""
        items = op.args[0]
        out = self.own(items.id)
        pop = gast.Call(
            func=gast.Attribute(value=name(self.tangent[items.id]), attr="pop", ctx=gast.Load()),
            args=clone(op.args[1:]),
            keywords=[],
        )
        return out + [gast.Expr(value=pop)]

    def own(self, primal):
        """Make the tangent of `primal` a private array (or list) before writing into it."""
        if primal not in self.tangent:
            zero = call(self.helper("zeros_like_value", zeros_like_value), name(primal))
            return self.set_tangent(primal, zero, owned=True)
        if primal not in self.owned:
            self.copied.add(primal)
            copied = call(self.helper("copy_adjoint", copy_adjoint), name(self.tangent[primal]))
            return self.set_tangent(primal, copied, owned=True)
        return []

    def write(self, target, value):
        """x[i] = v: the tangent of x gets the tangent of v at i."""
        array = target.value.id
        if array not in self.tangent and self.d(value) is None:
            return []
        out = self.own(array)
        part = gast.Subscript(
            value=name(self.tangent[array]), slice=index_value(clone(target.slice), self.namespace), ctx=gast.Store()
        )
        if self.d(value) is not None:
            written = self.d(value)
        elif isinstance(value, gast.Constant) and isinstance(value.value, (int, float, complex)):
            written = constant(0.0)
        else:  # a value with no tangent may be a tuple, a dict or a function: its zero has its structure
            written = self.d_or_zero(value)
        out.append(gast.Assign(targets=[part], value=written, type_comment=None))
        return out

    def unpack(self, target, value):
        names = [e.id for e in target.elts]
        if value.id not in self.tangent:
            for n in names:
                self.drop(n)
            return []
        stores = gast.Tuple(elts=[store(self.names[n]) for n in names], ctx=gast.Store())
        for n in names:
            self.tangent[n] = self.names[n]
            self.owned.discard(n)
        return [gast.Assign(targets=[stores], value=name(self.tangent[value.id]), type_comment=None)]

    def mutation(self, items, method, operands):
        """items.append(v) and friends: the same change to the tangent list (none for a global
        list, a log: ssad reads globals as constants, and refuses reading one it changed)."""
        if items not in self.names or (items not in self.tangent and not any(self.d(o) is not None for o in operands)):
            return []
        # A list with no tangent yet gets zeros shaped like it *before* the change.
        out = [Before(self.own(items))] if items not in self.tangent else self.own(items)
        if method == "extend":
            args = [self.d_or_zero(operands[0])]
        elif method == "insert":
            args = [clone(operands[0]), self.d_or_zero(operands[1])]
        else:
            args = [self.d_or_zero(operands[0])]
        change = gast.Call(func=gast.Attribute(value=name(self.tangent[items]), attr=method, ctx=gast.Load()), args=args, keywords=[])
        out.append(gast.Expr(value=change))
        return out


def _assigned(statements):
    """The names `statements` assign, loop variables last, in the order they appear."""
    names = assigned_names(simple_statements(statements))
    for statement in statements:
        for node in walk(statement):
            if isinstance(node, gast.For) and node.target.id not in names:
                names.append(node.target.id)
    return names
