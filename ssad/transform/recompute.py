"""Recomputing instead of recording: cheap loop values the adjoint sweep makes again.

The tape records a value a loop overwrites when the adjoint sweep reads it (see
`tape`). For some values recording costs more than computing them again: an
element or row read from an array the function never changes (`x_i = x[i]`), and
integer arithmetic on loop indices (`i_minus_1 = i - 1`). The adjoint loop replays
the loop's indices (`for i in reversed(range_n)`), so it can make such a value
again at the top of each iteration, exactly as the forward sweep made it, and the
tape records nothing for it.

A statement `t = value` at the top level of a `for` loop's body is recomputed when:

- t is assigned by this statement alone, and the body reads t only after it (a value
  carried from the previous iteration is not recomputable);
- every statement before it in the body runs in every iteration (assignments,
  markers and calls as statements: no `if`, loop or jump before it);
- value is `a[index]`, with `a` a *stable* array and every part of the index a
  loop index of an enclosing loop, an integer constant, a stable name, a slice of
  those or a name recomputed before it; or value is `+ - * // %` of loop indices,
  integer constants and integers recomputed before it; or t is known to be a real
  scalar (`analysis.ranks`) and value is `+ - * / **`, negation or a pure one-output
  NumPy ufunc (`np.sin`) of names recomputed before it, loop indices, stable names and
  numbers, one of them at least a loop index or recomputed: for a number, computing it again costs what recording it costs, and a
  forward loop all of whose values are made again is left computing only the value,
  which dead-code elimination then drops.

A name is stable when nothing can change it between the forward and adjoint sweeps:
it is never assigned inside a loop and at most once outside, nothing writes into it
or into anything sharing its memory, and it is read only by subscripts, attributes,
and pure registered primitives (never passed to a function that could change it).

Only the recomputations the adjoint sweep reads are inserted; the tape's liveness
analysis then finds the pushes of those names unneeded. The mirror checker
(`mirror`) verifies the result like every other read of the adjoint sweep.
"""


import gast
import numpy as np

from ..frontend import primitives
from ..frontend.builders import clone, is_marker, walk
from ..errors import SsadError
from ..registry import REGISTRY
from ..analysis.rank_rules import Fact
from .liveness import Restore, Save, _all_statements

_INTEGER_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def insert_recomputations(rev, forward, backward):
    """Insert, at the top of each adjoint loop, the recomputable values its body reads."""
    program = rev.program
    stable = _stable_names(program, forward)
    counts = _store_counts(forward)
    for loop, targets in _for_loops(forward, []):
        targets = [t for t in targets if counts.get(t) == 1]
        header = rev.adjoint_loops.get(id(rev.forward_loops.get(id(loop))))
        if header is None:
            continue
        found = _recomputable(loop, targets, stable, counts, program, rev.facts)
        if not found:
            continue
        needed = _needed(found, header.body)
        if not needed:
            continue
        lead = 0
        while lead < len(header.body) and is_marker(header.body[lead]):
            lead += 1
        made = [clone(statement) for statement in found if statement.targets[0].id in needed]
        header.body[lead:lead] = made
    return forward, backward


def _for_loops(block, targets):
    for statement in block:
        if isinstance(statement, (Save, Restore)):
            continue
        if isinstance(statement, gast.For):
            inner = targets + ([statement.target.id] if isinstance(statement.target, gast.Name) else [])
            yield statement, inner
            yield from _for_loops(statement.body, inner)
        elif isinstance(statement, gast.While):
            yield from _for_loops(statement.body, targets)
        elif isinstance(statement, gast.If):
            yield from _for_loops(statement.body, targets)
            yield from _for_loops(statement.orelse, targets)


