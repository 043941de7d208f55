"""A corpus of NumPy functions with branches and loops, each with inputs away from kinks.

Every function returns a scalar. The argument sets in CASES are chosen so that
the different sides of each data-dependent branch are taken and loops run a
different number of times (zero included), while every data-dependent
comparison stays at least 1e-3 away from its threshold: central differences
never cross a branch, so they are a fair reference for the gradient of the
path actually taken.

Parameters are never written in place; a function that wants to mutate one
copies it first.
"""

import math

import numpy as np

rng = np.random.default_rng(20240611)
V3 = rng.standard_normal(3)
V4 = rng.standard_normal(4)
V5 = rng.standard_normal(5)
V6 = rng.standard_normal(6)
V7 = rng.standard_normal(7)
A34 = rng.standard_normal((3, 4))
A44 = rng.standard_normal((4, 4))
W44 = rng.standard_normal((4, 4)) * 0.5
H24 = rng.standard_normal((2, 4))
X53 = rng.standard_normal((5, 3))
TARGET5 = rng.standard_normal(5)
COEFFS5 = rng.standard_normal(5)
REWARDS6 = rng.uniform(-1.0, 1.0, 6)
POS4 = rng.uniform(0.5, 2.0, 4)
POS6 = rng.uniform(0.5, 2.0, 6)

# The tanh RNN: batch 8, hidden 32, input 16, 20 steps.
RNN_WX = rng.standard_normal((16, 32)) * 0.25
RNN_WH = rng.standard_normal((32, 32)) * (0.9 / np.sqrt(32.0))
RNN_B = rng.standard_normal(32) * 0.1
RNN_XS = rng.standard_normal((20, 8, 16))


# ----- if / elif / else -----


def sum_sign_branch(x):
    if np.sum(x) > 0:
        y = x * x + np.sin(x)
    else:
        y = np.exp(0.5 * x) - x
    return np.sum(y)


def if_elif_else(a, b):
    if a > 1.0:
        r = a * b + math.log(a)
    elif a > -0.5:
        r = np.sin(a) * b * b
    else:
        r = np.exp(a) + b / (1.0 + a * a)
    return r


def nested_if(x, y):
    if x > 0.0:
        if y > x:
            out = x * y
        else:
            out = x - y * y
    else:
        out = np.cos(x + y)
    return out


def nested_if_in_else(x, w):
    s = np.dot(x, w)
    if s > 1.0:
        out = np.sum(np.tanh(x * s))
    else:
        if np.max(x) > 0.5:
            out = np.sum(x ** 2) * s
        else:
            out = np.sum(np.exp(x)) - s
    return out


def conditional_expressions(x, s):
    scale = s if np.mean(x) > 0.0 else -0.5 * s
    extra = np.sum(x ** 2) if s > 1.0 else np.sum(np.sin(x))
    return np.sum(x * scale) + extra


def boolean_conditions(a, b):
    if a > 0.0 and b > 0.0:
        r = a * b
    elif a > 0.0 or b > 1.0:
        r = a + b * b
    else:
        r = np.exp(a - b)
    if not a < b:
        r = r * (a - b)
    return r


def early_returns(x):
    peak = np.max(x)
    if peak > 2.0:
        return peak * np.sum(x)
    total = np.sum(x)
    if total < 0.0:
        return total ** 2
    return np.sum(np.sqrt(x * x + 1.0))


def assigned_in_one_branch(x, w):
    scale = 1.0
    shift = np.zeros_like(x)
    score = np.dot(x, w)
    if score > 0.0:
        scale = score
        shift = 0.5 * w
    return np.sum((x * scale + shift) ** 2)


def softplus_stable(x):
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


def logistic_loss(scores, labels):
    total = 0.0
    for s, t in zip(scores, labels, strict=True):
        z = -s * t
        if z > 0.0:
            total = total + z + np.log1p(np.exp(-z))
        else:
            total = total + np.log1p(np.exp(z))
    return total / len(scores)


