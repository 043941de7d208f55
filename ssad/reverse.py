"""Stage 5, reverse: the forward sweep and the adjoint sweep of a function.

Assumes: a Program in A-normal form (stage 3) and its Activity (stage 4).
Guarantees: `Gradient.forward` is the primal computation (the ANF body without
its `return`); `Gradient.backward` starts from the seed `d_<result>` and visits
the active statements in reverse order, applying each primitive's adjoint rule
(inlined or called, see `inline`) and accumulating the adjoint of every value
used more than once. Zeros are symbolic: a value that receives no adjoint has no
`d_` variable at all; a differentiated parameter that receives none gets an
explicit zero at the end. Each block of adjoint code is preceded by a
`# grad of: <source line>` comment. A call whose active arguments reach a
function with no rule raises `MissingRuleError` naming it and its call site.
"""

import copy
from dataclasses import dataclass

import gast

from . import primitives
from .emit import comment
from .errors import MissingRuleError, SourceError
from .inline import bind_arguments, instantiate, template_of
from .registry import REGISTRY, primitive_name
from .runtime import add_adjoint, getitem_adjoint, pack_like, zeros_like_value


@dataclass
class Gradient:
    program: object
    forward: list  # statements of the forward sweep
    backward: list  # statements of the adjoint sweep (after the seed)
    seed: str  # name of the result's adjoint
    adjoints: dict  # parameter name -> name of its adjoint at the end of the sweep
    result_active: bool


def reverse(program, activity, wrt, namespace):
    """Build the forward and adjoint sweeps of `program` with respect to `wrt` (names)."""
    return _Reverse(program, activity, namespace).run(wrt)


def _name(identifier):
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(identifier):
    return gast.Name(id=identifier, ctx=gast.Store(), annotation=None, type_comment=None)


def _assign(identifier, value):
    return gast.Assign(targets=[_store(identifier)], value=value, type_comment=None)


def _call(func_name, *args):
    return gast.Call(func=_name(func_name), args=list(args), keywords=[])