def _store_counts(forward):
    counts = {}
    for statement in _all_statements(forward):
        if isinstance(statement, (Save, Restore)):
            continue
        for node in walk(statement) if not isinstance(statement, (gast.For, gast.While, gast.If)) else _heads(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _heads(statement):
    """The nodes of a compound statement outside its blocks (a `for` target, a test)."""
    if isinstance(statement, gast.For):
        return list(walk(statement.target)) + list(walk(statement.iter))
    return list(walk(statement.test))


def _stable_names(program, forward):
    """Names nothing changes between the sweeps (see the module docstring)."""
    in_loops, outside, changed = set(), {}, set()

    def visit(block, depth):
        for statement in block:
            if isinstance(statement, (Save, Restore)) or is_marker(statement):
                continue
            if isinstance(statement, (gast.For, gast.While)):
                if isinstance(statement, gast.For):
                    in_loops.update(n.id for n in walk(statement.target) if isinstance(n, gast.Name))
                visit(statement.body, depth + 1)
                continue
            if isinstance(statement, gast.If):
                visit(statement.body, depth)
                visit(statement.orelse, depth)
                continue
            if isinstance(statement, gast.Assign):
                target = statement.targets[0]
                if isinstance(target, gast.Subscript):
                    changed.update(n.id for n in walk(target.value) if isinstance(n, gast.Name))
                stored = [n.id for t in statement.targets for n in walk(t)
                          if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
                for n in stored:
                    if depth:
                        in_loops.add(n)
                    else:
                        outside[n] = outside.get(n, 0) + 1
                if not isinstance(target, gast.Subscript) and _only_reads(statement.value, program):
                    continue
            # any other use: every name it loads may be changed by it
            changed.update(n.id for n in walk(statement) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))

    visit(forward, 0)
    changed |= {other for n in changed for other in program.shares.get(n, ())}
    names = set(program.params) | set(outside)
    return {n for n in names if n not in in_loops and outside.get(n, 0) <= (0 if n in program.params else 1)
            and n not in changed}


def _only_reads(value, program):
    """Whether an assignment's value only reads its operands (never changes or keeps them)."""
    if isinstance(value, gast.Name):
        return value.id in program.namespace.values  # a local copied: a second name for one array
    if isinstance(value, (gast.Constant, gast.Subscript, gast.Attribute, gast.Compare, gast.BinOp, gast.UnaryOp)):
        return True
    if not isinstance(value, gast.Call) or any(k.arg == "out" or k.arg is None for k in value.keywords):
        return False
    if isinstance(value.func, gast.Attribute) and not primitives.is_static(value.func, program):
        method = getattr(np.ndarray, value.func.attr, None)  # `x.sum()`: an array's method
        return method is not None and REGISTRY.is_primitive(method) and REGISTRY.is_pure(method)
    if not primitives.is_static(value.func, program):
        return False
    try:
        callee = primitives.static_value(value.func, program)
    except SsadError:
        return False
    if hasattr(callee, "resolve"):  # a generated half of a call: it may keep its operands
        return False
    try:
        return REGISTRY.is_primitive(callee) and REGISTRY.is_pure(callee)
    except TypeError:  # not hashable: not a registered primitive
        return False


def _is_scalar(fact):
    return isinstance(fact, Fact) and fact.rank == 0


def _recomputable(loop, targets, stable, counts, program, facts):
    """The top-level statements of `loop`'s body that the adjoint loop can make again."""
    found, integers, names = [], set(targets), set()
    read_before = set()
    for statement in loop.body:
        if isinstance(statement, (Save, Restore)) or is_marker(statement):
            continue
        if isinstance(statement, gast.Assign) and len(statement.targets) == 1 and isinstance(
            statement.targets[0], gast.Name
        ):
            target = statement.targets[0].id
            value = statement.value
            if counts.get(target) == 1 and target not in read_before and target not in targets:
                kind = _kind(value, integers, names, stable, program, _is_scalar(facts.get(target)))
                if kind is not None:
                    found.append(statement)
                    names.add(target)
                    if kind == "integer":
                        integers.add(target)
            read_before |= {n.id for n in walk(statement) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
            continue
        if isinstance(statement, gast.Expr):
            read_before |= {n.id for n in walk(statement) if isinstance(n, gast.Name)}
            continue
        break  # an `if`, a loop or a jump: later statements may not run in every iteration
    return found


def _kind(value, integers, names, stable, program, scalar=False):
    """"integer", "read" or "scalar" when `value` is recomputable, else None; `scalar`: the
    value is known to be a real scalar (see `analysis.ranks`)."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, _INTEGER_OPERATORS):
        operands = (value.left, value.right)
        if all(_is_integer(o, integers) for o in operands):
            return "integer"
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        base = value.value.id
        if base in program.namespace.values or not (base in stable or base in names):
            return None
        if all(_index_part(p, integers, names, stable) for p in _parts(value.slice)):
            return "read"
        return None
    if scalar and _scalar_operation(value, names | integers, stable, program):
        return "scalar"
    return None


_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)


def _scalar_operation(value, names, stable, program):
    """Whether `value` is arithmetic or a pure ufunc (`np.sin`) of recomputed names, stable
    names and numbers: with a scalar result, as cheap to make again as to record."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, _ARITHMETIC):
        operands = [value.left, value.right]
    elif isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
        operands = [value.operand]
    elif isinstance(value, gast.Call) and not value.keywords and primitives.is_static(value.func, program):
        try:
            callee = primitives.static_value(value.func, program)
        except SsadError:
            return False
        if not (isinstance(callee, np.ufunc) and callee.nout == 1 and callee.signature is None
                and REGISTRY.is_pure(callee)):
            return False
        operands = value.args
    else:
        return False
    # one operand at least changes with the iteration: a value the same in every iteration
    # is not recorded per iteration anyway (see `tape`)
    return any(isinstance(o, gast.Name) and o.id in names for o in operands) and all(
        (isinstance(o, gast.Name) and (o.id in names or o.id in stable))
        or (isinstance(o, gast.Constant) and isinstance(o.value, (int, float)) and not isinstance(o.value, bool))
        for o in operands
    )


def _is_integer(expr, integers):
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, int) and not isinstance(expr.value, bool)
    return isinstance(expr, gast.Name) and expr.id in integers


def _parts(index):
    return index.elts if isinstance(index, gast.Tuple) else [index]


def _index_part(part, integers, names, stable):
    if isinstance(part, gast.Slice):
        return all(b is None or _index_part(b, integers, names, stable) for b in (part.lower, part.upper, part.step))
    if isinstance(part, gast.Constant):
        return isinstance(part.value, int) and not isinstance(part.value, bool)
    return isinstance(part, gast.Name) and (part.id in integers or part.id in names or part.id in stable)


def _needed(found, body):
    """The recomputed names the adjoint loop's body reads, and those they read in turn."""
    reads = {
        n.id for statement in _all_statements(body) if not isinstance(statement, (Save, Restore))
        for n in walk(statement) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
    needed = set()
    for statement in reversed(found):
        target = statement.targets[0].id
        if target in reads or target in needed:
            needed.add(target)
            reads |= {n.id for n in walk(statement.value) if isinstance(n, gast.Name)}
    return needed
