"""Stage 3, desugar to A-normal form.

Assumes: a fenced function (stage 2).
Guarantees: the body of `Program.node` is a flat list of statements of these forms,
every operand being an *atom* (a name, a constant, or a static path such as
``np.pi`` rooted at a free name):

    t = atom                          copy or constant
    t = a OP b   /   t = OP a         one operator
    t = a < b                         one comparison (chains kept whole)
    t = f(a, b, k=c)                  a call; `f` is a free name, a static path
                                      (`np.linalg.norm`) or a method of an atom (`x.sum`)
    t = a.attr                        an attribute of a local value (`x.T`, `x.shape`)
    t = a[index]                      index parts are atoms or slices of atoms
    t = (a, b)  /  t = [a, b]         a tuple or list display
    a, (b, c) = t                     unpacking a name into names
    f(a, b)                           a call kept for its effect (`print`)
    return atom                       once, last

Each name is assigned once (single assignment): a user variable that is
assigned again gets a fresh name (`h`, then `h_1`), and augmented assignment
`x += v` becomes `x_1 = x + v`. Temporaries are named after what they hold
(`sin_x`, `x_times_y`), a non-atom return value is named `result`, and every
statement keeps the line number of the user statement it came from.
"""

from dataclasses import dataclass

import gast

from .naming import Namer
from .parse import local_names


@dataclass
class Program:
    """A function in A-normal form, with what later stages need to know about it."""

    parsed: object
    node: gast.FunctionDef  # the signature of the user's function, body in ANF
    namer: Namer
    params: list  # parameter names, in order (positional first, then keyword-only)
    positional: list  # positional parameter names
    result: gast.expr  # the returned atom

    @property
    def body(self):
        return self.node.body


