"""Loop checkpointing: the backward sweep re-runs segments of a loop from snapshots.

Assumes: the forward and adjoint sweeps after the tape (`tape.insert_tape`), markers
stripped, and the reverse pass's records: for each loop of the forward sweep the
ANF loop it came from and its trip counter (`loop_records`), the adjoint loop made
for it (`adjoint_loops`), and the ANF statement each split call came from (`unsplit`).
Guarantees: with a strategy (see `runtime.checkpoints`), each outermost loop whose
iterations push on the tape is rewritten so that the tape holds one segment at a time:

    checkpoints = Checkpoints('sqrt', len(range_n))
    for i in range_n:                          # records nothing
        keep(checkpoints, h)                   # the loop's state, when a snapshot is due
        <the loop body as the user wrote it>
    ...
    for segment_start, segment_stop in segments(checkpoints):
        (h,) = restore(checkpoints, segment_start)
        for i in range_n[segment_start:segment_stop]:
            <the body, recording on the tape>
        for i in reversed(range_n[segment_start:segment_stop]):
            <the body's adjoint, popping>

Under revolve each segment is one iteration, reached from the nearest snapshot by
running the body again (`reversal(checkpoints)` says from where; `keep` stores the
snapshots planned on the way).

The state kept is every name the loop assigns whose value at an iteration's start a
later read may see: read by the body before it is assigned there (or assigned on some
paths only), or read by the adjoint sweep after the loop. The adjoint of an iteration
reads only what that iteration read or assigned, which the tape restores (see
`mirror`), so this is the state of the adjoint too. Arrays and lists the loop writes
into in place are copied into and out of snapshots.

A run again repeats no effect: a `print` of the body runs in the forward sweep only; a
random draw, another impure call, or a call of the user's function that has one raises
SsadError naming its line; a call through a function value is checked when it runs
again (`check_replayable`). Nested loops are part of their outer loop's iterations and
are recorded whole within a segment.
"""


import gast

from ..errors import SourceError
from ..frontend import primitives
from ..frontend.builders import assign, call, clone, comment, constant, name, store, walk
from ..registry import PRINTS, REGISTRY
from ..runtime.checkpoints import Checkpoints, copy_state, keep, restore, reversal, segments
from ..runtime import raised
from ..runtime.effects import check_replayable, effect_of
from ..runtime.passed import keeps_arguments, keeps_globals, output_is_none
from ..runtime.receivers import numpy_member
from ..runtime.refusals import GUARDS

# PRINTS (see `registry`): run in the forward sweep alone.
# Impure calls that raise or do nothing (`assert`, `raise`): run again, they do what they did.
CHECKS = (raised, numpy_member, keeps_arguments, keeps_globals, output_is_none, *GUARDS)


def checkpoint_loops(rev, forward, backward, strategy):
    """`forward` and `backward` with each outermost loop that records checkpointed (see module)."""
    replaced = {}
    initial = []
    for index, top in enumerate(forward):
        for loop in _outermost_loops([top]):
            record = rev.loop_records.get(id(loop))
            header = rev.adjoint_loops.get(id(record[0])) if record is not None else None
            if header is None or not _holds(backward, header) or not _pushes(loop.body, rev):
                continue
            plan = _Loop(rev, loop, header, record, strategy, backward)
            replaced[id(loop)] = plan.forward_code()
            replaced[id(header)] = plan.backward_code()
            # a snapshot holds each name of the state, which may have no value before the loop
            bound = set(rev.program.params) | _bound_at_top(forward[:index])
            initial += [n for n in plan.state if n not in bound and n not in initial]
    if not replaced:
        return forward, backward
    prologue = [assign(n, constant(None)) for n in initial]
    return prologue + _substitute(forward, replaced), _substitute(backward, replaced)


