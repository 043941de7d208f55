"""Stage 3, desugar to A-normal form.

Assumes: a fenced function (stage 2) whose jumps were lowered (stage 2b).
Guarantees: the body of `Program.node` holds only these statements, every operand
being an *atom* (a name, a constant, or a static path such as ``np.pi`` rooted
at a free name):

    t = atom                          copy or constant
    t = a OP b   /   t = OP a         one operator
    t = a < b                         one comparison (chains kept whole)
    t = f(a, b, k=c)                  a call; `f` is a free name, a static path
                                      (`np.linalg.norm`) or a method of an atom (`x.sum`)
    t = a.attr                        an attribute of a local value (`x.T`, `x.shape`)
    t = a[index]                      index parts are atoms or slices of atoms
    t = (a, b)  /  t = [a, b]         a tuple or list display
    a, (b, c) = t                     unpacking a name into names
    x[index] = atom                   writing into the array `x` in place
    f(a, b)                           a call kept for its effect (`print`)
    if t: ... else: ...               the test is a name no statement of the `if` assigns
    for i in r: ...                   `r` is a name holding a `range`; `i` a name
    while t: ...                      the statements computing `t` stand before the
                                      loop and again at the end of its body
    if stop: break                    only as the last statement of a loop body
    return atom                       once, last

At the top level every name is assigned once (single assignment): a user
variable that is assigned again gets a fresh name (`h`, then `h_1`). Inside
`if`, `for` and `while` a variable is assigned in place, as the user wrote it,
so loop-carried values keep one name. Augmented assignment `x += v` becomes
`x = x + v`; `y[i] += v` becomes a read, an add and a write of the same element.
`for x in xs` becomes a loop over indices (`for k in range(len(xs)): x = xs[k]`),
and so do `enumerate`, `zip` and `reversed`; `range(...)` is looped over as is.
`a if c else b`, `and` and `or` become `if` statements. Temporaries are named
after what they hold (`sin_x`, `x_times_y`); every statement keeps the line
number of the user statement it came from.
"""

import builtins
import copy
from dataclasses import dataclass

import gast
import numpy as np

from . import closures as closures_module
from .closures import closure, make_template
from .inline import Namespace
from .runtime import c_, concat, drop_last, r_, restore_part, restored_value
from .jumps import lower_jumps
from .naming import Namer
from .parse import local_names
from .sharing import AUGMENTED, Sharing, viewed_operand


@dataclass
class Program:
    """A function in A-normal form, with what later stages need to know about it."""

    parsed: object
    node: gast.FunctionDef  # the signature of the user's function, body in ANF
    namer: Namer
    namespace: Namespace  # free names and the helpers generated code reads
    params: list  # parameter names, in order (positional first, then keyword-only)
    positional: list  # positional parameter names
    result: gast.expr  # the returned atom
    writes_in_place: bool  # whether any `x[i] = v` occurs
    shares: dict  # name -> the names that may share its array memory (views, copies of the name)
    mode: str = "reverse"  # "reverse" or "forward": which rules make a user function a primitive

    @property
    def body(self):
        return self.node.body