def to_anf(parsed):
    """Lower `parsed` (fenced) to a Program in A-normal form."""
    node = parsed.node
    taken = local_names(node) | set(parsed.namespace) | _all_loaded(node)
    namer = Namer(taken)
    lowering = _Lowering(parsed, namer)
    body, result = lowering.lower_body(node.body)
    args = node.args
    positional = [a.id for a in list(args.posonlyargs) + list(args.args)]
    params = positional + [a.id for a in args.kwonlyargs]
    anf_node = gast.FunctionDef(
        name=node.name,
        args=node.args,
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    gast.copy_location(anf_node, node)
    program = Program(parsed, anf_node, namer, params, positional, result)
    validate(program)
    return program


def _all_loaded(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


class _Lowering:
    def __init__(self, parsed, namer):
        self.parsed = parsed
        self.namer = namer
        self.free = set(parsed.namespace)
        self.current = {}  # user name -> its current single-assignment name
        self.defined = set()  # every name assigned so far
        self.out = []
        self.shares = {}  # name -> the set of names that may share its array memory
        self.origin = None  # the user statement being lowered
        for arg in parsed.node.args.posonlyargs + parsed.node.args.args + parsed.node.args.kwonlyargs:
            self.current[arg.id] = arg.id
            self.defined.add(arg.id)

    # ----- statements -----

    def lower_body(self, statements):
        result = None
        for statement in statements:
            self.origin = statement
            if isinstance(statement, gast.Assign):
                if len(statement.targets) == 1:
                    self.assign(statement.targets[0], statement.value)
                else:  # `a = b = value`: evaluate once
                    value = self.atom(statement.value)
                    for target in statement.targets:
                        self.assign(target, value)
            elif isinstance(statement, gast.AnnAssign):
                self.assign(statement.target, statement.value)
            elif isinstance(statement, gast.AugAssign):
                self.check_not_shared(statement)
                value = gast.BinOp(left=_name(statement.target.id), op=statement.op, right=statement.value)
                self.assign(gast.Name(id=statement.target.id, ctx=gast.Store(), annotation=None, type_comment=None), value)
            elif isinstance(statement, gast.Expr):
                if isinstance(statement.value, gast.Call):
                    self.emit(gast.Expr(value=self.simple(statement.value)))
            elif isinstance(statement, gast.Return):
                result = self.atom(statement.value, name_hint="result")
                self.emit(gast.Return(value=result))
        return self.out, result

    def assign(self, target, value):
        if isinstance(target, gast.Name):
            simple = self.simple(value)
            self.emit_assign(self.define(target.id), simple)
            return
        elements = target.elts
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elements) and not any(
            isinstance(e, gast.Starred) for e in value.elts
        ):
            # `a, b = b, a`: evaluate every element before any target changes.
            simples = [self.simple(e) for e in value.elts]
            for element, simple in zip(elements, simples, strict=True):
                if isinstance(element, gast.Name):
                    self.emit_assign(self.define(element.id), simple)
                else:
                    self.assign(element, self.atom_of_simple(simple))
            return
        source = self.atom(value)
        if not isinstance(source, gast.Name):
            raise self.parsed.unsupported(value, "cannot unpack a constant")
        self.unpack(target, source)

    def unpack(self, target, source):
        names = []
        nested = []
        for element in target.elts:
            if isinstance(element, gast.Name):
                names.append(None)
            else:
                temporary = self.namer.fresh("items")
                names.append(temporary)
                nested.append((element, temporary))
        stores = []
        for element, temporary in zip(target.elts, names, strict=True):
            stored = self.define(element.id) if temporary is None else temporary
            if temporary is not None:
                self.defined.add(temporary)
            stores.append(gast.Name(id=stored, ctx=gast.Store(), annotation=None, type_comment=None))
        statement = gast.Assign(targets=[gast.Tuple(elts=stores, ctx=gast.Store())], value=source, type_comment=None)
        self.emit(statement)
        for element, temporary in nested:
            self.unpack(element, _name(temporary))

    def define(self, user_name):
        """The single-assignment name for a new value of `user_name`."""
        name = user_name if user_name not in self.defined else self.namer.fresh(user_name)
        self.current[user_name] = name
        self.defined.add(name)
        return name

    def check_not_shared(self, statement):
        """Refuse `x += v` when x's array may be shared with another name (`y = x`, `x.T`).

        For arrays `+=` writes in place, so every name sharing the memory sees the new
        values; lowering it to `x_1 = x + v` is exact only when nothing else shares it.
        """
        name = self.current.get(statement.target.id)
        others = sorted(n for n in self.shares.get(name, ()) if n != name)
        if others:
            user_names = {ssa: user for user, ssa in self.current.items()}
            other = user_names.get(others[0], others[0])
            raise self.parsed.unsupported(
                statement,
                f"`{statement.target.id} {_AUGMENTED.get(type(statement.op), '?=')} ...` would change "
                f"an array that `{other}` shares (a copy of the name or a view such as .T, a "
                f"slice or reshape); write `{statement.target.id} = {statement.target.id} "
                f"{_AUGMENTED.get(type(statement.op), '?=')[:-1]} ...` to make a new array",
            )

    def record_sharing(self, name, value):
        """Remember that `name` may share memory with the local its value views."""
        source = _viewed_operand(value, self)
        if source is None:
            return
        group = self.shares.setdefault(source, {source})
        group.add(name)
        self.shares[name] = group

    def emit_assign(self, name, value):
        self.record_sharing(name, value)
        target = gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)
        self.emit(gast.Assign(targets=[target], value=value, type_comment=None))

    def emit(self, statement):
        gast.copy_location(statement, self.origin)
        self.out.append(statement)

    # ----- expressions -----

    def is_static(self, expr):
        """A free name or an attribute path from one (`np`, `np.pi`, `np.linalg.norm`)."""
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id in self.free and expr.id not in self.current

    def atom(self, expr, name_hint=None):
        if isinstance(expr, gast.Constant):
            return gast.Constant(value=expr.value, kind=None)
        if isinstance(expr, gast.Name):
            return self.load(expr.id)
        if self.is_static(expr):
            return expr
        if _is_negative_literal(expr):
            value = expr.operand.value
            return gast.Constant(value=-value if isinstance(expr.op, gast.USub) else value, kind=None)
        return self.atom_of_simple(self.simple(expr), name_hint)

    def atom_of_simple(self, simple, name_hint=None):
        if isinstance(simple, (gast.Name, gast.Constant)) or self.is_static(simple):
            return simple
        if name_hint is not None:
            name = self.namer.fresh(name_hint)
        else:
            name = self.namer.temporary_for(simple, self.defined)
        self.defined.add(name)
        self.emit_assign(name, simple)
        return _name(name)

    def load(self, name):
        return _name(self.current.get(name, name))

    def simple(self, expr):
        """`expr` as one operation on atoms (emitting temporaries for its operands)."""
        if isinstance(expr, (gast.Name, gast.Constant)) or self.is_static(expr):
            return self.atom(expr)
        if isinstance(expr, gast.BinOp):
            return gast.BinOp(left=self.atom(expr.left), op=expr.op, right=self.atom(expr.right))
        if isinstance(expr, gast.UnaryOp):
            if _is_negative_literal(expr):
                return self.atom(expr)
            return gast.UnaryOp(op=expr.op, operand=self.atom(expr.operand))
        if isinstance(expr, gast.Compare):
            return gast.Compare(
                left=self.atom(expr.left), ops=expr.ops, comparators=[self.atom(c) for c in expr.comparators]
            )
        if isinstance(expr, gast.Call):
            return gast.Call(
                func=self.callee(expr.func),
                args=[self.atom(a) for a in expr.args],
                keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in expr.keywords],
            )
        if isinstance(expr, gast.Attribute):
            return gast.Attribute(value=self.atom(expr.value), attr=expr.attr, ctx=gast.Load())
        if isinstance(expr, gast.Subscript):
            return gast.Subscript(value=self.atom(expr.value), slice=self.index(expr.slice), ctx=gast.Load())
        if isinstance(expr, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        if isinstance(expr, gast.List):
            return gast.List(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        raise self.parsed.unsupported(expr, f"`{type(expr).__name__}` expressions are not supported")

    def callee(self, func):
        if self.is_static(func):
            return func
        if isinstance(func, gast.Attribute):
            return gast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=gast.Load())
        if isinstance(func, gast.Name):
            raise self.parsed.unsupported(
                func,
                f"calling `{func.id}`, a local variable, is not supported yet; call a function "
                "defined at module level",
            )
        raise self.parsed.unsupported(func, "calling the result of an expression is not supported yet")

    def index(self, index):
        if isinstance(index, gast.Slice):
            return gast.Slice(
                lower=None if index.lower is None else self.atom(index.lower),
                upper=None if index.upper is None else self.atom(index.upper),
                step=None if index.step is None else self.atom(index.step),
            )
        if isinstance(index, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in index.elts], ctx=gast.Load())
        return self.atom(index)


