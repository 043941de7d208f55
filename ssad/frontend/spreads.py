"""Stage 3, A-normal form: `f(*args)` and `f(**options)` spread into the items they pass.

Where the code fixes what a tuple, list or dict holds (a display assigned outside control
flow to a name nothing changes in place), `f(*args)` becomes `f(args[0], args[1])` and
`f(**options)` becomes `f(scale=options['scale'])`: each value binds to a named parameter
and carries its own gradient, as if written out. Methods of the lowering (see `anf`).
"""

import gast

from .builders import name as _name
from .builders import constant_key, walk


def changed_in_place(function):
    """The names whose list the function may change in place (`xs.append(v)`, `xs[i] = v`, `xs += ys`)."""
    changed = set()
    for node in walk(function):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name):
            changed.add(node.func.value.id)  # any method: it may change its object
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
            changed.add(node.value.id)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            changed.add(node.target.id)
    return changed


class SpreadLowering:
    def record_length(self, name, value):
        """Remember how many items `name` holds when the code says so for certain: a display
        assigned outside control flow to a name whose list nothing changes in place."""
        users = {ssa: user for user, ssa in self.current.items()}
        self.lengths.pop(name, None)
        self.keys.pop(name, None)
        if self.depth or users.get(name) in self.changed_sequences:
            return
        if _length(value) is not None:
            self.lengths[name] = _length(value)
        elif _keys(value) is not None:
            self.keys[name] = _keys(value)
        elif isinstance(value, gast.Name):
            for known in (self.lengths, self.keys):
                if value.id in known:
                    known[name] = known[value.id]

    def lengths_across_iterations(self, loop, pairs):
        """Before a loop's body (`pairs`: its assignments, as `control._assignments`): what is known
        of a tuple's length or a dict's keys holds in every pass only where each assignment in
        the loop gives the same (`params = (w, b)` again). `f(*args)` before `args = (a, b, c)`
        in the body spreads three items in a later pass, not the two known before the loop."""
        stores = {}
        for node in walk(loop):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
        values = {}
        for target, value in pairs:
            if isinstance(target, gast.Name):
                values.setdefault(target.id, []).append(value)
        for user, count in stores.items():
            name, given = self.current.get(user), values.get(user, [])
            for known, measure in ((self.lengths, _length), (self.keys, _keys)):
                if name in known and not (len(given) == count and all(measure(v) == known[name] for v in given)):
                    del known[name]

    def arguments(self, argument):
        """The atoms `argument` passes: `*args` of a tuple or list whose length is known is
        spread into its items (`f(*args)` as `f(args[0], args[1])`), so each binds to a
        named parameter and carries its own gradient."""
        if not isinstance(argument, gast.Starred):
            return [self.guard_argument(argument, self.atom(argument))]
        items = self.atom(argument.value)
        count = self.lengths.get(items.id) if isinstance(items, gast.Name) else None
        if count is None:
            return [gast.Starred(value=items, ctx=gast.Load())]
        return [self.atom(gast.Subscript(value=_name(items.id), slice=gast.Constant(value=k, kind=None),
                                         ctx=gast.Load())) for k in range(count)]

    def keywords(self, keyword):
        """The keywords `keyword` passes: `**options` of a dict whose keys are known is spread
        into them (`f(**options)` as `f(a=options['a'])`)."""
        if keyword.arg is not None:
            return [gast.keyword(arg=keyword.arg, value=self.guard_argument(keyword.value, self.atom(keyword.value)))]
        options = self.atom(keyword.value)
        keys = self.keys.get(options.id) if isinstance(options, gast.Name) else None
        own = self.parsed.node.args.kwarg
        if isinstance(keyword.value, gast.Name) and own is not None and keyword.value.id == own.id:
            raise self.parsed.unsupported(
                keyword.value, f"`**{own.id}` passes on the keywords this function was given, which ssad does not "
                "follow; name the parameters the function passes on (`def wrapper(x, scale=1.0): return fn(x, "
                "scale=scale)`), or, for a decorator's wrapper that calls the function it wraps unchanged, "
                "differentiate that function itself (`f.__wrapped__` for one made with functools.wraps)")
        if keys is None or not all(isinstance(k, str) for k in keys):
            raise self.parsed.unsupported(
                keyword.value, "`**options` in a call is supported for a dict display with constant keys assigned "
                "outside control flow and not changed in place; pass the keywords by name")
        return [gast.keyword(arg=k, value=self.atom(gast.Subscript(value=_name(options.id), slice=gast.Constant(
            value=k, kind=None), ctx=gast.Load()))) for k in keys]


def _length(value):
    """How many items a tuple or list display holds (None for another value, or one with `*xs`)."""
    if isinstance(value, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in value.elts):
        return len(value.elts)
    return None


def _keys(value):
    """The keys of a dict display whose keys are all constants, in order (else None)."""
    if isinstance(value, gast.Dict) and all(k is not None and constant_key(k) is not None for k in value.keys):
        return [constant_key(k).value for k in value.keys]
    return None
