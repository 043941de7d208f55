"""Which names may share array memory, so in-place writes stay exact.

`x += v` and `x[i] = v` write into x's array. Lowering them is exact only when no
other name that is read afterwards shares that memory (a copy of the name, a view, a
list holding the array, a call's result that may be it: see `views`). `Sharing`
tracks, during A-normal form, which names may share memory, joining what the paths
through an `if` or a loop's iterations share; `aliasing` refuses the writes that
would make the result depend on it, with a message that says how to write them instead.
"""

import gast

from ..runtime import concat, repeated
from ..runtime.structure import owned_argument
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
    """May-share facts of the names of one function, during its lowering.

    Two relations: `groups`, names that may be the same array or views of one array
    (symmetric; a view of a view shares all its source shares, but two arrays a value may
    be either of do not share each other), and `holds`, a list, tuple or dict
    (display, `append`ed to) and the names of the items it may hold. Holding is not
    sharing between the items: after `pair = [z, x]` a write into `z` changes what `pair`
    and `pair[0]` read, and nothing `x` reads. An item taken out of a container shares
    the item it is (`w = pair[0]`: `z`'s group), or every item where which one is not
    known (`pair[i]`, `for v in pair`, a call that may return any operand)."""

    def __init__(self, parameters):
        self.groups = {}  # name -> its own set of the names that may share its memory now
        # container -> [the names of its items, by position], or a set of them once the
        # positions are not known (after `insert`, a join of two paths, a dict)
        self.holds = {}
        self.view_groups = {}  # `groups` as views and second names alone, for `ever`
        # name -> every name that shared its memory at some point: a name rebound later
        # (in a loop, say) still shared the array earlier, which the tape must restore.
        self.ever = {}
        self.parameters = set(parameters)
        self.second_names = {}  # name -> the name it was assigned from (`b = a`)
        # name -> the container it was read from as an item whose items are not known (`h = hs[-1]`)
        self.item_of = {}
        self.item_reads = {}  # name -> the items it may be, read from a container that holds them
        # name -> the names it may be a `.copy()` of, at some point: a dict's or a list's copy
        # holds the same items, an array's none (which one it is, is known where the code runs)
        self.copies = {}
        self.owned = set()  # names of a copy of an argument (`p = owned_argument(p)`), holding what it held

    def record(self, name, value, is_local, is_static, resolve=None):
        """After `name = value`: remember the locals whose memory `value` may share.

        With `resolve` (the user's code), a list, tuple or dict display holds the arrays it
        is made of (`held = [x, z]`: a write into `z` changes what `held[1]` reads), for the
        refusals; `ever`, which the tape reads, keeps to views and second names."""
        views = viewed_operands(value, is_local, is_static, resolve)
        copied = copy_method_source(value)
        if copied is not None and is_local(copied):
            self.copies.setdefault(name, set()).add(copied)
        popped = _popped_from(value)
        if popped is not None and self.items_of(popped) is not None:
            views = views + [popped]  # `w = items.pop()`: an item of the list
        held = _display_items(value, is_local) if resolve is not None else None
        owned = resolve is not None and isinstance(value, gast.Call) and is_static(value.func)
        (self.owned.add if owned and resolve(value.func) is owned_argument else self.owned.discard)(name)
        self.second_names.pop(name, None)
        self.item_of.pop(name, None)
        self.item_reads.pop(name, None)
        if isinstance(value, gast.Name) and views:
            self.second_names[name] = views[0]
        elif isinstance(value, gast.Subscript) and views and self.items_of(views[0]) is None:
            self.item_of[name] = views[0]
        shared = list(views)
        containers = [v for v in views if self.items_of(v) is not None]
        if isinstance(value, gast.Name) and containers:
            shared, held = [], _copied(self.holds[containers[0]])  # a second name of the container
        elif containers:
            known, item = _item_at(value, self.holds.get(containers[0])) if len(containers) == 1 else (False, None)
            if known:
                shared = [item] if item is not None else []  # `w = pair[0]`: the item itself
            else:
                shared = sorted(set(shared) - set(containers) | set().union(*(self.items_of(c) for c in containers)))
            if isinstance(value, gast.Subscript):
                self.item_reads[name] = set(shared)
        elif isinstance(value, gast.Subscript) and views:
            # an item of a value not known to hold any, which may be one that does (its group
            # holds a container): it may be one of that container's items
            around = set().union(*(self.groups.get(v, {v}) for v in views))
            shared = sorted(set(shared).union(*(self.items_of(c) or () for c in around)))
        if held is None and isinstance(value, gast.Subscript):
            inner = [self.holds[s] for s in shared if s in self.holds]  # the item may be a container itself
            if inner:
                held = _copied(inner[0]) if len(inner) == 1 else set().union(*(set(h) for h in inner))
        if held is None and resolve is not None and isinstance(value, gast.Call) and is_static(value.func):
            held = _same_items(value, resolve(value.func), self.items_of)
        self.holds.pop(name, None)
        if held is not None:
            self.holds[name] = held
        _join(self.groups, name, shared)
        _join(self.view_groups, name, views)
        for member in self.view_groups.get(name, ()):
            self.ever.setdefault(member, set()).update(self.view_groups[name])

    def items_of(self, name):
        """The names the container `name` may hold (a set), or None for a name not known to hold any."""
        held = self.holds.get(name)
        return None if held is None else {n for n in held if n is not None}

    def hold(self, container, item, at_end=True):
        """`container` may now also hold `item` (`append`, `insert`, `container[k] = item`):
        at its end, or at a position not known."""
        held = self.holds.get(container)
        if held is None:
            held = []
        if at_end and isinstance(held, list):
            self.holds[container] = held + [item]
        else:
            self.holds[container] = set(held) | {item}

    def snapshot(self):
        """What each name may share and hold now, and whose second name it is, to come back
        to (see `join`)."""
        return ({name: set(group) for name, group in self.groups.items()},
                {name: _copied(held) for name, held in self.holds.items()}, dict(self.second_names))

    def join(self, *states):
        """May-share after paths meet (the branches of an `if`, a loop's iterations): a name
        shares what it shares on any of the `states` (snapshots), and a container holds
        what it holds on any (and, where on some path it holds what is not known, None
        besides). A second name on every path of the same name stays one; one on some
        paths only (`zs = ys if c else [x]`) shares with that name from then on."""
        edges = {}
        for groups, _, _ in states:
            for name, group in groups.items():
                # A name rebound since it shared `name`'s memory stays in `name`'s group (see
                # `_join`) but no longer shares it: it would join `name` to its new value.
                edges.setdefault(name, set()).update(m for m in group if m == name or name in groups.get(m, ()))
        self.groups = edges
        holds = {}
        for _, held, _ in states:
            for name, items in held.items():
                holds.setdefault(name, []).append(items)
        self.holds = {
            name: _copied(options[0]) if len(options) == len(states) and all(o == options[0] for o in options)
            else set().union(*(set(o) for o in options), () if len(options) == len(states) else {None})
            for name, options in holds.items()
        }
        sources = {}
        for _, _, second in states:
            for name in set().union(*(s for _, _, s in states)):
                sources.setdefault(name, set()).add(second.get(name))
        self.second_names = {}
        for name, options in sources.items():
            if len(options) == 1:
                self.second_names[name] = next(iter(options))
            else:
                _join(self.groups, name, sorted(o for o in options if o is not None))

    def add(self, name, sources, item_read=False):
        """`name` may also share `sources` (and what shares theirs), besides what it shares.
        `item_read`: `name` is an item read from the container `sources` (`h = hs[-1]`), so it
        shares the items a container holds, and is not the container itself."""
        if item_read and len(sources) == 1:
            (container,) = sources
            items = self.items_of(container)
            if items is not None:
                sources = items
            elif name not in self.groups:
                self.item_of[name] = container
        if sources:
            _join(self.groups, name, sorted(set(sources) | set(self.groups.get(name, ())) - {name}))

    def is_element(self, name, seen=frozenset()):
        """Whether `name` holds an element read from an array (`v = y[i]`: a number, or a row, a
        view), or an item read from a container all of whose items are such elements or share
        nothing (`t = (y[2], 0.5)[0]`)."""
        if name in self.item_of:
            return True
        items = self.item_reads.get(name)
        return items is not None and name not in seen and all(  # (an item's group holds the names read from it)
            self.is_element(i, seen | {name}) or self.items_of(i) is None and not self.groups.get(i, set()) - seen - {i, name}
            for i in items)

    def others(self, name, through_groups=True, now=False):
        """The other names a write into `name`'s array changes what they read: those sharing
        its memory, and the containers that may hold one of them (and their second names,
        and the containers holding those); without `through_groups`, only those holding it.
        `now`: not a name rebound since it shared (`t = z[3]` then `t = t + 1.0`), which
        `groups` keeps for the generated code, whose paths are not joined."""
        group = self.groups.get(name, ()) if through_groups else ()
        found = {m for m in group if not now or name in self.groups.get(m, ())} | {name}
        changed = True
        while changed:
            changed = False
            for container, held in self.holds.items():
                if container not in found and any(n in found for n in held if n is not None):
                    found |= set(self.groups.get(container, ())) | {container}
                    changed = True
        return sorted(found - {name})

    def same_list(self, name):
        """The other names whose value may be the list `name` or hold it: what `name.append(v)`
        changes. Those are its second names (`b = a`), the names read from a container holding
        it (`inner = box[0]`), and the containers holding any of them (`box`, `{"k": a}`). An
        item read from the list (`h = hs[-1]`) is not changed by it, as a view of an array
        would be by a write."""

        def root(n):
            seen = set()
            while n in self.second_names and n not in seen:
                seen.add(n)
                n = self.second_names[n]
            return n

        known = set(self.groups) | set(self.holds) | set(self.second_names) | set(self.second_names.values())
        same = {n for n in known if root(n) == root(name)} | {name}
        found, todo = set(same), set(same)
        while todo:  # what shares with it, the second names of those (`zs = choice`), what holds them
            for n in todo:  # (not what a second name may be besides: `choice` of `s` on another path)
                found.update(self.others(n, through_groups=n in same))
            todo = {n for n in known if root(n) in found} - found
            found |= todo
        return sorted(n for n in found - {name} if self.item_of.get(root(n)) not in same)

    def copied_by_method(self, name):
        """The names `name` may be a `.copy()` of, directly or through copies of copies."""
        found, todo = set(), [name]
        while todo:
            for source in self.copies.get(todo.pop(), ()):
                if source not in found:
                    found.add(source)
                    todo.append(source)
        return found - {name}

    def shares_a_parameter(self, name):
        return any(n in self.parameters for n in self.groups.get(name, ()) if n != name)