class _Loop:
    """One loop to checkpoint: its state, its bodies, and the code that replaces it."""

    def __init__(self, rev, loop, header, record, strategy, backward):
        self.rev, self.loop, self.header, self.strategy = rev, loop, header, strategy
        self.anf_loop, counter = record
        self.program = rev.program
        body = list(loop.body)
        if counter is not None and body and _assigns(body[0], counter):
            body = body[1:]  # the trip count: `Checkpoints` counts the iterations itself
        self.body = body
        self.is_for = isinstance(loop, gast.For)
        if not self.is_for and (strategy == "sqrt" or strategy[0] == "revolve"):
            raise SourceError(
                f"checkpoint={strategy!r} needs the trip count when the loop starts, and a `while` loop has "
                "none: use checkpoint=(\"every\", k)",
                *self.program.parsed.where(self.anf_loop),
            )
        self.checks = {}  # id(statement of the body) -> function value to check before running it again
        self._check_effects(self.body)
        self.state, self.written = self._state(backward)
        self.checkpoints = rev.namer.fresh("checkpoints")

    # ----- what the loop keeps -----

    def _state(self, backward):
        """The names whose values at an iteration's start a snapshot holds, and those of them written in place."""
        residuals = {n for s in _statements(self.body) if id(s) in self.rev.unsplit for n in _targets(s)[1:]}
        assigned = (_stores(self.body) | _written(self.body)) - residuals
        if self.is_for:
            assigned.discard(self.loop.target.id)
        # The adjoint of an iteration reads what its forward run read there or assigned in it
        # (the tape's guarantee, see `mirror`): the forward body's liveness covers both.
        live = set()
        while True:
            found = _live_in(self.body, live, self.rev)
            if found <= live:
                break
            live |= found
        after = _loads_except(backward, self.header)
        state = sorted(assigned & (live | after))
        written = _written(self.body) & set(state)
        for target in written:
            # a view made in the iteration is made again by the re-run; one from before the loop is not
            sharing = (self.program.shares.get(target, set()) - {target}) & ((_loads(self.body) - assigned) | set(state))
            if sharing:
                raise SourceError(
                    f"checkpointing this loop would keep a copy of `{target}`, which it writes into in place, "
                    f"while `{sorted(sharing)[0]}` shares its memory; copy the array before the loop "
                    "(`x = x.copy()`) or leave out checkpoint=",
                    *self.program.parsed.where(self.anf_loop),
                )
        return state, written

    def _check_effects(self, block):
        for statement in block:
            if _is_push(statement, self.rev):
                continue
            if isinstance(statement, gast.If):
                self._check_effects(statement.body)
                self._check_effects(statement.orelse)
                continue
            if isinstance(statement, (gast.For, gast.While)):
                self._check_effects(statement.body)
                continue
            original = self.rev.unsplit.get(id(statement), statement)
            value = getattr(original, "value", None)
            if not isinstance(original, (gast.Assign, gast.Expr)) or not isinstance(value, gast.Call):
                continue
            op = primitives.operation(value, self.program)
            where = self.program.parsed.where(original)
            if op.kind in (primitives.DYNAMIC_CALL, primitives.METHOD_CALL):
                function = clone(op.args[0])
                if op.kind == primitives.METHOD_CALL:
                    function = gast.Attribute(value=function, attr=op.keys[0], ctx=gast.Load())
                self.checks[id(statement)] = function
            elif op.kind == primitives.USER_CALL:
                message = effect_of(op.primitive)
                if message is not None:
                    raise SourceError(_repeated(message), *where)
            elif op.primitive is not None and not REGISTRY.is_pure(op.primitive):
                if not (isinstance(original, gast.Expr) and op.primitive in PRINTS) and op.primitive not in CHECKS:
                    raise SourceError(_repeated(f"`{op.name}(...)`, which is not pure"), *where)

    # ----- the code -----

    def forward_code(self):
        trips = call(self.rev.helper("len", len), clone(self.loop.iter)) if self.is_for else constant(None)
        made = call(self.rev.helper("Checkpoints", Checkpoints), _strategy(self.strategy), trips)
        body = [self._keep()] + self._copy(self.body, record=False, again=False)
        if self.is_for:
            loop = gast.For(target=clone(self.loop.target), iter=clone(self.loop.iter), body=body,
                            orelse=[], type_comment=None)
        else:
            loop = gast.While(test=clone(self.loop.test), body=body, orelse=[])
        what = f"{self.strategy!r}" if isinstance(self.strategy, str) else f"{self.strategy[0]}, {self.strategy[1]}"
        return [
            comment(f"checkpointed ({what}): this loop records nothing; snapshots of its state are kept"),
            gast.copy_location(assign(self.checkpoints, made), self.loop),
            gast.copy_location(loop, self.loop),
        ]

    def backward_code(self):
        revolve = self.strategy != "sqrt" and self.strategy[0] == "revolve"
        start, stop = self.rev.namer.fresh("segment_start"), self.rev.namer.fresh("segment_stop")
        restart = self.rev.namer.fresh("restart") if revolve else start
        body = [comment("from the snapshot, run the segment again, recording")]
        body.append(self._restore(restart))
        body += [assign(n, call(self.rev.helper("copy_state", copy_state), name(n))) for n in self.written]
        if revolve:
            rerun = [self._keep()] + self._copy(self.body, record=False, again=True)
            body.append(self._segment_loop(restart, start, rerun, reverse=False))
        body.append(self._segment_loop(start, stop, self._copy(self.body, record=True, again=True), reverse=False))
        body.append(comment("reverse the segment"))
        body.append(self._segment_loop(start, stop, self.header.body, reverse=True))
        targets = [restart, start, stop] if revolve else [start, stop]
        order = self.rev.helper("reversal", reversal) if revolve else self.rev.helper("segments", segments)
        loop = gast.For(target=gast.Tuple(elts=[store(t) for t in targets], ctx=gast.Store()),
                        iter=call(order, name(self.checkpoints)),
                        body=body, orelse=[], type_comment=None)
        return [gast.copy_location(loop, self.header)]

    def _keep(self):
        values = [
            call(self.rev.helper("copy_state", copy_state), name(n)) if n in self.written else name(n)
            for n in self.state
        ]
        return gast.Expr(value=call(self.rev.helper("keep", keep), name(self.checkpoints), *values))

    def _restore(self, position):
        restored = call(self.rev.helper("restore", restore), name(self.checkpoints), name(position))
        if not self.state:
            return gast.Expr(value=restored)
        targets = gast.Tuple(elts=[store(n) for n in self.state], ctx=gast.Store())
        return gast.Assign(targets=[targets], value=restored, type_comment=None)

    def _segment_loop(self, start, stop, body, reverse):
        if self.is_for:
            part = gast.Subscript(value=clone(self.loop.iter),
                                  slice=gast.Slice(lower=name(start), upper=name(stop), step=None), ctx=gast.Load())
            target = clone(self.loop.target)
            if reverse:
                part = call(self.rev.helper("reversed", reversed), part)
        else:
            part = call(self.rev.helper("range", range), name(start), name(stop))
            target = clone(self.header.target)
        return gast.For(target=target, iter=part, body=body or [gast.Pass()], orelse=[], type_comment=None)

    def _copy(self, block, record, again):
        """The loop body for a run: `record` keeps the tape's pushes and split calls (else the
        calls as the user wrote them); `again` drops prints and checks calls through values."""
        out = []
        for statement in block:
            if _is_push(statement, self.rev):
                if record:
                    out.append(clone(statement))
                continue
            if isinstance(statement, gast.If):
                made = gast.If(test=clone(statement.test), body=self._copy(statement.body, record, again),
                               orelse=self._copy(statement.orelse, record, again))
                made.body = made.body or [gast.Pass()]
                out.append(gast.copy_location(made, statement))
                continue
            if isinstance(statement, (gast.For, gast.While)):
                body = self._copy(statement.body, record, again) or [gast.Pass()]
                if isinstance(statement, gast.For):
                    made = gast.For(target=clone(statement.target), iter=clone(statement.iter),
                                    body=body, orelse=[], type_comment=None)
                else:
                    made = gast.While(test=clone(statement.test), body=body, orelse=[])
                out.append(gast.copy_location(made, statement))
                continue
            original = statement if record else self.rev.unsplit.get(id(statement), statement)
            if again and _prints(original, self.program):
                continue
            if again and id(statement) in self.checks:
                check = call(self.rev.helper("check_replayable", check_replayable), clone(self.checks[id(statement)]))
                out.append(gast.copy_location(gast.Expr(value=check), statement))
            out.append(clone(original))
        return out


