"""Source text of random, well-formed, differentiable NumPy programs.

A program is a module holding a few helper functions and `f(x, y, s)`, where `x`
and `y` are float64 arrays of length 4 and `s` is a float; `f` returns a float.
Every choice is read from a `Choices` stream, so the same stream gives the same
program: hypothesis supplies the stream in the tests (and shrinks it when a
program fails), a seeded `random.Random` supplies it for long sweeps.

What the programs contain:

- expressions over about sixty NumPy, `math` and builtin primitives and operators,
  each written with a guard that keeps its operand inside the domain where it is
  smooth and finite (`np.log(np.square(h) + 0.5)`, `np.arcsin(0.9 * np.tanh(h))`,
  `h / (1.0 + np.square(w))`);
- `if`/`elif`/`else` and conditional expressions on data, masks, `np.where`,
  `np.maximum`, `abs`, `np.clip`, `np.max`: the harness measures how far each
  comparison and kink is from switching (see `harness.probe_source`) and skips
  points too close to a switch for finite differences to be trusted;
- `for` loops over ranges, arrays, `enumerate`, `zip` and lists that overwrite
  values from outside the loop, `while` loops bounded by a counter, `break`,
  `continue` and early `return`;
- calls to generated helper functions (positional and keyword arguments, tuple
  results, helpers calling helpers);
- in-place updates `z[i] = ...`, `z[i] += ...`, `z[1:3] *= ...`, `z[mask] = ...`
  on arrays the program owns (copies, `np.zeros`, `np.ones`), never on arguments
  or on arrays another name can see;
- lists (`append`, indexing, iteration), dicts (item reads and writes) and tuples
  (indexing, unpacking, swaps);
- tuple assignments into those arrays (`z[i], z[j] = z[j], z[i]`), lists and tuples
  joined and repeated (`([s, t] * 2)[k]`), `max` and `min` with a `key`;
- selecting reductions (`np.max`, `np.min`, `np.amax`, `z.max()`, `z.min()`, reads
  indexed by `np.argmax`/`np.argmin`, `np.sort` and its elements), and loops (often a
  loop nested in a loop) that rebuild an array every iteration (`z = y * 1.0`), write
  into it in place reading a value the loop carries, sometimes `break`, `continue` or
  `return` early, select from it (sometimes keeping the selection while `z` is
  overwritten again) and feed the selection back into the carried value. The probe
  in `harness` measures ties of every selection, so no point sits near a switch.

- lists kept as a history: a loop appending to a list what it reads from the list's
  end (`h = hs[-1]; hs.append(np.tanh(h) + t)`), a list rebuilt under a dict key, a
  list built then stored in a dict, a list made from a tuple then appended to;
- 2-by-2 matrices written by rows, columns and elements in a loop nested in a loop whose
  range depends on the outer index (`for k in range(j): m[:, j] -= ... * m[:, k]`).

`generate(choices, widened=False)` leaves out the last four items and gives exactly the
programs of the generator before they were added.
"""

import ast
import random
import string
from dataclasses import dataclass, field

import numpy as np

ARRAY, SCALAR = "array", "scalar"
LENGTH = 4
MAX_CONTROL_DEPTH = 3  # indentation level below which no new if/for/while opens
WEIGHTS = "np.array([0.7, -0.4, 1.3, 0.2])"


# ----- the stream of choices -----


class Choices:
    """Every decision of the generator, drawn as a bounded integer.

    Each method shrinks (as hypothesis shrinks integers towards their lower bound)
    towards the simplest program: the first option, no optional structure.
    """

    def __init__(self, draw_integer):
        self._draw = draw_integer

    def integer(self, lo, hi):
        return self._draw(lo, hi)

    def pick(self, options, weights=None):
        options = list(options)
        if weights is None:
            return options[self._draw(0, len(options) - 1)]
        k = self._draw(0, sum(weights) - 1)
        for option, weight in zip(options, weights, strict=True):
            if k < weight:
                return option
            k -= weight
        raise AssertionError("weighted pick ran past the last option")

    def coin(self, percent):
        """True with probability about percent / 100."""
        return self._draw(0, 99) >= 100 - percent

    def repeat(self, least, most, percent=70):
        """Counts 1, 2, ...: at least `least`, then on while a coin says so, up to `most`.

        A coin before each optional item, rather than a count drawn up front, lets
        the shrinker drop one statement without changing how the rest are read.
        """
        count = 0
        while count < least or (count < most and self.coin(percent)):
            count += 1
            yield count

    def number(self, lo, hi):
        """A float with two decimals in [lo, hi], so printed programs stay short and exact."""
        return self._draw(round(lo * 100), round(hi * 100)) / 100


def seeded_choices(seed):
    rng = random.Random(seed)
    return Choices(rng.randint)


# ----- what a scope knows -----


@dataclass
class Scope:
    """The names a statement may read, with what each holds.

    A block works on a copy (`child`), so a name bound inside a branch or a loop
    body, which may not run, is not read after it.
    """

    kinds: dict = field(default_factory=dict)  # name -> ARRAY or SCALAR
    owned: set = field(default_factory=set)  # arrays no other name can see: writable in place
    params: set = field(default_factory=set)
    indices: list = field(default_factory=list)  # ints known to lie in 0..LENGTH-1
    lists: dict = field(default_factory=dict)  # list of arrays -> length it has at least
    dicts: dict = field(default_factory=dict)  # dict -> {key: kind}
    pairs: set = field(default_factory=set)  # tuples (array, scalar)
    walking: set = field(default_factory=set)  # lists a loop iterates over: no append
    in_loop: bool = False
    # scalars that may name the same object as another name (bound to a bare name, a
    # loop element, a container item): ssad refuses `t += ...` on those. Shared by
    # every scope of a function, since a binding in a branch may have run.
    aliased: set = field(default_factory=set)

    def child(self, **changes):
        copy = Scope(dict(self.kinds), set(self.owned), set(self.params), list(self.indices),
                     dict(self.lists), {k: dict(v) for k, v in self.dicts.items()}, set(self.pairs),
                     set(self.walking), self.in_loop, self.aliased)
        for name, value in changes.items():
            setattr(copy, name, value)
        return copy

    def writable(self):
        """Owned arrays no name has read an element of as it is (`t = z[1]` may be a view to ssad)."""
        return sorted(self.owned - self.aliased)

    def of(self, kind):
        return [name for name, k in self.kinds.items() if k == kind]


