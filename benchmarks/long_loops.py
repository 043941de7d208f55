"""Second derivatives of long loops: how their cost grows with the number of passes.

    python benchmarks/long_loops.py [--quick] [--json PATH]

Workloads, each at 200, 2,000 and 20,000 passes (200 and 2,000 with --quick):

- euler: a scalar Euler loop, `y = y + dt * (-k * y + np.sin(y))`, its gradient in y.
- recurrence: an array written one element a pass, `y[i] = 0.5 * y[i - 1] + x[i]`, then
  `np.sum(y * y)`: its gradient in x.

For each: the gradient's time, the Hessian-vector product `ssad.jvp(ssad.grad(f), ...)`
(forward over reverse) and the gradient of `sum(grad(f) * w)` (reverse over reverse), as
multiples of the gradient's time. A second derivative whose cost per pass does not grow
with the loop keeps the same multiple at every length. Times are medians of runs of the
calls interleaved; each result is checked against central differences of the gradient
once, at the shortest length.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import command  # noqa: E402

import ssad  # noqa: E402
from ssad.testing import numerical_gradient  # noqa: E402


def euler(y, k, dt, steps):
    for _ in range(steps):
        y = y + dt * (-k * y + np.sin(y))
    return y


def recurrence(x):
    y = np.zeros(len(x))
    for i in range(1, len(x)):
        y[i] = y[i - 1] * 0.5 + x[i]
    return np.sum(y * y)


GRAD_EULER = ssad.grad(euler)
GRAD_RECURRENCE = ssad.grad(recurrence)


def euler_weighted(y, k, dt, steps):
    return GRAD_EULER(y, k, dt, steps) * 0.7


def recurrence_weighted(x):
    return np.sum(GRAD_RECURRENCE(x) * np.cos(x))


def cases(passes):
    """(name, gradient call, product call, gradient-of-gradient call) at `passes` passes."""
    y = (0.5, 0.3, 0.01, passes)
    x = np.linspace(-1.0, 1.0, passes)
    v = np.cos(np.arange(passes))
    grad_grad_euler, grad_grad_recurrence = ssad.grad(euler_weighted), ssad.grad(recurrence_weighted)
    return [
        ("euler", lambda: GRAD_EULER(*y), lambda: ssad.jvp(GRAD_EULER, y, (1.0, None, None, None)),
         lambda: grad_grad_euler(*y)),
        ("recurrence", lambda: GRAD_RECURRENCE(x), lambda: ssad.jvp(GRAD_RECURRENCE, (x,), (v,)),
         lambda: grad_grad_recurrence(x)),
    ]


def check():
    """The second derivatives timed here, against central differences of the gradient (200 passes)."""
    y0, x, v = 0.5, np.linspace(-1.0, 1.0, 200), np.cos(np.arange(200))
    second = numerical_gradient(lambda y: GRAD_EULER(float(y[0]), 0.3, 0.01, 200), np.array([y0]))[0]
    assert np.isclose(ssad.jvp(GRAD_EULER, (y0, 0.3, 0.01, 200), (1.0, None, None, None))[1], second, rtol=1e-5)
    assert np.isclose(ssad.grad(euler_weighted)(y0, 0.3, 0.01, 200), 0.7 * second, rtol=1e-5)
    along = numerical_gradient(lambda u: float(np.dot(GRAD_RECURRENCE(u), v)), x.copy())
    np.testing.assert_allclose(ssad.jvp(GRAD_RECURRENCE, (x,), (v,))[1], along, rtol=1e-5, atol=1e-7)
    weighted = numerical_gradient(recurrence_weighted, x.copy())
    np.testing.assert_allclose(ssad.grad(recurrence_weighted)(x), weighted, rtol=1e-5, atol=1e-7)


def median_seconds(calls, repeats):
    """Median seconds of each call, their runs interleaved (after a warm-up call of each)."""
    for call in calls:
        call()
    samples = [[] for _ in calls]
    for _ in range(repeats):
        for call, times in zip(calls, samples, strict=True):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    return [statistics.median(times) for times in samples]


def run(quick):
    check()
    rows = []
    for passes in (200, 2_000) if quick else (200, 2_000, 20_000):
        repeats = 7 if passes < 20_000 else 3
        for name, gradient, product, twice in cases(passes):
            g, p, t = median_seconds([gradient, product, twice], repeats)
            rows.append({"workload": name, "passes": passes, "gradient_seconds": g,
                         "hvp_over_gradient": p / g, "grad_of_grad_over_gradient": t / g})
    return rows


def report(rows):
    lines = [f"{'workload':<12} {'passes':>7} {'gradient':>11} {'hvp / gradient':>15} {'grad(grad) / gradient':>22}"]
    for row in rows:
        lines.append(f"{row['workload']:<12} {row['passes']:>7} {row['gradient_seconds'] * 1e3:>8.2f} ms "
                     f"{row['hvp_over_gradient']:>15.2f} {row['grad_of_grad_over_gradient']:>22.2f}")
    return "\n".join(lines)


def main(argv=None):
    command.main(__doc__, run, report, argv)


if __name__ == "__main__":
    main()
