"""The adjoints of calls and of container mutations, for the reverse sweep.

Methods of `StatementAdjoints` (see `adjoints`): a primitive's adjoint rule, inlined
with the operands substituted or called (`rule(dy, y, *args)`); a call through a
function value (`pullback(d_t)`); a call to the user's own function
(`backward_g(d_t, t_saved)`); `items.pop()` and `items.append(v)`. A call that
carries a gradient and has no rule raises MissingRuleError where it stands.
"""

import inspect
import itertools
import operator
import textwrap

import gast

from ..analysis.ranks import Fact
from ..frontend import primitives
from ..frontend.builders import assign, call, clone, constant, name, walk
from ..errors import MissingRuleError, SourceError
from ..runtime.refusals import discrete_only, rule_adjoints
from .inline import active_keyword_refusal, bind_arguments, instantiate, keywords_as_positions, template_of
from ..registry import REGISTRY, primitive_name
from ..runtime import (
    drop_last,
    list_adjoint,
    put_back,
    zeros_like_value,
)


def _none_positions(rule):
    """(positions where every tuple `rule` returns holds a literal None, positions where some does,
    the length of the shortest tuple it returns when every `return` is a tuple display, else None)."""
    try:
        source = textwrap.dedent(inspect.getsource(rule))
        tree = gast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return set(), set(), None
    top = tree.body[0] if tree.body and isinstance(tree.body[0], gast.FunctionDef) else None
    every = [node for node in walk(top) if isinstance(node, gast.Return)] if top is not None else []
    returns = [node.value for node in every if isinstance(node.value, gast.Tuple)]
    nested = any(isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not top for node in walk(top or tree))
    shortest = None
    if every and len(returns) == len(every) and not nested and not any(
        isinstance(e, gast.Starred) for r in returns for e in r.elts
    ):
        shortest = min(len(r.elts) for r in returns)
    nones = [{i for i, e in enumerate(r.elts) if isinstance(e, gast.Constant) and e.value is None} for r in returns]
    if not nones:
        return set(), set(), shortest
    return set.intersection(*nones), set.union(*nones), shortest


def _rule_name(path):
    return path.replace(".", "_").strip("_()") + "_adjoint"


def _same_name(a, b):
    return isinstance(a, gast.Name) and isinstance(b, gast.Name) and a.id == b.id


