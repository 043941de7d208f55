"""A corpus of straight-line NumPy functions, each with inputs away from kinks.

Each function is differentiated by the tests and compared with central finite
differences. Import styles vary on purpose: ssad must resolve `np`, `xp`,
`numpy` and names imported from numpy to the same primitives.
"""

import math

import numpy
import numpy as np
import numpy as xp
from numpy import exp, sin
from numpy.linalg import norm

rng = np.random.default_rng(1234)
A34 = rng.standard_normal((3, 4))
B43 = rng.standard_normal((4, 3))
V3 = rng.standard_normal(3)
V4 = rng.standard_normal(4)
POS4 = rng.uniform(0.5, 2.0, 4)
SPD3 = A34[:, :3] @ A34[:, :3].T + 3 * np.eye(3)
MASK4 = np.array([True, False, True, True])
IDX = np.array([0, 2, 2, 1])
LABELS = np.array([1, 0, 2])
SCALE = 0.75  # a global constant read by a function


def arithmetic(x, y):
    return np.sum(x * y + x / (y * y + 1.0) - 2.0 * x + x ** 3 - y ** 2)


def unary_and_powers(x):
    return np.sum(-x + (+x) * 0.5 + x ** 0.5 + 2.0 ** x)


def scalar_math(a, b):
    c = math.sin(a) * math.exp(b) + math.log(a + 2.0) - math.sqrt(b * b + 1.0)
    return c + math.tanh(a * b) + math.atan2(a, b) + math.hypot(a, b)


def import_styles(x):
    return np.sum(sin(x) + xp.cos(x) + numpy.tanh(x) + exp(-x)) + norm(x)


def matmul_chain(W, x):
    h = np.tanh(x @ W)
    return np.sum(h ** 2)


def reassign(h, W):
    h = np.tanh(h @ W)
    h = np.tanh(h @ W)
    h = h * h
    return np.sum(h)


def augmented(x, y):
    z = x * 1.0
    z += y
    z -= 0.5 * x
    z *= x
    z /= y * y + 2.0
    z **= 2
    return np.sum(z)


def tuple_unpacking(x, y):
    a, b = np.sin(x), np.cos(y)
    a, b = b, a
    (c, d), e = (a * b, a + b), x
    return np.sum(c * d + e)


def methods(x):
    s = x.sum(axis=0) + x.mean(axis=1).sum() + x.max() + x.prod()
    t = x.std() + x.var(axis=0).sum() + x.ravel().dot(x.ravel())
    u = x.reshape(4, 3).transpose().copy().astype(float)
    return np.sum(s) + t + np.sum(u * x) + np.sum(x.transpose() @ x.T.T)


def attributes(x):
    n = x.shape[0]
    m = x.size + x.ndim
    return np.sum(x.T @ x) / n + m * np.sum(x)


def subscripts(x):
    return (
        x[0] * x[-1]
        + np.sum(x[1:3] ** 2)
        + np.sum(x[::2])
        + np.sum(x[IDX] * x[IDX])
        + np.sum(x[MASK4] ** 3)
    )


def subscripts_2d(W):
    return np.sum(W[:, 0] * W[:, 1]) + np.sum(W[1:, ::2] ** 2) + W[2, 3] + np.sum(W[np.arange(3), LABELS])


def array_of_scalars(a, b):
    v = np.array([a * b, a + b, np.sin(a)])
    w = np.stack([v, v * 2.0])
    return np.sum(w ** 2)


def keyword_arguments(x):
    return np.sum(np.sum(x, axis=1, keepdims=True) * x) + np.linalg.norm(x, ord=2)


def constants_and_globals(x):
    return np.sum(SCALE * x * np.pi + np.e)


def integer_ops(x):
    n = x.shape[0] // 2
    k = 7 % 3
    return np.sum(x[:n] * k) + np.sum(x % 1.5)


def comparisons_are_inactive(x):
    flag = x > 0.0
    return np.sum(np.where(flag, x, 2.0 * x))


def broadcasting(x, y):
    return np.sum(x * y[:, None] + y[:, None] - x)


def linear_algebra(A):
    B = A @ A.T + 3.0 * np.eye(3)
    sign, logdet = np.linalg.slogdet(B)
    x = np.linalg.solve(B, np.ones(3))
    return logdet + np.sum(x) + np.trace(np.linalg.inv(B)) + np.sum(np.linalg.cholesky(B))


def softmax_cross_entropy(W, x):
    logits = x @ W
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(3), LABELS])


def docstring_and_pass(x):
    """A docstring is not code."""
    pass
    return np.sum(x)


def unused_input(x, y):
    return np.sum(x * 2.0)


def builtins_used(a, b):
    return abs(a - b) + max(a, b) * min(a, b) + pow(a, 2) + float(b) + sum([a, b, a * b])


# (function, args) pairs; the tests differentiate w.r.t. every float argument.
CASES = [
    (arithmetic, (A34, A34[::-1] + 0.1)),
    (unary_and_powers, (POS4,)),
    (scalar_math, (0.7, -0.4)),
    (import_styles, (V4,)),
    (matmul_chain, (B43, A34)),
    (reassign, (A34[:, :3], SPD3 / 4)),
    (augmented, (A34, A34 * 0.5 + 2.0)),
    (tuple_unpacking, (V3, V3 * 0.3)),
    (methods, (A34 + 3.0,)),
    (attributes, (A34,)),
    (subscripts, (V4,)),
    (subscripts_2d, (A34,)),
    (array_of_scalars, (0.3, 1.2)),
    (keyword_arguments, (A34,)),
    (constants_and_globals, (V4,)),
    (integer_ops, (POS4,)),
    (comparisons_are_inactive, (V4,)),
    (broadcasting, (V4, V3)),
    (linear_algebra, (A34[:, :3],)),
    (softmax_cross_entropy, (B43, A34)),
    (docstring_and_pass, (V3,)),
    (unused_input, (V3, V4)),
    (builtins_used, (0.6, 1.7)),
]