def piecewise(t):
    if t < -1.0:
        return -2.0 / 3.0 - np.log(-t)
    elif t < 1.0:
        return t - t ** 3 / 3.0
    else:
        return 2.0 / 3.0 + np.log(t)


def clip_by_norm(g, max_norm):
    norm = np.sqrt(np.sum(g * g))
    if norm > max_norm:
        g = g * (max_norm / norm)
    return np.sum(g * V4) + 0.1 * np.sum(g * g)


def huber(residuals, delta):
    total = 0.0
    for r in residuals:
        a = abs(r)
        if a <= delta:
            total = total + 0.5 * r * r
        else:
            total = total + delta * (a - 0.5 * delta)
    return total


# ----- for loops -----


def horner(coeffs, x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def neighbour_products(x):
    total = 0.5 * x[0]
    for i in range(1, x.shape[0]):
        total = total + x[i] * x[i - 1]
    return total


def strided_sums(x):
    even = 0.0
    for i in range(0, len(x), 2):
        even = even + x[i] ** 2
    odd = 0.0
    for i in range(len(x) - 1, 0, -2):
        odd = odd + np.sin(x[i]) * even
    return even + odd


def countdown_weights(x):
    acc = 1.0
    for i in range(len(x) - 1, -1, -1):
        acc = acc * 0.5 + x[i] * (i + 1)
    return acc * acc


def rows_of_matrix(A, v):
    total = 0.0
    for row in A:
        total = total + np.tanh(row @ v)
    return total


def over_built_list(x, y):
    total = 0.0
    for w in [x, y, x * y, np.sin(x)]:
        total = total + 0.5 * np.sum(w ** 2)
    return total


def over_built_tuple(a, b):
    acc = 1.0
    for c in (a, b, a * b, 2.0):
        acc = acc * c + 0.5
    return acc


def enumerate_weights(x):
    total = 0.0
    for i, v in enumerate(x):
        total = total + (i + 1) * v * v
    return total


def enumerate_rows_from_one(A, v):
    total = 0.0
    for k, row in enumerate(A, start=1):
        total = total + np.sum(row * v) / k
    return total * total


def zip_pairs(a, b):
    total = 0.0
    for u, v in zip(a, b):  # noqa: B905
        total = total + u * v * np.exp(-u * u)
    return total


def discounted_return(rewards, gamma):
    g = 0.0
    for r in reversed(rewards):
        g = r + gamma * g
    return g


def backward_recurrence(x, c):
    acc = 0.0
    for i in reversed(range(len(x))):
        acc = np.tanh(x[i] + c * acc)
    return acc


def zip_range_prefix(x, n):
    total = 0.1 * np.sum(x)
    for i, v in zip(range(n), x):  # noqa: B905  (n may exceed len(x))
        total = total + v ** 2 / (i + 1)
    return total


def repeated_sine(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * 1.5
    return np.sum(y ** 2)


def empty_ranges(x):
    y = x * 1.0
    for _ in range(3, 3):
        y = y * 2.0
    for _ in range(len(x), 0):
        y = y + 1.0
    return np.sum(np.sin(y))


def triangular_nested(A):
    n = A.shape[0]
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            total = total + A[i, j] * A[j, i]
    return total


def nested_loops_with_branch(A, v):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            p = A[i, j] * v[j]
            if p > 0.0:
                total = total + p
            else:
                total = total - 0.1 * p * p
    return total


def split_by_threshold(x):
    high = 0.0
    low = 0.0
    for v in x:
        if v > 0.5:
            high = high + v ** 2
        else:
            low = low + np.sin(v)
    return high + low * (1.0 + high)


def fibonacci_pair(a, b, n):
    for _ in range(n):
        a, b = b, a + 0.5 * b
    return a * b


def tanh_layers(h, W):
    for _ in range(4):
        h = np.tanh(h @ W)
    return np.sum(h * h)


def doubling_then_use(x):
    total = 0.0
    for _ in range(3):
        x = x * 2.0
        total = total + np.sum(np.sin(x))
    return total + np.sum(x)


def array_state_recurrence(x, decay):
    state = np.zeros(3)
    for i in range(x.shape[0]):
        state = decay * state + x[i] * V3
        state = np.tanh(state)
    return np.sum(state ** 2)


def euler_decay(y0, dt, k):
    y = y0
    for _ in range(200):
        y = y + dt * (-k * y + np.sin(y))
    return y


def tanh_rnn(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h ** 2)


def fixed_point_cos(x, a):
    y = x
    for _ in range(40):
        y = a * np.cos(y) + x
    return y


def power_iteration(A, v):
    for _ in range(8):
        v = A @ v
        v = v / np.sqrt(np.sum(v * v))
    return v @ A @ v


def gradient_descent_steps(w, X, lr):
    for _ in range(10):
        residual = X @ w - TARGET5
        w = w - lr * (X.T @ residual)
    return np.sum((X @ w - TARGET5) ** 2)


# ----- while loops -----


def grow_until(x, y):
    while y < 10.0:
        y = y * 1.5 + x
    return y


def newton_sqrt(a):
    y = 0.5 * (a + 1.0)
    step = 1.0
    it = 0
    while abs(step) > 1e-10 and it < 50:
        step = 0.5 * (y - a / y)
        y = y - step
        it += 1
    return y


def newton_cubic(c, max_iter):
    y = 0.5 * c
    it = 0
    while it < max_iter:
        f = y ** 3 + y - c
        if abs(f) < 1e-10:
            break
        y = y - f / (3.0 * y * y + 1.0)
        it += 1
    return y


def halve_until_small(x, limit):
    y = x
    while y > limit:
        y = y * 0.5
    return y * y + limit


def while_counter(x):
    s = np.sum(x * x)
    n = 0
    while s > 1.0:
        s = np.sqrt(s) * 0.8
        n += 1
    return s * (n + 1)


def adaptive_steps(y0, k):
    t = 0.0
    y = y0
    while t < 1.0:
        h = 0.1 / (1.0 + y * y)
        y = y - h * k * y
        t = t + h
    return y + t


# ----- break, continue, return inside loops -----


def break_at_budget(x):
    total = 0.0
    for v in x:
        if total > 2.0:
            break
        total = total + v * v
    return total


def skip_negatives(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            continue
        total = total + np.sqrt(x[i]) * (i + 1)
    return total


def while_true_break(x, y):
    it = 0
    while True:
        y = y * 1.3 + 0.1 * x
        it += 1
        if y > 5.0:
            break
        if it >= 100:
            break
    return y


def while_with_continue(x):
    i = 0
    acc = 0.1 * x[-1]
    while i < len(x):
        v = x[i]
        i += 1
        if v < 0.0:
            continue
        acc = acc * 0.9 + v
    return acc


def nested_break(A):
    total = 0.0
    for row in A:
        for v in row:
            if v < -1.0:
                break
            total = total + v * v
    return total


def first_exceedance(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + x[i] ** 2
        if acc > 3.0:
            return acc * (i + 1)
    return -acc


def accumulate_until_else(x, t):
    # for ... else: the else block runs only when no break left the loop
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + np.sin(x[i]) * acc + x[i]
        if acc > t:
            break
    else:
        acc = acc * 3.0 + np.sum(x**2)
    return acc


def loop_else_without_break(x):
    s = 0.0
    for v in x:
        s = s + v * v
    else:
        s = s * np.cos(s)
    return s


def damp_while_else(x, t):
    k = 0
    y = x
    while k < 4:
        y = y * 0.8 + np.sin(y)
        k += 1
        if np.sum(y) > t:
            break
    else:
        y = y**2
    return np.sum(y)


def inner_else_continues_outer(x):
    total = 0.0
    for i in range(3):
        for j in range(3):
            if j > i:
                break
            total = total + x[i] * x[j]
        else:
            total = total * 1.5
            continue
        total = total + np.exp(x[i])
    return total


def search_or_else_return(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return np.sum(x[:i] ** 2) + x[i]
    else:
        return np.sum(np.tanh(x))


def search_grid(A, t):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] * t > 1.0:
                return A[i, j] * t + i - j
    return np.sum(A) * t


def continue_skips_state_update(x, w):
    state = np.ones(3)
    for v in x:
        if v < 0.2:
            continue
        state = state * v + w
    return np.sum(state)


# ----- in-place subscript assignment -----


def squares_in_place(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] * x[i]
    return np.sum(np.sin(y))


def accumulate_in_place(x, s):
    y = np.ones(x.shape[0])
    for i in range(x.shape[0]):
        y[i] += x[i] * s
    for i in range(1, x.shape[0]):
        y[i] += 0.5 * y[i - 1]
    return np.sum(y ** 3)


def pairwise_slices(x):
    y = np.zeros(x.shape[0])
    for i in range(0, x.shape[0] - 1, 2):
        y[i:i + 2] = x[i:i + 2] * x[i + 1]
    return np.sum(y ** 2) + np.sum(x)


def scale_slice_after_branch(x, s):
    z = np.exp(x)
    if np.sum(x) > 0.0:
        z = z * 2.0
    else:
        z[0] = s * s
    z[1:3] *= s
    return np.sum(z * z)


def scaled_window_loop(x, s):
    z = np.cos(x)
    for k in range(3):
        if np.sum(z) > 0.0:
            z[1:3] *= s
        else:
            z[k] += s
    return np.sum(z ** 2)


def masked_damping(x, factor):
    y = np.sin(x) + x
    for _ in range(3):
        mask = y > 1.0
        y[mask] = y[mask] * factor
    return np.sum(y ** 2)


def cumulative_product(x):
    y = np.empty(x.shape[0])
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * x[i]
    return np.sum(y)


def iir_filter(x, a, b):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = b * x[i]
        if i > 0:
            y[i] += a * y[i - 1]
    return np.sum(y ** 2)


def mutate_copy_of_parameter(x):
    x = x.copy()
    for i in range(1, len(x)):
        x[i] = x[i] + 0.5 * x[i - 1]
    return np.sum(x ** 2)


def gated_fill(x):
    y = np.ones(len(x))
    for i in range(1, len(x)):
        if x[i] < 0.0:
            continue
        y[i] = y[i - 1] * x[i] + 0.5
    return np.sum(y * x)


def insertion_sort_weighted(x):
    y = x.copy()
    for i in range(1, len(y)):
        j = i
        while j > 0 and y[j - 1] > y[j]:
            y[j - 1], y[j] = y[j], y[j - 1]
            j -= 1
    return np.sum(y * np.arange(1.0, len(y) + 1.0))


def running_max(x):
    best = x[0]
    for v in x[1:]:
        if v > best:
            best = v
    return best * np.sum(x)


# (function, args) pairs; the tests differentiate w.r.t. every float argument.
# Several pairs per function take different branches or trip counts.
CASES = [
    # if / elif / else
    (sum_sign_branch, (POS4,)),
    (sum_sign_branch, (-POS4,)),
    (if_elif_else, (1.7, 0.4)),
    (if_elif_else, (0.3, -1.1)),
    (if_elif_else, (-1.6, 0.9)),
    (nested_if, (0.5, 1.5)),
    (nested_if, (1.2, 0.3)),
    (nested_if, (-0.8, 0.6)),
    (nested_if_in_else, (np.array([0.9, 0.4, -0.2, 0.7]), np.array([0.8, 0.5, 0.3, 0.6]))),
    (nested_if_in_else, (np.array([0.9, -0.4, 0.2, 0.1]), np.array([0.2, 0.5, -0.3, 0.6]))),
    (nested_if_in_else, (np.array([0.3, -0.4, 0.2, 0.1]), np.array([0.2, 0.5, -0.3, 0.6]))),
    (conditional_expressions, (V5 + 0.8, 1.5)),
    (conditional_expressions, (V5 - 0.8, 0.6)),
    (conditional_expressions, (V5 + 0.8, 0.4)),
    (boolean_conditions, (0.8, 1.3)),
    (boolean_conditions, (-0.5, 1.4)),
    (boolean_conditions, (-0.9, -2.0)),
    (early_returns, (np.array([2.5, 0.3, -0.7]),)),
    (early_returns, (np.array([-1.5, 0.3, -0.7]),)),
    (early_returns, (np.array([1.5, 0.3, -0.7]),)),
    (assigned_in_one_branch, (-V4, POS4)),
    (assigned_in_one_branch, (-POS4, POS4)),
    (softplus_stable, (25.0,)),
    (softplus_stable, (0.7,)),
    (softplus_stable, (-3.0,)),
    (logistic_loss, (np.array([1.2, -0.4, 0.3, -2.1, 0.9]), np.array([1.0, 1.0, -1.0, -1.0, 1.0]))),
    (piecewise, (-2.5,)),
    (piecewise, (0.3,)),
    (piecewise, (1.8,)),
    (clip_by_norm, (np.array([1.5, -0.8, 0.4, 2.0]), 1.0)),
    (clip_by_norm, (np.array([0.3, -0.2, 0.1, 0.25]), 1.0)),
    (huber, (np.array([0.3, -1.7, 0.8, -0.2, 2.4]), 1.0)),
    (huber, (np.array([0.3, -1.7, 0.8, -0.2, 2.4]), 0.5)),
    # for loops
    (horner, (COEFFS5, 0.7)),
    (horner, (COEFFS5, -1.3)),
    (neighbour_products, (V6,)),
    (neighbour_products, (np.array([0.8]),)),
    (strided_sums, (V7,)),
    (strided_sums, (V6,)),
    (countdown_weights, (V5,)),
    (rows_of_matrix, (A34, V4)),
    (over_built_list, (V3, V3[::-1] * 0.5)),
    (over_built_tuple, (0.7, -1.2)),
    (enumerate_weights, (V5,)),
    (enumerate_rows_from_one, (A34, V4)),
    (zip_pairs, (V4, V4 * 0.3 + 0.2)),
    (discounted_return, (REWARDS6, 0.9)),
    (backward_recurrence, (V5, 0.8)),
    (zip_range_prefix, (V4, 3)),
    (zip_range_prefix, (V4, 0)),
    (zip_range_prefix, (V4, 10)),
    (repeated_sine, (V3, 4)),
    (repeated_sine, (V3, 0)),
    (empty_ranges, (V4,)),
    (triangular_nested, (A44,)),
    (nested_loops_with_branch, (A34, V4)),
    (split_by_threshold, (V6,)),
    (split_by_threshold, (np.array([0.1, -0.3, 0.45, 0.2]),)),
    (split_by_threshold, (np.array([0.9, -0.3, 1.45, 0.2]),)),
    (fibonacci_pair, (0.3, 0.7, 6)),
    (fibonacci_pair, (1.1, -0.4, 0)),
    (tanh_layers, (H24, W44)),
    (doubling_then_use, (V3 * 0.3,)),
    (array_state_recurrence, (V5, 0.6)),
    (euler_decay, (1.0, 0.01, 2.0)),
    (euler_decay, (-0.5, 0.02, 1.5)),
    (tanh_rnn, (RNN_WX, RNN_WH, RNN_B, RNN_XS)),
    (fixed_point_cos, (0.3, 0.5)),
    (fixed_point_cos, (-1.0, 0.4)),
    (power_iteration, (A44 + A44.T + 4.0 * np.eye(4), V4)),
    (gradient_descent_steps, (V3, X53, 0.05)),
    # while loops
    (grow_until, (0.5, 1.0)),
    (grow_until, (0.2, 6.0)),
    (grow_until, (1.0, 12.0)),
    (newton_sqrt, (2.0,)),
    (newton_sqrt, (5.0,)),
    (newton_cubic, (2.5, 50)),
    (newton_cubic, (2.5, 2)),
    (newton_cubic, (-1.5, 50)),
    (halve_until_small, (5.0, 0.7)),
    (halve_until_small, (0.3, 0.7)),
    (while_counter, (V4 * 2.0,)),
    (while_counter, (V4 * 0.2,)),
    (adaptive_steps, (0.8, 1.5)),
    (adaptive_steps, (2.0, 0.5)),
    # break, continue, return inside loops
    (break_at_budget, (np.array([0.9, 1.1, -0.7, 0.5, 1.3]),)),
    (break_at_budget, (np.array([0.3, -0.2, 0.4]),)),
    (skip_negatives, (np.array([0.9, -1.1, 0.7, -0.5, 1.3]),)),
    (skip_negatives, (POS4,)),
    (while_true_break, (0.5, 1.0)),
    (while_true_break, (-2.0, 1.0)),
    (while_with_continue, (V6,)),
    (while_with_continue, (-POS4,)),
    (nested_break, (np.array([[0.5, -1.5, 0.7], [0.2, 0.3, -0.4], [-2.0, 0.6, 0.1]]),)),
    (nested_break, (A34 * 0.4,)),
    (first_exceedance, (np.array([0.9, 1.1, -0.7, 1.5, 0.4]),)),
    (first_exceedance, (np.array([0.3, -0.2, 0.4]),)),
    (accumulate_until_else, (np.array([0.3, -0.4, 0.8, 0.5]), 0.6)),
    (accumulate_until_else, (np.array([0.3, -0.4, 0.8, 0.5]), 50.0)),
    (loop_else_without_break, (V4,)),
    (damp_while_else, (np.array([0.3, -0.4, 0.8, 0.5]), 3.0)),
    (damp_while_else, (np.array([0.3, -0.4, 0.8, 0.5]), 10.0)),
    (inner_else_continues_outer, (V4,)),
    (search_or_else_return, (np.array([0.3, -0.4, 0.8, 0.5]), 0.6)),
    (search_or_else_return, (np.array([0.3, -0.4, 0.8, 0.5]), 5.0)),
    (search_grid, (A34, 0.8)),
    (search_grid, (A34, 0.05)),
    (continue_skips_state_update, (np.array([0.9, 0.1, 1.2, -0.4, 0.7]), V3 * 0.5)),
    # in-place subscript assignment
    (squares_in_place, (V5,)),
    (accumulate_in_place, (V5, 0.7)),
    (pairwise_slices, (V6,)),
    (pairwise_slices, (V5,)),
    (scale_slice_after_branch, (V4 + 1.0, 0.6)),
    (scale_slice_after_branch, (V4 - 1.0, 1.3)),
    (scaled_window_loop, (np.array([0.3, 0.5, 2.0, 1.0]), 0.4)),
    (scaled_window_loop, (np.array([2.5, 0.2, 2.8, 2.9]), 1.5)),
    (masked_damping, (np.array([0.3, 1.5, -0.8, 2.6, 0.9]), 0.6)),
    (cumulative_product, (POS6,)),
    (cumulative_product, (V4,)),
    (iir_filter, (V6, 0.7, 1.3)),
    (iir_filter, (V6, -0.5, 0.8)),
    (mutate_copy_of_parameter, (V5,)),
    (gated_fill, (np.array([0.4, 1.2, -0.5, 0.8, 0.9, -1.1]),)),
    (insertion_sort_weighted, (V6,)),
    (insertion_sort_weighted, (np.array([0.1, 0.5, 0.9, 1.3]),)),
    (running_max, (V6,)),
    (running_max, (np.array([0.3, 1.5, -0.4, 2.0, 1.1]),)),
]
