"""Golden tests: the exact source ssad emits for small functions.

The emitted code is part of ssad's interface: people read it. A change to these
files is a change a user sees; review the diff, then regenerate with
`SSAD_UPDATE_GOLDEN=1 make test`.
"""

import os
import pathlib

import numpy as np
import pytest

import ssad

GOLDEN = pathlib.Path(__file__).parent / "golden"


def elementwise(x, y):
    z = x * y + np.sin(x)
    return np.sum(z)


def two_layer(W1, W2, x, y):
    h = np.tanh(x @ W1)
    return np.mean((h @ W2 - y) ** 2)


def unpack_and_index(x):
    a, b = x[0], x[1:]
    return a * np.sum(b**2)


def scalar_chain(t, k):
    s = k * t
    s = s * s + 1.0
    return s / (s + k)


def branch(x, t):
    if np.sum(x) > t:
        y = np.sin(x) * t
    else:
        y = x * x
    return np.sum(y)


def loop(W, x):
    h = x
    for i in range(3):  # noqa: B007  (the loop of the design notes, index unused)
        h = np.tanh(h @ W)
    return np.sum(h**2)


CASES = [
    (branch, 0),
    (loop, 0),
    (elementwise, (0, 1)),
    (two_layer, ("W1", "W2")),
    (unpack_and_index, 0),
    (scalar_chain, 0),
]


@pytest.mark.parametrize("function, wrt", CASES, ids=[f.__name__ for f, _ in CASES])
def test_emitted_source(function, wrt):
    source = ssad.show(function, wrt=wrt).source
    path = GOLDEN / f"{function.__name__}.py"
    if os.environ.get("SSAD_UPDATE_GOLDEN"):
        path.write_text(source)
    assert source == path.read_text()


@pytest.mark.parametrize("function, wrt", CASES, ids=[f.__name__ for f, _ in CASES])
def test_golden_source_computes_the_gradient(function, wrt):
    # The golden files are themselves checked: executed, they give correct gradients.
    rng = np.random.default_rng(3)
    shapes = {
        "branch": [(4,), ()],
        "loop": [(3, 3), (2, 3)],
        "elementwise": [(4,), (4,)],
        "two_layer": [(3, 5), (5, 2), (6, 3), (6, 2)],
        "unpack_and_index": [(4,)],
        "scalar_chain": [(), ()],
    }[function.__name__]
    args = [float(rng.uniform(0.5, 1.5)) if not s else rng.standard_normal(s) for s in shapes]
    ssad.check_grads(function, args, wrt=wrt)