def _copied(held):
    return list(held) if isinstance(held, list) else set(held)


def _item_at(value, held):
    """(True, the item) `container[k]` reads, for a constant position `k` of a container whose
    positions are known (the item None: not a local name); else (False, None)."""
    if not isinstance(value, gast.Subscript) or not isinstance(held, list):
        return False, None
    index = value.slice
    if not isinstance(index, gast.Constant) or type(index.value) is not int or not -len(held) <= index.value < len(held):
        return False, None
    return True, held[index.value]


def copy_method_source(value):
    """`x` of `x.copy()`, else None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
        if isinstance(value.func.value, gast.Name) and not value.args and not value.keywords:
            return value.func.value.id
    return None


def _popped_from(value):
    """`items` of `items.pop(...)`, else None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "pop":
        if isinstance(value.func.value, gast.Name):
            return value.func.value.id
    return None


def _same_items(call, maker, items_of):
    """The items a new list or tuple made of the items of others holds (`list(xs)`,
    `sorted(xs)`, `xs * 2`, `xs + ys`), positions not kept; None where those are not known."""
    parts = call.args[:1] if maker in (list, tuple, sorted, repeated) else call.args if maker is concat else []
    found = [items_of(p.id) if isinstance(p, gast.Name) else None for p in parts]
    return set().union(*found) if found and None not in found else None


