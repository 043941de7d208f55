"""The benchmark workloads: each a plain NumPy function and its gradient written by hand.

Every workload names its function (what ssad differentiates), the arguments it is
differentiated with respect to, a builder of its inputs, and the hand-written
gradient that the run compares against, both for speed and for correctness.
The functions use `np` only through the module global, so the same code runs under
autograd and JAX by swapping that global (see `with_numpy`).
"""

import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

# ----- trace(A @ B), 30 x 30 -----


def trace_product(A, B):
    return np.trace(A @ B)


def trace_product_hand(A, B):
    return B.T, A.T


def trace_inputs(rng):
    return (rng.standard_normal((30, 30)), rng.standard_normal((30, 30)))


# ----- a 200-step scalar Euler loop -----


def euler(y, k, dt):
    for _ in range(200):
        y = y + dt * (-k * y + np.sin(y))
    return y


def euler_hand(y, k, dt):
    ys = []
    for _ in range(200):
        ys.append(y)
        y = y + dt * (-k * y + np.sin(y))
    d_y = 1.0
    d_k = 0.0
    for y in reversed(ys):
        d_k = d_k - dt * y * d_y
        d_y = d_y * (1.0 + dt * (-k + np.cos(y)))
    return d_y, d_k


def euler_inputs(rng):
    return (0.5 + 0.1 * float(rng.standard_normal()), 0.3, 0.01)


# ----- a 2-layer tanh MLP with softmax cross-entropy, batch 64 x 32 -----


def mlp(W1, b1, W2, b2, x, labels):
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(x.shape[0]), labels])


def mlp_hand(W1, b1, W2, b2, x, labels):
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    exp = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    d_logits = exp / np.sum(exp, axis=1, keepdims=True)
    d_logits[np.arange(n), labels] -= 1.0
    d_logits /= n
    d_W2 = h.T @ d_logits
    d_b2 = np.sum(d_logits, axis=0)
    d_pre = (d_logits @ W2.T) * (1.0 - h * h)
    d_W1 = x.T @ d_pre
    d_b1 = np.sum(d_pre, axis=0)
    return d_W1, d_b1, d_W2, d_b2


def mlp_inputs(rng):
    features, hidden, classes, batch = 32, 64, 10, 64
    return (
        rng.standard_normal((features, hidden)) / np.sqrt(features),
        np.zeros(hidden),
        rng.standard_normal((hidden, classes)) / np.sqrt(hidden),
        np.zeros(classes),
        rng.standard_normal((batch, features)),
        rng.integers(0, classes, batch),
    )


# ----- a 20-step tanh RNN, batch 8, hidden 32 -----