class _Reverse:
    def __init__(self, program, activity, namespace):
        self.program = program
        self.activity = activity
        self.namespace = namespace
        self.namer = program.namer
        self.adjoint = {}  # primal name -> its adjoint's name, once nonzero
        self.out = []
        self.containers = self._container_names()
        self.last_comment_line = None
        # Every value's adjoint name is fixed before any rule is inlined, so a rule's
        # local (`d_a`) can never take the name of a parameter's adjoint (`d_a`).
        self.adjoint_names = {}
        for name in program.params + _assigned_in_order(program.body):
            if name not in self.adjoint_names:
                self.adjoint_names[name] = self.namer.adjoint_name(name)

    def _container_names(self):
        """Names whose adjoint may be a tuple, list or dict: accumulate with add_adjoint."""
        names = set()
        for statement in self.program.body:
            if not isinstance(statement, gast.Assign):
                continue
            value = statement.value
            if isinstance(statement.targets[0], gast.Tuple):
                names.add(value.id)
            elif isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
                names.add(value.value.id)
            elif isinstance(value, (gast.Tuple, gast.List)):
                names.add(statement.targets[0].id)
        return names

    def run(self, wrt):
        program = self.program
        forward = [s for s in program.body if not isinstance(s, gast.Return)]
        result = program.result
        result_active = self.activity.is_active(result)
        seed = self.adjoint_names[result.id] if isinstance(result, gast.Name) else self.namer.fresh("d_result")
        if result_active:
            self.adjoint[result.id] = seed
            for statement in reversed(forward):
                self.statement(statement)
        adjoints = {}
        for param in wrt:
            if param not in self.adjoint:
                name = self.adjoint_names[param]
                zero = self.namespace.bind("zeros_like_value", zeros_like_value)
                self.out.append(_assign(name, _call(zero, _name(param))))
                self.adjoint[param] = name
            adjoints[param] = self.adjoint[param]
        return Gradient(program, forward, self.out, seed, adjoints, result_active)

    # ----- one statement -----

    def statement(self, statement):
        if not isinstance(statement, gast.Assign):
            return
        target = statement.targets[0]
        if isinstance(target, gast.Tuple):
            self.unpack(statement)
            return
        if target.id not in self.adjoint:
            return
        op = primitives.operation(statement.value, self.program)
        if not primitives.is_differentiable(op):
            return
        dy = self.adjoint[target.id]
        self.comment_for(statement)
        if op.kind == primitives.COPY:
            self.contribute(op.args[0], _name(dy))
        elif op.kind == primitives.PACK:
            for position, element in enumerate(op.args):
                if self.activity.is_active(element):
                    item = gast.Subscript(
                        value=_name(dy), slice=gast.Constant(value=position, kind=None), ctx=gast.Load()
                    )
                    self.contribute(element, item)
        elif op.kind == primitives.GETITEM:
            source = op.args[0]
            if self.activity.is_active(source):
                helper = self.namespace.bind("getitem_adjoint", getitem_adjoint)
                index = _index_value(copy.deepcopy(statement.value.slice), self.namespace)
                self.contribute(source, _call(helper, _name(dy), copy.deepcopy(source), index))
        else:
            self.primitive(statement, op, dy, target.id)

    def unpack(self, statement):
        names = [e.id for e in statement.targets[0].elts]
        if not any(n in self.adjoint for n in names):
            return
        source = statement.value
        if not self.activity.is_active(source):
            return
        self.comment_for(statement)
        zero = None
        items = []
        for n in names:
            if n in self.adjoint:
                items.append(_name(self.adjoint[n]))
            else:
                zero = zero or self.namespace.bind("zeros_like_value", zeros_like_value)
                items.append(_call(zero, _name(n)))
        pack = self.namespace.bind("pack_like", pack_like)
        self.contribute(source, _call(pack, copy.deepcopy(source), gast.Tuple(elts=items, ctx=gast.Load())))

    def primitive(self, statement, op, dy, y):
        active = [i for i, arg in enumerate(op.args) if self.activity.is_active(arg)]
        for keyword, value in op.keywords.items():
            if self.activity.is_active(value):
                raise SourceError(
                    f"the keyword argument `{keyword}=` of {op.name} depends on the differentiated "
                    "inputs; pass it positionally so its gradient can flow",
                    *self.program.parsed.where(statement),
                )
        if not active:
            return
        rule = REGISTRY.adjoint_rule(op.primitive) if op.primitive is not None else None
        if rule is None:
            raise self.missing_rule(statement, op)
        label = primitive_name(op.primitive)
        template = template_of(rule)
        arguments = bind_arguments(rule, label, len(op.args), list(op.keywords))
        if template is not None:
            call = {}
            for param, placeholder in arguments.items():
                if param not in template.ignored:
                    call[param] = self._operand(placeholder, op, dy, y)
            for i in active:
                if i >= len(template.outputs):
                    raise self.no_gradient(statement, op, i)
            statements, outputs = instantiate(template, call, self.namespace, self.namer, set(active))
            self.out.extend(statements)
            for i in active:
                output = outputs[i]
                if isinstance(output, gast.Constant) and output.value is None:
                    continue
                self.contribute(op.args[i], output)
            return
        rule_name = self.namespace.bind(getattr(rule, "__name__", "adjoint_rule"), rule)
        self.namespace.pure.append(rule)
        call = gast.Call(
            func=_name(rule_name),
            args=[_name(dy), _name(y)] + copy.deepcopy(op.args),
            keywords=[gast.keyword(arg=k, value=copy.deepcopy(v)) for k, v in op.keywords.items()],
        )
        if len(active) == 1:
            (i,) = active
            item = gast.Subscript(value=call, slice=gast.Constant(value=i, kind=None), ctx=gast.Load())
            self.contribute(op.args[i], item)
            return
        holder = self.namer.fresh(f"adjoints_{y}")
        self.out.append(_assign(holder, call))
        for i in active:
            item = gast.Subscript(value=_name(holder), slice=gast.Constant(value=i, kind=None), ctx=gast.Load())
            self.contribute(op.args[i], item)

    def _operand(self, placeholder, op, dy, y):
        if placeholder == "dy":
            return _name(dy)
        if placeholder == "y":
            return _name(y)
        if isinstance(placeholder, tuple) and placeholder and placeholder[0] == "kw":
            return op.keywords[placeholder[1]]
        if isinstance(placeholder, int):
            return op.args[placeholder]
        # A parameter that collected several placeholders cannot be inlined; the
        # template check excludes *args rules, so this is an internal error.
        raise AssertionError(f"cannot bind rule parameter to {placeholder!r}")

    # ----- accumulation -----

    def contribute(self, primal, expr):
        """Add `expr` to the adjoint of the name `primal`."""
        name = primal.id
        if name not in self.adjoint:
            adjoint = self.adjoint_names[name]
            self.adjoint[name] = adjoint
            self.out.append(_assign(adjoint, expr))
            return
        adjoint = self.adjoint[name]
        if name in self.containers:
            helper = self.namespace.bind("add_adjoint", add_adjoint)
            total = _call(helper, _name(adjoint), expr)
        else:
            total = gast.BinOp(left=_name(adjoint), op=gast.Add(), right=expr)
        self.out.append(_assign(adjoint, total))

    # ----- messages and comments -----

    def comment_for(self, statement):
        line = statement.lineno
        if line == self.last_comment_line:
            return
        self.last_comment_line = line
        parsed = self.program.parsed
        text = parsed.line_text(line + parsed.line_offset)
        if text is not None:
            self.out.append(comment(f"grad of: {text.strip()}"))

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
        has_source = hasattr(op.primitive, "__code__")
        hint = (
            "Calls to your own functions are not transformed yet: register an adjoint for it"
            if has_source
            else "It has no adjoint rule and no Python source ssad could transform. Register one"
        )
        return MissingRuleError(
            f"no adjoint rule for {label} (called as `{op.name}`). {hint}:\n\n"
            f"    @ssad.adjoint({op.name})\n"
            f"    def {_rule_name(op.name)}(dy, y, *args, **kwargs):\n"
            f"        return (adjoint_of_arg0, ...)\n",
            *where,
        )

    def no_gradient(self, statement, op, index):
        return MissingRuleError(
            f"the adjoint rule of {primitive_name(op.primitive)} gives no gradient for its "
            f"argument {index}, which depends on the differentiated inputs; pass that value in a "
            "position the rule differentiates, or wrap the value with ssad.stop_gradient",
            *self.program.parsed.where(statement),
        )


def _assigned_in_order(body):
    return [
        n.id
        for statement in body
        if isinstance(statement, gast.Assign)
        for n in gast.walk(statement.targets[0])
        if isinstance(n, gast.Name)
    ]


def _rule_name(path):
    return path.replace(".", "_").strip("_()") + "_adjoint"


def _index_value(index, namespace):
    """The index of a subscript as a value expression: `np.s_[1:3]` for slices."""
    if not _has_slice(index):
        return index
    np_name = namespace.bind("np", __import__("numpy"))
    return gast.Subscript(
        value=gast.Attribute(value=_name(np_name), attr="s_", ctx=gast.Load()), slice=index, ctx=gast.Load()
    )


def _has_slice(index):
    if isinstance(index, gast.Slice):
        return True
    if isinstance(index, gast.Tuple):
        return any(_has_slice(e) for e in index.elts)
    return False
