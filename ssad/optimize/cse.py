"""Common subexpressions, a pass between A-normal form and activity: compute each value once.

Assumes: a Program in A-normal form (stage 3), whose top level assigns each name
once. Guarantees: a top-level `b = <value>` whose value is the same pure
computation on the same unchanged operands as an earlier `a = <value>` is
dropped, and every later read of `b` reads `a`. So a function that writes
`V[positives]` twice gathers it once, and its gradient scatters into `V` once.

Only values that are certainly pure and deterministic qualify: a subscript, an
operator, or a NumPy or `math` function with an adjoint rule, applied to names
that never change (parameters and names assigned once at the top level, never
written into, appended to or rebound by a loop) and to literals. Functions that
write into arrays in place are left as they are, so no merged name can alias a
written array.

Inside a loop body or a branch (`_in_blocks`), a straight run of statements is
treated the same way: `b = <value>` reuses an earlier `a = <value>` of the same run
when a and b are each assigned once in the whole function, and the statements
between them assign none of the value's operands, read no b, and call nothing but
pure primitives. So `x[i] * np.sin(x[i])` reads `x[i]` once per iteration, and its
gradient is the `2 * x`-style form a person would write.
"""


import gast

from ..frontend import primitives
from ..frontend.naming import RenameLoads
from ..registry import REGISTRY
from ..frontend.builders import walk



def eliminate_common_subexpressions(program):
    """`program` with repeated pure top-level computations reusing the first result."""
    if program.writes_in_place:
        return program
    stores, changed = _stores(program.body)
    seen = {}
    renamed = {}
    body = []
    # A name holds one value throughout when nothing assigns it (parameters, globals),
    # or when its one assignment is at the top level (and has run by the time it is read).
    stable = {n for n in _loaded(program.body) if stores.get(n, 0) == 0} - changed
    for statement in program.body:
        statement = RenameLoads(renamed).visit(statement)
        key = _key(statement, program, stable)
        if isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name):
            target = statement.targets[0].id
            if stores.get(target) == 1 and target not in changed and target not in program.params:
                stable.add(target)
            elif key is not None:  # a name assigned again later cannot stand for the first one
                key = None
        if key is not None:
            target = statement.targets[0].id
            if key in seen:
                renamed[target] = seen[key]
                continue
            seen[key] = target
        body.append(statement)
    program.node.body = body
    _in_blocks(program, body, stores, _stores(body, loops=False)[1], renamed)
    if renamed:
        program.node.body = [RenameLoads(renamed).visit(statement) for statement in program.node.body]
    if isinstance(program.result, gast.Name) and program.result.id in renamed:
        program.result = gast.Name(id=renamed[program.result.id], ctx=gast.Load(), annotation=None, type_comment=None)
    return program


def _key(statement, program, stable):
    """A hashable description of a reusable top-level computation, or None."""
    if not (isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name)):
        return None
    value = statement.value
    op = primitives.operation(value, program)
    if op.kind == primitives.GETITEM:
        operands = [n.id for n in walk(value) if isinstance(n, gast.Name)]
    elif op.kind == primitives.PRIMITIVE and _is_pure(op.primitive):
        # the callee's own path (np.linalg.norm) is static; its operands must not change
        operands = [n.id for a in op.operands() for n in walk(a) if isinstance(n, gast.Name)]
    else:
        return None
    if not all(name in stable for name in operands):
        return None
    return gast.dump(value)


def _in_blocks(program, block, stores, changed, renamed):
    """Merge repeated computations within each straight run of nested blocks (see the module
    docstring); the merged names go to `renamed`."""
    for statement in block:
        if isinstance(statement, (gast.For, gast.While)):
            statement.body = _merge_run(program, statement.body, stores, changed, renamed)
            _in_blocks(program, statement.body, stores, changed, renamed)
        elif isinstance(statement, gast.If):
            statement.body = _merge_run(program, statement.body, stores, changed, renamed)
            statement.orelse = _merge_run(program, statement.orelse, stores, changed, renamed)
            _in_blocks(program, statement.body, stores, changed, renamed)
            _in_blocks(program, statement.orelse, stores, changed, renamed)


def _merge_run(program, block, stores, changed, renamed):
    seen = {}  # key -> (first target, the operands it reads)
    out = []
    for statement in block:
        statement = RenameLoads(renamed).visit(statement)
        if not isinstance(statement, gast.Assign) or not isinstance(statement.targets[0], gast.Name):
            seen.clear()  # a compound statement, a write, an effect: start a new run
            out.append(statement)
            continue
        target = statement.targets[0].id
        op = primitives.operation(statement.value, program)
        pure = op.kind in (primitives.GETITEM, primitives.CONSTANT, primitives.COPY, primitives.INACTIVE) or (
            op.kind == primitives.PRIMITIVE and _is_pure(op.primitive)
        )
        if not pure:
            seen.clear()
            out.append(statement)
            continue
        operands = {n.id for n in walk(statement.value) if isinstance(n, gast.Name)}
        once = stores.get(target) == 1 and target not in changed and target not in program.params
        key = gast.dump(statement.value) if once and not operands & changed and op.kind != primitives.COPY else None
        if key is not None and key in seen:
            renamed[target] = seen[key][0]
            continue
        # an assignment ends every earlier entry that reads what it assigns
        seen = {k: v for k, v in seen.items() if target not in v[1] and target != v[0]}
        if key is not None and target not in operands:
            seen[key] = (target, operands)
        out.append(statement)
    return out


def _loaded(block):
    return {n.id for s in block for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _is_pure(primitive):
    return primitive is not None and REGISTRY.adjoint_rule(primitive) is not None and REGISTRY.is_pure(primitive)


def _stores(block, loops=True):
    """(plain assignments per name, names changed any other way) anywhere in `block`; with
    `loops=False`, a `for` loop's own variable does not count as changed."""
    stores, changed = {}, set()
    for node in (n for statement in block for n in walk(statement)):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    stores[target.id] = stores.get(target.id, 0) + 1
                else:
                    changed.update(n.id for n in walk(target) if isinstance(n, gast.Name))
        elif isinstance(node, gast.AugAssign) or (loops and isinstance(node, gast.For)):
            changed.update(n.id for n in walk(node.target) if isinstance(n, gast.Name))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and isinstance(
            node.func.value, gast.Name
        ) and node.func.attr in ("append", "extend", "insert", "pop", "push", "update", "clear", "remove"):
            changed.add(node.func.value.id)
    return stores, changed