class CallAdjoints:
    """The adjoints of calls and of container mutations, for the reverse sweep."""

    def pop_adjoint(self, statement, op):
        """t = items.pop(i): the adjoint of items gets d_t back at i; items gets t back."""
        target = statement.targets[0].id
        items = op.args[0]
        index = clone(op.args[1]) if len(op.args) > 1 else None
        d_t = self.adjoint.pop(target, None)
        self.owned.discard(target)
        if items.id in self.adjoint or d_t is not None:
            self.comment_for(statement)
            zero = self.helper("zeros_like_value", zeros_like_value)
            if items.id not in self.adjoint:
                base = call(zero, clone(items))
            elif items.id in self.owned and self.backward_loops:  # made a list before the loop
                base = name(self.adjoint[items.id])
            else:  # a private list (an owned adjoint may be an array, see `mutation_adjoint`)
                base = call(self.helper("list_adjoint", list_adjoint), name(self.adjoint[items.id]), clone(items))
            d_value = name(d_t) if d_t is not None else call(zero, name(target))
            adjoint = self.adjoint.get(items.id) or self.adjoint_names[items.id]
            self.out.append(assign(adjoint, base))
            self.out.append(self.put_back(name(adjoint), index, d_value))
            self.adjoint[items.id] = adjoint
            self.owned.add(items.id)
        # Put the item back, so earlier code sees the list (or dict) as it was.
        self.out.append(self.put_back(clone(items), clone(index), name(target)))

    def put_back(self, items, index, value):
        """`items.append(value)` undoing `items.pop()`; `put_back(items, index, value)`
        undoing `items.pop(index)` of a list or a dict (see `runtime.put_back`)."""
        if index is None:
            return gast.Expr(value=gast.Call(
                func=gast.Attribute(value=items, attr="append", ctx=gast.Load()), args=[value], keywords=[]
            ))
        return gast.Expr(value=call(self.helper("put_back", put_back), items, index, value))

    def mutation_adjoint(self, statement, items, method, operands):
        """items.append(v) / items.extend(vs) / items.insert(i, v), replayed in reverse."""
        if items in self.namespace.values:
            return  # a list outside the function (a global): a side effect that stays, like `print`
        if items in self.adjoint:
            self.comment_for(statement)
            d_items = self.adjoint[items]
            # A private list: an adjoint owned already may be an array (`np.sum(items)`'s); in a
            # loop, the adjoint sweep makes the list before the loop (`replay.loop_adjoint`).
            if items not in self.owned or not self.backward_loops:
                self.out.append(assign(d_items, call(self.helper("list_adjoint", list_adjoint), name(d_items), name(items))))
                self.owned.add(items)
            if method == "append":
                taken = gast.Call(func=gast.Attribute(value=name(d_items), attr="pop", ctx=gast.Load()), args=[], keywords=[])
                value = operands[0]
            elif method == "insert":
                taken = gast.Call(
                    func=gast.Attribute(value=name(d_items), attr="pop", ctx=gast.Load()),
                    args=[clone(operands[0])],
                    keywords=[],
                )
                value = operands[1]
            else:
                length = call(self.helper("len", len), clone(operands[0]))
                taken = call(self.helper("drop_last", drop_last), name(d_items), length)
                value = operands[0]
            if self.activity.is_active(value):
                self.contribute(value, taken)
            else:
                self.out.append(gast.Expr(value=taken))
        # Undo the change, so earlier code sees the list as it was.
        if method == "append":
            undo = gast.Call(func=gast.Attribute(value=name(items), attr="pop", ctx=gast.Load()), args=[], keywords=[])
        elif method == "insert":
            undo = gast.Call(
                func=gast.Attribute(value=name(items), attr="pop", ctx=gast.Load()), args=[clone(operands[0])], keywords=[]
            )
        else:
            length = call(self.helper("len", len), clone(operands[0]))
            undo = call(self.helper("drop_last", drop_last), name(items), length)
        self.out.append(gast.Expr(value=undo))

    def primitive(self, statement, op, dy, y):
        rule = REGISTRY.adjoint_rule(op.primitive) if op.primitive is not None else None
        if rule is not None:
            op = keywords_as_positions(op, rule, self.activity.is_active)
        if op.passes_through and self.activity.is_active(op.args[-1].value):
            raise self.program.parsed.unsupported(
                statement, f"`*` passes values that carry gradients to {primitives.spread_label(op)}; pass them "
                "one by one, or unpack a list of a length ssad sees (a list display, or a name that holds one: "
                "`rows = [a, b]`, then `zip(*rows)`)"
            )
        if op.primitive is operator.mul and len(op.args) == 2 and _same_name(*op.args):
            # x * x: one contribution, 2 * x * dy, as for x ** 2, rather than two of x * dy
            op = primitives.Operation(primitives.PRIMITIVE, operator.pow, [op.args[0], constant(2)], name="**")
        active = [i for i, arg in enumerate(op.args) if self.activity.is_active(arg)]
        for keyword, value in op.keywords.items():
            if self.activity.is_active(value) and (op.primitive, keyword) not in primitives.SELECTING_KEYS:
                raise SourceError(active_keyword_refusal(op.primitive, rule, op.name, keyword, "gradient"),
                                  *self.program.parsed.where(statement))
        if not active:
            return
        rule = REGISTRY.adjoint_rule(op.primitive) if op.primitive is not None else None
        if rule is None:
            raise self.missing_rule(statement, op)
        label = primitive_name(op.primitive)
        template = template_of(rule)
        arguments = bind_arguments(rule, label, len(op.args), list(op.keywords), where=self.program.parsed.where(statement))
        if template is not None:
            bound = {}
            for param, placeholder in arguments.items():
                if param not in template.ignored:
                    bound[param] = self._operand(placeholder, op, dy, y)
            active = [i for i in active if i < len(template.outputs) or self.discrete_only(statement, op, i)]
            statements, outputs = instantiate(template, bound, self.namespace, self.namer, set(active))
            self.out.extend(statements)
            for i in active:
                output = outputs[i]
                if isinstance(output, gast.Constant) and output.value is None:
                    continue  # the rule says this argument's derivative is zero
                self.contribute(op.args[i], self.simplify(output, op, i, y, dy))
            return
        always_none, sometimes_none, shortest = _none_positions(rule)
        active = [i for i in active if shortest is None or i < shortest or self.discrete_only(statement, op, i)]
        for i in active:
            if i in sometimes_none and i not in always_none:
                raise MissingRuleError(
                    f"the adjoint rule of {primitive_name(op.primitive)} returns None for its argument {i} "
                    "in some cases only; return a zero (0.0 or an array of zeros) there instead",
                    *self.program.parsed.where(statement),
                )
        active = [i for i in active if i not in always_none]  # a zero derivative, as the rule says
        rule_name = self.helper(getattr(rule, "__name__", "adjoint_rule"), rule)
        self.namespace.pure.append(rule)
        rule_call = gast.Call(
            func=name(rule_name),
            args=[name(dy), name(y)] + clone(op.args),
            keywords=[gast.keyword(arg=k, value=clone(v)) for k, v in op.keywords.items()],
        )
        if shortest is None and active and not getattr(rule, "__module__", "").startswith("ssad."):
            # what a rule of the user's returns is not known (a lambda): checked where it runs
            where = [constant(w) for w in self.program.parsed.where(statement)]
            rule_call = call(self.helper("rule_adjoints", rule_adjoints), rule_call,
                             gast.Tuple(elts=[constant(i) for i in active], ctx=gast.Load()), constant(label), *where)
        if len(active) == 1:
            (i,) = active
            self.contribute(op.args[i], gast.Subscript(value=rule_call, slice=constant(i), ctx=gast.Load()))
            return
        holder = self.namer.fresh(f"adjoints_{y}")
        self.out.append(assign(holder, rule_call))
        for i in active:
            self.contribute(op.args[i], gast.Subscript(value=name(holder), slice=constant(i), ctx=gast.Load()))

    def dynamic_call(self, statement, dy, y):
        """`adjoints = t_pullback(d_t)`: the function value's adjoint, one per argument, then keywords."""
        info = self.calls.get(id(statement))
        if info is None:
            return
        _, pullback, operands, keywords = info
        adjoints = gast.Call(func=name(pullback), args=[name(dy)], keywords=[])
        active = [i for i, operand in enumerate(operands) if self.activity.is_active(operand)]
        active_keywords = [k for k, v in keywords.items() if self.activity.is_active(v)]
        if len(active) == 1 and not active_keywords:
            (i,) = active
            self.contribute(operands[i], gast.Subscript(value=adjoints, slice=constant(i), ctx=gast.Load()))
            return
        holder = self.namer.fresh(f"adjoints_{y}")
        self.out.append(assign(holder, adjoints))
        for i in active:
            self.contribute(operands[i], gast.Subscript(value=name(holder), slice=constant(i), ctx=gast.Load()))
        for keyword in active_keywords:
            table = gast.Subscript(value=name(holder), slice=constant(len(operands)), ctx=gast.Load())
            self.contribute(keywords[keyword], gast.Subscript(value=table, slice=constant(keyword), ctx=gast.Load()))

    def user_call(self, statement, dy, y):
        """`d_a, d_b = backward_g(d_t, *t_saved)` for a call split by `reverse.split_call`."""
        info = self.calls.get(id(statement))
        if info is None:
            return
        saved, backward, wrt, bound = info
        adjoints = gast.Call(func=name(backward), args=[name(dy), name(saved)], keywords=[])
        simple = all(not isinstance(p, tuple) for p, _ in bound)
        if len(wrt) == 1 and simple:
            operands = {param: operand for param, operand in bound}
            self.contribute(operands[wrt[0]], gast.Subscript(value=adjoints, slice=constant(0), ctx=gast.Load()))
            return
        holder = self.namer.fresh(f"adjoints_{y}")
        self.out.append(assign(holder, adjoints))
        for param, operand in bound:
            if not self.activity.is_active(operand):
                continue
            key, item = (param, None) if not isinstance(param, tuple) else param
            part = gast.Subscript(value=name(holder), slice=constant(wrt.index(key)), ctx=gast.Load())
            if item is not None:  # an operand *args collected: its item of that tuple's adjoint
                part = gast.Subscript(value=part, slice=constant(item), ctx=gast.Load())
            self.contribute(operand, part)

    def missing_rule(self, statement, op):
        where = self.program.parsed.where(statement)
        if op.primitive is None:
            return MissingRuleError(
                f"ssad does not know how to differentiate `{op.name}` on an active value: it is not "
                "a NumPy array method or attribute with a rule. Use the equivalent NumPy function "
                "(x.sum() -> np.sum(x)), or wrap the computation in a function and register its "
                "adjoint with @ssad.adjoint(that_function)",
                *where,
            )
        label = primitive_name(op.primitive)
        if isinstance(op.primitive, type):
            return MissingRuleError(class_refusal(op.primitive, "gradients"), *where)
        has_source = hasattr(op.primitive, "__code__")
        library = (getattr(op.primitive, "__module__", None) or "").split(".")[0]
        if type(op.primitive).__module__.startswith("scipy.stats") and hasattr(op.primitive, "freeze"):
            return MissingRuleError(
                f"`{op.name}(...)` makes a frozen scipy.stats distribution from values that carry gradients, "
                f"and ssad differentiates frozen distributions only with constant parameters; pass the parameters "
                f"to the method "
                f"instead: `{op.name}.logpdf(x, loc, scale)`",
                *where,
            )
        if library in ("numpy", "scipy"):
            hint = "It has no adjoint rule, and ssad does not transform NumPy's or SciPy's own source. Register one"
        elif library == "ssad":
            hint = ("ssad's own functions are not differentiated through, except `ssad.grad` of a function "
                    "ssad reads; compute the value outside the differentiated function, or register one")
        elif has_source:
            hint = "ssad does not transform its source here (a function made at run time); register one"
        else:
            hint = "It has no adjoint rule and no Python source ssad could transform. Register one"
        return MissingRuleError(
            f"no adjoint rule for {label} (called as `{op.name}`). {hint}:\n\n"
            f"    @ssad.adjoint({primitives.rule_target(op)})\n"
            f"    def {_rule_name(primitives.rule_target(op))}(dy, y, *args, **kwargs):\n"
            f"        return (adjoint_of_arg0, ...)\n",
            *where,
        )

    def discrete_only(self, statement, op, index):
        """For an argument that carries gradients in a position the rule gives none (an axis, a
        shift, a count), the check where the code runs that it holds integers (whose derivative
        is zero): `discrete_only(axis, ...)` in the backward sweep, which raises the refusal for
        a float. A parameter of a helper (`def softmax(v, axis=-1)`) is one, and so is every
        parameter of a gradient function that is differentiated again. Returns False."""
        value = op.args[index]
        refusal = self.no_gradient(statement, op, index)
        fact = getattr(self, "facts", {}).get(value.id) if isinstance(value, gast.Name) else None
        if not isinstance(value, gast.Name) or (isinstance(fact, Fact) and not fact.integer):
            raise refusal  # known to hold floats (the code is specialized on the arguments)
        if isinstance(fact, Fact):
            return False  # known to hold integers
        where = [constant(refusal.filename), constant(refusal.lineno), constant(refusal.col), constant(refusal.line)]
        guard = call(self.helper("discrete_only", discrete_only), clone(value), constant(refusal.message), *where)
        self.out.append(gast.Expr(value=guard))
        return False

    def no_gradient(self, statement, op, index):
        return MissingRuleError(
            f"the adjoint rule of {primitive_name(op.primitive)} gives no gradient for its "
            f"argument {index}, which depends on the differentiated inputs; pass that value in a "
            "position the rule differentiates, or wrap the value with ssad.stop_gradient",
            *self.program.parsed.where(statement),
        )