def _display_items(value, is_local):
    """The items of a list or tuple display by position (None where an item is not a local
    name), a dict display's values as a set; None for any other value."""
    if isinstance(value, (gast.Tuple, gast.List)):
        return [item.id if isinstance(item, gast.Name) and is_local(item.id) else None for item in value.elts]
    if isinstance(value, gast.Dict):  # None for a value that is not a local name, as for a list
        return {item.id if isinstance(item, gast.Name) and is_local(item.id) else None for item in value.values}
    return None


def _join(groups, name, sources):
    """`name` now shares the memory of `sources` (and of whatever shares theirs). Each name
    has its own set: a value that may be any of `sources` (`min(arrays, key=...)`,
    `pair[i]`) shares each of them, and they do not come to share each other. The names
    that shared `name`'s old value keep it in their sets: under control flow the old value
    may still be the one it holds. A name rebound since (its set no longer holding the
    source) is kept in `name`'s set, and does not get `name` in its own."""
    groups.pop(name, None)
    if not sources:
        return
    group = {name}
    for source in sources:
        group |= groups.get(source, {source})
    for member in group - {name}:
        if member in sources and member not in groups:
            groups[member] = {member, name}
        elif member in groups and (member in sources or any(s in groups[member] for s in sources)):
            groups[member].add(name)
    groups[name] = group


def reads_after(statements, position, names, enclosing_loops):
    """Whether any of `names` is read by statements[position + 1:] or in an enclosing loop."""
    later = statements[position + 1 :] + list(enclosing_loops)
    for statement in later:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
                return True
    return False
