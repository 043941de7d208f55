"""The A-normal form validator: checks every guarantee `anf` states.

Run by `anf.to_anf` on every program and by the tests between passes, so a
transformation that breaks the form fails loudly where it happens.
"""

import gast

from .builders import is_loop_exit, walk



def is_atom(expr, program):
    if isinstance(expr, (gast.Name, gast.Constant)):
        return True
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Name) and expr.id in program.namespace.values


def validate(program):
    """Raise AssertionError at the first statement that is not in A-normal form."""
    _Validator(program).run()


class _Validator:
    def __init__(self, program):
        self.program = program
        self.top_level = set(program.params)

    def run(self):
        body = self.program.body
        assert body and isinstance(body[-1], gast.Return), "the body ends with its one return"
        self.block(body, depth=0, in_loop=False)

    def fail(self, statement, text):
        raise AssertionError(f"line {getattr(statement, 'lineno', '?')}: {text}")

    def atom(self, expr, statement):
        if not is_atom(expr, self.program):
            self.fail(statement, f"operand is not an atom: {gast.dump(expr)}")

    def index(self, expr, statement):
        if isinstance(expr, gast.Slice):
            for part in (expr.lower, expr.upper, expr.step):
                if part is not None:
                    self.atom(part, statement)
        elif isinstance(expr, gast.Tuple):
            for part in expr.elts:
                self.index(part, statement)
        else:
            self.atom(expr, statement)

    def value(self, expr, statement):
        if isinstance(expr, gast.BinOp):
            self.atom(expr.left, statement)
            self.atom(expr.right, statement)
        elif isinstance(expr, gast.UnaryOp):
            self.atom(expr.operand, statement)
        elif isinstance(expr, gast.Compare):
            for part in [expr.left] + expr.comparators:
                self.atom(part, statement)
        elif isinstance(expr, gast.Call):
            if isinstance(expr.func, gast.Attribute) and not is_atom(expr.func, self.program):
                self.atom(expr.func.value, statement)
            else:
                self.atom(expr.func, statement)
            for part in expr.args + [k.value for k in expr.keywords]:
                self.atom(part.value if isinstance(part, gast.Starred) else part, statement)
        elif isinstance(expr, gast.Attribute):
            self.atom(expr.value, statement)
        elif isinstance(expr, gast.Subscript):
            self.atom(expr.value, statement)
            self.index(expr.slice, statement)
        elif isinstance(expr, (gast.Tuple, gast.List)):
            for part in expr.elts:
                self.atom(part, statement)
        elif isinstance(expr, gast.Dict):
            for key, part in zip(expr.keys, expr.values, strict=True):
                if not isinstance(key, gast.Constant):
                    self.fail(statement, "dict keys are constants")
                self.atom(part, statement)
        else:
            self.atom(expr, statement)

    def store(self, target, statement, depth):
        if isinstance(target, gast.Name):
            if depth == 0:
                if target.id in self.top_level:
                    self.fail(statement, f"`{target.id}` is assigned twice at the top level")
                self.top_level.add(target.id)
        elif isinstance(target, gast.Tuple):
            for element in target.elts:
                self.store(element, statement, depth)
        elif isinstance(target, gast.Subscript):
            if not isinstance(target.value, gast.Name):
                self.fail(statement, "an in-place write goes into a name")
            self.index(target.slice, statement)
        else:
            self.fail(statement, f"bad target {gast.dump(target)}")

    def block(self, statements, depth, in_loop):
        for position, statement in enumerate(statements):
            if getattr(statement, "lineno", None) is None:
                self.fail(statement, "every statement keeps a line number")
            last = position == len(statements) - 1
            if isinstance(statement, gast.Assign):
                if len(statement.targets) != 1:
                    self.fail(statement, "one target per assignment")
                target = statement.targets[0]
                if isinstance(target, gast.Tuple) and not isinstance(statement.value, gast.Name):
                    self.fail(statement, "unpacking reads a name")
                if isinstance(target, gast.Subscript):
                    self.atom(statement.value, statement)
                else:
                    self.value(statement.value, statement)
                self.store(target, statement, depth)
            elif isinstance(statement, gast.Expr):
                if not isinstance(statement.value, gast.Call):
                    self.fail(statement, "expression statements are calls")
                self.value(statement.value, statement)
            elif isinstance(statement, gast.Return):
                if depth or not last:
                    self.fail(statement, "return is the last statement of the function")
                self.atom(statement.value, statement)
            elif isinstance(statement, gast.If):
                self.atom(statement.test, statement)
                if isinstance(statement.test, gast.Name):
                    for child in statement.body + statement.orelse:
                        for node in walk(child):
                            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id == statement.test.id:
                                self.fail(statement, f"the `if` assigns its own test `{node.id}`")
                if isinstance(statement.test, gast.Name) and is_loop_exit(statement):
                    if not (in_loop and last):
                        self.fail(statement, "`if stop: break` is the last statement of a loop body")
                    continue
                self.block(statement.body, depth + 1, in_loop)
                self.block(statement.orelse, depth + 1, in_loop)
            elif isinstance(statement, gast.For):
                if not isinstance(statement.target, gast.Name) or not isinstance(statement.iter, gast.Name):
                    self.fail(statement, "a for loop runs a name over a name holding a range")
                self.block(statement.body, depth + 1, True)
            elif isinstance(statement, gast.While):
                self.atom(statement.test, statement)
                self.block(statement.body, depth + 1, True)
            elif isinstance(statement, gast.Pass):
                continue
            else:
                self.fail(statement, f"unexpected statement {type(statement).__name__}")
