"""Stage 3, A-normal form: methods that change their receiver in place, used as values.

A method that changes its receiver in place (`xs.append(v)`, `y.sort()`, `d.update(...)`)
is differentiated as a statement of its own, where the fence lets it stand. Used as a
value (`r = xs.reverse()`, `_ = [out.append(v) for v in x]`, `s = y.fill(0.0)`) it would
be read as a call that changes nothing; whether it does is known only when the code runs
(a class of the user's may have an `update` that returns new values), so
`not_changed_in_place` checks the receiver there, raising at the user's line (see
`aliasing.emit_guard`). A method of the lowering (see `anf`).
"""

import gast

from ..runtime.refusals import CHANGES_IN_PLACE, not_changed_in_place
from .builders import clone

# What to write instead of a changing method used as a value; `{r}` is the receiver.
_INSTEAD = {
    "sort": "sort into a new value (`{r} = np.sort({r})` of an array, `{r} = sorted({r})` of a list)",
    "reverse": "reverse into a new value (`{r} = {r}[::-1]`)",
    "fill": "make a new array (`{r} = np.full_like({r}, value)`)",
    "update": "make a new dict (`{r} = {{**{r}, 'key': value}}`)",
    "remove": "take the item out by its position, as a statement of its own (`{r}.pop(k)`)",
    "clear": "assign a new, empty one (`{r} = []`)",
    "setdefault": "test and assign (`if key not in {r}:`, `{r}[key] = value`), then read `{r}[key]`",
    "popitem": "pop by its key (`v = {r}.pop(key)`)",
}
_STATEMENTS = ("append", "extend", "insert")  # supported as statements of their own (see `fence`)


class InPlaceCallLowering:
    """Mixin of `anf._Lowering`: methods changing their receiver used as values."""

    def check_method_value(self, func, receiver):
        """Before `receiver.method(...)` (`func`, the user's attribute; `receiver`, its atom) when
        the call is used as a value: a method that changes a list, dict, set or array in place
        is refused where the code runs, for such a receiver."""
        if func.attr not in CHANGES_IN_PLACE or self.is_generated():
            return
        if self.context:
            statements, position = self.context[-1]
            current = statements[position]
            if isinstance(current, gast.Expr) and isinstance(current.value, gast.Call) and current.value.func is func:
                return  # a statement of its own (see `anf.statement`)
        text = gast.unparse(func.value).strip()
        if func.attr in _STATEMENTS:
            instead = (f"call `{text}.{func.attr}(...)` as a statement of its own (in a `for` loop rather than a "
                       f"comprehension, in an `if` statement rather than a conditional expression)")
        else:
            instead = _INSTEAD.get(func.attr, "compute a new value instead").format(r=text)
        message = (f"`{text}.{func.attr}(...)` changes `{text}` in place; used as a value, ssad would read it as "
                   f"a call that changes nothing: {instead}")
        node = func if getattr(func, "lineno", None) is not None else self.origin
        self.emit_guard(not_changed_in_place, [clone(receiver), gast.Constant(value=func.attr, kind=None)], message,
                        node)
