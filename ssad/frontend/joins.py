"""Stage 3, A-normal form: expressions that join values into one, lowered to calls with rules.

- `np.r_[a, 0:3, b]` and `np.c_[...]` become `r_(a, r_0_3, b)` and `c_(...)`, whose
  rules hand each piece its part of the gradient;
- `{**d, 'k': v, **e}` becomes `merged(merged(d, {'k': v}), e)`, whose rule hands each
  key's gradient to the dict whose value the result holds.

Methods of the lowering (see `anf` and `expressions`).
"""


import gast
import numpy as np

from ..runtime import c_, merged, r_
from .builders import call as _call, clone, constant_key
from .builders import name as _name


class JoinLowering:
    def merged_dict(self, expr):
        """`{**d, 'k': v, **e}` as `merged(merged(d, {'k': v}), e)`: each `**` entry and each run of
        constant keys is a dict, joined left to right (later keys win, as in Python)."""
        parts, run = [], None
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None:
                parts.append(self.atom(value))
                run = None
                continue
            if run is None:
                run = gast.Dict(keys=[], values=[])
                parts.append(run)
            run.keys.append(clone(constant_key(key)))
            run.values.append(self.atom(value))
        helper = _name(self.namespace.bind("merged", merged))
        parts = [self.atom(p) if isinstance(p, gast.Dict) else p for p in parts]
        if len(parts) == 1:  # `{**d}`: a copy, joined with an empty dict
            return _call(helper, parts[0], self.atom(gast.Dict(keys=[], values=[])))
        joined = parts[0]
        for part in parts[1:-1]:
            joined = self.atom(_call(clone(helper), joined, part))
        return _call(clone(helper), joined, parts[-1])

    def index_concatenation(self, expr):
        """`np.r_[a, 0:3, b]` as the call `r_(a, r_0_3, b)` (likewise `np.c_`), so its pieces get
        gradients by the rules of `r_` and `c_`; each slice piece becomes its array
        (`np.r_[0:3]`, a constant). None for any other subscript, and for a string
        directive (`np.r_['0,2', a]`), which stays a subscript ssad refuses to differentiate."""
        source = expr.value
        if isinstance(source, gast.Name) and source.id in self.index_aliases:
            source = clone(self.index_aliases[source.id])  # `rr = np.r_` earlier: rr[a, b]
        if not self.is_static(source):
            return None
        from .primitives import static_value

        try:
            holder = static_value(source, self)
        except Exception:  # noqa: BLE001 - a path that does not resolve is reported elsewhere
            return None
        helper = {id(np.r_): r_, id(np.c_): c_}.get(id(holder))
        elements = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
        if helper is None or all(isinstance(e, gast.Slice) for e in elements):
            return None
        if any(isinstance(e, gast.Constant) and isinstance(e.value, str) for e in elements):
            return None
        pieces = []
        for element in elements:
            if isinstance(element, gast.Slice):  # np.r_[start:stop:step]: an arange or a linspace
                arange = clone(source) if helper is r_ else _name(self.namespace.bind("np_r", np.r_))
                element = gast.Subscript(value=arange, slice=element, ctx=gast.Load())
            elif isinstance(element, gast.Starred):
                pieces.append(gast.Starred(value=self.atom(element.value), ctx=gast.Load()))
                continue
            pieces.append(self.atom(element))
        return _call(_name(self.namespace.bind(helper.__name__, helper)), *pieces)