def rnn(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_hand(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    hs = [h]
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        hs.append(h)
    d_h = 2.0 * h
    d_Wx = np.zeros_like(Wx)
    d_Wh = np.zeros_like(Wh)
    d_b = np.zeros_like(b)
    for t in reversed(range(xs.shape[0])):
        d_pre = d_h * (1.0 - hs[t + 1] * hs[t + 1])
        d_b += np.sum(d_pre, axis=0)
        d_Wx += xs[t].T @ d_pre
        d_Wh += hs[t].T @ d_pre
        d_h = d_pre @ Wh.T
    return d_Wx, d_Wh, d_b


def rnn_inputs(rng):
    steps, batch, inputs, hidden = 20, 8, 16, 32
    return (
        0.2 * rng.standard_normal((inputs, hidden)),
        0.2 * rng.standard_normal((hidden, hidden)),
        0.1 * rng.standard_normal(hidden),
        rng.standard_normal((steps, batch, inputs)),
    )


# ----- BPR matrix factorization: 943 users, 1682 items, 32 factors, 512 triples -----


def bpr(U, V, users, positives, negatives):
    u = U[users]
    margin = np.sum(u * (V[positives] - V[negatives]), axis=1)
    loss = np.mean(np.logaddexp(0.0, -margin))  # -log sigmoid(margin), stable
    return loss + 0.01 * (np.sum(u * u) + np.sum(V[positives] ** 2) + np.sum(V[negatives] ** 2))


def bpr_hand(U, V, users, positives, negatives):
    u = U[users]
    v_pos = V[positives]
    v_neg = V[negatives]
    margin = np.sum(u * (v_pos - v_neg), axis=1)
    d_margin = -0.5 * (1.0 - np.tanh(0.5 * margin)) / margin.shape[0]  # -sigmoid(-m) / n
    d_u = d_margin[:, None] * (v_pos - v_neg) + 0.02 * u
    d_pos = d_margin[:, None] * u + 0.02 * v_pos
    d_neg = -d_margin[:, None] * u + 0.02 * v_neg
    d_U = np.zeros_like(U)
    d_V = np.zeros_like(V)
    np.add.at(d_U, users, d_u)
    np.add.at(d_V, positives, d_pos)
    np.add.at(d_V, negatives, d_neg)
    return d_U, d_V


def bpr_inputs(rng):
    users, items, factors, triples = 943, 1682, 32, 512
    return (
        0.1 * rng.standard_normal((users, factors)),
        0.1 * rng.standard_normal((items, factors)),
        rng.integers(0, users, triples),
        rng.integers(0, items, triples),
        rng.integers(0, items, triples),
    )


# ----- loops as people write them: over elements, rows, steps, coefficients -----
# Each hand-written gradient is the reverse loop a person would write in NumPy.


def elements(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * np.sin(x[i])
    return s


def elements_hand(x):
    d_x = np.zeros_like(x)
    for i in reversed(range(x.shape[0])):
        xi = x[i]
        d_x[i] += np.sin(xi) + xi * np.cos(xi)
    return (d_x,)


def elements_inputs(rng):
    return (rng.standard_normal(2000),)


def rows(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s = s + np.dot(x[i], x[i - 1])
    return s


def rows_hand(x):
    d_x = np.zeros_like(x)
    for i in reversed(range(1, x.shape[0])):
        d_x[i] += x[i - 1]
        d_x[i - 1] += x[i]
    return (d_x,)


def rows_inputs(rng):
    return (rng.standard_normal((1000, 50)),)


def recurrence(W, h):
    for _ in range(300):
        h = np.tanh(W @ h)
    return np.sum(h)


def recurrence_hand(W, h):
    hs = []
    for _ in range(300):
        hs.append(h)
        h = np.tanh(W @ h)
    d_h = np.ones_like(h)
    d_W = np.zeros_like(W)
    for previous in reversed(hs):
        d_pre = d_h * (1.0 - h * h)
        d_W += np.outer(d_pre, previous)
        d_h = W.T @ d_pre
        h = previous
    return d_W, d_h


def recurrence_inputs(rng):
    return (0.1 * rng.standard_normal((100, 100)), rng.standard_normal(100))


def horner(c, x):
    p = np.zeros_like(x)
    for k in range(c.shape[0]):
        p = p * x + c[k]
    return np.sum(p)


def horner_hand(c, x):
    ps = []
    p = np.zeros_like(x)
    for k in range(c.shape[0]):
        ps.append(p)
        p = p * x + c[k]
    d_p = np.ones_like(x)
    d_c = np.zeros_like(c)
    d_x = np.zeros_like(x)
    for k in reversed(range(c.shape[0])):
        d_c[k] = np.sum(d_p)
        d_x += ps[k] * d_p
        d_p = d_p * x
    return d_c, d_x


def horner_inputs(rng):
    return (rng.standard_normal(20), rng.uniform(-1.0, 1.0, 1000))


def stencil(x):
    s = 0.0
    for i in range(1, x.shape[0] - 1):
        s = s + (x[i - 1] - 2.0 * x[i] + x[i + 1]) ** 2
    return s


def stencil_hand(x):
    d_x = np.zeros_like(x)
    for i in reversed(range(1, x.shape[0] - 1)):
        r = 2.0 * (x[i - 1] - 2.0 * x[i] + x[i + 1])
        d_x[i - 1] += r
        d_x[i] -= 2.0 * r
        d_x[i + 1] += r
    return (d_x,)


def stencil_inputs(rng):
    return (rng.standard_normal(2000),)


# ----- the table -----


@dataclass
class Workload:
    name: str
    description: str
    function: Callable
    hand: Callable  # the gradient written by hand: a tuple, one entry per `wrt`
    inputs: Callable  # rng -> the positional arguments
    wrt: tuple  # positions differentiated
    straight_line: bool  # no loops: its forward sweep is compared with the function
    loop: bool = False  # a loop over elements, rows or steps, written as people write them


WORKLOADS = [
    Workload("trace", "trace(A @ B), 30x30", trace_product, trace_product_hand, trace_inputs, (0, 1), True),
    Workload("euler", "200-step scalar Euler loop", euler, euler_hand, euler_inputs, (0, 1), False),
    Workload("mlp", "2-layer tanh MLP, softmax cross-entropy, 64x32 batch", mlp, mlp_hand, mlp_inputs, (0, 1, 2, 3), True),
    Workload("rnn", "20-step tanh RNN, batch 8, hidden 32", rnn, rnn_hand, rnn_inputs, (0, 1, 2), False),
    Workload("bpr", "BPR minibatch, 943 users, 1682 items, 32 factors, 512 triples", bpr, bpr_hand, bpr_inputs, (0, 1), True),
    Workload("elements", "loop over 2000 elements: s + x[i] * sin(x[i])", elements, elements_hand, elements_inputs, (0,),
             False, loop=True),
    Workload("rows", "loop over 1000x50 rows: s + dot(x[i], x[i - 1])", rows, rows_hand, rows_inputs, (0,), False,
             loop=True),
    Workload("recurrence", "300 steps of h = tanh(W @ h), W 100x100", recurrence, recurrence_hand, recurrence_inputs,
             (0, 1), False, loop=True),
    Workload("horner", "Horner loop, 20 coefficients at 1000 points", horner, horner_hand, horner_inputs, (0, 1), False,
             loop=True),
    Workload("stencil", "loop over 2000 elements: 1-D stencil, squared", stencil, stencil_hand, stencil_inputs, (0,),
             False, loop=True),
]


# ----- a 20-line function: what a first `grad(f)` and call costs (no hand-written gradient) -----


def twenty_lines(W1, b1, W2, b2, x, y):
    mean = np.mean(x, axis=0)
    centered = x - mean
    scale = np.sqrt(np.mean(centered**2, axis=0) + 1e-5)
    normalized = centered / scale
    hidden = np.tanh(normalized @ W1 + b1)
    gate = 1.0 / (1.0 + np.exp(-hidden))
    mixed = gate * hidden + (1.0 - gate) * normalized[:, : hidden.shape[1]]
    out = mixed @ W2 + b2
    error = out[:, 0] - y
    small = np.abs(error) < 1.0
    huber = np.where(small, 0.5 * error**2, np.abs(error) - 0.5)
    loss = np.mean(huber)
    penalty = 0.0
    for W in (W1, W2):
        penalty = penalty + np.sum(W * W)
    if loss > 10.0:
        loss = 10.0 + np.log(loss - 9.0)
    total = loss + 1e-3 * penalty
    spread = np.std(out)
    return total + 1e-4 * spread


def twenty_lines_inputs(rng):
    return (
        rng.standard_normal((8, 8)) / 3,
        np.zeros(8),
        rng.standard_normal((8, 2)) / 3,
        np.zeros(2),
        rng.standard_normal((32, 8)),
        rng.standard_normal(32),
    )


TWENTY_LINES = Workload("twenty_lines", "a 20-line model and loss", twenty_lines, None, twenty_lines_inputs,
                        (0, 1, 2, 3), False)


def with_numpy(function, numpy_module):
    """`function` with its global `np` bound to `numpy_module` (autograd.numpy, jax.numpy)."""
    namespace = dict(function.__globals__, np=numpy_module)
    return types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__)
