"""Stage 5, reverse: the forward sweep and the adjoint sweep of a function.

Assumes: a Program in A-normal form (stage 3) and its Activity (stage 4).
Guarantees: `Gradient.forward` is the primal computation; `Gradient.backward`
starts from the seed `d_<result>` and visits the statements in reverse order,
applying each statement's adjoint (see `adjoints`). Control flow is replayed:

- an `if` is replayed on its test, a name no statement of the `if` assigns;
- `for i in r` is replayed as `for i in reversed(r)` (`r[:trips]` when the loop
  can stop early), a `while` loop as `for _ in range(trips)`, with `trips`
  counted by the forward sweep;
- a value that code inside `if`/`for`/`while` overwrites, and that the adjoint
  sweep reads, is pushed on the tape before it is overwritten and popped back
  right after the adjoint of the overwriting statement; an in-place write
  `x[i] = v` pushes the elements it overwrites. So when the adjoint sweep reaches
  a statement, every variable holds the value it had when the forward sweep ran
  that statement. Straight-line code at the top level assigns every name once
  and pushes nothing (see `tape`).

Zeros are symbolic: a value that receives no adjoint has no `d_` variable at all.
Where control flow joins (the two branches of an `if`, the start and end of a loop
body) and one side has an adjoint the other lacks, that side gets an explicit
zero. Each block of adjoint code is preceded by `# grad of: <source line>`.
"""

import inspect
from dataclasses import dataclass

import numpy as np

import gast

from . import mirror
from ..frontend import primitives
from ..analysis.activity import list_mutation
from ..frontend.builders import assign, assigned_names, call, clone, constant, is_loop_exit, name, store
from .adjoints import StatementAdjoints
from .replay import AdjointSweep, _walk_statements
from .calls import bind_operands
from ..errors import MissingRuleError
from ..runtime.receivers import COMPLEX
from ..runtime.dynamic import call_forward, method_forward
from ..runtime.operators import operator_forward
from ..runtime.handles import vjp_handles
from ..runtime.pullbacks import call_forward_packed, method_forward_packed
from ..rules.objects import operator_forward_packed
from ..runtime import (
    add_adjoint, add_at, add_attr, added_at, concat, copy_adjoint, getitem_adjoint, iterated, kept, merged, owned,
    pack_like, repeated, repeats_summed, take_part, unbroadcast, unspent, written_part, zero_at, zipped, zeros_like_value,
)
from ..analysis.kinds import operand_kinds
from ..analysis.ranks import Fact, rank_facts
from ..analysis.rank_rules import fact_of
from ..analysis.shapes import may_be_complex, parameter_facts
from .checkpoints import checkpoint_loops
from .tape import Restore, Save, insert_tape, markers_as_comments, unbound_zero_reads


@dataclass
class Gradient:
    program: object
    forward: list  # statements of the forward sweep (tape pushes included)
    backward: list  # statements of the adjoint sweep (after the seed)
    seed: str  # name of the result's adjoint
    adjoints: dict  # parameter name -> name of its adjoint at the end of the sweep
    result_active: bool
    tape: str  # the tape's name in generated code, or None when nothing is recorded
    callees: list  # (function, wrt) of the user functions the generated code calls
    result_is_scalar: bool = False  # the result is known to be a real scalar (see `ranks`): its seed is 1.0
    scalar_adjoints: frozenset = frozenset()  # adjoints of values known to be real scalars