def _repeated(what):
    return (
        f"a checkpointed loop runs its iterations again in the backward sweep, and this line would repeat "
        f"an effect: {what}. Move it out of the loop, or leave out checkpoint="
    )


def _strategy(strategy):
    if isinstance(strategy, str):
        return constant(strategy)
    return gast.Tuple(elts=[constant(strategy[0]), constant(strategy[1])], ctx=gast.Load())


def _is_push(statement, rev):
    """`tape.push(...)`: a record the forward sweep makes for the adjoint sweep."""
    value = getattr(statement, "value", None)
    return (
        isinstance(statement, gast.Expr)
        and isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and value.func.attr == "push"
        and isinstance(value.func.value, gast.Name)
        and value.func.value.id == rev.tape_name
    )


def _pushes(block, rev):
    return any(_is_push(s, rev) for s in _statements(block))


def _prints(statement, program):
    if not isinstance(statement, gast.Expr) or not isinstance(statement.value, gast.Call):
        return False
    op = primitives.operation(statement.value, program)
    return op.kind == primitives.PRIMITIVE and op.primitive in PRINTS


def _assigns(statement, target):
    return isinstance(statement, gast.Assign) and _targets(statement) == [target]


def _targets(statement):
    return [n.id for t in statement.targets for n in walk(t) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]


