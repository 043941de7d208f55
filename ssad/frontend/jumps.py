"""Stage 2b, jumps: `break`, `continue` and early `return` become flags and guards.

Assumes: a fenced function (stage 2), before A-normal form.
Guarantees: afterwards the body has exactly one `return`, the last statement, and
the only `break` left in a loop is `if stop_k: break` as the loop body's last
statement; no `continue` remains. So every statement of a block either runs to
the end of the block or is inside an `if` — the structure the tape replays:

    for i in r:                          stop_1 = False
        a = f(i)                         for i in r:
        if a > 0:                            skip_1 = False
            continue            ->           a = f(i)
        s = s + a                            if a > 0:
                                                 skip_1 = True
                                             if not skip_1:
                                                 s = s + a

`break` sets both flags (`skip_k`, `stop_k`); `return v` assigns the result,
sets `returned` and both flags of every enclosing loop. A loop's `else` clause
follows the loop, under `if not stop_k` when the loop can be left early. The rest of a block after
a statement that may jump runs under `if not skip_k` (inside loop k) or
`if not returned` (at function level). Functions without jumps are unchanged.
"""

from dataclasses import dataclass, field

import gast

from .builders import name as _name
from .builders import store as _store


@dataclass
class _Loop:
    skip: str
    stop: str
    uses_skip: bool = False
    uses_stop: bool = False


@dataclass
class _Context:
    namer: object
    loops: list = field(default_factory=list)
    result: str = None
    returned: str = None



def _set(identifier, value, origin):
    statement = gast.Assign(targets=[_store(identifier)], value=gast.Constant(value=value, kind=None), type_comment=None)
    return gast.copy_location(statement, origin)


def _contains(statements, kinds, into_loops):
    for statement in statements:
        for node in _walk(statement, into_loops):
            if isinstance(node, kinds):
                return True
    return False


def _walk(node, into_loops):
    """gast.walk that does not descend into nested functions, nor loops unless `into_loops`."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in gast.iter_child_nodes(current):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                continue
            if not into_loops and isinstance(child, (gast.For, gast.While)):
                continue
            stack.append(child)


def _own_nodes(node):
    """The nodes of a function's body, not those of functions nested in it."""
    for statement in node.body:
        yield from _walk(statement, into_loops=True)


def needs_lowering(node):
    body = node.body
    returns = [n for n in _own_nodes(node) if isinstance(n, gast.Return)]
    early_return = len(returns) > 1 or (returns and returns[0] is not body[-1])
    jumps = any(isinstance(n, (gast.Break, gast.Continue)) for n in _own_nodes(node))
    loop_else = any(isinstance(n, (gast.For, gast.While)) and n.orelse for n in _own_nodes(node))
    return early_return or jumps or loop_else


def lower_jumps(node, namer):
    """Rewrite `node` (a gast.FunctionDef) in place; see the module docstring.

    Returns the name early returns assign the result to, or None when there is none.
    Nothing runs after that assignment but the final `return`.
    """
    if not needs_lowering(node):
        return None
    context = _Context(namer)
    body = list(node.body)
    returns = [n for n in _own_nodes(node) if isinstance(n, gast.Return)]
    if len(returns) > 1 or (returns and returns[0] is not body[-1]):
        context.result = namer.fresh("result")
        context.returned = namer.fresh("returned")
        first = body[0]
        prologue = [_set(context.result, None, first), _set(context.returned, False, first)]
        lowered, _ = _block(body, context)
        node.body = prologue + lowered + [gast.copy_location(gast.Return(value=_name(context.result)), body[-1])]
    else:
        lowered, _ = _block(body[:-1], context)
        node.body = lowered + [body[-1]]
    return context.result


def _guard_flag(context):
    return context.loops[-1].skip if context.loops else context.returned


def _block(statements, context):
    """Lower a block; returns (statements, whether it may jump out of the block)."""
    out = []
    for position, statement in enumerate(statements):
        lowered, jumps = _statement(statement, context)
        out.extend(lowered)
        if jumps:
            rest = statements[position + 1 :]
            # After a jump statement itself the rest of the block is dead code.
            if rest and not isinstance(statement, (gast.Break, gast.Continue, gast.Return)):
                guarded, _ = _block(rest, context)
                flag = _guard_flag(context)
                if context.loops:
                    context.loops[-1].uses_skip = True
                test = gast.UnaryOp(op=gast.Not(), operand=_name(flag))
                out.append(gast.copy_location(gast.If(test=test, body=guarded, orelse=[]), rest[0]))
            return out, True
    return out, False


def _statement(statement, context):
    if isinstance(statement, gast.Return):
        out = [gast.copy_location(
            gast.Assign(targets=[_store(context.result)], value=statement.value, type_comment=None), statement
        ), _set(context.returned, True, statement)]
        for loop in context.loops:
            loop.uses_skip = loop.uses_stop = True
            out += [_set(loop.skip, True, statement), _set(loop.stop, True, statement)]
        return out, True
    if isinstance(statement, gast.Continue):
        loop = context.loops[-1]
        loop.uses_skip = True
        return [_set(loop.skip, True, statement)], True
    if isinstance(statement, gast.Break):
        loop = context.loops[-1]
        loop.uses_skip = loop.uses_stop = True
        return [_set(loop.skip, True, statement), _set(loop.stop, True, statement)], True
    if isinstance(statement, gast.If):
        body, body_jumps = _block(statement.body, context)
        orelse, else_jumps = _block(statement.orelse, context)
        statement.body = body or [gast.copy_location(gast.Pass(), statement)]
        statement.orelse = orelse
        return [statement], body_jumps or else_jumps
    if isinstance(statement, (gast.For, gast.While)):
        return _loop(statement, context)
    return [statement], False


def _loop(statement, context):
    loop = _Loop(context.namer.fresh("skip"), context.namer.fresh("stop"))
    may_return = context.returned is not None and _contains(statement.body, gast.Return, into_loops=True)
    orelse, statement.orelse = statement.orelse, []
    context.loops.append(loop)
    body, _ = _block(statement.body, context)
    context.loops.pop()
    if orelse:  # runs when the loop ends without `break` (or `return`): when `stop_k` is still False
        lowered, else_jumps = _block(orelse, context)
        after = _lowered_loop(statement, loop, body)
        if loop.uses_stop:
            test = gast.UnaryOp(op=gast.Not(), operand=_name(loop.stop))
            lowered = [gast.copy_location(gast.If(test=test, body=lowered, orelse=[]), orelse[0])]
        return after + lowered, may_return or else_jumps
    return _lowered_loop(statement, loop, body), may_return


def _lowered_loop(statement, loop, body):
    """The loop with its flags set and tested; the statements that replace it."""
    prologue = []
    if loop.uses_skip:
        body = [_set(loop.skip, False, statement)] + body
    if loop.uses_stop:
        prologue.append(_set(loop.stop, False, statement))
        exit_test = gast.copy_location(
            gast.If(test=_name(loop.stop), body=[gast.copy_location(gast.Break(), statement)], orelse=[]), statement
        )
        body = body + [exit_test]
    statement.body = body
    return prologue + [statement]
