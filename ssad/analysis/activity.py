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
from ..registry import is_random_draw, primitive_name


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
        names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
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
