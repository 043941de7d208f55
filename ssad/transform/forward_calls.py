"""Forward mode, calls: the tangent of a call, computed next to it.

Methods of the forward-mode pass (see `forward`): a primitive's tangent rule,
inlined with the operands substituted and zero tangents folded away, or called
(`rule(tangents, y, *args)`); a call to the user's own function through its
jvp handle (`t, d_t = jvp_g(a, d_a=...)`); a call through a function value
(`t, d_t = call_jvp(f, ...)`).
"""


import gast

from ..analysis.kinds import operand_kinds
from ..analysis.shapes import without_shape_calls
from ..frontend import primitives
from ..frontend.builders import clone, constant, name, store
from ..errors import MissingRuleError, SourceError
from .fold import ZERO, is_zero, materialize_zeros
from .inline import active_keyword_refusal, bind_arguments, instantiate, keywords_as_positions, template_of
from ..registry import REGISTRY, primitive_name
from .call_adjoints import class_refusal
from .calls import bind_operands
from ..runtime import broadcast_like
from ..runtime.callables import function_label, parameter_order, tangent_parameter, transformable
from ..runtime.handles import jvp_handle


class Before:
    """Statements that go before the primal statement rather than after it."""

    def __init__(self, statements):
        self.statements = statements


class Replace:
    """A statement that takes the place of the primal statement before it (a split call)."""

    def __init__(self, statement):
        self.statement = statement


