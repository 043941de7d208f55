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
`a if c else b`, `and` and `or` become `if` statements. Temporaries are named after
what they hold (`sin_x`, `x_times_y`); every statement keeps its user statement's line.
"""

from dataclasses import dataclass

import gast

from .builders import clone, name as _name, store as _store, walk, written_arrays
from .control import ControlFlowLowering
from .expressions import ExpressionLowering, makes_sequence, reads_name
from .generated import GeneratedCodeLowering
from .namespace import Namespace, index_aliases
from .jumps import lower_jumps
from .naming import Namer
from .parse import local_names
from .aliasing import AliasingLowering
from .closures import ClosureLowering
from .lazy import LazyLowering
from .walks import WalkLowering
from .in_place_calls import InPlaceCallLowering
from .arguments import lowered_copying_arguments
from .spreads import changed_in_place
from .sharing import AUGMENTED, Sharing
from .unbound import prebound
from .views import viewed_operands


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
    augmented: frozenset = frozenset()  # the names `a += v` assigns `a + v` to: an object's `__iadd__` first

    @property
    def body(self):
        return self.node.body


def jumps_lowered(parsed):
    """A copy of the parsed function with `break`, `continue` and early `return` lowered
    to flags (the first step of `to_anf`), for showing that stage."""
    node = clone(parsed.node)
    taken = local_names(node) | set(parsed.namespace) | {n.id for n in walk(node) if isinstance(n, gast.Name)}
    lower_jumps(node, Namer(taken))
    return node


def to_anf(parsed):
    """Lower `parsed` (fenced, jumps lowered) to a Program in A-normal form; copying first
    the arguments it writes into (see `arguments`)."""
    return lowered_copying_arguments(parsed, _to_anf)


def _to_anf(parsed):
    node = parsed.node
    taken = local_names(node) | set(parsed.namespace) | {n.id for n in walk(node) if isinstance(n, gast.Name)}
    namer = Namer(taken)
    early_result = lower_jumps(node, namer)
    namespace = Namespace(namer, parsed.namespace)
    lowering = _Lowering(parsed, namer, namespace, early_result)
    body, result = lowering.lower_function(node.body)
    args = node.args
    positional = [a.id for a in list(args.posonlyargs) + list(args.args)]
    params = positional + [a.id for a in args.kwonlyargs] + [a.id for a in (args.vararg, args.kwarg) if a is not None]
    anf_node = gast.FunctionDef(
        name=node.name, args=node.args, body=body, decorator_list=[], returns=None, type_comment=None, type_params=[]
    )
    gast.copy_location(anf_node, node)
    program = Program(
        parsed, anf_node, namer, namespace, params, positional, result, lowering.writes_in_place,
        lowering.sharing.ever, augmented=frozenset(lowering.augmented_names),
    )
    from .validate import validate

    validate(program)
    return program


class _Lowering(AliasingLowering, ClosureLowering, ControlFlowLowering, ExpressionLowering, GeneratedCodeLowering,
                InPlaceCallLowering, LazyLowering, WalkLowering):
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
        self.augmented_names = set()  # see `Program.augmented`
        self.numbers = set()  # names known to hold Python numbers (never share memory)
        # names that may hold a number or an array: an element read (`y[i]`), what min or max
        # chose; `t += v` on one is checked when the code runs (see `check_not_shared`)
        self.maybe_numbers, self.uncertain = set(), set()  # see `aliasing.note_view`
        self.views = set()  # names holding a view of an array (`y = x.T`, `x[1:]`): arrays
        self.captured = {}  # a name a nested function or lambda captured -> what to say of it (see closures)
        self.spelled = {}  # a comprehension's variable, renamed -> the name the user wrote
        # names holding a new list, tuple or dict whose items may be shared (`args = list(xs)`):
        # changing the container itself changes nothing the caller holds
        self.new_containers = set()
        # names that may hold an array or list defined outside the function (`buf = G[0]`), and
        self.module_level, self.module_returners, self.made_here = set(), set(), set()  # see `control`
        self.callers = set()  # names that may hold an array the caller passed in
        self.guarded_arguments, self.guarded_calls, self.guarded_globals, self.read_in_rest = {}, {}, {}, {}  # see passing
        self.guards = set()  # the ids of the checks' calls (see `aliasing.emit_guard`)
        self.roots = {}  # each of them -> the parameters whose arrays it may hold
        self.sequences = set()  # names known to hold lists or tuples (`+` joins them)
        # how many items a tuple or list holds, which keys a dict: `f(*args)`, `f(**options)` (see spreads)
        self.lengths, self.keys, self.changed_sequences = {}, {}, changed_in_place(parsed.node)
        arguments = parsed.node.args
        parameters = [a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
        if arguments.vararg is not None:
            parameters.append(arguments.vararg.id)  # `*rest` holds a tuple
        if arguments.kwarg is not None:
            parameters.append(arguments.kwarg.id)  # `**options` holds a dict
        self.sharing = Sharing(parameters)
        for name in parameters:
            self.current[name] = name
            self.defined.add(name)
            self.callers.add(name)
            self.roots[name] = {name}
        self.index_aliases = index_aliases(parsed.node, self.is_static)
        self.in_place_names = self.written_in_place() if self.is_generated() else set()

    # ----- blocks -----

    def lower_function(self, statements):
        self.block(statements)
        self.check_arguments_guarded()
        last = self.out[-1] if self.out else None
        if not isinstance(last, gast.Return):
            raise AssertionError("jumps lowering guarantees a final return")
        first = self.out[0]
        unbound = [gast.copy_location(gast.Assign(targets=[_store(n)], value=gast.Constant(None, None)), first)
                   for n in prebound(self.out, self.guards, self.sharing.parameters)]
        return unbound + self.out, last.value

    def block(self, statements):
        holder = self.origin  # the statement holding the block, emitted after it
        for position, statement in enumerate(statements):
            self.context.append((statements, position))
            self.origin = statement
            self.statement(statement)
            self.context.pop()
        self.origin = holder

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
        if isinstance(statement, (gast.Assign, gast.Expr)):
            statement.value = self.with_unspent_residuals(statement.value)
        self.check_statement(statement)
        if self.is_drop_last(statement):
            self.block(self.without_drop_last(statement))
        elif self.is_put_back(statement):
            self.block(self.without_put_back(statement))
        elif isinstance(statement, gast.Assign):
            if len(statement.targets) == 1:
                self.check_lazy(statement.targets[0], statement.value)
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
                self.block(self.without_restore_part(statement))
                return
            if isinstance(statement.value, gast.Call):
                func = statement.value.func
                if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and not self.is_static(func):
                    # items.append(v): an in-place change of the list, refused where aliasing would matter
                    self.check_not_shared(
                        func.value.id, statement, f"{func.value.id}.{func.attr}(...)", write=True, list_change=True
                    )
                    self.writes_in_place = True
                    if func.attr == "pop":  # `items.pop()` for its effect: a pop whose value goes unread
                        self.atom(statement.value, name_hint=f"{func.value.id}_popped")
                        return
                simple = self.simple(statement.value)
                self.emit(gast.Expr(value=simple))
                if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and not self.is_generated():
                    self.record_held(func.value.id, func.attr, simple)
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
            self.assign(_store(target.id), value)
            self.note_augmented()
            return
        # y[i] += v: read, add, write the same element, evaluating the index once.
        index = self.index(target.slice)
        old = self.atom_of_simple(gast.Subscript(value=self.load(target.value.id), slice=index, ctx=gast.Load()))
        self.check_item_changed_in_place(target.value.id, old, statement)  # Python's += may change the item
        new = self.atom_of_simple(gast.BinOp(left=old, op=statement.op, right=self.atom(statement.value)))
        self.store_item(target.value.id, clone(index), new, statement)

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
            written = written_arrays(elements)
            if self.depth or written:
                # in place (inside control flow, or `y[0], y[1] = y[1], y[0]`): a target changed
                # first may be read by a later element, so evaluate every element now
                simples = [self.held(s) for s in simples]
                if written:
                    self.refuse_views_of_written(value, simples, written)
            for element, simple in zip(elements, simples, strict=True):
                self.assign(element, simple, resolved=True)
            return
        source = self.atom_of_simple(value) if resolved else self.atom(value)
        if not isinstance(source, gast.Name):
            raise self.parsed.unsupported(value, "cannot unpack a constant")
        self.unpack(target, source)

    def unpack(self, target, source):
        if any(isinstance(e, gast.Subscript) for e in target.elts):
            # `y[0], t = pair`: every item into a temporary, then each target in order, as
            # Python assigns them (`y[i], i = v, 2` writes at the old i)
            temporaries = [self.namer.fresh("item") for _ in target.elts]
            self.defined.update(temporaries)
            self.emit(gast.Assign(targets=[gast.Tuple(elts=[_store(t) for t in temporaries], ctx=gast.Store())],
                                  value=source, type_comment=None))
            if not self.is_generated():
                for position, temporary in enumerate(temporaries):
                    self.share_item(temporary, source, position)
            for element, temporary in zip(target.elts, temporaries, strict=True):
                self.assign(element, _name(temporary), resolved=True)
            return
        stores = []
        nested = []
        parts = []  # (the name an element is stored in, its index in the source)
        for position, element in enumerate(target.elts):
            if isinstance(element, gast.Name):
                stores.append(_store(self.define(element.id)))
                parts.append((stores[-1].id, position))
            else:
                temporary = self.namer.fresh("items")
                self.defined.add(temporary)
                nested.append((element, temporary))
                stores.append(_store(temporary))
        self.emit(gast.Assign(targets=[gast.Tuple(elts=stores, ctx=gast.Store())], value=source, type_comment=None))
        if not self.is_generated():  # generated code unpacks the results of its own functions
            for stored, position in parts:  # an item may be an array the source holds, or a view of one
                self.share_item(stored, source, position)
        for element, temporary in nested:
            self.unpack(element, _name(temporary))

    def store_item(self, user_name, index, atom, origin):
        """`user_name[index] = atom`, refusing writes whose result would depend on aliasing."""
        name = self.current.get(user_name)
        if name is None:
            raise self.parsed.unsupported(origin, f"`{user_name}` is not defined before this assignment")
        # an item of a list or dict replaced: the container changes, not the items it shared
        self.check_not_shared(user_name, origin, f"{user_name}[...] = ...", write=True, index=index,
                              list_change=name in self.new_containers or self.sharing.items_of(name) is not None)
        self.writes_in_place = True
        target = gast.Subscript(value=_name(name), slice=index, ctx=gast.Store())
        self.emit(gast.Assign(targets=[target], value=atom, type_comment=None))
        held = isinstance(atom, gast.Name) and atom.id in self.defined and atom.id not in self.numbers
        if held and not self.is_generated() and (name in self.new_containers or self.sharing.items_of(name) is not None):
            self.sharing.hold(name, atom.id, at_end=False)  # `items[k] = v`: the list holds v's array

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
        if self.depth and reads_name(value, name):
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
        if self.may_be_a_number(value):
            self.maybe_numbers.add(name)
        else:
            self.maybe_numbers.discard(name)
        self.note_view(name, value)
        if makes_sequence(value, self):
            self.sequences.add(name)
        else:
            self.sequences.discard(name)
        self.record_length(name, value)
        resolve = None if self.is_generated() else self.resolve_static
        (self.new_containers.add if self.makes_new_container(value) else self.new_containers.discard)(name)
        self.track_module_level(name, value, resolve)
        copied = self.copied_from(value)
        sources = viewed_operands(value, lambda n: n in self.defined and n not in copied, self.is_static, resolve)
        if self.in_place_names and (any(self.owns_view(s) for s in sources)
                                    or ((isinstance(value, gast.Name) or sources) and self.owns_view(name))):
            view = value.id if isinstance(value, gast.Name) else self.namer.fresh(f"{name}_view")
            if view != getattr(value, "id", None):
                self.defined.add(view)
                self.emit(gast.Assign(targets=[_store(view)], value=value, type_comment=None))
            value, sources = self.owned(view), []
        callers = [s for s in [*sources, *copied] if s in self.callers and (s not in copied or name in self.new_containers)]
        if callers:
            self.callers.add(name)  # a view or a second name of the caller's array
            self.roots[name] = set().union(*(self.roots.get(s, set()) for s in callers))
        else:
            self.callers.discard(name)  # a new value: `y = y.copy()` frees y from the caller's array
        self.sharing.record(name, value, lambda n: n in self.defined and n not in self.numbers and n not in copied,
                            self.is_static, resolve)
        for item in sorted(self.items_copied(copied)):
            self.sharing.hold(name, item, at_end=False)
        self.emit(gast.Assign(targets=[_store(name)], value=value, type_comment=None))

    def emit(self, statement):
        gast.copy_location(statement, self.origin)
        self.out.append(statement)
