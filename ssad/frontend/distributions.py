"""Frozen scipy.stats distributions made inside the function, read as their family's functions.

Assumes: `parsed.namespace` holds the live objects of the function's free names.
Guarantees: a name `d` bound once, by `d = family(a, b, loc=c)` where `family` is a
scipy.stats distribution (`norm`, `stats.gamma`, `multivariate_normal`), and read only
as `d.logpdf(x)` (or `pdf`, `cdf`, `logcdf`, `sf`, `logsf`, `ppf`, `isf`, `pmf`,
`logpmf` of one positional argument, or `mean`, `var`, `std`, `median`, `entropy` of
none) whose family's method has a rule, is lowered to

    d_arg0 = a
    d_arg1 = b
    d_loc = c
    ... family.logpdf(x, d_arg0, d_arg1, loc=d_loc) ...

so the parameters' gradients flow through the family's rules (`rules/scipy_stats.py`),
in every mode and order. The parameters are read where the distribution was made, as
freezing reads them. A frozen value used any other way (passed to a function, kept in a
list, a method called with keywords) is left as it is: with constant parameters it is
differentiated like its family's functions, with parameters that carry gradients the
transformation refuses it, naming the form to write.
"""

import types

import gast

from ..registry import REGISTRY
from .builders import clone, local_names, name, store, walk

_ONE_ARGUMENT = frozenset({"logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "pmf", "logpmf"})
_NO_ARGUMENT = frozenset({"mean", "var", "std", "median", "entropy"})
_NOT_PARAMETERS = frozenset({"seed", "random_state"})  # keywords of freezing that the methods do not take


def lower_frozen_distributions(parsed):
    """Rewrite, in place, each frozen distribution of `parsed` that only calls its methods."""
    if not any(_may_reach_stats(value) for value in parsed.namespace.values()):
        return  # the common case, decided without walking the tree
    node = parsed.node
    parents = {}
    for parent in walk(node):
        for child in gast.iter_child_nodes(parent):
            parents[id(child)] = parent
    stores, loads = {}, {}
    for child in walk(node):
        if isinstance(child, gast.Name):
            (loads if isinstance(child.ctx, gast.Load) else stores).setdefault(child.id, []).append(child)
    taken = local_names(node) | set(parsed.namespace)
    for statement in [s for s in walk(node) if isinstance(s, gast.Assign)]:
        made = _frozen(statement, parsed.namespace)
        if made is None:
            continue
        frozen = statement.targets[0].id
        if len(stores.get(frozen, ())) != 1 or not _inside_the_function(statement, parents, node):
            continue
        calls = [_method_call(use, parents) for use in loads.get(frozen, ())]
        if not calls or any(c is None or not _has_rules(made[0], c.func.attr, parsed.namespace) for c in calls):
            continue
        if any(_in_nested_function(c, parents, node) for c in calls):
            continue
        _lower(statement, made, calls, frozen, taken, parents)


def _may_reach_stats(value):
    """Whether a free name's object is scipy.stats, a part of it, or a package holding it
    (`scipy`, `stats`, `norm`): only then can the function freeze a distribution."""
    if isinstance(value, types.ModuleType):
        return value.__name__ == "scipy" or value.__name__.startswith("scipy.stats")
    return type(value).__module__.startswith("scipy.stats")


def _frozen(statement, namespace):
    """(family expression, positional arguments, keywords) of `d = family(...)`, else None."""
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], gast.Name):
        return None
    value = statement.value
    if not isinstance(value, gast.Call) or any(isinstance(a, gast.Starred) for a in value.args):
        return None
    if any(k.arg is None or k.arg in _NOT_PARAMETERS for k in value.keywords):
        return None
    family = _static(value.func, namespace)
    if not _is_family(family):
        return None
    return value.func, value.args, value.keywords


def _is_family(value):
    """Whether `value` is a scipy.stats distribution that calling freezes (`norm`,
    `multivariate_normal`), not a frozen one or anything else."""
    return (
        value is not None and type(value).__module__.startswith("scipy.stats") and not isinstance(value, type)
        and callable(value) and (hasattr(value, "logpdf") or hasattr(value, "logpmf"))
    )


def _has_rules(family, method, namespace):
    """Whether the family's `method` is differentiated by rules (`norm.logpdf`: yes,
    `norm.mean`: not yet), so the lowered call is one ssad takes."""
    function = getattr(_static(family, namespace), method, None)
    return function is not None and REGISTRY.adjoint_rule(function) is not None


def _static(expr, namespace):
    """The object a free name or an attribute path of one denotes (`stats.norm`), else None."""
    path = []
    while isinstance(expr, gast.Attribute):
        path.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, gast.Name) or expr.id not in namespace:
        return None
    value = namespace[expr.id]
    for attribute in reversed(path):
        value = getattr(value, attribute, None)
        if value is None:
            return None
    return value


def _method_call(use, parents):
    """The call `d.method(...)` that this read of `d` is the receiver of, when it is one this
    module lowers; else None."""
    attribute = parents.get(id(use))
    if not isinstance(attribute, gast.Attribute) or attribute.value is not use:
        return None
    call = parents.get(id(attribute))
    if not isinstance(call, gast.Call) or call.func is not attribute or call.keywords:
        return None
    if attribute.attr in _ONE_ARGUMENT and len(call.args) == 1 and not isinstance(call.args[0], gast.Starred):
        return call
    if attribute.attr in _NO_ARGUMENT and not call.args:
        return call
    return None


def _inside_the_function(statement, parents, function):
    """Whether `statement` belongs to `function` itself, not to a function nested in it."""
    return not _in_nested_function(statement, parents, function)


def _in_nested_function(node, parents, function):
    parent = parents.get(id(node))
    while parent is not None and parent is not function:
        if isinstance(parent, (gast.FunctionDef, gast.Lambda)):
            return True
        parent = parents.get(id(parent))
    return False


def _lower(statement, made, calls, frozen, taken, parents):
    family, args, keywords = made
    temporaries = []
    for position, argument in enumerate(args):
        temporaries.append((_fresh(f"{frozen}_arg{position}", taken), None, argument))
    for keyword in keywords:
        temporaries.append((_fresh(f"{frozen}_{keyword.arg}", taken), keyword.arg, keyword.value))
    assignments = [
        gast.copy_location(gast.Assign(targets=[store(fresh)], value=value, type_comment=None), statement)
        for fresh, _, value in temporaries
    ]
    for call in calls:
        method = call.func.attr
        call.func = gast.copy_location(gast.Attribute(value=clone(family), attr=method, ctx=gast.Load()), call.func)
        call.args = call.args + [name(fresh) for fresh, keyword, _ in temporaries if keyword is None]
        call.keywords = [gast.keyword(arg=keyword, value=name(fresh)) for fresh, keyword, _ in temporaries if keyword]
    block = _block_of(statement, parents)
    at = next(k for k, s in enumerate(block) if s is statement)
    block[at:at + 1] = assignments or [gast.copy_location(gast.Pass(), statement)]


def _block_of(statement, parents):
    parent = parents[id(statement)]
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is statement for s in block):
            return block
    raise AssertionError("a statement outside any block")


def _fresh(base, taken):
    fresh, k = base, 1
    while fresh in taken:
        k += 1
        fresh = f"{base}_{k}"
    taken.add(fresh)
    return fresh