_AUGMENTED = {
    gast.Add: "+=",
    gast.Sub: "-=",
    gast.Mult: "*=",
    gast.Div: "/=",
    gast.Pow: "**=",
    gast.MatMult: "@=",
    gast.FloorDiv: "//=",
    gast.Mod: "%=",
}

# Methods and NumPy functions whose result may be a view of (or be) their first operand.
_VIEW_METHODS = {
    "reshape", "ravel", "transpose", "swapaxes", "squeeze", "view", "diagonal", "T", "real", "imag",
    "flat", "base", "astype", "__array__",
}
_VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "flip", "fliplr", "flipud", "real", "imag", "asarray_chkfinite", "require", "stop_gradient",
}


def _viewed_operand(value, lowering):
    """The local name whose memory `value` may share, or None for a fresh value."""
    def local(expr):
        if isinstance(expr, gast.Name) and expr.id in lowering.defined:
            return expr.id
        return None

    if isinstance(value, gast.Name):
        return local(value)
    if isinstance(value, gast.Subscript):
        return local(value.value)
    if isinstance(value, gast.Attribute) and value.attr in _VIEW_METHODS:
        return local(value.value)
    if isinstance(value, gast.Call):
        func = value.func
        if isinstance(func, gast.Attribute) and not lowering.is_static(func):
            return local(func.value) if func.attr in _VIEW_METHODS else None
        name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
        if name in _VIEW_FUNCTIONS and value.args:
            return local(value.args[0])
    return None


