"""Stage 4, activity: which values need adjoint code.

Assumes: a Program in A-normal form (stage 3) and the names of the parameters
being differentiated.
Guarantees: `Activity.active` holds exactly the names that both depend on a
differentiated input through differentiable operations ("varied") and reach the
returned value through differentiable operations ("useful"). Integers produced by
non-differentiable primitives (shapes, indices, comparisons, `range`), values of
`stop_gradient`, maxima subtracted only to stabilize a softmax or log-sum-exp
(`invariance`), and anything computed from constants alone are inactive; only
active names get adjoints. Names inside loops are assigned many times, so the
analysis is per name and iterated to a fixed point: a name is varied (useful)
when any of its assignments makes it so.
"""

from dataclasses import dataclass

import gast

from ..frontend import primitives
from ..errors import SourceError
from .invariance import invariant_maxima
from ..registry import PRINTS, REGISTRY, is_random_draw, primitive_name
from ..frontend.builders import walk
from ..frontend.view_names import CHANGING_METHODS


@dataclass
class Activity:
    varied: set
    useful: set

    @property
    def active(self):
        return self.varied & self.useful

    def is_active(self, expr):
        return isinstance(expr, gast.Name) and expr.id in self.varied and expr.id in self.useful


def simple_statements(block):
    """Every non-compound statement of `block`, nested blocks included, in order."""
    for statement in block:
        if isinstance(statement, gast.If):
            yield from simple_statements(statement.body)
            yield from simple_statements(statement.orelse)
        elif isinstance(statement, (gast.For, gast.While)):
            yield from simple_statements(statement.body)
        else:
            yield statement


def _names(exprs):
    return {e.id for e in exprs if isinstance(e, gast.Name)}


def list_mutation(statement):
    """(list name, method, [operands]) for `items.append(v)`-like statements, else None."""
    if not isinstance(statement, gast.Expr) or not isinstance(statement.value, gast.Call):
        return None
    func = statement.value.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.attr in (
        "append", "extend", "insert", "push"
    ):
        method = "append" if func.attr == "push" else func.attr  # a Tape's push is append
        return func.value.id, method, list(statement.value.args)
    return None


def flow(statement, program):
    """(targets, operands that carry gradient into them) of one simple statement, or None."""
    mutation = list_mutation(statement)
    if mutation is not None:
        items, _, operands = mutation
        return [items], _names(operands) | {items}
    if not isinstance(statement, gast.Assign):
        return None
    target = statement.targets[0]
    if isinstance(target, gast.Tuple):
        names = [n.id for n in walk(target) if isinstance(n, gast.Name)]
        return names, {statement.value.id}
    if isinstance(target, gast.Subscript):
        # x[i] = v: x's new contents come from v and from x's other elements.
        return [target.value.id], _names([statement.value, target.value])
    op = primitives.operation(statement.value, program)
    if not primitives.is_differentiable(op):
        return [target.id], set()
    return [target.id], _names(op.operands())


def analyze(program, wrt):
    """Activity of every name in `program` when differentiating with respect to `wrt`."""
    flows = [f for f in (flow(s, program) for s in simple_statements(program.body)) if f is not None]
    # A stabilizing maximum the result provably does not depend on carries no gradient.
    constants = invariant_maxima(program)
    flows = [(targets, operands - constants) for targets, operands in flows]
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for targets, operands in flows:
            if operands & varied and not varied.issuperset(targets):
                varied.update(targets)
                changed = True
    _refuse_active_draws(program, varied)
    _refuse_discarded_calls(program, varied)
    useful = _names([program.result])
    changed = True
    while changed:
        changed = False
        for targets, operands in flows:
            if useful.intersection(targets) and not useful.issuperset(operands):
                useful.update(operands)
                changed = True
    return Activity(varied, useful)


