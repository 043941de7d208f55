"""Values a loop first binds, recorded after each assignment: one type per stack.

The NumPy code records a value before the statement that overwrites it (`tape.push(h)`
then `h = ...`), and binds a name a loop first assigns to `None` so that the first push
has something to record. Numba types such a stack as holding optional arrays, which its
NumPy functions refuse. `record_after_assignment` rewrites those names in the lowered
code (see `lower`) so their stacks hold values of one type.
"""

import ast


def record_after_assignment(tree, tapes, shape_only_name, named, lines, rewritten):
    """Rewrite, in `rewritten`, each name bound to `None` before its first push (the tape's
    prologue) whose every push comes just before an assignment of it, and which nothing
    else assigns but its pops: the push moves after the assignment, `v = tape.pop()` becomes a pop and a read of the new top, and the
    `None` goes.

    Both keep one invariant: the stack as the tape kept it, then the current value, is
    `None` followed by the stack as rewritten. So a pop leaves the same value in `v`, but
    for the last, which leaves the value `v` had (never read: `v` was the placeholder).
    """

    def pushed(statement):
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return None
        call = statement.value
        if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                and call.func.value.id in tapes and call.func.attr == "push" and len(call.args) == 1):
            return None
        value = call.args[0]
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == shape_only_name and value.args):
            value = value.args[0]
        return value.id if isinstance(value, ast.Name) else None

    def popped(statement):
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Attribute)
                and isinstance(statement.value.func.value, ast.Name)
                and statement.value.func.value.id in tapes and statement.value.func.attr == "pop"):
            return statement.targets[0].id
        return None

    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        placeholders = {}
        for statement in function.body:
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Constant)
                    and statement.value.value is None):
                placeholders.setdefault(statement.targets[0].id, statement.lineno)
        pushes, pops, fit = {}, {}, set(placeholders)
        for node in ast.walk(function):
            for field in ("body", "orelse"):
                body = getattr(node, field, None)
                if not isinstance(body, list):
                    continue
                for k, statement in enumerate(body):
                    name = pushed(statement)
                    if name in fit:
                        after = body[k + 1] if k + 1 < len(body) else None
                        if (isinstance(after, ast.Assign) and len(after.targets) == 1
                                and isinstance(after.targets[0], ast.Name) and after.targets[0].id == name
                                and after.lineno == after.end_lineno and statement.lineno == statement.end_lineno
                                and sum(1 for s in body if s.lineno == after.lineno) == 1):
                            pushes.setdefault(name, []).append((statement.lineno, after.lineno))
                        else:
                            fit.discard(name)
                    name = popped(statement)
                    if name in fit:
                        pops.setdefault(name, []).append(statement.lineno)
        # a name popped in another function of the module (a vjp's backward half) keeps
        # the tape's order: that function is not rewritten with this one
        elsewhere = {popped(s) for other in ast.walk(tree) if isinstance(other, ast.FunctionDef) and other is not function
                     for s in ast.walk(other) if isinstance(s, ast.stmt)}
        # a name also changed between its pushes (a trip counter: `trips = 0` recorded, then
        # `trips = trips + 1` in the loop) would be recorded with the value it had too early
        stores = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores.setdefault(node.id, set()).add(node.lineno)
        for name in list(fit & set(pushes)):
            recorded = {placeholders[name], *pops.get(name, []), *(line for _, line in pushes[name])}
            if stores.get(name, set()) - recorded:
                fit.discard(name)
        for name in sorted((fit & set(pushes)) - elsewhere):
            stack = named[name]
            line = lines[placeholders[name] - 1]
            rewritten[placeholders[name]] = line[: len(line) - len(line.lstrip())] + "pass"
            for push, assignment in pushes[name]:
                line = lines[push - 1]
                rewritten[push] = line[: len(line) - len(line.lstrip())] + "pass"
                rewritten[assignment] = f"{rewritten.get(assignment, lines[assignment - 1])}; {stack}.append({name})"
            for pop in pops.get(name, []):
                line = lines[pop - 1]
                indent = line[: len(line) - len(line.lstrip())]
                rewritten[pop] = f"{indent}{stack}.pop(); {name} = {stack}[-1] if len({stack}) else {name}"
