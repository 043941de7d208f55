"""What the user's code reads from outside itself, through every function it calls.

Generated code holds the objects the free names of the user's functions denoted when it
was made: the module globals and closure cells `f` reads, and, through the handles that
call the generated code of its callees (`handles`), the globals and cells each callee
reads. Code kept in a cache is right only while all of those objects are the ones it was
made with. `values_read(f)` lists them: f's code, its closure cells' contents and the
module globals its code names, then the same for each function of the user's those
objects lead to (a helper it calls, a helper of that helper, a closure it captured, the
`__call__` of a callable object, a function of one of the user's modules it names, a
bound method's or a partial's function), each function once. `kept` finds what a cache
kept for the same objects, compared by identity; the compile driver, `ssad.grad` and the
handles key what they keep by it, so a gradient made after a global or a closure cell was
rebound anywhere below it never reuses code made before.

The objects themselves are held, not their `id`s: a snapshot keeps them alive, so a new
object cannot take the identity of one a kept entry was made with. Values the generated
code reads anew at each call (a number or an array that is an attribute of a module,
`config.SCALE`) are not listed: rebinding them changes no generated code. Library code (NumPy, SciPy, the standard
library, ssad itself) is not walked: nobody rebinds its globals, and walking it would
cost every `ssad.grad(f)`.
"""

import functools
import operator
import sys
import types

from .callables import callable_instance

# How many snapshots a cache keeps per key: a global switched back and forth between a few
# values finds its code again, and a training loop that rebinds a global array at each
# step (and makes the gradient again) does not keep every array it ever held.
MOST_KEPT = 4

_EMPTY = object()  # the content of a closure cell not yet filled
_LIBRARIES = ("numpy", "scipy", "ssad")


def values_read(f):
    """The objects `f` and the user's functions it leads to read, in a fixed order (see the
    module docstring): a snapshot that `kept` compares by identity."""
    objects = []
    _read_by(f, objects, set())
    return tuple(objects)


def watch(f):
    """Where each object `values_read(f)` lists was read from, for `still_read`: a tuple
    (global and module-member lookups, closure cells, functions' code), each entry with
    the object it held. Made once for a gradient function, so each of its calls can
    tell cheaply that a global or closure cell below it was rebound since."""
    lookups, cells, codes = [], [], []
    _read_by(f, [], set(), (lookups, cells, codes))
    return tuple(lookups), tuple(cells), tuple(codes)


def still_read(watched):
    """Whether every object `watched` (from `watch`) holds is still the one read there."""
    lookups, cells, codes = watched
    for get, name, value in lookups:
        if get(name, _EMPTY) is not value:
            return False
    for cell, value in cells:
        try:
            if cell.cell_contents is not value:
                return False
        except ValueError:  # not filled
            if value is not _EMPTY:
                return False
    for function, code in codes:
        if function.__code__ is not code:
            return False
    return True


def kept(entries, snapshot):
    """What `entries` (pairs (snapshot, value), as `keep` made them) holds for `snapshot`,
    or None: a value made while the same objects were read."""
    for old, value in entries:
        if len(old) == len(snapshot) and all(map(operator.is_, old, snapshot)):
            return value
    return None


def keep(entries, snapshot, value):
    """`entries` with `(snapshot, value)` first, the oldest dropped past `MOST_KEPT`.

    A new tuple, never a changed one: a thread reading the old one while another keeps a
    value reads it whole."""
    return ((snapshot, value),) + tuple(entries)[: MOST_KEPT - 1]


def names_read(code):
    """The names `code` and the code nested in it read as globals or attributes, each once."""
    known = _NAMES.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(names_read(const))
    names = tuple(dict.fromkeys(names))
    if len(_NAMES) >= _MOST_CODES:
        _NAMES.clear()
    _NAMES[id(code)] = (code, names)  # the code held: its id is not reused while the entry lives
    return names


# id(code object) -> (the code, names_read(code)): every `ssad.grad(f)` asks for the names
# of each function it walks, and a weak dictionary's lookup costs as much as the walk
_NAMES = {}
_MOST_CODES = 4096