def _refuse_active_draws(program, varied):
    """A random draw whose parameters carry gradients has no derivative ssad can give."""
    for statement in simple_statements(program.body):
        if not isinstance(statement, gast.Assign) or not isinstance(statement.value, gast.Call):
            continue
        op = primitives.operation(statement.value, program)
        if op.primitive is None or not is_random_draw(op.primitive):
            continue
        active = sorted(_names(op.operands()) & varied)
        if active:
            raise SourceError(
                f"`{primitive_name(op.primitive)}` draws random numbers with a parameter that carries a gradient "
                f"(`{active[0]}`); a draw has no derivative. Reparameterize: draw a standard sample and "
                "transform it (`mu + sigma * rng.standard_normal(shape)`), so the gradient flows through "
                "`mu` and `sigma`",
                *program.parsed.where(statement),
            )


def _refuse_discarded_calls(program, varied):
    """A call whose result is unused adds nothing to a derivative, unless it changes an
    argument in place (`helper(y, v)` writing `y[0] = v`, `np.random.shuffle(y)`): that
    change would be missed. So such a call with an argument that carries gradients is
    kept only where ssad can tell it changes nothing: a primitive with a rule or none to
    have (pure), `print`, or a function of yours whose source writes into none of its parameters.
    """
    for statement in simple_statements(program.body):
        if not isinstance(statement, gast.Expr) or not isinstance(statement.value, gast.Call):
            continue
        if list_mutation(statement) is not None:
            continue
        op = primitives.operation(statement.value, program)
        active = sorted(_names(op.operands()) & varied)
        if not active:
            continue
        if op.kind == primitives.USER_CALL:
            write = _write_into_parameters(op.primitive, set(), _receiving(op, varied), _private(op, program))
            if write is None:
                continue
            raise SourceError(
                f"the result of `{op.name}(...)` is not used, and {write} may change one of its arguments in "
                "place, which ssad would not see; return the changed value from the function (working on a "
                "copy, `y = y.copy()`) and assign it where you call it: `y = ...(y, ...)`",
                *program.parsed.where(statement),
            )
        if op.kind == primitives.PRIMITIVE and op.primitive is not None and not is_random_draw(op.primitive):
            if (REGISTRY.adjoint_rule(op.primitive) is not None or REGISTRY.is_nondifferentiable(op.primitive)
                    or op.primitive in PRINTS):
                continue
        raise SourceError(
            f"the result of `{op.name}(...)` is not used, and ssad cannot see whether the call changes one "
            "of its arguments in place, which would change the derivative; return the changed value and "
            "assign it (`y = f(y, ...)`, `f` working on a copy), or call a function of yours by its name",
            *program.parsed.where(statement),
        )


_IN_PLACE_METHODS = CHANGING_METHODS
_IN_PLACE_FUNCTIONS = {"fill_diagonal", "put", "place", "putmask", "copyto", "put_along_axis", "shuffle", "add.at"}


def _arguments_of(op):
    """{parameter: [the argument expressions it receives]} of the user function `op` calls,
    or None for a call that does not fit its signature."""
    import inspect

    try:
        bound = inspect.signature(op.primitive).bind_partial(
            *[("arg", i) for i in range(len(op.args))], **{k: ("kw", k) for k in op.keywords}
        )
    except TypeError:
        return None
    arguments = {}
    for parameter, value in bound.arguments.items():
        values = value if isinstance(value, tuple) and value and isinstance(value[0], tuple) else [value]
        if isinstance(value, dict):
            values = list(value.values())
        arguments[parameter] = [op.args[key] if kind == "arg" else op.keywords[key] for kind, key in values]
    return arguments


def _receiving(op, varied):
    """The parameters of the user function `op` calls that receive values carrying gradients."""
    arguments = _arguments_of(op)
    if arguments is None:
        return None  # a call that does not fit: every parameter may be reached
    return {p for p, exprs in arguments.items() if any(isinstance(e, gast.Name) and e.id in varied for e in exprs)}