def to_anf(parsed):
    """Lower `parsed` (fenced, jumps lowered) to a Program in A-normal form."""
    node = parsed.node
    taken = local_names(node) | set(parsed.namespace) | {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    namer = Namer(taken)
    early_result = lower_jumps(node, namer)
    namespace = Namespace(namer, parsed.namespace)
    lowering = _Lowering(parsed, namer, namespace, early_result)
    body, result = lowering.lower_function(node.body)
    args = node.args
    positional = [a.id for a in list(args.posonlyargs) + list(args.args)]
    params = positional + [a.id for a in args.kwonlyargs] + ([args.vararg.id] if args.vararg is not None else [])
    anf_node = gast.FunctionDef(
        name=node.name, args=node.args, body=body, decorator_list=[], returns=None, type_comment=None, type_params=[]
    )
    gast.copy_location(anf_node, node)
    program = Program(
        parsed, anf_node, namer, namespace, params, positional, result, lowering.writes_in_place,
        lowering.sharing.ever,
    )
    from .validate import validate

    validate(program)
    return program


def _name(identifier, store=False):
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def _call(func, *args):
    return gast.Call(func=func, args=list(args), keywords=[])


class _Lowering:
    def __init__(self, parsed, namer, namespace, early_result=None):
        self.parsed = parsed
        # the variable early returns assign to (see jumps): it is assigned only on the way
        # out, so an in-place write after that assignment never runs on the same path
        self.early_result = early_result
        self.namer = namer
        self.namespace = namespace
        self.current = {}  # user name -> the name its current value lives in
        self.defined = set()  # every local name assigned so far
        self.depth = 0  # > 0 inside if/for/while: assign in place, no renaming
        self.out = []
        self.origin = None  # the user statement being lowered
        self.context = []  # (block, position) of every enclosing block, for "read later"
        self.loops = []  # enclosing user loop statements
        self.writes_in_place = False
        self.numbers = set()  # names known to hold Python numbers (never share memory)
        self.callers = set()  # names that may hold an array the caller passed in
        self.sequences = set()  # names known to hold lists or tuples (`+` joins them)
        arguments = parsed.node.args
        parameters = [a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
        if arguments.vararg is not None:
            parameters.append(arguments.vararg.id)  # `*rest` holds a tuple
        self.sharing = Sharing(parameters)
        for name in parameters:
            self.current[name] = name
            self.defined.add(name)
            self.callers.add(name)

    # ----- blocks -----

    def lower_function(self, statements):
        self.block(statements)
        last = self.out[-1] if self.out else None
        if not isinstance(last, gast.Return):
            raise AssertionError("jumps lowering guarantees a final return")
        return self.out, last.value

    def block(self, statements):
        for position, statement in enumerate(statements):
            self.context.append((statements, position))
            self.origin = statement
            self.statement(statement)
            self.context.pop()

    def nested(self, statements):
        """Lower `statements` as a nested block; returns the ANF statements."""
        saved, self.out = self.out, []
        self.depth += 1
        self.block(statements)
        self.depth -= 1
        lowered, self.out = self.out, saved
        return lowered or [gast.copy_location(gast.Pass(), self.origin)]

    # ----- statements -----

    def statement(self, statement):
        if self.is_drop_last(statement):
            self.block(self.without_drop_last(statement))
        elif isinstance(statement, gast.Assign):
            if len(statement.targets) == 1:
                self.assign(statement.targets[0], statement.value)
            else:  # `a = b = value`: evaluate once
                value = self.atom(statement.value)
                for target in statement.targets:
                    self.assign(target, value)
        elif isinstance(statement, gast.AnnAssign):
            self.assign(statement.target, statement.value)
        elif isinstance(statement, gast.AugAssign):
            self.augmented(statement)
        elif isinstance(statement, gast.Expr):
            if self.is_restore_part(statement.value):
                # generated code differentiated again: `restore_part(x, i, old)` is the in-place
                # write `x[i] = old`, which the tape and the aliasing checks must see as one
                container, index, old = statement.value.args
                target = gast.Subscript(value=container, slice=index, ctx=gast.Store())
                restored = gast.Call(func=self.helper_name("restored_value", restored_value), args=[old], keywords=[])
                self.assign(gast.copy_location(target, statement), restored)
                return
            if isinstance(statement.value, gast.Call):
                func = statement.value.func
                if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and not self.is_static(func):
                    # items.append(v): an in-place change of the list, refused where aliasing would matter
                    self.check_not_shared(func.value.id, statement, f"{func.value.id}.{func.attr}(...)", write=True)
                    self.writes_in_place = True
                    if func.attr == "pop":  # `items.pop()` for its effect: a pop whose value goes unread
                        self.atom(statement.value, name_hint=f"{func.value.id}_popped")
                        return
                self.emit(gast.Expr(value=self.simple(statement.value)))
        elif isinstance(statement, gast.Return):
            result = self.atom(statement.value, name_hint="result")
            self.emit(gast.Return(value=result))
        elif isinstance(statement, gast.If):
            self.lower_if(statement)
        elif isinstance(statement, gast.For):
            self.lower_for(statement)
        elif isinstance(statement, gast.While):
            self.lower_while(statement)
        elif isinstance(statement, gast.FunctionDef):
            value = self.function_value(statement, statement.name)
            self.emit_assign(self.define(statement.name), value)
        elif isinstance(statement, gast.Break):
            self.emit(gast.Break())
        elif isinstance(statement, gast.Pass):
            return
        else:
            raise self.parsed.unsupported(statement, f"`{type(statement).__name__}` statements are not supported")

    def augmented(self, statement):
        target = statement.target
        if isinstance(target, gast.Name):
            self.check_not_shared(target.id, statement, f"{target.id} {AUGMENTED.get(type(statement.op), '?')}= ...")
            value = gast.BinOp(left=_name(target.id), op=statement.op, right=statement.value)
            self.assign(_name(target.id, store=True), value)
            return
        # y[i] += v: read, add, write the same element, evaluating the index once.
        array = self.load(target.value.id)
        index = self.index(target.slice)
        old = self.atom_of_simple(gast.Subscript(value=array, slice=index, ctx=gast.Load()))
        new = self.atom_of_simple(gast.BinOp(left=old, op=statement.op, right=self.atom(statement.value)))
        self.store_item(target.value.id, copy.deepcopy(index), new, statement)

    def assign(self, target, value, resolved=False):
        """`target = value`; a `resolved` value already reads the current names (no reloading)."""
        if isinstance(target, gast.Name):
            if not resolved and isinstance(value, gast.Lambda):
                simple = self.function_value(value, target.id)  # `sq = lambda t: t * t` is named sq
            else:
                simple = value if resolved else self.simple(value)
            self.emit_assign(self.define(target.id), simple)
            return
        if isinstance(target, gast.Subscript):
            atom = self.atom_of_simple(value) if resolved else self.atom(value)
            self.store_item(target.value.id, self.index(target.slice), atom, target)
            return
        elements = target.elts
        if not resolved and isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elements):
            # `a, b = b, a`: evaluate every element before any target changes.
            simples = [self.simple(e) for e in value.elts]
            if self.depth:  # in place: targets may be read by later elements, so go through atoms
                simples = [self.atom_of_simple(s) for s in simples]
            for element, simple in zip(elements, simples, strict=True):
                self.assign(element, simple, resolved=True)
            return
        source = self.atom_of_simple(value) if resolved else self.atom(value)
        if not isinstance(source, gast.Name):
            raise self.parsed.unsupported(value, "cannot unpack a constant")
        self.unpack(target, source)

    def unpack(self, target, source):
        stores = []
        nested = []
        for element in target.elts:
            if isinstance(element, gast.Name):
                stores.append(_name(self.define(element.id), store=True))
            else:
                temporary = self.namer.fresh("items")
                self.defined.add(temporary)
                nested.append((element, temporary))
                stores.append(_name(temporary, store=True))
        self.emit(gast.Assign(targets=[gast.Tuple(elts=stores, ctx=gast.Store())], value=source, type_comment=None))
        for element, temporary in nested:
            self.unpack(element, _name(temporary))

    def store_item(self, user_name, index, atom, origin):
        """`user_name[index] = atom`, refusing writes whose result would depend on aliasing."""
        name = self.current.get(user_name)
        if name is None:
            raise self.parsed.unsupported(origin, f"`{user_name}` is not defined before this assignment")
        self.check_not_shared(user_name, origin, f"{user_name}[...] = ...", write=True)
        self.writes_in_place = True
        target = gast.Subscript(value=_name(name), slice=index, ctx=gast.Store())
        self.emit(gast.Assign(targets=[target], value=atom, type_comment=None))

    def check_not_shared(self, user_name, statement, written, write=False):
        """Refuse an in-place write to an array another name shares and reads afterwards."""
        name = self.current.get(user_name)
        if name is None:
            return
        users = {ssa: user for user, ssa in self.current.items()}
        sharing = [users[n] for n in self.sharing.others(name) if n in users]
        if write and (name in self.callers or any(n in self.callers for n in self.sharing.others(name))):
            raise self.parsed.unsupported(
                statement,
                f"`{written}` would write into an array the caller passed in; copy it first "
                f"(`{user_name} = {user_name}.copy()`) so the gradient function leaves the input unchanged",
            )
        # For arrays `+=` and `x[i] = v` write in place: a sharing name read afterwards would
        # see the change, which the rebinding ssad makes of `x += v` would not show.
        later = [u for u in sharing if u != self.early_result and self.read_later(u)]
        if later:
            fix = f"write `{user_name} = {user_name} {written.split()[1][:-1]} ...`" if not write else (
                f"copy it first (`{user_name} = {user_name}.copy()`)"
            )
            raise self.parsed.unsupported(
                statement,
                f"`{written}` would change an array that `{later[0]}` shares (a copy of the name or a "
                f"view such as .T, a slice or reshape); {fix}",
            )

    def read_later(self, user_name):
        """Whether `user_name` is read after the current statement (or again by an enclosing loop)."""
        for statements, position in self.context:
            for statement in statements[position + 1 :]:
                if _reads(statement, user_name):
                    return True
        return any(_reads(loop, user_name) for loop in self.loops)

    def define(self, user_name):
        """The name a new value of `user_name` is stored in."""
        if user_name not in self.current:
            name = user_name if user_name not in self.defined else self.namer.fresh(user_name)
        elif self.depth:
            name = self.current[user_name]  # in place inside control flow
        else:
            name = self.namer.fresh(user_name)
        self.current[user_name] = name
        self.defined.add(name)
        return name

    def emit_assign(self, name, value):
        if self.depth and _reads(value, name):
            # In place inside control flow, `h = h * 2` would leave the adjoint sweep no
            # name for the old h: compute into a temporary, then assign.
            temporary = self.namer.temporary_for(value, self.defined)
            self.defined.add(temporary)
            self.emit_assign(temporary, value)
            value = _name(temporary)
        if self.is_number(value):
            self.numbers.add(name)
        else:
            self.numbers.discard(name)
        if _makes_sequence(value, self):
            self.sequences.add(name)
        else:
            self.sequences.discard(name)
        source = viewed_operand(value, lambda n: n in self.defined, self.is_static)
        if source is not None and source in self.callers:
            self.callers.add(name)  # a view or a second name of the caller's array
        else:
            self.callers.discard(name)  # a new value: `y = y.copy()` frees y from the caller's array
        self.sharing.record(name, value, lambda n: n in self.defined and n not in self.numbers, self.is_static)
        self.emit(gast.Assign(targets=[_name(name, store=True)], value=value, type_comment=None))

    def emit(self, statement):
        gast.copy_location(statement, self.origin)
        self.out.append(statement)

    # ----- control flow -----

    def lower_if(self, statement):
        test = self.test_atom(statement.test, statement.body + statement.orelse)
        body = self.nested(statement.body)
        orelse = self.nested(statement.orelse) if statement.orelse else []
        self.emit(gast.If(test=test, body=body, orelse=orelse))

    def test_atom(self, expr, statements):
        """The test of an `if` as a name that no statement of the `if` assigns."""
        atom = self.atom(expr)
        users = {ssa: user for user, ssa in self.current.items()}
        if isinstance(atom, gast.Name) and any(_assigns(s, users.get(atom.id, atom.id)) for s in statements):
            copy_name = self.namer.fresh(f"{atom.id}_was")
            self.defined.add(copy_name)
            self.emit_assign(copy_name, atom)
            atom = _name(copy_name)
        return atom

    def lower_for(self, statement):
        self.loops.append(statement)
        iterable = statement.iter
        target = statement.target
        assignments = []
        if self.is_builtin_call(iterable, "range") and isinstance(target, gast.Name):
            indices = self.atom(iterable)
            index = target.id
        else:
            length, element = self.sequence(iterable)
            indices = self.atom_of_simple(_call(self.builtin("range"), length), name_hint="indices")
            probe = element(_name("__index__"))
            if (
                isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[0], gast.Name)
                and isinstance(probe, gast.Tuple)
                and isinstance(probe.elts[0], gast.Name)
                and probe.elts[0].id == "__index__"
            ):
                # `for i, x in enumerate(xs)`: the loop runs over i itself.
                index = target.elts[0].id
                assignments.append((target.elts[1], lambda k, element=element: element(k).elts[1]))
            else:
                index = self.namer.fresh("index")
                assignments.append((target, element))
        index_name = self.current[index] if index in self.current else self.define(index)
        self.defined.add(index_name)
        self.numbers.add(index_name)  # range() yields ints
        self.depth += 1
        saved, self.out = self.out, []
        for assigned, value in assignments:
            self.assign(assigned, value(_name(index_name)))
        self.block(statement.body)
        body = self.out or [gast.copy_location(gast.Pass(), statement)]
        self.out = saved
        self.depth -= 1
        self.loops.pop()
        loop = gast.For(target=_name(index_name, store=True), iter=indices, body=body, orelse=[], type_comment=None)
        self.emit(loop)

    def sequence(self, iterable):
        """(length atom, element(index) -> expr or None) for what a `for` loop walks over."""
        if self.is_builtin_call(iterable, "enumerate"):
            length, inner = self.sequence(iterable.args[0])
            start = iterable.args[1] if len(iterable.args) > 1 else next(
                (k.value for k in iterable.keywords if k.arg == "start"), None
            )
            start = self.atom(start) if start is not None else None

            def element(index, start=start, inner=inner):
                counter = index if start is None else gast.BinOp(left=index, op=gast.Add(), right=start)
                return gast.Tuple(elts=[counter, inner(index)], ctx=gast.Load())

            return length, element
        if self.is_builtin_call(iterable, "zip"):
            parts = [self.sequence(a) for a in iterable.args]
            lengths = [p[0] for p in parts]
            length = lengths[0] if len(lengths) == 1 else self.atom_of_simple(
                _call(self.builtin("min"), *lengths), name_hint="length"
            )

            def element(index, parts=parts):
                return gast.Tuple(elts=[p[1](index) for p in parts], ctx=gast.Load())

            return length, element
        if self.is_builtin_call(iterable, "reversed"):
            length, inner = self.sequence(iterable.args[0])
            last = self.atom_of_simple(gast.BinOp(left=length, op=gast.Sub(), right=gast.Constant(value=1, kind=None)))

            def element(index, inner=inner, last=last):
                return inner(gast.BinOp(left=last, op=gast.Sub(), right=index))

            return length, element
        if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Attribute) and iterable.func.attr in (
            "items", "values", "keys"
        ):
            # dict views cannot be indexed: walk a list of them
            iterable = gast.Call(func=self.builtin("list"), args=[iterable], keywords=[])
        items = self.atom(iterable)
        users = {ssa: user for user, ssa in self.current.items()}
        if isinstance(items, gast.Name) and self.loops and _assigns(self.loops[-1], users.get(items.id, items.id)):
            # `for v in x: ... x = ...`: Python walks the x the loop started with
            walked = self.namer.fresh(f"{items.id}_walked")
            self.defined.add(walked)
            self.emit_assign(walked, items)
            items = _name(walked)
        length = self.atom_of_simple(_call(self.builtin("len"), items), name_hint=f"length_{_short(items)}")

        def element(index, items=items):
            return gast.Subscript(value=items, slice=index, ctx=gast.Load())

        return length, element

    def lower_while(self, statement):
        self.loops.append(statement)
        saved, self.out = self.out, []
        test = self.atom(statement.test)
        test_statements, self.out = self.out, saved
        self.out.extend(test_statements)
        self.depth += 1
        saved, self.out = self.out, []
        self.block(statement.body)
        # The test is computed again at the end of each iteration, by the same statements;
        # after a `break` it is not (`if stop: break` stays last).
        again = [copy.deepcopy(s) for s in test_statements]
        exit_test = self.out.pop() if self.out and _is_loop_exit(self.out[-1]) else None
        if exit_test is not None and again:
            running = self.atom_of_simple(gast.UnaryOp(op=gast.Not(), operand=copy.deepcopy(exit_test.test)))
            self.emit(gast.If(test=running, body=again, orelse=[]))
        else:
            self.out.extend(again)
        if exit_test is not None:
            self.out.append(exit_test)
        body = self.out or [gast.copy_location(gast.Pass(), statement)]
        self.out = saved
        self.depth -= 1
        self.loops.pop()
        self.emit(gast.While(test=test, body=body, orelse=[]))

    # ----- expressions -----

    def builtin(self, name):
        """A name for a builtin in generated code (`len`, unless the user shadows it)."""
        bound = self.namespace.bind(name, getattr(builtins, name))
        return _name(bound)

    def is_builtin_call(self, expr, name):
        return (
            isinstance(expr, gast.Call)
            and isinstance(expr.func, gast.Name)
            and expr.func.id not in self.current
            and self.namespace.values.get(expr.func.id) is getattr(builtins, name)
        )

    def is_sequence(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.sequences

    def is_number(self, value):
        """Whether `value` is known to be a number (so `x = value` shares nothing)."""
        if isinstance(value, gast.Call) and self.is_static(value.func) and not value.keywords and len(value.args) == 1:
            from .primitives import static_value

            try:
                callee = static_value(value.func, self)
            except Exception:  # noqa: BLE001 - a path that does not resolve is reported elsewhere
                callee = None
            if callee in _SCALAR_RESULTS or getattr(callee, "__module__", None) == "math":
                return True  # np.sum(x) is an immutable NumPy scalar
        if isinstance(value, gast.Constant):
            return isinstance(value.value, (int, float, complex, bool))
        if isinstance(value, gast.Name):
            return value.id in self.numbers
        if isinstance(value, gast.BinOp):
            return self.is_number(value.left) and self.is_number(value.right)
        if isinstance(value, gast.UnaryOp):
            return self.is_number(value.operand)
        if isinstance(value, gast.Compare):
            return True
        return self.is_builtin_call(value, "len")

    def is_restore_part(self, value):
        return (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and self.namespace.values.get(value.func.id) is restore_part
            and len(value.args) == 3
            and not value.keywords
        )

    def is_drop_last(self, statement):
        value = getattr(statement, "value", None)
        return (
            isinstance(statement, gast.Expr)
            or (isinstance(statement, gast.Assign) and len(statement.targets) == 1)
        ) and (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and self.namespace.values.get(value.func.id) is drop_last
            and len(value.args) == 2
        )

    def without_drop_last(self, statement):
        """`t = drop_last(items, n)` (how generated code undoes `extend`), in list operations ssad
        differentiates: `t = list(items[len(items) - n:])`, then `items.pop()` n times."""
        items, count = statement.value.args
        lines = [
            "list(__items__[len(__items__) - __count__:])",
            "for __k__ in range(__count__):\n    __items__.pop()",
        ]
        template = gast.parse("\n".join(lines)).body
        names = {"len": self.helper_name("len", len), "range": self.helper_name("range", range),
                 "list": self.helper_name("list", list),
                 "__k__": gast.Name(id=self.namer.fresh("k"), ctx=gast.Store(), annotation=None, type_comment=None)}
        names["__items__"], names["__count__"] = items, count

        class Fill(gast.NodeTransformer):
            def visit_Name(self, node):
                if node.id not in names:
                    return node
                filled = copy.deepcopy(names[node.id])
                if isinstance(filled, gast.Name):
                    filled.ctx = node.ctx
                return filled

        taken, loop = [Fill().visit(node) for node in template]
        first = gast.Assign(targets=statement.targets, value=taken.value, type_comment=None) if isinstance(
            statement, gast.Assign
        ) else None
        out = ([first] if first is not None else []) + [loop]
        return [gast.copy_location(node, statement) for node in out]

    def helper_name(self, preferred, value):
        return gast.Name(id=self.namespace.bind(preferred, value), ctx=gast.Load(), annotation=None, type_comment=None)

    def is_static(self, expr):
        """A free name or an attribute path from one (`np`, `np.pi`, `np.linalg.norm`)."""
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id in self.namespace.values and expr.id not in self.current

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
        if isinstance(expr, (gast.IfExp, gast.BoolOp)):
            return self.choice(expr, name_hint)
        if isinstance(expr, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self.comprehension(expr, name_hint)
        if isinstance(expr, gast.Lambda):
            return self.atom_of_simple(self.function_value(expr, name_hint or "function"), name_hint or "function")
        if self.is_builtin_call(expr, "map") and len(expr.args) >= 2:
            return self.comprehension(_map_as_comprehension(expr, self.namer), name_hint)
        return self.atom_of_simple(self.simple(expr), name_hint)

    def comprehension(self, expr, name_hint):
        """`[f(v) for v in xs if c]` as a loop that appends (a dict comprehension assigns keys).

        The comprehension's variables get fresh names: like Python's own scope for
        them, they never touch the function's variables of the same name.
        """
        name = self.namer.fresh(name_hint or ("mapping" if isinstance(expr, gast.DictComp) else "items"))
        renames = {}
        for generator in expr.generators:
            for node in gast.walk(generator.target):
                if isinstance(node, gast.Name):
                    renames[node.id] = self.namer.fresh(node.id)
        rename = _Rename(renames)
        origin = self.origin
        if isinstance(expr, gast.DictComp):
            start = gast.Dict(keys=[], values=[])
            target = gast.Subscript(value=_name(name), slice=rename.visit(expr.key), ctx=gast.Store())
            innermost = gast.Assign(targets=[target], value=rename.visit(expr.value), type_comment=None)
        else:
            start = gast.List(elts=[], ctx=gast.Load())
            append = gast.Attribute(value=_name(name), attr="append", ctx=gast.Load())
            innermost = gast.Expr(value=_call(append, rename.visit(expr.elt)))
        body = [gast.copy_location(innermost, origin)]
        for generator in reversed(expr.generators):
            for condition in reversed(generator.ifs):
                body = [gast.copy_location(gast.If(test=rename.visit(condition), body=body, orelse=[]), origin)]
            loop = gast.For(
                target=rename.visit(generator.target), iter=rename.visit(generator.iter), body=body, orelse=[], type_comment=None
            )
            body = [gast.copy_location(loop, origin)]
        self.defined.add(name)
        self.current[name] = name
        self.emit_assign(name, start)
        saved_origin = self.origin
        self.block(body)
        self.origin = saved_origin
        del self.current[name]
        return _name(name)

    def atom_of_simple(self, simple, name_hint=None):
        if isinstance(simple, (gast.Name, gast.Constant)) or self.is_static(simple):
            return simple
        name = self.namer.fresh(name_hint) if name_hint else self.namer.temporary_for(simple, self.defined)
        self.defined.add(name)
        self.emit_assign(name, simple)
        return _name(name)

    def choice(self, expr, name_hint):
        """`a if c else b`, `a and b`, `a or b` as `if` statements assigning one name."""
        name = self.namer.fresh(name_hint or ("choice" if isinstance(expr, gast.IfExp) else "either"))
        self.defined.add(name)
        if isinstance(expr, gast.IfExp):
            test = self.atom(expr.test)
            self.emit(gast.If(test=test, body=self.branch(name, expr.body), orelse=self.branch(name, expr.orelse)))
            return _name(name)
        # `a and b` is `b if a else a`; `a or b` is `a if a else b` (a evaluated once).
        first = self.atom(expr.values[0])
        for value in expr.values[1:]:
            if isinstance(expr.op, gast.And):
                body, orelse = self.branch(name, value), self.branch(name, first)
            else:
                body, orelse = self.branch(name, first), self.branch(name, value)
            self.emit(gast.If(test=first, body=body, orelse=orelse))
            if value is not expr.values[-1]:
                # The next test reads a copy: an `if` never assigns its own test.
                so_far = self.namer.fresh(f"{name}_so_far")
                self.defined.add(so_far)
                self.emit_assign(so_far, _name(name))
                first = _name(so_far)
        return _name(name)

    def branch(self, name, value):
        saved, self.out = self.out, []
        self.depth += 1
        self.emit_assign(name, self.simple(value))
        self.depth -= 1
        lowered, self.out = self.out, saved
        return lowered

    def load(self, name):
        return _name(self.current.get(name, name))

    def simple(self, expr):
        """`expr` as one operation on atoms (emitting temporaries for its operands)."""
        if isinstance(expr, gast.Lambda):
            return self.function_value(expr, "function")
        if isinstance(expr, (gast.Name, gast.Constant, gast.IfExp, gast.BoolOp, gast.ListComp, gast.GeneratorExp,
                             gast.DictComp)) or self.is_static(expr) or (self.is_builtin_call(expr, "map") and len(expr.args) >= 2):
            return self.atom(expr)
        if isinstance(expr, gast.BinOp):
            left, right = self.atom(expr.left), self.atom(expr.right)
            if isinstance(expr.op, gast.Add) and (self.is_sequence(left) or self.is_sequence(right)):
                # `xs + ys` on lists or tuples joins them: not arithmetic
                helper = self.namespace.bind("concat", concat)
                return _call(_name(helper), left, right)
            return gast.BinOp(left=left, op=expr.op, right=right)
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
                args=[
                    gast.Starred(value=self.atom(a.value), ctx=gast.Load()) if isinstance(a, gast.Starred) else self.atom(a)
                    for a in expr.args
                ],
                keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in expr.keywords],
            )
        if isinstance(expr, gast.Attribute):
            return gast.Attribute(value=self.atom(expr.value), attr=expr.attr, ctx=gast.Load())
        if isinstance(expr, gast.Subscript):
            joined = self.index_concatenation(expr)
            if joined is not None:
                return joined
            return gast.Subscript(value=self.atom(expr.value), slice=self.index(expr.slice), ctx=gast.Load())
        if isinstance(expr, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        if isinstance(expr, gast.List):
            return gast.List(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        if isinstance(expr, gast.Dict):
            return gast.Dict(
                keys=[gast.Constant(value=k.value, kind=None) for k in expr.keys], values=[self.atom(v) for v in expr.values]
            )
        raise self.parsed.unsupported(expr, f"`{type(expr).__name__}` expressions are not supported")

    def index_concatenation(self, expr):
        """`np.r_[a, 0:3, b]` as the call `r_(a, r_0_3, b)` (likewise `np.c_`), so its pieces get
        gradients by the rules of `r_` and `c_`; each slice piece becomes its array
        (`np.r_[0:3]`, a constant). None for any other subscript, and for a string
        directive (`np.r_['0,2', a]`), which stays a subscript ssad refuses to differentiate."""
        if not self.is_static(expr.value):
            return None
        from .primitives import static_value

        try:
            holder = static_value(expr.value, self)
        except Exception:  # noqa: BLE001 - a path that does not resolve is reported elsewhere
            return None
        helper = {id(np.r_): r_, id(np.c_): c_}.get(id(holder))
        elements = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
        if helper is None or all(isinstance(e, gast.Slice) for e in elements):
            return None
        if any(isinstance(e, gast.Constant) and isinstance(e.value, str) for e in elements):
            return None
        pieces = []
        for element in elements:
            if isinstance(element, gast.Slice):  # np.r_[start:stop:step]: an arange or a linspace
                arange = copy.deepcopy(expr.value) if helper is r_ else _name(self.namespace.bind("np_r", np.r_))
                element = gast.Subscript(value=arange, slice=element, ctx=gast.Load())
            elif isinstance(element, gast.Starred):
                pieces.append(gast.Starred(value=self.atom(element.value), ctx=gast.Load()))
                continue
            pieces.append(self.atom(element))
        return _call(_name(self.namespace.bind(helper.__name__, helper)), *pieces)

    def callee(self, func):
        if self.is_static(func):
            return func
        if isinstance(func, gast.Attribute):
            return gast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=gast.Load())
        # A function value: a parameter, a nested def, a lambda, an item of a container.
        return self.atom(func)

    def function_value(self, node, name):
        """`closure(g_template, x=x)` for a nested `def g` or a `lambda` (see `closures`)."""
        inner_locals = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                inner_locals.add(extra.id)
        body = [node.body] if isinstance(node, gast.Lambda) else node.body
        for statement in body:
            for child in gast.walk(statement):
                if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
                    inner_locals.add(child.id)
        loaded = []
        for statement in body:
            for child in gast.walk(statement):
                if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and child.id not in loaded:
                    loaded.append(child.id)
        captured = [n for n in loaded if n not in inner_locals and (n in self.current or n == name)]
        for captured_name in captured:
            if captured_name != name and self.assigned_later(captured_name):
                if isinstance(node, gast.Lambda):
                    label = "the lambda" if name == "function" else f"the lambda {name}"
                else:
                    label = f"the nested function {name}"
                raise self.parsed.unsupported(
                    node,
                    f"{label} reads `{captured_name}`, which is assigned again later; ssad "
                    "captures values when the function is made: pass the value as an argument instead",
                )
        template_name = self.namer.fresh(f"{name}_template")  # unique in this generated module
        template = make_template(node, template_name, captured, self.namespace.values, self.parsed.filename)
        self.namespace.values[template_name] = template
        keywords = []
        for captured_name in captured:
            if captured_name == name and (name not in self.current):
                value = gast.Attribute(value=_name(self.namespace.bind("closures", closures_module)), attr="SELF", ctx=gast.Load())
            else:
                value = self.load(captured_name)
            keywords.append(gast.keyword(arg=captured_name, value=value))
        helper = self.namespace.bind("closure", closure)
        return gast.Call(func=_name(helper), args=[_name(template.__name__)], keywords=keywords)

    def assigned_later(self, user_name):
        for statements, position in self.context:
            for statement in statements[position + 1 :]:
                if _assigns(statement, user_name):
                    return True
        return any(_assigns(loop, user_name) for loop in self.loops)

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


class _Rename(gast.NodeTransformer):
    """Rename the variables of a comprehension (a copy of the tree is returned)."""

    def __init__(self, renames):
        self.renames = renames

    def visit(self, node):
        return super().visit(copy.deepcopy(node)) if node is not None else None

    def generic_visit(self, node):
        return gast.NodeTransformer.generic_visit(self, node)

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.Name(id=self.renames[node.id], ctx=node.ctx, annotation=None, type_comment=None)
        return node


def _map_as_comprehension(expr, namer):
    """`map(f, xs, ys)` as `[f(v, w) for v, w in zip(xs, ys)]` (a list, not an iterator)."""
    function, iterables = expr.args[0], expr.args[1:]
    names = [namer.fresh("item") for _ in iterables]
    if len(iterables) == 1:
        target, iterable = _name(names[0], store=True), iterables[0]
    else:
        target = gast.Tuple(elts=[_name(n, store=True) for n in names], ctx=gast.Store())
        iterable = gast.Call(func=_name("zip"), args=list(iterables), keywords=[])
    element = gast.Call(func=function, args=[_name(n) for n in names], keywords=[])
    generator = gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
    return gast.ListComp(elt=element, generators=[generator])


_SCALAR_RESULTS = {np.sum, np.mean, np.prod, np.max, np.min, np.std, np.var, np.linalg.det, np.trace, float, int, len}


def _makes_sequence(value, lowering):
    """Whether `value` is known to produce a list or tuple."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return True
    if isinstance(value, gast.Name):
        return value.id in lowering.sequences
    if isinstance(value, gast.Call):
        if lowering.is_builtin_call(value, "list") or lowering.is_builtin_call(value, "tuple"):
            return True
        func = value.func
        return isinstance(func, gast.Name) and lowering.namespace.values.get(func.id) is concat
    return False


def _is_loop_exit(statement):
    return (
        isinstance(statement, gast.If)
        and len(statement.body) == 1
        and isinstance(statement.body[0], gast.Break)
        and not statement.orelse
    )


def _short(atom):
    return atom.id if isinstance(atom, gast.Name) else "items"


def _reads(node, name):
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == name for n in gast.walk(node))


def _assigns(node, name):
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name for n in gast.walk(node))


def _is_negative_literal(expr):
    return (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, (gast.USub, gast.UAdd))
        and isinstance(expr.operand, gast.Constant)
        and isinstance(expr.operand.value, (int, float))
        and not isinstance(expr.operand.value, bool)
    )