def reverse(program, activity, wrt, scalar_params=(), tape=True, checkpoint=None, specialize=True):
    """Build the forward and adjoint sweeps of `program` with respect to `wrt` (names).

    `scalar_params` names the parameters the caller passes scalars for; the code
    is then specialized on that fact (see `shapes`). With `tape=False` the sweeps keep
    the tape's markers as comments (`# save: x`, `# restore: x`), for showing the
    code before the tape stage. `checkpoint` names a strategy for the outermost loops
    (see `checkpoints`). `specialize=False` finds no rank facts at all (not even of
    literals): for sweeps made only to see what ssad refuses (`pipeline.check`).
    """
    rev = _Reverse(program, activity)
    rev.checkpoint = checkpoint
    given, complex_made = parameter_facts(scalar_params), may_be_complex(program)
    specialize = specialize and not complex_made
    rev.facts = facts = rank_facts(program, given) if specialize else {}
    rev.complex_seen = complex_made or any(not isinstance(i, str) and i[1] == COMPLEX for i in scalar_params)
    rev.real_only = not rev.complex_seen  # see `AdjointSweep.real_only`
    rev.ranks = {n: fact.rank for n, fact in facts.items()}
    rev.integers = {n for n, fact in facts.items() if fact.integer and fact.rank == 0}
    rev.scalars = {n for n, rank in rev.ranks.items() if rank == 0}
    gradient = rev.run(wrt, tape)
    result = program.result
    gradient.result_is_scalar = isinstance(result, gast.Name) and result.id in rev.scalars
    gradient.scalar_adjoints = {rev.adjoint_names[n] for n in rev.scalars if n in rev.adjoint_names}
    return gradient


