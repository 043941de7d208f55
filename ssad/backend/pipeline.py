"""The pipeline, composed: from a Python function to its generated derivative code.

    parse -> fence -> jumps -> anf -> cse -> activity -> reverse -> tape | forward -> optimize -> emit

`build` runs the stages top to bottom, one line each; when a stage is named it
returns the source after that stage instead (how the compiler itself is debugged,
and what `ssad.show(f, stage=...)` prints).
"""

import dataclasses
import weakref

import gast

from ..analysis import kinds
from ..errors import SsadError
from ..frontend import anf, fence, parse
from ..frontend.builders import assign, call, clone, name
from ..optimize import cse
from ..runtime import stop_gradient
from ..runtime.checkpoints import Checkpoints
from ..runtime.handles import JVP
from ..runtime.structure import aux_of
from ..transform.forward import forward
from ..transform.reverse import reverse
from . import emit
from .assemble import jvp_function, parse_or_missing_rule, reverse_functions, rule_caller

STAGES = ("parse", "fence", "jumps", "anf", "cse", "activity", "reverse", "tape", "optimized")

# When True, every function the pipeline emits is read back by the front end, which must
# accept it: the code ssad generates stays inside what ssad differentiates, so it can
# always be differentiated again. The test suite sets it for everything it compiles;
# `make fuzz` for the programs whose seed is a multiple of FUZZ_STRUCTURAL.
CHECK_CLOSURE = False


def build(f, wrt, variant, optimize, stage=None, scalars=frozenset(), as_tuple=False, checkpoint=None):
    """Run the pipeline; return a Compiled, or the source at `stage` when one is named.

    `as_tuple`: the gradient function returns a tuple of gradients even for one `wrt`
    (as `grad(f, wrt=(0,))` does), so code that differentiates it sees that structure.
    `checkpoint`: the loop checkpointing strategy of reverse mode, or None."""
    program = _checked_front(f, variant) if stage is None else None
    if program is None:
        parsed = rule_caller(f, variant) or parse_or_missing_rule(f, variant)
        if getattr(f, "_ssad_has_aux", False):  # made by `as_function(f, "aux")`: grad(f, has_aux=True)
            aux_cut_off(parsed)
        if stage == "parse":
            return emit.to_source([parsed.node])
        fence.check(parsed)
        if stage == "fence":  # what the fence accepted, unchanged
            return emit.to_source([parsed.node])
        if stage == "jumps":
            return emit.to_source([anf.jumps_lowered(parsed)])
        program = anf.to_anf(parsed)
        _not_checkpointed(program)
        program.mode = "forward" if variant == JVP else "reverse"  # which rules make a callee a primitive
        if stage == "anf":
            return emit.to_source([program.node])
        program = cse.eliminate_common_subexpressions(program)
        if stage == "cse":
            return emit.to_source([program.node])
        if stage == _CHECK:
            _keep_front(f, variant, program)
    # which names hold objects of the user's, whose members and operators are their own; the
    # early check has seen no argument: a parameter not differentiated may hold one
    analysis = kinds.activity_of(program, scalars, wrt, set(program.params) - set(wrt) if stage == _CHECK else ())
    if stage == "activity":
        return activity_report(program, analysis)
    kinds.guard(program, analysis)
    if variant == JVP:
        tangents = forward(program, wrt, analysis.active, scalars)
        if stage == _CHECK:
            return None
        built = jvp_function(f, program, tangents, wrt, optimize, stage)
    else:
        gradient = reverse(
            program, analysis, wrt, scalars, tape=stage not in ("reverse", _CHECK), checkpoint=checkpoint,
            specialize=stage != _CHECK,
        )
        if stage == _CHECK:
            return None
        built = reverse_functions(f, program, gradient, wrt, variant, optimize, stage, as_tuple)
    if CHECK_CLOSURE and stage is None:
        for generated in (built.function, built.backward):
            if generated is not None:
                _read_back(generated)
    return built


def check(f, wrt, variant):
    """Run the pipeline on `f` up to the transformation, without the tape, optimizing or
    emitting, and raise what it refuses (syntax, a call with no rule, an active keyword
    argument): what `grad(f)` reports at once, though it compiles at the first call."""
    build(f, wrt, variant, False, stage=_CHECK)


_CHECK = "check"  # not a stage `show` takes: `build` stops after the transformation