@dataclass
class Helper:
    name: str
    params: tuple  # kinds
    returns: str  # ARRAY, SCALAR or "pair"
    keyword: str | None  # an optional float parameter with a default


# ----- primitives -----
#
# Templates: {a} and {b} are array expressions, {l} an array name (or container
# read), {s} and {t} scalar expressions, {c} a constant. `fresh` templates build a
# new array; the others may return a view, so they never sit at the top of an
# assignment (a later in-place write through the view would be aliasing).

ARRAY_TEMPLATES = [
    # (template, weight, fresh)
    ("np.sin({a})", 6, True),
    ("np.cos({a})", 4, True),
    ("np.tanh({a})", 6, True),
    ("np.arctan({a})", 2, True),
    ("np.arcsinh({a})", 1, True),
    ("np.exp(np.tanh({a}))", 2, True),
    ("np.exp(-np.square({a}))", 1, True),
    ("np.log(np.square({a}) + 0.5)", 2, True),
    ("np.log1p(np.square({a}))", 1, True),
    ("np.log2(1.5 + np.sin({a}))", 1, True),
    ("np.log10(2.0 + np.cos({a}))", 1, True),
    ("np.sqrt(np.square({a}) + 0.25)", 2, True),
    ("np.cbrt(np.square({a}) + 0.5)", 1, True),
    ("np.arcsin(0.9 * np.tanh({a}))", 1, True),
    ("np.arccos(0.9 * np.tanh({a}))", 1, True),
    ("np.arctanh(0.9 * np.tanh({a}))", 1, True),
    ("np.sinh(np.tanh({a}))", 1, True),
    ("np.cosh(np.tanh({a}))", 1, True),
    ("np.expm1(np.sin({a}))", 1, True),
    ("np.exp2(np.tanh({a}))", 1, True),
    ("np.reciprocal(1.0 + np.square({a}))", 1, True),
    ("np.power(np.square({a}) + 0.5, 1.5)", 1, True),
    ("np.square({a})", 2, True),
    ("np.sinc(0.3 * {a})", 1, True),
    ("np.abs({a})", 1, True),
    ("(-{a})", 1, True),
    ("({a} + {b})", 6, True),
    ("({a} - {b})", 4, True),
    ("({a} * {b})", 6, True),
    ("({a} / (1.0 + np.square({b})))", 2, True),
    ("({a} ** 2)", 1, True),
    ("np.add({a}, {b})", 1, True),
    ("np.subtract({a}, {b})", 1, True),
    ("np.multiply({a}, {b})", 1, True),
    ("np.divide({a}, 1.5 + np.cos({b}))", 1, True),
    ("np.hypot({a}, 0.5 + np.square({b}))", 1, True),
    ("np.arctan2({a}, 1.5 + np.sin({b}))", 1, True),
    ("np.logaddexp({a}, {b})", 1, True),
    ("np.maximum({a}, {b})", 1, True),
    ("np.minimum({a}, {b})", 1, True),
    ("np.clip({a}, -0.5, 0.8)", 1, True),
    ("np.where({l} > {c}, {a}, {b})", 1, True),
    ("({a} * {s})", 4, True),
    ("({s} + {a})", 3, True),
    ("({s} - {a})", 1, True),
    ("({a} / (1.0 + {s} ** 2))", 1, True),
    ("np.cumsum({a})", 1, True),
    ("np.cumprod(0.9 + 0.1 * np.tanh({a}))", 1, True),
    ("np.roll({a}, 1)", 1, True),
    ("np.concatenate([{l}[1:], {l}[:1]])", 1, True),
    ("np.tile({l}[:2], 2)", 1, True),
    ("np.repeat({l}[1:3], 2)", 1, True),
    ("np.outer({a}, {b}).sum(axis=0)", 1, True),
    ("np.stack([{a}, {b}]).mean(axis=0)", 1, True),
    ("np.array([{s}, {t}, {s}, 0.5])", 1, True),
    ("(np.ones(4) * {s})", 1, True),
    ("np.full(4, {s})", 1, True),
    ("{l}.reshape(2, 2).T.reshape(4)", 1, False),  # a copy in NumPy, a possible view to ssad
    ("np.array([np.sin(e) * e for e in {l}])", 1, True),
    ("np.flip({a})", 1, False),
    ("{l}[::-1]", 1, False),
    ("np.sort({a})", 2, True, "selecting"),
    ("(np.sort({a}) * W)", 1, True, "selecting"),
]

SCALAR_TEMPLATES = [
    ("np.sum({a})", 6),
    ("np.mean({a})", 3),
    ("{l}.sum()", 1),
    ("{l}.mean()", 1),
    ("np.dot({a}, {b})", 2),
    ("({a} @ {b})", 1),
    ("{l}.dot({a})", 1),
    ("np.vdot({a}, {b})", 1),
    ("np.prod(0.9 + 0.1 * np.tanh({a}))", 1),
    ("np.var({a})", 1),
    ("np.linalg.norm({a})", 1),
    ("np.max({a})", 1),
    ("np.min({a})", 1),
    ("{l}.max()", 1, "selecting"),
    ("{l}.min()", 1, "selecting"),
    ("np.amax({a})", 1, "selecting"),
    ("{l}[np.argmax({l})]", 1, "selecting"),
    ("{l}[np.argmin({a})]", 1, "selecting"),
    ("np.sort({a})[{k}]", 2, "selecting"),
    ("np.dot(np.sort({a}), W)", 1, "selecting"),
    ("np.trace(np.outer({a}, {b}))", 1),
    ("({s} + {t})", 4),
    ("({s} - {t})", 2),
    ("({s} * {t})", 4),
    ("({s} / (1.0 + {t} ** 2))", 1),
    ("np.sin({s})", 2),
    ("np.tanh({s})", 2),
    ("math.sin({s})", 1),
    ("math.cos({s})", 1),
    ("math.tanh({s})", 1),
    ("math.exp(math.tanh({s}))", 1),
    ("math.log({s} ** 2 + 0.5)", 1),
    ("math.sqrt(1.0 + {s} ** 2)", 1),
    ("math.atan({s})", 1),
    ("math.hypot({s}, 0.5)", 1),
    ("abs({s})", 1),
    ("max({s}, {t})", 1),
    ("min({s}, {t})", 1),
    ("float(np.sum({a}))", 1),
    ("sum([e * e for e in {l}])", 1),
    ("([{s}, {t}] * 2)[{k}]", 1, "sequences"),
    ("(({s},) + ({t}, 0.5) * 2)[{k}]", 1, "sequences"),
    ("max([({s}, 0.5), ({t}, 1.5)], key=lambda p: p[0] * p[1])[0]", 1, "sequences"),
    ("min([{s}, {t}, 0.3], key=abs)", 1, "sequences"),
]