class _Reverse(AdjointSweep, StatementAdjoints):
    def __init__(self, program, activity):
        super().__init__(program, activity)
        self.containers = self._container_names()
        # Every value's adjoint name is fixed before any rule is inlined, so a rule's
        # local (`d_a`) can never take the name of a parameter's adjoint (`d_a`).
        for primal in program.params + assigned_names(program.body):
            if primal not in self.adjoint_names:
                self.adjoint_names[primal] = self.namer.adjoint_name(primal)
        self.sites = {}  # id(statement) -> Save/Restore pair of that statement
        self.counters = {}  # id(loop) -> name of its trip counter
        self.seen = set(program.params)  # names assigned so far, in the order of the source
        self.loop_depth = 0
        self.calls = {}  # id(statement) -> (saved name, backward name, wrt, [(param, operand)])
        self.callees = []  # (function, wrt) of every user function called with active values
        self.loop_records = {}  # id(outermost loop of the forward sweep) -> (its ANF loop, its trip counter)
        self.adjoint_loops = {}  # id(ANF loop) -> its loop in the adjoint sweep
        self.forward_loops = {}  # id(loop of the forward sweep) -> the ANF loop it came from
        self.unsplit = {}  # id(split call of the forward sweep) -> the ANF statement it came from
        self.checkpoint, self.tape_name = None, None
        self.complex_seen = False  # a complex value made, read or passed in: real inputs' adjoints made real
        self.facts = {}  # name -> what is known of its values (see `ranks`)

    def _container_names(self):
        """Names whose adjoint may be a container (tuple, list, dict, object, closure).

        Their adjoints accumulate with `add_adjoint`; every other adjoint is a number or
        an array and accumulates with `+` (or `+=` in place).
        """
        names = set()
        numeric = set()  # names that operators or NumPy primitives produced
        made = set()  # names a display, a call of the user's or a list helper made: a container there
        copies = []  # (a, b) for each `a = b`: the two hold the same value
        program = self.program
        for statement in _walk_statements(program.body):
            mutation = list_mutation(statement)
            if mutation is not None:
                names.add(mutation[0])
                names |= {a.id for a in mutation[2] if isinstance(a, gast.Name)}
            if not isinstance(statement, gast.Assign):
                continue
            target, value = statement.targets[0], statement.value
            if isinstance(target, gast.Tuple):
                names.add(value.id)
                continue
            if isinstance(target, gast.Subscript):
                names.add(target.value.id)
                continue
            if isinstance(value, gast.Name):
                copies.append((target.id, value.id))
                continue
            op = primitives.operation(value, program)
            if op.kind == primitives.GETITEM or op.kind == primitives.ATTRIBUTE or op.kind == primitives.POP:
                names |= {a.id for a in op.args[:1] if isinstance(a, gast.Name)}
            elif op.kind in (primitives.PACK, primitives.DICT, primitives.CLOSURE, primitives.CONSTRUCT, primitives.PARTIAL):
                names.add(target.id)
                made.add(target.id)
            elif op.kind in (primitives.USER_CALL, primitives.DYNAMIC_CALL, primitives.METHOD_CALL):
                # a callee may return, or take, anything
                names.add(target.id)
                made.add(target.id)
                names |= {a.id for a in op.operands() if isinstance(a, gast.Name)}
            elif op.kind == primitives.PRIMITIVE:
                if _indexed_by_a_key(op):
                    names.add(op.args[_KEYED[op.primitive]].id)  # a dict: an adjoint read by its key
                if op.primitive in _STRUCTURED:
                    # an adjoint helper returns the structure of its first operand (a dict, a
                    # list...): so does the value, in generated code differentiated again
                    names.add(target.id)
                elif op.primitive in _SEQUENCE_PRIMITIVES or op.primitive in _PACKED_CALLS:
                    names.add(target.id)
                    names |= {a.id for a in op.args if isinstance(a, gast.Name)}
                    if op.primitive in _LIST_MAKERS:
                        made.add(target.id)
                elif _returns_one_number_or_array(op.primitive):
                    numeric.add(target.id)
                # any other primitive may return a tuple (np.linalg.slogdet, np.linalg.eigh,
                # np.frexp): indexed or unpacked later, its adjoint is a container
        # A name copied from or into a container may hold one too (a parameter `p` only
        # copied, `a = p; b = p`, then indexed through the copies): its adjoints add up
        # with `add_adjoint`, where `+` would join two tuples.
        grown = True
        while grown:
            grown = False
            for a, b in copies:
                for one, other in ((a, b), (b, a)):
                    if one in names and other not in names:
                        names.add(other)
                        grown = True
        # A name indexed like a container is still an array where an operator made it; one a
        # display made on some path (`t = [a, b]`, later `t = np.array(u) * c`) may be either.
        return names - (numeric - made)

    def run(self, wrt, with_tape=True):
        program = self.program
        body = program.body[:-1]
        forward = self.forward_block(body, depth=0)
        result = program.result
        result_active = self.activity.is_active(result)
        if isinstance(result, gast.Name) and result.id in self.adjoint_names:
            seed = self.adjoint_names[result.id]
        else:  # a constant, or a free name (a global or closure value): never active
            seed = self.namer.fresh("d_result")
        backward = []
        if result_active:
            self.adjoint[result.id] = seed
            backward = self.backward_block(body, depth=0)
        for param in wrt:
            if param not in self.adjoint:
                self.materialize_zero(param, backward)
            elif result_active and self.complex_seen and param not in self.containers:  # a real input's is real,
                adjoint = self.adjoint[param]  # for a derivative of the gradient too (docs/conventions.md)
                backward.append(assign(adjoint, call(self.helper("unbroadcast", unbroadcast), name(adjoint), name(param))))
        adjoints = {param: self.adjoint[param] for param in wrt}
        if not with_tape:
            forward, backward = mirror.strip(markers_as_comments(forward)), mirror.strip(markers_as_comments(backward))
            return Gradient(program, forward, backward, seed, adjoints, result_active, None, self.callees)
        forward, backward, tape = insert_tape(self, forward, backward)
        self.tape_name = tape
        forward = unbound_zero_reads(forward + backward, program.params, program.namespace) + forward
        if mirror.ENABLED:
            mirror.check(program, forward, backward, tape, self.scalars)
            forward, backward = mirror.strip(forward), mirror.strip(backward)
        if self.checkpoint is not None and tape is not None:
            forward, backward = checkpoint_loops(self, forward, backward, self.checkpoint)
        return Gradient(program, forward, backward, seed, adjoints, result_active, tape, self.callees)

    # ----- the forward sweep -----

    def site(self, statement, names, depth, write=None, header=False):
        """The Save/Restore pair for a statement that overwrites `names` (or writes in place).

        Only names that may hold a value there are kept: inside a loop, a name holds
        the previous iteration's value; elsewhere only a name assigned earlier does.
        A loop's own variable is restored by the backward loop itself, so for it only
        a value from before the loop counts.
        """
        key = id(statement)
        if key not in self.sites:
            if write is None:
                names = [n for n in names if n in self.seen or (self.loop_depth and not header)]
            self.sites[key] = (Save(names, depth, write), Restore(names, depth, write))
        return self.sites[key]

    def forward_block(self, statements, depth):
        out = []
        for statement in statements:
            if is_loop_exit(statement):
                out.append(statement)  # the end of an iteration: no adjoint, no markers
                continue
            out += mirror.marks("pre", id(statement))
            self.forward_statement(statement, depth, out)
            out += mirror.marks("post", id(statement))
        return out

    def forward_statement(self, statement, depth, out):
        if isinstance(statement, gast.Assign):
            original = statement  # the adjoint sweep finds its site by the ANF statement
            statement = self.split_call(statement)
            target = statement.targets[0]
            if isinstance(target, gast.Subscript):
                out.extend(self.kept_length(original))
                save, _ = self.site(original, [target.value.id], depth, write=target)
                out.append(save)
            elif depth:
                save, _ = self.site(original, assigned_names([target]), depth)
                out.append(save)
            self.seen.update(assigned_names([target]))
            out.append(statement)
        elif isinstance(statement, gast.If):
            body = self.forward_block(statement.body, depth + 1)
            orelse = self.forward_block(statement.orelse, depth + 1)
            out.append(gast.If(test=statement.test, body=body, orelse=orelse))
            gast.copy_location(out[-1], statement)
        elif isinstance(statement, (gast.For, gast.While)):
            out.extend(self.forward_loop(statement, depth))
        elif isinstance(statement, gast.Expr):
            out.append(statement)

    def split_call(self, statement):
        """`t = g(a)` with active operands becomes `t, t_saved = forward_g(a)` (see `calls`)."""
        target = statement.targets[0]
        if not isinstance(target, gast.Name) or not isinstance(statement.value, (gast.Call, gast.BinOp, gast.UnaryOp,
                                                                                 gast.Subscript)):
            return statement
        op = primitives.operation(statement.value, self.program)
        if op.kind in (primitives.DYNAMIC_CALL, primitives.METHOD_CALL):
            return self.split_dynamic_call(statement, op)
        if op.kind != primitives.USER_CALL or not self.activity.is_active(target):
            return statement
        bound = bind_operands(op, self.program, statement)
        order = list(inspect.signature(op.primitive).parameters)
        active = sorted(
            {p[0] if isinstance(p, tuple) else p for p, operand in bound if self.activity.is_active(operand)},
            key=order.index,
        )
        if not active:
            return statement
        wrt = tuple(active)
        # the shape facts of the operands, so the callee's code is specialized as the caller's
        facts = frozenset(
            (p, fact) for p, operand in bound
            if isinstance(p, str) and isinstance(fact := fact_of(operand, self.facts), Fact)
        ) | operand_kinds(bound, self.program)  # and which hold objects of the user's
        forward, backward = vjp_handles(op.primitive, wrt, facts)
        try:
            forward.prepare()  # this code keeps the callee's code of now, whatever is registered later
        except MissingRuleError as error:
            if error.filename is not None:
                raise
            raise MissingRuleError(error.message, *self.program.parsed.where(statement)) from None
        self.callees.append((op.primitive, wrt))
        saved = self.namer.fresh(f"{target.id}_saved")
        self.calls[id(statement)] = (saved, self.helper(backward.__name__, backward), wrt, bound)
        call = clone(statement.value)
        call.func = name(self.helper(forward.__name__, forward))
        split = gast.Assign(
            targets=[gast.Tuple(elts=[store(target.id), store(saved)], ctx=gast.Store())], value=call, type_comment=None
        )
        self.unsplit[id(split)] = statement
        return gast.copy_location(split, statement)

    def split_dynamic_call(self, statement, op):
        """`t = f(a)` on a function value becomes `t, t_pullback = call_forward(f, a)` (see `dynamic`)."""
        target = statement.targets[0]
        if not self.activity.is_active(target) or not any(self.activity.is_active(a) for a in op.operands()):
            return statement
        pullback = self.namer.fresh(f"{target.id}_pullback")
        if op.kind == primitives.DYNAMIC_CALL:
            helper = self.helper("call_forward", call_forward)
            args = clone(op.args)
        else:  # a method, or an operator (`op.primitive`) of an object: `u * x` calls u.__mul__
            helper = self.helper(*(("operator_forward", operator_forward) if op.primitive is not None
                                   else ("method_forward", method_forward)))
            args = [clone(op.args[0]), constant(op.keys[0])] + clone(op.args[1:])
        self.calls[id(statement)] = ("dynamic", pullback, op.args, op.keywords)
        keywords = [gast.keyword(arg=k, value=clone(v)) for k, v in op.keywords.items()]
        forward_call = gast.Call(func=name(helper), args=args, keywords=keywords)
        split = gast.Assign(
            targets=[gast.Tuple(elts=[store(target.id), store(pullback)], ctx=gast.Store())],
            value=forward_call,
            type_comment=None,
        )
        self.unsplit[id(split)] = statement
        return gast.copy_location(split, statement)

    def forward_loop(self, loop, depth):
        out = []
        counted = isinstance(loop, gast.While) or (loop.body and is_loop_exit(loop.body[-1]))
        if isinstance(loop, gast.For):
            save, _ = self.site(loop, [loop.target.id], depth, header=True)
            out.append(save)
            self.seen.add(loop.target.id)
        self.loop_depth += 1
        body = self.forward_block(loop.body, depth + 1)
        self.loop_depth -= 1
        if counted:
            counter = self.namer.fresh("trips")
            self.counters[id(loop)] = counter
            start = gast.copy_location(assign(counter, constant(0)), loop)
            if self.loop_depth:
                save, _ = self.site(start, [counter], depth)
                out.append(save)
            self.seen.add(counter)
            self.sites[("start", id(loop))] = start
            out.append(start)
            step = gast.copy_location(
                assign(counter, gast.BinOp(left=name(counter), op=gast.Add(), right=constant(1))), loop
            )
            body = [step] + body
        if mirror.ENABLED:  # the iteration ends before its `if stop: break`
            cut = len(body) - 1 if body and is_loop_exit(body[-1]) else len(body)
            body = mirror.marks("start", id(loop)) + body[:cut] + mirror.marks("end", id(loop)) + body[cut:]
        if isinstance(loop, gast.For):
            new = gast.For(target=loop.target, iter=loop.iter, body=body, orelse=[], type_comment=None)
        else:
            new = gast.While(test=loop.test, body=body, orelse=[])
        out.append(gast.copy_location(new, loop))
        self.forward_loops[id(new)] = loop
        if not self.loop_depth:
            self.loop_records[id(new)] = (loop, self.counters.get(id(loop)))
        return out

    # ----- the adjoint sweep -----