def _statements(block):
    for statement in block:
        yield statement
        for field in ("body", "orelse"):
            yield from _statements(getattr(statement, field, None) or [])


def _outermost_loops(block):
    for statement in block:
        if isinstance(statement, (gast.For, gast.While)):
            yield statement
        elif isinstance(statement, gast.If):
            yield from _outermost_loops(statement.body)
            yield from _outermost_loops(statement.orelse)


def _holds(block, node):
    return any(s is node for s in _statements(block))


def _substitute(block, replaced):
    out = []
    for statement in block:
        if id(statement) in replaced:
            out.extend(replaced[id(statement)])
            continue
        if isinstance(statement, gast.If):
            statement.body = _substitute(statement.body, replaced)
            statement.orelse = _substitute(statement.orelse, replaced)
        out.append(statement)
    return out


def _stores(block):
    return {n.id for s in block for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _written(block):
    """Names written into in place: `x[i] = v`, `items.append(v)` and other list mutations."""
    names = set()
    for statement in _statements(block):
        if isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Subscript):
            base = statement.targets[0].value
            if isinstance(base, gast.Name):
                names.add(base.id)
        value = getattr(statement, "value", None)
        if (isinstance(statement, gast.Expr) and isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and isinstance(value.func.value, gast.Name) and value.func.attr in _MUTATORS):
            names.add(value.func.value.id)
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "pop"
                and isinstance(value.func.value, gast.Name)):
            names.add(value.func.value.id)
    return names


_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort", "reverse"}


def _loads(block):
    return {n.id for s in block for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _loads_except(block, node):
    """Names read in `block` outside the statement `node` (which may sit inside its `if`s)."""
    names = set()
    for statement in block:
        if statement is node:
            continue
        if isinstance(statement, gast.If) and _holds(statement.body + statement.orelse, node):
            names |= _loads([statement.test]) | _loads_except(statement.body, node) | _loads_except(statement.orelse, node)
        else:
            names |= _loads([statement])
    return names


def _live_in(block, live, rev):
    """The names whose values at the start of `block` it (or what reads `live` after it) may read."""
    live = set(live)
    for statement in reversed(block):
        if _is_push(statement, rev):
            continue
        if isinstance(statement, gast.If):
            live = _live_in(statement.body, live, rev) | _live_in(statement.orelse, live, rev) | _loads([statement.test])
        elif isinstance(statement, (gast.For, gast.While)):
            # at the loop's head: what follows it (no more iterations) or what an iteration reads
            bound = {statement.target.id} if isinstance(statement, gast.For) else set()
            head = live | _loads_header(statement)
            while True:
                grown = head | (_live_in(statement.body, head, rev) - bound)
                if grown <= head:
                    break
                head = grown
            live = head
        elif isinstance(statement, gast.Assign):
            target = statement.targets[0]
            if not isinstance(target, gast.Subscript):
                live -= {n.id for n in walk(target) if isinstance(n, gast.Name)}
            live |= _loads([statement])
        else:
            live |= _loads([statement])
    return live


def _loads_header(loop):
    return _loads([loop.iter] if isinstance(loop, gast.For) else [loop.test])


def _bound_at_top(block):
    """The names the statements of `block` assign at its top level (not inside an `if` or a loop)."""
    return {n.id for s in block if isinstance(s, gast.Assign) for t in s.targets for n in walk(t)
            if isinstance(n, gast.Name)}
