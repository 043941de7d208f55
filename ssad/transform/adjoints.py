"""The adjoint code of one simple statement, and how adjoints accumulate.

Used by `reverse`: `StatementAdjoints.statement_adjoint(s)` appends to `self.out`
the code that moves the adjoint of `s`'s target to the adjoints of its operands:
a primitive's rule (inlined or called, see `inline`), a copy, a tuple display, an
unpacking, a read `t = x[i]` (scattered back with `add_at`), or an in-place
write `x[i] = v`.

The adjoint state is symbolic. `self.adjoint` maps each primal name whose adjoint
is nonzero to the name that holds it; a name that is absent has a zero adjoint
that exists nowhere. `self.owned` holds the primal names whose adjoint array is
ours alone (freshly allocated), which can then be updated in place: `d_x[i] = 0.0`
for a write, `add_at(d_x, i, d)` for a read, instead of copying the whole array
each time (a copy per loop iteration would make a loop over `x[i]` quadratic).
"""


import gast
import numpy as np

from ..frontend import primitives
from ..frontend.builders import assign, call, clone, comment, constant, name, store
from .call_adjoints import CallAdjoints
from ..analysis.activity import list_mutation
from ..runtime import (
    add_adjoint, add_at, add_attr, broadcast_like, clear_at, copy_adjoint, getitem_adjoint, kept, pack_like, saved_part,
    take_part, written_part, zero_at, zeros_like_value,
)
from ..runtime import unbroadcast as unbroadcast_helper
from ..runtime.partials import made_partial_adjoint
from ..runtime.refusals import keeps_length
from ..analysis.ranks import unbroadcast_axes, unbroadcast_is_identity
from ..analysis.shapes import drop_unbroadcast, is_elementwise, summed_shape_calls, without_shape_calls
from .fold import plain_forms

_PART_READS = (take_part, written_part, saved_part)  # run-time helpers whose value is a part of their operand


