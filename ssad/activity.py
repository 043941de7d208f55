"""Stage 4, activity: which values need adjoint code.

Assumes: a Program in A-normal form (stage 3) and the names of the parameters
being differentiated.
Guarantees: `Activity.active` holds exactly the names that both depend on a
differentiated input through differentiable operations ("varied") and reach the
returned value through differentiable operations ("useful"). Integers produced
by non-differentiable primitives (shapes, indices, comparisons), values of
`stop_gradient`, and anything computed from constants alone are inactive; only
active names get adjoints.
"""

from dataclasses import dataclass

import gast

from . import primitives


@dataclass
class Activity:
    varied: set
    useful: set

    @property
    def active(self):
        return self.varied & self.useful

    def is_active(self, expr):
        return isinstance(expr, gast.Name) and expr.id in self.varied and expr.id in self.useful


def _targets(statement):
    target = statement.targets[0]
    if isinstance(target, gast.Name):
        return [target.id]
    return [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]


def _names(exprs):
    return {e.id for e in exprs if isinstance(e, gast.Name)}


def analyze(program, wrt):
    """Activity of every name in `program` when differentiating with respect to `wrt`."""
    varied = set(wrt)
    operations = {}
    for statement in program.body:
        if isinstance(statement, gast.Assign):
            if isinstance(statement.targets[0], gast.Tuple):
                if statement.value.id in varied:
                    varied.update(_targets(statement))
                continue
            op = primitives.operation(statement.value, program)
            operations[id(statement)] = op
            if primitives.is_differentiable(op) and _names(op.operands()) & varied:
                varied.update(_targets(statement))

    useful = set(_names([program.result]))
    for statement in reversed(program.body):
        if not isinstance(statement, gast.Assign):
            continue
        targets = _targets(statement)
        if not useful.intersection(targets):
            continue
        if isinstance(statement.targets[0], gast.Tuple):
            useful.add(statement.value.id)
            continue
        op = operations[id(statement)]
        if primitives.is_differentiable(op):
            useful.update(_names(op.operands()))
    return Activity(varied, useful)