def _read_by(function, objects, seen, watched=None):
    """Append what `function` reads from outside itself to `objects`, and walk on into what
    those objects lead to; `seen` holds what was walked already (a function's id; a
    module's with that of the names read of it), so each is walked once and cycles end.
    `watched`, when given, gets where each object was read from (see `watch`)."""
    if id(function) in seen:
        return
    seen.add(id(function))
    code = function.__code__
    objects.append(code)
    names = names_read(code)
    if watched is not None:
        watched[2].append((function, code))
    for cell in function.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            value = _EMPTY
        objects.append(value)
        if watched is not None:
            watched[1].append((cell, value))
        _follow(value, names, objects, seen, watched)
    read = function.__globals__.get
    for name in names:
        value = read(name, _EMPTY)
        if watched is not None:  # a name not defined (a builtin, an attribute's name) too
            watched[0].append((read, name, value))
        if value is not _EMPTY:
            objects.append(value)
            if type(value) not in _LEADS_NOWHERE:
                _follow(value, names, objects, seen, watched)
    made_for = getattr(_made_by_ssad(function), "f", None)
    if made_for is not None:  # reads what the function it differentiates reads (`grad(grad(f))`)
        if type(made_for) is types.FunctionType:
            _read_by(made_for, objects, seen, watched)
        else:
            _follow(made_for, names, objects, seen, watched)


def _made_by_ssad(function):
    """The `Variants` of a gradient function ssad made (`grad(f)`), or of its generated code
    (which `grad(grad(f))` differentiates), whose `f` is the function it differentiates; else None."""
    return getattr(function, "variants", None) or getattr(function, "_ssad_variants", None)


def _follow(value, names, objects, seen, watched=None):
    """Walk into the user's functions `value` leads to; `names` are what the code holding
    `value` reads of it as attributes (`helpers.predict`)."""
    kind = type(value)
    if kind is types.FunctionType:
        if _users_module(value.__module__) or _made_by_ssad(value) is not None:
            _read_by(value, objects, seen, watched)
    elif kind is types.MethodType:
        _follow(value.__func__, names, objects, seen, watched)
    elif kind is functools.partial:
        for part in (value.func, *value.args, *value.keywords.values()):
            _follow(part, names, objects, seen, watched)
    elif kind is types.ModuleType:
        walked = (id(value), id(names))  # each code reads its own names of the module
        if _users_module(value.__name__) and walked not in seen:
            seen.add(walked)
            members = vars(value)
            for name in names:  # only what leads to code: a number there is read when the code runs
                member = members.get(name, _EMPTY)
                if member is not _EMPTY and _may_lead_to_code(type(member)):
                    objects.append(member)
                    if watched is not None:
                        watched[0].append((members.get, name, member))
                    _follow(member, names, objects, seen, watched)
    elif _users_module(kind.__module__) and not issubclass(kind, type):
        method = callable_instance(value)  # an object of the user's class defining __call__
        if method is not None:
            _follow(method, names, objects, seen, watched)
    elif len(_LEADS_NOWHERE) < _MOST_CODES:
        _LEADS_NOWHERE.add(kind)  # a library's class (an array, a number): never the user's code


def _may_lead_to_code(kind):
    """Whether a value of type `kind` may lead to the user's code: a function, a method, a
    module, a partial, an object of the user's class (which may define `__call__`)."""
    return kind in _LEADING or (kind not in _LEADS_NOWHERE and _users_module(kind.__module__))


_LEADING = frozenset({types.FunctionType, types.MethodType, types.ModuleType, functools.partial})
_LEADS_NOWHERE = set()  # types `_follow` found no code of the user's behind


def _users_module(name):
    """Whether the module named `name` is the user's: not a library's, the standard
    library's or ssad's (code generated by ssad, `ssad_generated`, is the user's)."""
    try:
        return _USERS[name]
    except KeyError:
        pass
    top = (name or "").split(".")[0]
    users = top not in _LIBRARIES and top not in sys.stdlib_module_names
    if len(_USERS) < _MOST_CODES:
        _USERS[name] = users
    return users


_USERS = {}  # module name -> whether it is the user's