def class_refusal(cls, what):
    """Why a class constructed from values that carry `what` (gradients, tangents) is refused."""
    if hasattr(cls, "__next__"):  # an iterator (itertools.chain, enumerate): walked, not a record of fields
        label = primitive_name(cls)
        advice = _ITERATOR_ADVICE.get(cls, "walk the values in a `for` loop or a comprehension instead")
        return (f"`{label}(...)` makes an iterator from values that carry {what}, which ssad does not "
                f"differentiate; {advice}")
    article = "an" if cls.__name__[:1].lower() in "aeiou" else "a"
    reason = primitives.record_refusal(cls)
    if reason is not None:
        return (
            f"constructing {article} {cls.__name__} from values that carry {what} is not supported: {reason}, "
            "which ssad does not differentiate; compute those values before constructing it and pass them as "
            "fields, or make the computation a function or method of yours that reads the fields"
        )
    return (
        f"constructing {article} {cls.__name__} from values that carry {what} is not supported; pass the "
        "object in as an argument, or make it a namedtuple or a dataclass"
    )


_ITERATOR_ADVICE = {
    itertools.chain: "join lists with `a + b`, or walk each in turn (`for xs in (a, b):` around `for v in xs:`)",
    itertools.islice: "slice the list or array instead (`xs[start:stop:step]`)",
    itertools.pairwise: "pair neighbours with `zip(xs, xs[1:])`",
    itertools.accumulate: "add up in a loop (`total = total + v`, then `sums.append(total)`), or use np.cumsum",
    itertools.repeat: "repeat a list (`[v] * n`)",
    itertools.zip_longest: "pad the shorter list first (`ys + [fill] * (len(xs) - len(ys))`), then zip",
    itertools.product: "use a comprehension with two `for`s (`[(a, b) for a in xs for b in ys]`)",
    itertools.starmap: "use a comprehension (`[f(a, b) for a, b in pairs]`)",
}