# The front end's result (the program in A-normal form, common subexpressions merged), as
# the check left it, for the first build of the same function: it depends on the variant
# and on the objects the function's free names denote, not on `wrt` or the argument
# shapes. f -> (variant, free objects, program); taken once.
_FRONTS = weakref.WeakKeyDictionary()


def _keep_front(f, variant, program):
    try:
        _FRONTS[f] = (variant, parse.free_objects(f), _copy(program))
    except TypeError:  # not weakly referable: no sharing
        pass


def _copy(program):
    """The same program, apart from `program`: later stages may change either."""
    namer = program.namer.copy()
    return dataclasses.replace(
        program, node=clone(program.node), namer=namer, namespace=program.namespace.copy(namer),
        params=list(program.params), positional=list(program.positional), result=clone(program.result),
        shares={n: set(names) for n, names in program.shares.items()},
    )


def _checked_front(f, variant):
    """The program the check made of `f`, when nothing it depends on changed since; else None."""
    try:
        kept = _FRONTS.pop(f, None)
    except TypeError:
        return None
    if kept is None or kept[0] != variant or not parse.same_objects(kept[1], parse.free_objects(f)):
        return None
    return kept[2]


def _not_checkpointed(program):
    """SsadError for a gradient made with `checkpoint=`, differentiated again: its snapshots
    carry values ssad does not differentiate through."""
    if any(value is Checkpoints for value in program.namespace.values.values()):
        raise SsadError(
            f"{program.node.name} is a gradient made with checkpoint=, which is not differentiated again yet: "
            "differentiate a gradient made without checkpoint= (grad(grad(f)), hessian(f)), or use "
            "ssad.checkpoint(block) inside f, which composes with every order"
        )


def aux_cut_off(parsed):
    """Read each `return value, aux` of a function that returns `(value, aux)` as
    `return value, stop_gradient(aux)`, and any other `return pair` as `aux = aux_of(pair)`
    (which checks it is a pair) then `return pair[0], aux`: aux reaches the result only
    through a call without a gradient, so no code differentiates it."""
    node = parsed.node
    taken = parse.local_names(node) | parse.loaded_names(node) | set(parsed.namespace)
    helpers = {}
    for helper, value in (("stop_gradient", stop_gradient), ("aux_of", aux_of), ("value_and_aux", None), ("aux", None)):
        fresh, n = helper, 1
        while fresh in taken:
            n += 1
            fresh = f"{helper}_{n}"
        taken.add(fresh)
        helpers[helper] = fresh
        if value is not None:
            parsed.namespace[fresh] = value

    class Returns(gast.NodeTransformer):
        def visit_FunctionDef(self, inner):  # the returns of nested functions are theirs
            return inner if inner is not node else self.generic_visit(inner)

        def visit_Lambda(self, inner):
            return inner

        def visit_Return(self, statement):
            value = statement.value
            if isinstance(value, gast.Tuple) and len(value.elts) == 2 and not any(
                isinstance(e, gast.Starred) for e in value.elts
            ):
                value.elts[1] = gast.copy_location(call(name(helpers["stop_gradient"]), value.elts[1]), value.elts[1])
                return gast.fix_missing_locations(statement)
            if value is None:
                value = gast.Constant(value=None, kind=None)
            pair, aux = helpers["value_and_aux"], helpers["aux"]
            first = gast.Subscript(value=name(pair), slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
            made = [
                assign(pair, value),
                assign(aux, call(name(helpers["aux_of"]), name(pair))),
                gast.Return(value=gast.Tuple(elts=[first, name(aux)], ctx=gast.Load())),
            ]
            return [gast.fix_missing_locations(gast.copy_location(m, statement)) for m in made]

    Returns().visit(node)


def _read_back(generated):
    """Run the front end on a generated function; an AssertionError if it refuses it."""
    try:
        parsed = parse.parse_function(generated)
        fence.check(parsed)
        anf.to_anf(parsed)
    except SsadError as error:
        raise AssertionError(f"ssad's front end refuses code ssad generated: {error}") from error


def activity_report(program, analysis):
    lines = [emit.to_source([program.node]).rstrip(), "", "# active:  " + ", ".join(sorted(analysis.active))]
    inactive = sorted((analysis.varied | analysis.useful) - analysis.active)
    lines.append("# inactive (varied or useful, not both):  " + ", ".join(inactive))
    return "\n".join(lines) + "\n"