def _is_negative_literal(expr):
    return (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, (gast.USub, gast.UAdd))
        and isinstance(expr.operand, gast.Constant)
        and isinstance(expr.operand.value, (int, float))
        and not isinstance(expr.operand.value, bool)
    )


def _name(identifier):
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


# ----- the ANF validator (run by the tests between passes) -----


def is_atom(expr, program):
    if isinstance(expr, (gast.Name, gast.Constant)):
        return True
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Name) and expr.id in program.parsed.namespace


def validate(program):
    """Assert that `program`'s body has only the forms listed in this module's docstring."""
    assigned = set(program.params)

    def atom(expr, statement):
        assert is_atom(expr, program), f"line {statement.lineno}: operand is not an atom: {gast.dump(expr)}"

    def index(expr, statement):
        if isinstance(expr, gast.Slice):
            for part in (expr.lower, expr.upper, expr.step):
                if part is not None:
                    atom(part, statement)
        elif isinstance(expr, gast.Tuple):
            for part in expr.elts:
                index(part, statement)
        else:
            atom(expr, statement)

    def value(expr, statement):
        if isinstance(expr, gast.BinOp):
            atom(expr.left, statement)
            atom(expr.right, statement)
        elif isinstance(expr, gast.UnaryOp):
            atom(expr.operand, statement)
        elif isinstance(expr, gast.Compare):
            for part in [expr.left] + expr.comparators:
                atom(part, statement)
        elif isinstance(expr, gast.Call):
            if isinstance(expr.func, gast.Attribute) and not is_atom(expr.func, program):
                atom(expr.func.value, statement)
            else:
                atom(expr.func, statement)
            for part in expr.args + [k.value for k in expr.keywords]:
                atom(part, statement)
        elif isinstance(expr, gast.Attribute):
            atom(expr.value, statement)
        elif isinstance(expr, gast.Subscript):
            atom(expr.value, statement)
            index(expr.slice, statement)
        elif isinstance(expr, (gast.Tuple, gast.List)):
            for part in expr.elts:
                atom(part, statement)
        else:
            atom(expr, statement)

    def store(target, statement):
        if isinstance(target, gast.Name):
            assert target.id not in assigned, f"line {statement.lineno}: `{target.id}` is assigned twice"
            assigned.add(target.id)
        else:
            assert isinstance(target, gast.Tuple), f"line {statement.lineno}: bad target {gast.dump(target)}"
            for element in target.elts:
                store(element, statement)

    body = program.body
    for position, statement in enumerate(body):
        assert getattr(statement, "lineno", None) is not None, "every statement keeps a line number"
        if isinstance(statement, gast.Assign):
            assert len(statement.targets) == 1, "one target per assignment"
            target = statement.targets[0]
            if isinstance(target, gast.Tuple):
                assert isinstance(statement.value, gast.Name), "unpacking reads a name"
            store(target, statement)
            value(statement.value, statement)
        elif isinstance(statement, gast.Expr):
            assert isinstance(statement.value, gast.Call), "expression statements are calls"
            value(statement.value, statement)
        elif isinstance(statement, gast.Return):
            assert position == len(body) - 1, "return is last"
            atom(statement.value, statement)
        else:
            raise AssertionError(f"unexpected statement {type(statement).__name__}")