def _returns_one_number_or_array(primitive):
    """A primitive whose result is never a tuple: a one-output ufunc, an operator, a `math` function."""
    if isinstance(primitive, np.ufunc):
        return primitive.nout == 1
    return getattr(primitive, "__module__", None) in ("_operator", "operator", "math")


_SEQUENCE_PRIMITIVES = {list, tuple, sum, concat, repeated, repeats_summed, np.array, np.stack, np.concatenate, np.hstack, np.vstack, sorted,
                        iterated, zipped, merged}
# Of those, the ones that make a list or a tuple (never an array).
_LIST_MAKERS = {list, tuple, concat, repeated, repeats_summed, sorted, iterated, zipped, merged}
# Primitives whose operands and value may be containers or function values: the items
# and values of a dict, and calls through function values read again (`pullbacks`).
_PACKED_CALLS = {dict.items, dict.values, call_forward_packed, method_forward_packed, operator_forward_packed}
# Run-time adjoint helpers that index an operand (at this position) with the next argument.
_KEYED = {take_part: 0, written_part: 0, zero_at: 0, add_at: 0, added_at: 0, getitem_adjoint: 1, kept: 1}


def _indexed_by_a_key(op):
    """Whether `op` is a helper of `_KEYED` reading its operand by a string key, as in a dict."""
    try:
        position = _KEYED.get(op.primitive)
    except TypeError:  # an unhashable callable: not one of them
        return False
    if position is None or len(op.args) < position + 2:
        return False
    operand, key = op.args[position], op.args[position + 1]
    return isinstance(operand, gast.Name) and isinstance(key, gast.Constant) and isinstance(key.value, str)


# Run-time adjoint helpers whose result has the structure of their first operand.
_STRUCTURED = {
    copy_adjoint, zero_at, add_at, added_at, add_adjoint, zeros_like_value, getitem_adjoint, pack_like, add_attr,
    owned, unspent,
}