class TangentCalls:
    """Forward mode, calls: the tangent of a call, computed next to it."""

    def primitive(self, statement, op, target):
        rule = REGISTRY.tangent_rule(op.primitive) if op.primitive is not None else None
        if rule is not None:
            op = keywords_as_positions(op, rule, lambda value: self.d(value) is not None)
        # A tangent rule sees the tangents of positional operands only (as reverse mode refuses)
        if op.passes_through and self.d(op.args[-1].value) is not None:
            raise self.program.parsed.unsupported(
                statement, f"`*` passes values that carry tangents to {primitives.spread_label(op)}; pass them one "
                "by one, or unpack a list of a length ssad sees (a list display, or a name that holds one: `rows = "
                "[a, b]`, then `zip(*rows)`)"
            )
        for keyword, value in op.keywords.items():
            if self.d(value) is not None and (op.primitive, keyword) not in primitives.SELECTING_KEYS:
                raise SourceError(active_keyword_refusal(op.primitive, rule, op.name, keyword, "tangent"),
                                  *self.program.parsed.where(statement))
        rule = REGISTRY.tangent_rule(op.primitive) if op.primitive is not None else None
        if rule is None and op.primitive is not None and transformable(op.primitive):
            # the user gave an adjoint rule but no tangent rule: forward mode reads the source
            return self.user_call(statement, op, target)
        if rule is None and isinstance(op.primitive, type):
            raise MissingRuleError(class_refusal(op.primitive, "tangents"), *self.program.parsed.where(statement))
        if rule is None:
            label = primitive_name(op.primitive) if op.primitive is not None else op.name
            raise MissingRuleError(
                f"no tangent rule for {label} (called as `{op.name}`); register one with "
                f"@ssad.tangent({primitives.rule_target(op) if op.primitive is not None else 'f'}) to "
                "differentiate it in forward mode",
                *self.program.parsed.where(statement),
            )
        template = template_of(rule, single=True)
        arguments = bind_arguments(rule, primitive_name(op.primitive), len(op.args), list(op.keywords), first="t",
                                   where=self.program.parsed.where(statement))
        if template is not None:
            zero = gast.Name(id=ZERO, ctx=gast.Load(), annotation=None, type_comment=None)
            tangents = gast.Tuple(elts=[self.d(a) or clone(zero) for a in op.args], ctx=gast.Load())
            bound = {}
            for param, placeholder in arguments.items():
                if param in template.ignored:
                    continue
                if placeholder == "t":
                    bound[param] = tangents
                elif placeholder == "y":
                    bound[param] = name(target)
                elif isinstance(placeholder, int):
                    bound[param] = op.args[placeholder]
                else:
                    bound[param] = op.keywords[placeholder[1]]
            statements, outputs = instantiate(template, bound, self.namespace, self.namer, {0})
            output = outputs[0]
            if target in self.scalars:  # a scalar's tangent has its shape already
                names = {n for n, v in self.namespace.values.items() if v is broadcast_like}
                output = without_shape_calls(output, names, target)
            if is_zero(output):
                return self.drop(target)
            return [materialize_zeros(s) for s in statements] + self.set_tangent(target, materialize_zeros(output))
        rule_name = self.helper(getattr(rule, "__name__", "tangent_rule"), rule)
        self.namespace.pure.append(rule)
        tangents = gast.Tuple(elts=[self.d_or_zero(a) for a in op.args], ctx=gast.Load())
        rule_call = gast.Call(
            func=name(rule_name),
            args=[tangents, name(target)] + clone(op.args),
            keywords=[gast.keyword(arg=k, value=clone(v)) for k, v in op.keywords.items()],
        )
        return self.set_tangent(target, rule_call)

    def user_call(self, statement, op, target):
        """`t, d_t = jvp_g(a, b, d_a=d_a)`: the callee's own forward-mode code."""
        function = op.primitive
        tangents = {}  # parameter -> the tangent it takes
        for param, operand in bind_operands(op, self.program, statement):
            if isinstance(param, tuple):  # the values `*args` collects take a tuple of tangents
                tangents.setdefault(param[0], []).append(operand)
            elif self.d(operand) is not None:
                tangents[param] = self.d(operand)
        keys = {}  # the keys of the keywords each `**param` collects, in order
        for param, _ in bind_operands(op, self.program, statement):
            if isinstance(param, tuple) and isinstance(param[1], str):
                keys.setdefault(param[0], []).append(param[1])
        for param, items in list(tangents.items()):
            if isinstance(items, list):
                if not any(self.d(item) is not None for item in items):
                    del tangents[param]
                elif param in keys:  # the keywords `**param` collects take a dict of tangents
                    tangents[param] = gast.Dict(keys=[constant(k) for k in keys[param]],
                                                values=[self.d_or_zero(item) for item in items])
                else:
                    tangents[param] = gast.Tuple(elts=[self.d_or_zero(item) for item in items], ctx=gast.Load())
        wrt = tuple(p for p in parameter_order(function) if p in tangents)
        lazy = jvp_handle(function, wrt, operand_kinds(bind_operands(op, self.program, statement), self.program))
        try:
            lazy.prepare()  # this code keeps the callee's code of now, whatever is registered later
        except MissingRuleError as error:
            if error.filename is not None:
                raise
            raise MissingRuleError(error.message, *self.program.parsed.where(statement)) from None
        self.callees.append((function, wrt))
        handle = self.helper(f"jvp_{function_label(function)}", lazy)
        call_node = clone(statement.value)
        call_node.func = name(handle)
        call_node.keywords = list(call_node.keywords) + [
            gast.keyword(arg=tangent_parameter(p), value=tangents[p]) for p in wrt
        ]
        self.tangent[target] = self.names[target]
        self.owned.discard(target)
        split = gast.Assign(
            targets=[gast.Tuple(elts=[store(target), store(self.names[target])], ctx=gast.Store())],
            value=call_node,
            type_comment=None,
        )
        statement_copy = gast.copy_location(split, statement)
        return [Replace(statement_copy)]

    def dynamic_call(self, statement, op, target):
        from ..runtime.dynamic import call_jvp, method_jvp
        from ..runtime.operators import operator_jvp

        if op.kind == primitives.DYNAMIC_CALL:
            helper = self.helper("call_jvp", call_jvp)
            head = [clone(op.args[0]), self.d(op.args[0]) or constant(None)]
            args = op.args[1:]
        else:  # a method, or an operator (`op.primitive`) of an object: `u * x` calls u.__mul__
            helper = self.helper(*(("operator_jvp", operator_jvp) if op.primitive is not None
                                   else ("method_jvp", method_jvp)))
            head = [clone(op.args[0]), self.d(op.args[0]) or constant(None), constant(op.keys[0])]
            args = op.args[1:]
        primals = gast.Tuple(elts=clone(args), ctx=gast.Load())
        tangents = gast.Tuple(elts=[self.d(a) or constant(None) for a in args], ctx=gast.Load())
        keys = [constant(k) for k in op.keywords]
        keywords = gast.Dict(keys=keys, values=[clone(v) for v in op.keywords.values()])
        keyword_tangents = gast.Dict(keys=clone(keys), values=[self.d(v) or constant(None) for v in op.keywords.values()])
        call_node = gast.Call(func=name(helper), args=head + [primals, tangents, keywords, keyword_tangents], keywords=[])
        self.tangent[target] = self.names[target]
        self.owned.discard(target)
        split = gast.Assign(
            targets=[gast.Tuple(elts=[store(target), store(self.names[target])], ctx=gast.Store())],
            value=call_node,
            type_comment=None,
        )
        return [Replace(gast.copy_location(split, statement))]
