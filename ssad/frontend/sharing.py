"""Which names may share array memory, so in-place writes stay exact.

`x += v` and `x[i] = v` write into x's array. Lowering them is exact only when no
other name that is read afterwards shares that memory (a copy of the name, a view, a
list holding the array, a call's result that may be it: see `views`). `Sharing`
tracks, during A-normal form, which names may share memory, joining what the paths
through an `if` or a loop's iterations share; `aliasing` refuses the writes that
would make the result depend on it, with a message that says how to write them instead.
"""

import gast

from .builders import walk
from .views import viewed_operands

AUGMENTED = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.FloorDiv: "//",
    gast.Mod: "%",
}


class Sharing:
    def __init__(self, parameters):
        self.groups = {}  # name -> the set of names that may share its memory now
        self.view_groups = {}  # the same without what containers hold
        # name -> every name that shared its memory at some point: a name rebound later
        # (in a loop, say) still shared the array earlier, which the tape must restore.
        self.ever = {}
        self.parameters = set(parameters)
        self.second_names = {}  # name -> the name it was assigned from (`b = a`)

    def record(self, name, value, is_local, is_static, resolve=None):
        """After `name = value`: remember the locals whose memory `value` may share.

        With `resolve` (the user's code), a list, tuple or dict display shares the arrays it
        holds too (`held = [x, z]`: a write into `z` changes what `held[1]` reads), for the
        refusals; `ever`, which the tape reads, keeps to views and second names."""
        views = viewed_operands(value, is_local, is_static, resolve)
        held = held_operands(value, is_local) if resolve is not None else []
        self.second_names.pop(name, None)
        if isinstance(value, gast.Name) and views:
            self.second_names[name] = views[0]
        _join(self.groups, name, views + held)
        _join(self.view_groups, name, views)
        for member in self.view_groups.get(name, ()):
            self.ever.setdefault(member, set()).update(self.view_groups[name])

    def snapshot(self):
        """What each name may share now, to come back to (see `join`)."""
        return {name: set(group) for name, group in self.groups.items()}

    def join(self, *states):
        """May-share after paths meet (the branches of an `if`, a loop's iterations): a name
        shares what it shares on any of the `states` (snapshots)."""
        edges = {}
        for state in states:
            for name, group in state.items():
                edges.setdefault(name, set()).update(group)
        self.groups = {}
        for name in edges:
            if name in self.groups:
                continue
            component, todo = set(), [name]
            while todo:
                n = todo.pop()
                if n not in component:
                    component.add(n)
                    todo.extend(edges.get(n, ()))
            for member in component:
                if member in edges:
                    self.groups[member] = component

    def add(self, name, sources):
        """`name` may also share `sources` (and what shares theirs), besides what it shares."""
        if sources:
            _join(self.groups, name, sorted(set(sources) | set(self.groups.get(name, ())) - {name}))

    def others(self, name):
        return sorted(n for n in self.groups.get(name, ()) if n != name)

    def same_list(self, name):
        """The other names of the list `name`: what `name.append(v)` changes. An item read
        from the list (`h = hs[-1]`) is not changed by it, as a view of an array would be
        by a write."""

        def root(n):
            seen = set()
            while n in self.second_names and n not in seen:
                seen.add(n)
                n = self.second_names[n]
            return n

        return [n for n in self.others(name) if root(n) == root(name)]

    def shares_a_parameter(self, name):
        return any(n in self.parameters for n in self.groups.get(name, ()) if n != name)


def _join(groups, name, sources):
    """`name` now shares the memory of `sources` (and of whatever shares theirs). The names
    that shared its old value keep it in their groups: under control flow the old value may
    still be the one it holds. A name rebound since (its own group dropped) stays out."""
    groups.pop(name, None)
    if not sources:
        return
    group = groups.setdefault(sources[0], {sources[0]})
    for source in sources[1:]:
        other = groups.get(source, {source})
        if other is group:
            continue
        for member in other:
            if member == source or groups.get(member) is other:
                groups[member] = group
        group |= other
    group.add(name)
    groups[name] = group


def held_operands(value, is_local):
    """The local names a list, tuple or dict display holds."""
    if isinstance(value, (gast.Tuple, gast.List)):
        items = value.elts
    elif isinstance(value, gast.Dict):
        items = value.values
    else:
        return []
    return [item.id for item in items if isinstance(item, gast.Name) and is_local(item.id)]


def reads_after(statements, position, names, enclosing_loops):
    """Whether any of `names` is read by statements[position + 1:] or in an enclosing loop."""
    later = statements[position + 1 :] + list(enclosing_loops)
    for statement in later:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
                return True
    return False