def _bare_names(expr):
    """Names `expr` may evaluate to, or read an item of, as they are: `t`, `d['b']`, `(t if c else u)`."""
    node = ast.parse(expr, mode="eval").body
    found, pending = set(), [node]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.IfExp):
            pending += [node.body, node.orelse]
        elif isinstance(node, ast.Tuple):
            pending += node.elts
        elif isinstance(node, ast.Subscript):
            pending.append(node.value)
    return found


def _fields(template):
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


# ----- the generator -----


class Generator:
    def __init__(self, choices, widened=True):
        """`widened=False` leaves out the selecting reductions (sort, argmax-indexed reads,
        `.max()`) and the loops that rebuild arrays and select from them."""
        self.c = choices
        self.widened = widened
        self.array_templates = [t[:3] for t in ARRAY_TEMPLATES if widened or len(t) == 3]
        self.scalar_templates = [t[:2] for t in SCALAR_TEMPLATES if widened or len(t) == 2]
        self.counter = 0
        self.helpers = []
        self.lines = []
        self.returns = None  # what the function being written returns; None for f

    # names

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def constant(self, lo=-1.0, hi=1.0):
        value = self.c.number(lo, hi)
        return f"({value!r})" if value < 0 else repr(value)  # -1.0 ** 2 is -1.0

    # expressions

    def array_leaf(self, scope):
        options = [(name, 8) for name in scope.of(ARRAY)]
        for name, length in scope.lists.items():
            options += [(f"{name}[0]", 1), (f"{name}[-1]", 1)] + ([(f"{name}[1]", 1)] if length > 1 else [])
        for name, keys in scope.dicts.items():
            options += [(f"{name}[{key!r}]", 1) for key, kind in keys.items() if kind == ARRAY]
        options += [(f"{name}[0]", 1) for name in sorted(scope.pairs)]
        names, weights = zip(*options, strict=True)
        return self.c.pick(names, weights)

    def scalar_leaf(self, scope):
        kind = self.c.pick(["name", "constant", "element", "container"], [6, 2, 3, 1])
        names = scope.of(SCALAR)
        if kind == "name" and names:
            return self.c.pick(names)
        if kind == "element":
            index = self.c.pick(scope.indices + [str(k) for k in range(LENGTH)])
            return f"{self.array_leaf(scope)}[{index}]"
        if kind == "container":
            options = [f"{name}[{key!r}]" for name, keys in scope.dicts.items() for key, k in keys.items() if k == SCALAR]
            options += [f"{name}[1]" for name in sorted(scope.pairs)]
            if options:
                return self.c.pick(options)
        return self.constant()

    def fill(self, template, scope, depth):
        values = {}
        for name in _fields(template):
            if name in values:
                continue
            if name in ("a", "b"):
                values[name] = self.array_expr(scope, depth - 1)
            elif name == "l":
                values[name] = self.array_leaf(scope)
            elif name in ("s", "t"):
                values[name] = self.scalar_expr(scope, depth - 1)
            elif name == "c":
                values[name] = self.constant(-0.5, 0.5)
            elif name == "k":
                values[name] = str(self.c.integer(-LENGTH, LENGTH - 1))
        return template.format(**values)

    def helper_call(self, scope, depth, returns, helper=None):
        helpers = [h for h in self.helpers if h.returns == returns]
        if not helpers:
            return None
        helper = helper or self.c.pick(helpers)
        args = [self.array_expr(scope, depth - 1) if kind == ARRAY else self.scalar_expr(scope, depth - 1)
                for kind in helper.params]
        if helper.keyword and self.c.coin(50):
            args.append(f"{helper.keyword}={self.scalar_expr(scope, 0)}")
        return f"{helper.name}({', '.join(args)})"

    def array_expr(self, scope, depth, fresh=False):
        if depth <= 0 or (not fresh and self.c.coin(25)):
            leaf = self.array_leaf(scope)
            return f"np.tanh({leaf})" if fresh else leaf
        if self.helpers and self.c.coin(8):
            call = self.helper_call(scope, depth, ARRAY)
            if call:
                return call
        templates = [(t, w) for t, w, is_fresh in self.array_templates if is_fresh or not fresh]
        template = self.c.pick(*zip(*templates, strict=True))
        return self.fill(template, scope, depth)

    def scalar_expr(self, scope, depth):
        if depth <= 0 or self.c.coin(30):
            return self.scalar_leaf(scope)
        if self.helpers and self.c.coin(8):
            call = self.helper_call(scope, depth, SCALAR)
            if call:
                return call
        template = self.c.pick(*zip(*self.scalar_templates, strict=True))
        return self.fill(template, scope, depth)

    def element(self, scope, depth):
        """An array to store in a container: never an owned array or a view of one."""
        shared = scope.child(kinds={n: k for n, k in scope.kinds.items() if n not in scope.owned}, owned=set())
        if shared.of(ARRAY):
            return self.array_expr(shared, depth)
        return self.array_expr(scope, depth, fresh=True)

    def condition(self, scope, compound=True):
        kind = self.c.pick(["data", "both", "not", "index"], [8, 2, 1, 1] if compound else [1, 0, 0, 0])
        if kind == "both":
            return f"{self.condition(scope, False)} {self.c.pick(['and', 'or'])} {self.condition(scope, False)}"
        if kind == "not":
            return f"not {self.condition(scope, False)}"
        if kind == "index" and scope.indices:
            index = self.c.pick(scope.indices)
            return self.c.pick([f"{index} % 2 == 0", f"{index} > 1", f"{index} == 0"])
        lhs = self.c.pick([
            lambda: f"np.sum({self.array_leaf(scope)})",
            lambda: f"np.mean({self.array_expr(scope, 1)})",
            lambda: self.scalar_leaf(scope),
            lambda: f"{self.array_leaf(scope)}[{self.c.integer(0, LENGTH - 1)}]",
            lambda: self.scalar_expr(scope, 1),
        ])()
        if lhs.strip("()-").replace(".", "").isdigit():  # a constant leaf: test data instead
            lhs = f"np.sum({self.array_leaf(scope)})"
        return f"{lhs} {self.c.pick(['>', '<', '>=', '<='])} {self.constant()}"

    # statements

    def block(self, scope, depth, most):
        start = len(self.lines)
        for _ in self.c.repeat(1, most, 60):
            self.statement(scope, depth)
        if len(self.lines) == start:
            self.emit(depth, "pass")

    def statement(self, scope, depth):
        kinds = ["array", "scalar", "augment", "unpack", "ifexp", "owned", "write", "container",
                 "if", "for", "while", "jump", "return", "select_loop"]
        weights = [10, 6, 3, 2, 2, 2, 5, 3, 4, 4, 2, 0, 1, 3]
        if depth >= MAX_CONTROL_DEPTH:
            weights[8:11] = [0, 0, 0]
            weights[13] = 0
        if not self.widened:
            weights[13] = 0
        if not scope.writable():
            weights[6] = 0
        if depth > 1:
            weights[5] = 0  # a copy made in a block would be unknown after it
        if scope.in_loop:
            weights[11] = 3
        getattr(self, "s_" + self.c.pick(kinds, weights))(scope, depth)

    def target(self, scope, kind):
        """A name to bind: a new one, or an existing local of the same kind."""
        existing = [n for n in scope.of(kind) if n not in scope.params or self.c.coin(20)]
        if existing and self.c.coin(75 if scope.in_loop else 45):
            return self.c.pick(existing), True
        return self.fresh({ARRAY: "h", SCALAR: "t"}[kind]), False

    def overwrite(self, name, expr, kind, scope):
        """The right side when `name` is bound again: often it feeds its new value."""
        if not self.c.coin(60):
            return expr
        squash = "np.tanh" if kind == ARRAY else "math.tanh"
        if scope.in_loop:
            return self.c.pick([f"{squash}({expr})", f"{self.constant(0.3, 0.9)} * {name} + {squash}({expr})"])
        return f"{self.constant(0.3, 0.9)} * {name} + {expr}"

    def s_array(self, scope, depth):
        name, again = self.target(scope, ARRAY)
        expr = self.array_expr(scope, self.c.integer(1, 3), fresh=True)
        if again:
            expr = self.overwrite(name, expr, ARRAY, scope)
        elif scope.in_loop and self.c.coin(50):
            expr = f"np.tanh({expr})"
        self.emit(depth, f"{name} = {expr}")
        scope.kinds[name] = ARRAY  # an owned name stays owned: the right side is a new array

    def s_scalar(self, scope, depth):
        name, again = self.target(scope, SCALAR)
        expr = self.scalar_expr(scope, self.c.integer(1, 3))
        if again:
            expr = self.overwrite(name, expr, SCALAR, scope)
        if not expr.endswith(")") or _bare_names(expr):
            scope.aliased.update({name} | _bare_names(expr))
        self.emit(depth, f"{name} = {expr}")
        scope.kinds[name] = SCALAR

    def s_augment(self, scope, depth):
        arrays = scope.writable()
        scalars = [n for n in scope.of(SCALAR) if n not in scope.aliased and (n not in scope.params or self.c.coin(30))]
        if arrays and (not scalars or self.c.coin(40)):
            name, rhs = self.c.pick(arrays), self.array_expr(scope, 1) if self.c.coin(60) else self.scalar_expr(scope, 1)
        elif scalars:
            name, rhs = self.c.pick(scalars), self.scalar_expr(scope, 1)
        else:
            return self.s_scalar(scope, depth)
        op = self.c.pick(["+=", "-=", "*=", "/="])
        if op == "*=":
            rhs = f"np.tanh({rhs})"
        elif op == "/=":
            rhs = f"(1.0 + np.square({rhs}))"
        self.emit(depth, f"{name} {op} {rhs}")

    def s_unpack(self, scope, depth):
        arrays = [n for n in scope.of(ARRAY) if n not in scope.owned and n not in scope.params]
        pair_helpers = [h for h in self.helpers if h.returns == "pair"]
        kind = self.c.pick(["swap", "new", "pair", "helper"], [2, 2, 1, 2])
        if kind == "swap" and len(arrays) >= 2:
            a, b = arrays[:2] if self.c.coin(50) else arrays[-2:]
            self.emit(depth, f"{a}, {b} = {b}, np.tanh({a} {self.c.pick(['+', '*', '-'])} {b})")
        elif kind == "pair" and scope.pairs:
            pair = self.c.pick(sorted(scope.pairs))
            a, t = self.fresh("h"), self.fresh("t")
            self.emit(depth, f"{a}, {t} = {pair}")
            scope.kinds.update({a: ARRAY, t: SCALAR})
            scope.aliased.add(t)
        elif kind == "helper" and pair_helpers:
            a, t = self.fresh("h"), self.fresh("t")
            call = self.helper_call(scope, 2, "pair", self.c.pick(pair_helpers))
            self.emit(depth, f"{a}, {t} = {call}")
            scope.kinds.update({a: ARRAY, t: SCALAR})
            scope.aliased.add(t)
        else:
            a, t = self.fresh("h"), self.fresh("t")
            value = self.scalar_expr(scope, 2)
            scope.aliased.update(_bare_names(value))
            self.emit(depth, f"{a}, {t} = {self.array_expr(scope, 2, fresh=True)}, {value}")
            scope.kinds.update({a: ARRAY, t: SCALAR})
            scope.aliased.add(t)

    def s_ifexp(self, scope, depth):
        kind = self.c.pick([ARRAY, SCALAR])
        name, again = self.target(scope, kind)
        if kind == ARRAY:
            yes, no = self.array_expr(scope, 2, fresh=True), self.array_expr(scope, 2, fresh=True)
        else:
            yes, no = self.scalar_expr(scope, 2), self.scalar_expr(scope, 2)
        expr = f"({yes} if {self.condition(scope)} else {no})"
        if again:
            expr = self.overwrite(name, expr, kind, scope)
        if kind == SCALAR:
            scope.aliased.update({name} | _bare_names(expr))
        self.emit(depth, f"{name} = {expr}")
        scope.kinds[name] = kind

    def s_owned(self, scope, depth):
        kind = self.c.pick(["copy", "zeros", "ones", "param", "zeros_like", "full"])
        if kind == "param":
            name = self.c.pick([n for n in sorted(scope.params) if scope.kinds[n] == ARRAY])
            self.emit(depth, f"{name} = {name}.copy()")
        else:
            name = self.fresh("z")
            source = self.c.pick([n for n in scope.of(ARRAY) if n not in scope.owned] or scope.of(ARRAY))
            self.emit(depth, f"{name} = " + {
                "copy": f"{source}.copy()",
                "zeros": "np.zeros(4)",
                "ones": f"np.ones(4) * {self.scalar_expr(scope, 1)}",
                "zeros_like": f"np.zeros_like({source})",
                "full": f"np.full(4, {self.scalar_expr(scope, 1)})",
            }[kind])
        scope.kinds[name] = ARRAY
        scope.owned.add(name)

    def s_write(self, scope, depth):
        z = self.c.pick(scope.writable())
        index = self.c.pick(scope.indices + [str(k) for k in range(LENGTH)])
        lo = self.c.integer(0, LENGTH - 1)
        hi = self.c.integer(lo + 1, LENGTH)
        kinds, weights = ["set", "augment", "scale", "slice", "slice_add", "mask", "mask_scale"], [3, 3, 2, 2, 2, 1, 1]
        if self.widened:
            kinds, weights = kinds + ["swap", "rotate"], weights + [1, 1]
        kind = self.c.pick(kinds, weights)
        if kind == "swap":  # every element on the right is read before the first write
            other = self.c.pick([k for k in map(str, range(LENGTH)) if k != index] + scope.indices)
            self.emit(depth, f"{z}[{index}], {z}[{other}] = {z}[{other}], {z}[{index}]")
        elif kind == "rotate":
            self.emit(depth, f"{z}[{lo}], {z}[{hi - 1}], {z}[0] = {z}[0], {z}[{lo}], {z}[{hi - 1}] * 1.5")
        elif kind == "set":
            self.emit(depth, f"{z}[{index}] = {self.scalar_expr(scope, 2)}")
        elif kind == "augment":
            op = self.c.pick(["+=", "-=", "*="])
            rhs = self.scalar_expr(scope, 2)
            self.emit(depth, f"{z}[{index}] {op} {f'np.tanh({rhs})' if op == '*=' else rhs}")
        elif kind == "scale":
            self.emit(depth, f"{z}[{lo}:{hi}] *= {self.scalar_expr(scope, 1)}")
        elif kind == "slice":
            self.emit(depth, f"{z}[{lo}:{hi}] = {self.array_expr(scope, 1)}[{lo}:{hi}]")
        elif kind == "slice_add":
            self.emit(depth, f"{z}[{lo}:{hi}] += {self.array_expr(scope, 1)}[{lo}:{hi}]")
        elif kind == "mask":
            self.emit(depth, f"{z}[{self.array_leaf(scope)} > {self.constant(-0.5, 0.5)}] = {self.scalar_expr(scope, 1)}")
        else:
            self.emit(depth, f"{z}[{self.array_leaf(scope)} < {self.constant(-0.5, 0.5)}] *= {self.scalar_expr(scope, 1)}")

    def s_container(self, scope, depth):
        lists = [n for n in scope.lists if n not in scope.walking]
        if self.widened:  # `t = items[1][np.argmax(items[1])]` may be a view to ssad: no append after it
            lists = [n for n in lists if n not in scope.aliased]
        kinds, weights = ["list", "append", "dict", "dict_set", "tuple"], [2, 3, 2, 2, 1]
        if self.widened:
            kinds, weights = kinds + ["chain", "matrix"], weights + [2, 2]
        kind = self.c.pick(kinds, weights)
        if kind == "chain":
            self.s_list_chain(scope, depth)
        elif kind == "matrix":
            self.s_matrix(scope, depth)
        elif kind == "append" and lists:
            name = self.c.pick(lists)
            self.emit(depth, f"{name}.append({self.element(scope, 2)})")
            scope.lists[name] += 1
        elif kind == "dict_set" and set(scope.dicts) - scope.aliased:
            name = self.c.pick(sorted(set(scope.dicts) - scope.aliased))
            keys = scope.dicts[name]
            key = self.c.pick(sorted(keys) + ["c"])
            value_kind = keys.get(key, self.c.pick([ARRAY, SCALAR]))
            value = self.array_expr(scope, 2, fresh=True) if value_kind == ARRAY else self.scalar_expr(scope, 2)
            scope.aliased.update(_bare_names(value))
            self.emit(depth, f"{name}[{key!r}] = {value}")
            keys[key] = value_kind
        elif kind == "tuple":
            name = self.fresh("pair")
            value = self.scalar_expr(scope, 2)
            scope.aliased.update(_bare_names(value))
            self.emit(depth, f"{name} = ({self.element(scope, 2)}, {value})")
            scope.pairs.add(name)
        elif kind == "dict":
            name = self.fresh("d")
            value = self.scalar_expr(scope, 2)
            scope.aliased.update(_bare_names(value))
            self.emit(depth, f"{name} = {{'a': {self.element(scope, 2)}, 'b': {value}}}")
            scope.dicts[name] = {"a": ARRAY, "b": SCALAR}
        else:
            name = self.fresh("items")
            elements = [self.element(scope, 1) for _ in range(self.c.integer(1, 3))]
            self.emit(depth, f"{name} = [{', '.join(elements)}]")
            scope.lists[name] = len(elements)

    def s_list_chain(self, scope, depth):
        """Lists read and grown the ways users keep a history: a loop appending to a list
        what it reads from the list's end, a list rebuilt under a dict key, a list built
        then stored in a dict, a list made from a tuple then appended to."""
        shape = self.c.pick(["last", "rebuilt", "stored", "from_tuple"])
        if shape == "last":
            hs, h, i = self.fresh("hs"), self.fresh("h"), self.fresh("i")
            steps = self.c.integer(1, 3)
            self.emit(depth, f"{hs} = [{self.element(scope, 1)}]")
            self.emit(depth, f"for {i} in range({steps}):")
            self.emit(depth + 1, f"{h} = {hs}[-1]")
            self.emit(depth + 1, f"{hs}.append(np.tanh({h}) + {self.scalar_expr(scope, 1)})")
            t = self.fresh("t")
            self.emit(depth, f"{t} = np.{self.c.pick(['sum', 'mean'])}({hs}[-1])")
            if self.c.coin(50):  # else only t reads the list's last item after the loop
                scope.lists[hs] = 1 + steps
            scope.kinds[h], scope.kinds[t] = ARRAY, SCALAR
            scope.aliased.add(h)
        elif shape == "rebuilt":
            hist, t = self.fresh("hist"), self.fresh("t")
            self.emit(depth, f"{hist} = {{'k': []}}")
            for _ in range(self.c.integer(1, 3)):
                self.emit(depth, f"{hist}['k'] = {hist}['k'] + [{self.scalar_expr(scope, 2)}]")
            self.emit(depth, f"{t} = {hist}['k'][-1] * {hist}['k'][0]")
            scope.kinds[t] = SCALAR
        elif shape == "stored":
            built, box, u = self.fresh("built"), self.fresh("box"), self.fresh("u")
            self.emit(depth, f"{built} = []")
            self.emit(depth, f"{built}.append({self.element(scope, 2)})")
            self.emit(depth, f"{built}.append({self.element(scope, 2)})")
            self.emit(depth, f"{box} = {{'v': {built}}}")
            self.emit(depth, f"{u} = {box}['v'][{self.c.integer(0, 1)}] * 1.0")
            scope.kinds[u] = ARRAY
        else:
            items = self.fresh("items")
            self.emit(depth, f"{items} = list(({self.element(scope, 1)}, {self.element(scope, 1)}))")
            self.emit(depth, f"{items}.append({self.element(scope, 2)})")
            scope.lists[items] = 3

    def s_matrix(self, scope, depth):
        """A 2-by-2 matrix made from arrays and written by rows, columns and elements in a
        loop nested in a loop whose range depends on the outer index (Gram-Schmidt, a
        triangular solve), then read back as an array."""
        m, j, k = self.fresh("m"), self.fresh("i"), self.fresh("i")
        a, b = self.array_leaf(scope), self.array_leaf(scope)
        self.emit(depth, f"{m} = " + self.c.pick([
            f"np.outer({a}[:2], {b}[2:])", f"{a}.reshape(2, 2) * 1.0", "np.zeros((2, 2))",
            f"np.stack([{a}[:2], {b}[1:3]], axis=1)",
        ]))
        self.emit(depth, f"for {j} in range(2):")
        self.emit(depth + 1, f"for {k} in range({self.c.pick([j, f'{j} + 1'])}):")
        for _ in range(self.c.integer(1, 2)):
            self.emit(depth + 2, self.c.pick([
                lambda: f"{m}[:, {j}] = {m}[:, {j}] - ({m}[:, {k}] @ {m}[:, {j}]) * {m}[:, {k}] * "
                        f"{self.constant(0.1, 0.5)}",
                lambda: f"{m}[{j}, :] += np.tanh({m}[{k}, :] * {self.scalar_expr(scope, 1)})",
                lambda: f"{m}[{j}, {k}] = {m}[{j}, {k}] * 0.5 + {self.scalar_expr(scope, 1)}",
                lambda: f"{m}[:, {k}] *= np.tanh({self.array_leaf(scope)}[{j}:{j} + 2])",
            ])())
        name, _ = self.target(scope, ARRAY)
        self.emit(depth, f"{name} = " + self.c.pick([f"{m}.ravel()", f"np.tanh({m} @ {m}.T).ravel()",
                                                     f"({m} * {m}[:, ::-1]).ravel()"]))
        scope.kinds[name] = ARRAY

    def carried(self, scope, inner, depth):
        """Often a loop body starts by overwriting a value from before the loop."""
        names = [n for n in scope.of(ARRAY) if n not in scope.owned and n not in scope.params]
        if names and self.c.coin(60):
            h = self.c.pick(names)
            self.emit(depth, f"{h} = np.tanh({h} * {self.array_leaf(inner)} + {self.array_expr(inner, 1)})")
        scalars = [n for n in scope.of(SCALAR) if n not in scope.params]
        if scalars and self.c.coin(30):
            t = self.c.pick(scalars)
            self.emit(depth, f"{t} = {t} + {self.scalar_expr(inner, 1)}")

    def s_if(self, scope, depth):
        self.emit(depth, f"if {self.condition(scope)}:")
        self.block(scope.child(), depth + 1, 3)
        shape = self.c.pick(["if", "else", "elif"], [2, 3, 1])
        if shape == "elif":
            self.emit(depth, f"elif {self.condition(scope)}:")
            self.block(scope.child(), depth + 1, 2)
        if shape != "if":
            self.emit(depth, "else:")
            self.block(scope.child(), depth + 1, 2)

    def s_for(self, scope, depth):
        inner = scope.child(in_loop=True)
        arrays = [n for n in scope.of(ARRAY) if n not in scope.owned]
        kind = self.c.pick(["range", "elements", "enumerate", "zip", "list", "items"], [4, 2, 2, 1, 2, 1])
        i, v = self.fresh("i"), self.fresh("v")
        if kind == "items" and not scope.lists:
            kind = "list"
        if not arrays and kind in ("elements", "enumerate", "zip", "list"):
            kind = "range"
        if kind == "range":
            n = self.c.integer(0, LENGTH)
            header = self.c.pick([f"range({n})", f"reversed(range({n}))", f"range(1, {n})", f"range({LENGTH - 1}, 0, -1)"])
            self.emit(depth, f"for {i} in {header}:")
            inner.indices.append(i)
        elif kind == "elements":
            self.emit(depth, f"for {v} in {self.c.pick(arrays)}:")
            inner.kinds[v] = SCALAR
            inner.aliased.add(v)
        elif kind == "enumerate":
            self.emit(depth, f"for {i}, {v} in enumerate({self.c.pick(arrays)}):")
            inner.indices.append(i)
            inner.kinds[v] = SCALAR
            inner.aliased.add(v)
        elif kind == "zip":
            w = self.fresh("w")
            self.emit(depth, f"for {v}, {w} in zip({self.c.pick(arrays)}, {self.c.pick(arrays)}):")
            inner.kinds.update({v: SCALAR, w: SCALAR})
            inner.aliased.update((v, w))
        elif kind == "items" and scope.lists:
            name = self.c.pick(sorted(scope.lists))
            self.emit(depth, f"for {v} in {name}:")
            inner.kinds[v] = ARRAY
            inner.walking.add(name)
        else:
            elements = [self.c.pick(arrays) for _ in range(self.c.integer(1, 2))] + [self.array_expr(scope, 1, fresh=True)]
            self.emit(depth, f"for {v} in [{', '.join(elements)}]:")
            inner.kinds[v] = ARRAY
        self.carried(scope, inner, depth + 1)
        self.block(inner, depth + 1, 3)

    def s_while(self, scope, depth):
        k = self.fresh("k")
        self.emit(depth, f"{k} = 0")
        bound = self.c.integer(0, LENGTH - 1)
        if self.c.coin(25):
            self.emit(depth, "while True:")
            self.emit(depth + 1, f"{k} += 1")
            self.emit(depth + 1, f"if {k} > {bound} or {self.condition(scope, compound=False)}:")
            self.emit(depth + 2, "break")
            inner = scope.child(in_loop=True)
            inner.indices.append(k)
            self.carried(scope, inner, depth + 1)
            self.block(inner, depth + 1, 3)
            return
        test = f"{k} < {bound}"
        if self.c.coin(75):
            test += f" and {self.condition(scope, compound=False)}"
        self.emit(depth, f"while {test}:")
        self.emit(depth + 1, f"{k} += 1")  # first, so a `continue` below cannot spin forever
        inner = scope.child(in_loop=True)
        inner.indices.append(k)
        self.carried(scope, inner, depth + 1)
        self.block(inner, depth + 1, 3)

    # selecting reductions over arrays rebuilt and written in place inside loops

    SELECTIONS = [
        # (template over the rebuilt array {z}, weight); {k} an index, {o} another array
        ("np.max({z})", 4), ("np.min({z})", 2), ("{z}.max()", 2), ("{z}.min()", 1), ("np.amax({z})", 1),
        ("{z}[np.argmax({z})]", 2), ("{z}[np.argmin({z})]", 1), ("np.sort({z})[{k}]", 2),
        ("np.dot(np.sort({z}), W)", 1), ("np.max({z} * {o})", 1), ("{o}[np.argmax({z})]", 1),
        ("np.sum(np.maximum({z}, {o}))", 1),
    ]

    def selection(self, z, scope):
        template = self.c.pick(*zip(*self.SELECTIONS, strict=True))
        return template.format(z=z, k=self.c.integer(-LENGTH, LENGTH - 1), o=self.array_leaf(scope))

    def carried_update(self, acc, value, depth):
        """`acc` takes in `value` and its own old value, staying of moderate size."""
        form = self.c.pick(["augment", "square", "tanh", "scaled"], [3, 2, 2, 1])
        if form == "augment":
            self.emit(depth, f"{acc} += {value}")
        elif form == "square":
            self.emit(depth, f"{acc} += {value} + 0.3 * {acc} * {acc}")
        elif form == "tanh":
            self.emit(depth, f"{acc} = math.tanh({acc} + {value})")
        else:
            self.emit(depth, f"{acc} = {self.constant(0.3, 0.9)} * {acc} + np.tanh({value})")

    def rebuilt_write(self, z, acc, index, scope, depth):
        """An in-place write into `z` that reads the carried value `acc`."""
        lo = self.c.integer(0, LENGTH - 1)
        hi = self.c.integer(lo + 1, LENGTH)
        self.emit(depth, self.c.pick([
            f"{z}[{lo}:{hi}] *= np.sqrt(1.5 + {acc} * {acc})",
            f"{z}[{lo}:{hi}] += {acc}",
            f"{z}[{index}] = {acc} * {self.scalar_leaf(scope)}",
            f"{z}[{index}] *= np.tanh({acc})",
            f"{z}[{lo}:{hi}] = {self.array_leaf(scope)}[{lo}:{hi}] * {acc}",
            f"{z}[{self.array_leaf(scope)} > {self.constant(-0.5, 0.5)}] *= math.cos({acc})",
            f"{z} *= 1.0 + 0.5 * np.tanh({acc})",
        ], [3, 2, 2, 2, 1, 1, 1]))

    def s_select_loop(self, scope, depth):
        """A value carried through a loop that rebuilds an array each iteration, writes into it in
        place (reading the carried value), selects from it with max/min/argmax/sort, and
        feeds the selection back: every iteration's adjoint must see its own array."""
        candidates = [n for n in scope.of(SCALAR) if n not in scope.aliased and (n not in scope.params or self.c.coin(40))]
        if candidates and self.c.coin(50):
            acc = self.c.pick(candidates)
        else:
            acc = self.fresh("acc")
            self.emit(depth, f"{acc} = math.tanh({self.scalar_expr(scope, 1)})")
            scope.kinds[acc] = SCALAR
        loops = 2 if self.c.coin(30) else 1  # a loop nested in a loop
        inner, level = scope.child(in_loop=True), depth
        for _ in range(loops):
            i = self.fresh("i")
            header = self.c.pick([f"range({self.c.integer(1, 3)})", f"reversed(range({self.c.integer(1, 3)}))",
                                  f"range(1, {self.c.integer(2, 4)})"])
            self.emit(level, f"for {i} in {header}:")
            inner.indices.append(i)
            level += 1
        z = self.fresh("z")
        source = self.array_leaf(inner)
        self.emit(level, f"{z} = " + self.c.pick([f"{source} * 1.0", f"{source}.copy()", f"np.array({source})",
                                                  f"{source} + 0.0", f"np.tanh({source} + {acc})"]))
        inner.kinds[z] = ARRAY
        inner.owned.add(z)
        for _ in self.c.repeat(1, 3, 50):
            self.rebuilt_write(z, acc, self.c.pick(inner.indices + ["0", "3"]), inner, level)
        if self.c.coin(25):
            self.emit(level, f"if {self.condition(inner)}:")
            self.emit(level + 1, self.c.pick(["break", "continue"]))
        picked = self.selection(z, inner)
        if self.c.coin(30) and not _bare_names(picked):
            # the selection is read by a later statement's adjoint after z is overwritten (not
            # when it reads an item `z[np.argmax(z)]` as it is: ssad takes that for a possible
            # view and refuses the next write into z, which the next iteration makes)
            m = self.fresh("m")
            self.emit(level, f"{m} = {picked}")
            self.rebuilt_write(z, acc, self.c.pick(inner.indices + ["1"]), inner, level)
            picked = f"{m} * {self.c.pick([z + '[2]', 'np.sum(' + z + ')', '1.0'])}"
        elif self.c.coin(25):
            self.emit(level, f"if {self.condition(inner)}:")
            self.emit(level + 1, self.c.pick(["break", "continue"]) if self.c.coin(70) else
                      f"return {self.returned(inner)}")
        self.carried_update(acc, picked, level)
        if self.c.coin(30):  # more of the body, blind to acc so that nothing aliases it
            self.block(inner.child(kinds={n: k for n, k in inner.kinds.items() if n != acc}), level, 2)

    def s_jump(self, scope, depth):
        self.emit(depth, f"if {self.condition(scope)}:")
        self.emit(depth + 1, self.c.pick(["break", "continue"]))

    def s_return(self, scope, depth):
        if depth == 1:
            return self.s_scalar(scope, depth)
        self.emit(depth, f"if {self.condition(scope)}:")
        self.emit(depth + 1, f"return {self.returned(scope)}")

    def result(self, scope):
        """A float that reads most of what the scope holds, through non-uniform weights."""
        terms = []
        for name in scope.of(ARRAY):
            if name in scope.params and self.c.coin(70):
                continue
            terms.append(self.c.pick([f"np.sum(np.sin({name}))", f"np.dot({name}, W)", f"np.sum({name} ** 2) * 0.1",
                                      f"np.sum(np.cos({name}) * x)"]))
        for name in scope.of(SCALAR):
            if name in scope.params and self.c.coin(50):
                continue
            terms.append(self.c.pick([name, f"np.sin({name})", f"0.5 * {name} ** 2"]))
        for name in scope.lists:
            terms.append(f"np.sum(np.cos({name}[-1]))")
        for name, keys in scope.dicts.items():
            terms += [f"np.sum(np.sin({name}[{key!r}]))" for key in sorted(keys)]
        terms += [f"np.dot({name}[0], W) * {name}[1]" for name in sorted(scope.pairs)]
        return " + ".join(terms) if terms else "np.sum(np.sin(x)) * s"

    def returned(self, scope):
        if self.returns is None:
            return self.result(scope)
        if self.returns == ARRAY:
            return self.array_expr(scope, 2, fresh=True)
        if self.returns == SCALAR:
            return self.scalar_expr(scope, 2)
        return f"{self.array_expr(scope, 2, fresh=True)}, {self.scalar_expr(scope, 2)}"

    # functions

    def function(self, name, params, statements, returns=None):
        self.lines = []
        self.returns = returns
        scope = Scope(kinds=dict(params), params=set(params))
        keyword = None
        if returns is not None and self.c.coin(30):
            keyword = "scale"
            scope.kinds[keyword] = SCALAR
            scope.params.add(keyword)
        header = ", ".join(params) + (f", {keyword}=0.5" if keyword else "")
        self.emit(0, f"def {name}({header}):")
        for _ in self.c.repeat(*statements, 85):
            self.statement(scope, 1)
        self.emit(1, f"return {self.returned(scope)}")
        return "\n".join(self.lines), keyword

    def module(self):
        parts = ["import math\n\nimport numpy as np\n\nW = " + WEIGHTS]
        for k in range(len(list(self.c.repeat(0, 2, 50)))):
            params = {"a": ARRAY, "b": self.c.pick([SCALAR, ARRAY])}
            returns = self.c.pick([SCALAR, ARRAY, "pair"])
            name = f"helper{k + 1}"
            self.counter = 0
            source, keyword = self.function(name, params, (1, 4), returns)
            self.helpers.append(Helper(name, tuple(params.values()), returns, keyword))
            parts.append(source)
        self.counter = 0
        source, _ = self.function("f", {"x": ARRAY, "y": ARRAY, "s": SCALAR}, (2, 12))
        parts.append(source)
        # drop helpers nothing calls, last first (a helper may call an earlier one)
        for k in range(len(self.helpers), 0, -1):
            if not any(f"helper{k}(" in later for later in parts[k + 1:]):
                del parts[k]
        return "\n\n\n".join(parts) + "\n"


@dataclass
class Program:
    """A generated module and the point at which `f` is differentiated."""

    source: str
    x: np.ndarray
    y: np.ndarray
    s: float

    def args(self):
        return self.x.copy(), self.y.copy(), self.s

    def arguments_source(self):
        def array(v):
            return "np.array([" + ", ".join(repr(float(e)) for e in v) + "])"

        return f"x = {array(self.x)}\ny = {array(self.y)}\ns = {self.s!r}"

    def __repr__(self):
        return f"Program(\n{self.source}\n# at\n{self.arguments_source()}\n)"


def generate(choices, widened=True):
    source = Generator(choices, widened).module()
    x = np.array([choices.number(-1.5, 1.5) for _ in range(LENGTH)])
    y = np.array([choices.number(-1.5, 1.5) for _ in range(LENGTH)])
    s = choices.number(-1.5, 1.5)
    return Program(source, x, y, s)


def from_seed(seed, widened=True):
    return generate(seeded_choices(seed), widened)


if __name__ == "__main__":
    import sys

    for seed in range(int(sys.argv[1]), int(sys.argv[2])):
        print(f"# ----- seed {seed}\n{from_seed(seed)!r}")
