"""Which names may share array memory, so in-place writes stay exact.

`x += v` and `x[i] = v` write into x's array. Lowering them is exact only when no
other name that is read afterwards shares that memory (a copy of the name, or a
view: a slice, `.T`, `reshape`, ...). `Sharing` tracks, during A-normal form,
which names may share memory and refuses the writes that would make the result
depend on aliasing, with a message that says how to write them instead.
"""

import gast
from .builders import walk

# Methods and NumPy functions whose result may be a view of (or be) their first operand.
VIEW_METHODS = {
    "reshape", "ravel", "transpose", "swapaxes", "squeeze", "view", "diagonal", "T", "real", "imag",
    "flat", "base", "astype", "__array__",
}
VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "flip", "fliplr", "flipud", "real", "imag", "asarray_chkfinite", "require", "stop_gradient",
    "iterated",  # what a `for` loop walks: the array or list itself
}

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
        # name -> every name that shared its memory at some point: a name rebound later
        # (in a loop, say) still shared the array earlier, which the tape must restore.
        self.ever = {}
        self.parameters = set(parameters)
        self.second_names = {}  # name -> the name it was assigned from (`b = a`)

    def record(self, name, value, is_local, is_static):
        """After `name = value`: remember the local whose memory `value` may share."""
        source = viewed_operand(value, is_local, is_static)
        self.second_names.pop(name, None)
        if isinstance(value, gast.Name) and source is not None:
            self.second_names[name] = source
        if source is None:
            self.groups.pop(name, None)
            return
        group = self.groups.setdefault(source, {source})
        group.add(name)
        self.groups[name] = group
        for member in group:
            self.ever.setdefault(member, set()).update(group)

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


def viewed_operand(value, is_local, is_static):
    """The local name whose memory `value` may share, or None for a fresh value."""

    def local(expr):
        return expr.id if isinstance(expr, gast.Name) and is_local(expr.id) else None

    if isinstance(value, gast.Name):
        return local(value)
    if isinstance(value, gast.Subscript):
        return local(value.value)
    if isinstance(value, gast.Attribute) and value.attr in VIEW_METHODS:
        return local(value.value)
    if isinstance(value, gast.Call):
        func = value.func
        if isinstance(func, gast.Attribute) and not is_static(func):
            return local(func.value) if func.attr in VIEW_METHODS else None
        name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
        if name in VIEW_FUNCTIONS and value.args:
            return local(value.args[0])
    return None


def reads_after(statements, position, names, enclosing_loops):
    """Whether any of `names` is read by statements[position + 1:] or in an enclosing loop."""
    later = statements[position + 1 :] + list(enclosing_loops)
    for statement in later:
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
                return True
    return False
