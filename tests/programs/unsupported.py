"""Functions using constructs ssad rejects at the fence, one construct each.

The tests find each construct's line by the marker comment `# <- here`.
"""

import numpy as np


def uses_try(x):
    try:  # <- here
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f"):  # <- here
        y = x
    return y


def uses_no_return(x):
    y = x * 2  # <- here  # noqa: F841


def uses_global(x):
    global SOMETHING  # <- here
    return x


def uses_walrus(x):
    y = (z := x * 2)  # <- here
    return y + z


def uses_yield(x):
    yield x  # <- here
    return x


def uses_bare_raise(x):
    if np.sum(x) > 1e9:
        raise  # <- here
    return x


def uses_del(x):
    y = [x, x * 2.0, x]
    del y[0:2]  # <- here
    return y[0]


def uses_pop_with_default(x):
    d = {"a": x}
    y = d.pop("b", x)  # <- here
    return y * d["a"]


def uses_undefined_name(x):
    return x * UNDEFINED_THING  # <- here  # noqa: F821


CASES = [
    uses_try,
    uses_with,
    uses_no_return,
    uses_global,
    uses_walrus,
    uses_yield,
    uses_bare_raise,
    uses_del,
    uses_pop_with_default,
]


def uses_inplace_on_shared_array(x):
    y = x.T
    y += 1.0  # <- here
    return np.sum(x * y)


CASES.append(uses_inplace_on_shared_array)