def _private(op, program):
    """The parameters of the user function `op` calls that receive a new list, dict or tuple
    no other name reads (`report(y, [])`): what the function puts into it, nobody sees."""
    arguments = _arguments_of(op) or {}
    loads, made = {}, {}
    for node in (n for statement in program.body for n in walk(statement)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            made.setdefault(node.targets[0].id, []).append(node.value)

    def empty(value):
        if isinstance(value, (gast.List, gast.Tuple, gast.Set)):
            return not value.elts
        return isinstance(value, gast.Dict) and not value.keys

    return {p for p, exprs in arguments.items()
            if all(isinstance(e, gast.Name) and loads.get(e.id) == 1 and made.get(e.id) and all(map(empty, made[e.id]))
                   for e in exprs)}


def _write_into_parameters(function, seen, receiving=None, private=frozenset()):
    """Where `function` may change an argument in place, as text (`helper's line 3`), or
    None. A name bound to anything computed from a parameter counts as the parameter (it
    may be a view); functions of yours it calls with such names are searched too."""
    import ast
    import inspect
    import textwrap

    if function in seen or not hasattr(function, "__code__"):
        return None
    seen.add(function)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return f"{function.__qualname__} (whose source ssad cannot read)"
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.Lambda)) and not (
        isinstance(node, ast.Expr) or isinstance(node, ast.Assign)
    ):
        return None
    arguments = node.args if isinstance(node, ast.FunctionDef) else None
    parameters = {a.arg for a in (arguments.posonlyargs + arguments.args + arguments.kwonlyargs)} if arguments else set()
    if arguments is not None:
        parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    # `reached`: what the parameters receiving gradients reach; `every`: what any parameter
    # reaches. A change of either carries gradients into the caller's value: of the first,
    # any change; of the second, one that puts in a value the first reaches
    # (`items.append(v)`, `out[0] = v`, where `v` carries gradients and `items` does not).
    reached = parameters & receiving if receiving is not None else set(parameters)
    every = set(parameters) - set(private)
    first = function.__code__.co_firstlineno

    def mentions(expr, names=None):
        names = reached if names is None else names
        return any(isinstance(n, ast.Name) and n.id in names for n in walk(expr))

    def base(target):
        while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
            target = target.value
        return target.id if isinstance(target, ast.Name) else None

    def where(statement):
        return f"{function.__qualname__} (line {first + statement.lineno - 1})"

    for statement in walk(node):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, (ast.Subscript, ast.Attribute)) and (base(target) in reached or (
                        base(target) in every and statement.value is not None and mentions(statement.value))):
                    return where(statement)
                if isinstance(statement, ast.AugAssign) and isinstance(target, ast.Name) and target.id in reached:
                    return where(statement)  # `y += v` on an array changes it in place
            for names in (reached, every):
                if statement.value is not None and mentions(statement.value, names):
                    for target in targets:
                        names |= {n.id for n in walk(target) if isinstance(n, ast.Name)}
        elif isinstance(statement, (ast.For, ast.comprehension)):
            for names in (reached, every):
                if mentions(statement.iter, names):
                    names |= {n.id for n in walk(statement.target) if isinstance(n, ast.Name)}
        elif isinstance(statement, ast.Call):
            func = statement.func
            arguments_reach = any(mentions(a) for a in statement.args) or any(
                mentions(k.value) for k in statement.keywords)
            if isinstance(func, ast.Attribute) and func.attr in _IN_PLACE_METHODS and (
                    mentions(func.value) or (arguments_reach and mentions(func.value, every))):
                return where(statement)
            if any(k.arg == "out" for k in statement.keywords) and arguments_reach:
                return where(statement)
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _IN_PLACE_FUNCTIONS and arguments_reach:
                return where(statement)
            if arguments_reach and isinstance(func, ast.Name):
                callee = function.__globals__.get(func.id)
                if callee is None and function.__closure__:
                    free = dict(zip(function.__code__.co_freevars, function.__closure__, strict=True))
                    cell = free.get(func.id)
                    callee = cell.cell_contents if cell is not None else None
                if callee is not None and hasattr(callee, "__code__") and not callee.__module__.startswith("ssad"):
                    found = _write_into_parameters(callee, seen)
                    if found is not None:
                        return found
    return None