class StatementAdjoints(CallAdjoints):
    """State and code generation shared by the reverse pass; see the module docstring."""

    def __init__(self, program, activity):
        self.program = program
        self.activity = activity
        self.namespace = program.namespace
        self.namer = program.namer
        self.adjoint = {}  # primal name -> the name holding its nonzero adjoint
        self.owned = set()  # primal names whose adjoint array may be updated in place
        self.out = []
        self.last_comment_line = None
        self.adjoint_names = {}
        self.containers = set()
        self.overwritten = set()  # names written by `x[i] = v`: the adjoint there is a bare 0.0
        self.scalars = set()  # names known to hold scalars (see `shapes`)
        self.facts = {}  # name -> what is known of every value it holds (see `ranks`)
        self.real_only = True  # every value (so every adjoint) real: one of ours takes `+=` (`contribute`)
        self.ranks = {}  # name -> its rank, where every value it holds has that rank (see `ranks`)
        self.integers = set()  # names known to hold integers (see `ranks`)
        self.calls = {}

    def helper(self, preferred, value):
        return self.namespace.bind(preferred, value)

    # ----- one statement -----

    def statement_adjoint(self, statement):
        """Append the adjoint code of `statement` and consume its target's adjoint."""
        mutation = list_mutation(statement)
        if mutation is not None:
            self.mutation_adjoint(statement, *mutation)
            return
        if not isinstance(statement, gast.Assign):
            return
        target = statement.targets[0]
        if isinstance(target, gast.Name) and isinstance(statement.value, gast.Call):
            op = primitives.operation(statement.value, self.program)
            if op.kind == primitives.POP:
                self.pop_adjoint(statement, op)
                return
        if isinstance(target, gast.Tuple):
            self.unpack(statement)
            return
        if isinstance(target, gast.Subscript):
            self.write(statement)
            return
        if target.id not in self.adjoint:
            return
        op = primitives.operation(statement.value, self.program)
        dy = self.adjoint.pop(target.id)
        self.owned.discard(target.id)
        if not primitives.is_differentiable(op):
            return
        self.comment_for(statement)
        if op.kind == primitives.COPY:
            if self.activity.is_active(op.args[0]):
                self.contribute(op.args[0], name(dy))
        elif op.kind == primitives.PACK:
            for position, element in enumerate(op.args):
                if self.activity.is_active(element):
                    item = gast.Subscript(value=name(dy), slice=constant(position), ctx=gast.Load())
                    self.contribute(element, self.shaped_item(target.id, item, element))
        elif op.kind == primitives.USER_CALL:
            self.user_call(statement, dy, target.id)
        elif op.kind in (primitives.DYNAMIC_CALL, primitives.METHOD_CALL):
            self.dynamic_call(statement, dy, target.id)
        elif op.kind == primitives.PARTIAL:
            self.partial_adjoint(op, dy, target.id)
        elif op.kind == primitives.CLOSURE:
            for captured, value in op.keywords.items():
                if self.activity.is_active(value):
                    part = gast.Subscript(value=name(dy), slice=constant(captured), ctx=gast.Load())
                    self.contribute(value, part)
        elif op.kind == primitives.ATTRIBUTE:
            source = op.args[0]
            if self.activity.is_active(source):
                self.attribute(source, op.keys[0], name(dy))
        elif op.kind == primitives.DICT:
            for key, value in zip(op.keys, op.args, strict=True):
                if self.activity.is_active(value):
                    item = gast.Subscript(value=name(dy), slice=constant(key), ctx=gast.Load())
                    self.contribute(value, self.shaped_item(target.id, item, value))
        elif op.kind == primitives.CONSTRUCT:
            if primitives.spreads_carried(op, self.activity.is_active):
                raise primitives.spread_record_error(op, self.program, statement)
            fields = dict(zip(op.keys, op.args, strict=False))
            fields.update(op.keywords)
            for field_name, value in fields.items():
                if self.activity.is_active(value):
                    self.contribute(value, gast.Attribute(value=name(dy), attr=field_name, ctx=gast.Load()))
        elif op.kind == primitives.INDEXED:
            if any(self.activity.is_active(a) for a in op.args):
                raise primitives.indexed_error(op, self.program, statement)
        elif op.kind == primitives.GETITEM:
            source = op.args[0]
            if self.activity.is_active(source):
                self.scatter(source, statement.value.slice, name(dy))
        elif self.part_of_array(op):
            # `take_part(d_y, i)` and its kin in a gradient differentiated again read d_y at i
            # as `d_y[i]` does: added there in place, not into an array of zeros each time
            source, index = op.args
            if self.activity.is_active(source):
                part = name(dy)
                if op.primitive is written_part:
                    part = call(self.helper("kept", kept), part, clone(source), clone(index))
                self.scatter(source, index, part)
        else:
            self.primitive(statement, op, dy, target.id)

    def part_of_array(self, op):
        """Whether `op` is `take_part`, `written_part` or `saved_part` of an array (`ranks`) at an index."""
        return (op.kind == primitives.PRIMITIVE and any(op.primitive is f for f in _PART_READS) and len(op.args) == 2
                and not op.keywords and isinstance(op.args[0], gast.Name) and self.ranks.get(op.args[0].id, 0) >= 1)

    def shaped_item(self, container, item, element):
        """The adjoint of a display's element; an item written over later has adjoint 0.0,
        which rules that need the element's shape (np.repeat, np.cumsum) cannot take."""
        if container not in self.overwritten:
            return item
        return call(self.helper("broadcast_like", broadcast_like), item, clone(element))

    def attribute(self, source, attr, d_part):
        """t = source.attr: add d_part to that attribute of source's adjoint."""
        primal = source.id
        if primal in self.adjoint:
            base = name(self.adjoint[primal])
        else:
            base = call(self.helper("zeros_like_value", zeros_like_value), clone(source))
        adjoint = self.adjoint.get(primal) or self.adjoint_names[primal]
        # the object itself tells its fields from its class's constants (`self.scale`)
        self.out.append(assign(adjoint, call(self.helper("add_attr", add_attr), base, constant(attr), d_part,
                                             clone(source))))
        self.adjoint[primal] = adjoint
        self.owned.discard(primal)

    def unpack(self, statement):
        names = [e.id for e in statement.targets[0].elts]
        present = [n for n in names if n in self.adjoint]
        if not present:
            return
        source = statement.value
        items = []
        for n in names:
            if n in self.adjoint:
                items.append(name(self.adjoint.pop(n)))
                self.owned.discard(n)
            else:
                items.append(call(self.helper("zeros_like_value", zeros_like_value), name(n)))
        if not self.activity.is_active(source):
            return
        self.comment_for(statement)
        pack = self.helper("pack_like", pack_like)
        self.contribute(source, call(pack, clone(source), gast.Tuple(elts=items, ctx=gast.Load())))

    def write(self, statement):
        """x[i] = v: v gets the adjoint of x[i]; x's old value gets zero there."""
        target = statement.targets[0]
        array = target.value.id
        if array not in self.adjoint:
            return
        self.comment_for(statement)
        index = index_value(clone(target.slice), self.namespace)
        d_array = self.adjoint[array]
        self.overwritten.add(array)
        value = statement.value
        held = None
        if self.activity.is_active(value):
            part = self.unbroadcast(call(self.helper("written_part", written_part), name(d_array), clone(index)), value)
            if isinstance(value, gast.Name) and value.id == array:
                # `x[i] = x` (NumPy reads all of x before it writes): x's old value gets the part
                # too, after its adjoint is zeroed there, so the part is taken out first
                held = self.namer.fresh(f"d_{array}_written")
                self.out.append(assign(held, part))
            else:
                self.contribute(value, part)
        rank = self.ranks.get(array)
        if array in self.owned and rank is not None and rank >= 1:
            zero = gast.Subscript(value=name(d_array), slice=index, ctx=gast.Store())
            self.out.append(gast.Assign(targets=[zero], value=constant(0.0), type_comment=None))
        else:
            # an adjoint of ours of unknown rank is zeroed in place by `clear_at` (that of a 0-d
            # array may be a number, which cannot be written into); another one, on a copy
            helper = self.helper("clear_at", clear_at) if array in self.owned else self.helper("zero_at", zero_at)
            self.out.append(assign(d_array, call(helper, name(d_array), index)))
            self.owned.add(array)
        if held is not None:
            self.contribute(value, name(held))

    def kept_length(self, statement):
        """Before `xs[i:j] = v` on an active value not known to be an array, for the forward
        sweep: the check that a list keeps its length (`write` gives the adjoint of a slice
        of a list only then; `keeps_length` raises at the user's line otherwise)."""
        target = statement.targets[0]
        if not isinstance(target.slice, gast.Slice) or self.ranks.get(target.value.id, 0) >= 1 \
                or not self.activity.is_active(target.value):
            return []
        parsed = self.program.parsed
        filename, lineno, col, line = parsed.where(statement)
        end = getattr(statement, "end_col_offset", None)
        same_line = getattr(statement, "end_lineno", None) == getattr(statement, "lineno", None)
        written = f"`{line[col:end + parsed.col_offset]}`" if line and end is not None and same_line else \
            "this slice assignment"
        message = (f"{written} assigns another number of items than the slice holds, which changes the length of "
                   f"the list; ssad differentiates a slice assignment into a list that keeps its length: build the "
                   f"new list (`xs = xs[:i] + [...] + xs[j:]`)")
        check = call(self.helper("keeps_length", keeps_length), name(target.value.id),
                     index_value(clone(target.slice), self.namespace), clone(statement.value),
                     *[constant(v) for v in (message, filename, lineno, col)])
        return [gast.copy_location(gast.Expr(value=check), statement)]

    def scatter(self, source, slice_, d_part):
        """Add `d_part` into the adjoint of `source` at the index `slice_` (for t = source[i])."""
        index = index_value(clone(slice_), self.namespace)
        helper = self.helper("add_at", add_at)
        primal = source.id
        d_source = self.adjoint.get(primal) or self.adjoint_names[primal]
        if primal not in self.adjoint:
            # the first contribution: d_part scattered into zeros shaped like the source
            gathered = call(self.helper("getitem_adjoint", getitem_adjoint), d_part, clone(source), index)
            self.out.append(assign(d_source, gathered))
            self.adjoint[primal] = d_source
            self.owned.add(primal)
            return
        if primal in self.owned:
            if self.ranks.get(primal, 0) >= 1 and self._basic_index(slice_):
                # an array of ours and an index that selects each element once: add in place
                part = gast.Subscript(value=name(d_source), slice=clone(index), ctx=gast.Load())
                target = gast.Subscript(value=name(d_source), slice=index, ctx=gast.Store())
                total = gast.BinOp(left=part, op=gast.Add(), right=d_part)
                self.out.append(gast.Assign(targets=[target], value=total, type_comment=None))
                return
            base = name(self.adjoint[primal])
        else:
            base = call(self.helper("copy_adjoint", copy_adjoint), name(self.adjoint[primal]))
        self.out.append(assign(d_source, call(helper, base, index, d_part)))
        self.adjoint[primal] = d_source
        self.owned.add(primal)

    def _basic_index(self, index):
        """Whether `index` is known to be integers and slices of integers (see `ranks`)."""

        def integer(part):
            if isinstance(part, gast.Constant):
                return isinstance(part.value, int) and not isinstance(part.value, bool)
            return isinstance(part, gast.Name) and part.id in self.integers

        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return all(
            all(b is None or integer(b) for b in (p.lower, p.upper, p.step)) if isinstance(p, gast.Slice) else integer(p)
            for p in parts
        )

    def unbroadcast(self, expr, primal):
        from ..runtime import unbroadcast

        return call(self.helper("unbroadcast", unbroadcast), expr, clone(primal))

    def simplify(self, output, op, position, y, dy=None):
        """Drop `unbroadcast` where the shape facts show shapes already match (see `shapes`), and
        give each helper with a plain form for its arguments' known ranks that form (see `ranks`)."""
        names = {n for n, v in self.namespace.values.items() if v is unbroadcast_helper}
        output = drop_unbroadcast(output, op, position, y, self.scalars, names)
        if not self.ranks:
            return output
        operand = op.args[position]
        if isinstance(operand, gast.Name) and op.primitive is not None and is_elementwise(op.primitive) and not (
            op.keywords
        ):
            others = [a for i, a in enumerate(op.args) if i != position]
            if unbroadcast_is_identity(operand, others, self.facts):
                output = without_shape_calls(output, names, operand.id)
            elif (axes := unbroadcast_axes(operand, self.facts.get(y), self.facts)) is not None:
                output = summed_shape_calls(output, names, operand.id, *axes)
        ranks = dict(self.ranks)
        if dy is not None and y in ranks:
            ranks[dy] = ranks[y]
        return plain_forms(output, self.namespace, ranks)

    def _operand(self, placeholder, op, dy, y):
        if placeholder == "dy":
            return name(dy)
        if placeholder == "y":
            return name(y)
        if isinstance(placeholder, tuple) and placeholder and placeholder[0] == "kw":
            return op.keywords[placeholder[1]]
        if isinstance(placeholder, int):
            return op.args[placeholder]
        raise AssertionError(f"cannot bind rule parameter to {placeholder!r}")

    # ----- accumulation -----

    def partial_adjoint(self, op, dy, made):
        """`made = functools.partial(function, *args, **keywords)`: its adjoint (see
        `runtime.partials`) to `args`, `keywords` and `function` (a closure: what it captured)."""
        parts = self.namer.fresh(f"d_{made}_parts")
        helper = self.helper("made_partial_adjoint", made_partial_adjoint)
        names = gast.Tuple(elts=[constant(k) for k in op.keywords], ctx=gast.Load())
        self.out.append(assign(parts, call(helper, name(dy), name(made), clone(op.args[0]), constant(len(op.args) - 1),
                                           names)))
        if self.activity.is_active(op.args[0]):
            self.contribute(op.args[0], gast.Subscript(value=name(parts), slice=constant(2), ctx=gast.Load()))
        bound = gast.Subscript(value=name(parts), slice=constant(0), ctx=gast.Load())
        for position, value in enumerate(op.args[1:]):
            if self.activity.is_active(value):
                self.contribute(value, gast.Subscript(value=clone(bound), slice=constant(position), ctx=gast.Load()))
        table = gast.Subscript(value=name(parts), slice=constant(1), ctx=gast.Load())
        for keyword, value in op.keywords.items():
            if self.activity.is_active(value):
                self.contribute(value, gast.Subscript(value=clone(table), slice=constant(keyword), ctx=gast.Load()))

    def contribute(self, primal, expr):
        """Add `expr` to the adjoint of the name `primal`."""
        key = primal.id
        if key not in self.adjoint:
            adjoint = self.adjoint_names[key]
            self.adjoint[key] = adjoint
            if isinstance(expr, (gast.BinOp, gast.UnaryOp)) and key not in self.containers:
                self.owned.add(key)  # an operator's result is a fresh array: later parts add in place
            else:
                self.owned.discard(key)  # it may be another adjoint itself (`unbroadcast(g, x)` is g)
            self.out.append(assign(adjoint, expr))
            return
        adjoint = self.adjoint[key]
        if key in self.containers:
            total = call(self.helper("add_adjoint", add_adjoint), name(adjoint), expr)
            self.out.append(assign(adjoint, total))
        elif key in self.owned and self.real_only:
            # The array is ours alone (see the module docstring): add in place. Where a value may be
            # complex (`real_only` is False: a complex argument, or a complex value made or read),
            # `d_x + v` makes a real adjoint complex where a complex part arrives.
            self.out.append(gast.AugAssign(target=store(adjoint), op=gast.Add(), value=expr))
        else:
            total = gast.BinOp(left=name(adjoint), op=gast.Add(), right=expr)
            self.out.append(assign(adjoint, total))
        self.owned.add(key)  # `a + b` is a fresh array (in place only where `real_only`)

    def materialize_zero(self, primal, out):
        """Give `primal` an explicit zero adjoint (where symbolic zeros meet at a join)."""
        adjoint = self.adjoint_names[primal]
        zero = call(self.helper("zeros_like_value", zeros_like_value), name(primal))
        out.append(assign(adjoint, zero))
        self.adjoint[primal] = adjoint
        self.owned.add(primal)

    # ----- messages and comments -----

    def comment_for(self, statement):
        line = statement.lineno
        if line == self.last_comment_line:
            return
        self.last_comment_line = line
        parsed = self.program.parsed
        text = parsed.line_text(line + parsed.line_offset)
        if text is not None:
            self.out.append(gast.copy_location(comment(f"grad of: {text.strip()}"), statement))


def index_value(index, namespace):
    """The index of a subscript as a value expression: `np.s_[1:3]` for slices."""
    if not _has_slice(index):
        return index
    np_name = namespace.bind("np", np)
    return gast.Subscript(value=gast.Attribute(value=name(np_name), attr="s_", ctx=gast.Load()), slice=index, ctx=gast.Load())


def _has_slice(index):
    if isinstance(index, gast.Slice):
        return True
    if isinstance(index, gast.Tuple):
        return any(_has_slice(e) for e in index.elts)
    return False
