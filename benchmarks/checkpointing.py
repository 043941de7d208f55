"""Memory against time for checkpointed gradients, measured side by side in one run.

    python benchmarks/checkpointing.py [--quick] [--json PATH]

Workloads:

- heat: 10,000 explicit Euler steps of the 1-D heat equation on 1,000 points (a state
  of 1,000 float64); the gradient of the final energy with respect to the initial
  state and the diffusion number, with no checkpointing, `checkpoint="sqrt"`,
  `("revolve", 20)` and `("every", 100)`.
- rnn: the benchmark's RNN (`workloads.rnn`) over 200 steps, with `ssad.checkpoint`
  around its cell, against the same RNN without it.

For each: peak memory above what was held before the call (tracemalloc), the median
time of a gradient call, and the largest difference from the gradient without
checkpointing (relative to its largest entry). `--quick` runs 2,000 steps.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import command  # noqa: E402
import workloads  # noqa: E402
from run import peak_memory  # noqa: E402

import ssad  # noqa: E402

STEPS = 10_000
POINTS = 1_000


def heat(u, k, steps):
    for _t in range(steps):
        u = u + k * (np.roll(u, 1) - 2.0 * u + np.roll(u, -1))
    return np.sum(u * u)


def cell(h, x_t, Wx, Wh, b):
    return np.tanh(x_t @ Wx + h @ Wh + b)


def rnn_plain(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = cell(h, xs[t], Wx, Wh, b)
    return np.sum(h * h)


def rnn_checkpointed(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = ssad.checkpoint(cell)(h, xs[t], Wx, Wh, b)
    return np.sum(h * h)


def median_seconds(call, repeats):
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def largest_difference(got, expected):
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        scale = max(np.max(np.abs(e)), 1e-300)
        worst = max(worst, float(np.max(np.abs(np.asarray(g) - np.asarray(e)))) / scale)
    return worst


def measure(label, gradient, args, reference, repeats):
    result = gradient(*args)
    return {
        "system": label,
        "peak_MB": peak_memory(lambda: gradient(*args)) / 1e6,
        "seconds": median_seconds(lambda: gradient(*args), repeats),
        "difference": largest_difference(result, reference),
    }


def run(quick):
    steps = STEPS // 5 if quick else STEPS
    rng = np.random.default_rng(0)
    u0 = np.sin(np.linspace(0.0, 2 * np.pi, POINTS)) + 0.1 * rng.standard_normal(POINTS)
    args = (u0, 0.2, steps)
    repeats = 3 if quick else 5
    plain = ssad.grad(heat, wrt=(0, 1))
    reference = plain(*args)
    heat_rows = [measure("no checkpointing", plain, args, reference, repeats)]
    for strategy in ("sqrt", ("revolve", 20), ("every", 100)):
        gradient = ssad.grad(heat, wrt=(0, 1), checkpoint=strategy)
        heat_rows.append(measure(f"checkpoint={strategy!r}", gradient, args, reference, repeats))

    Wx, Wh, b, xs = workloads.rnn_inputs(rng)
    xs = rng.standard_normal((200, xs.shape[1], xs.shape[2]))
    rnn_args = (Wx, Wh, b, xs)
    plain_rnn = ssad.grad(rnn_plain, wrt=(0, 1, 2))
    rnn_reference = plain_rnn(*rnn_args)
    rnn_rows = [
        measure("no checkpointing", plain_rnn, rnn_args, rnn_reference, repeats),
        measure("ssad.checkpoint(cell)", ssad.grad(rnn_checkpointed, wrt=(0, 1, 2)), rnn_args, rnn_reference, repeats),
    ]
    return {
        f"heat, {steps} steps x {POINTS} points": heat_rows,
        f"rnn, {xs.shape[0]} steps, batch {xs.shape[1]}, hidden {Wh.shape[0]}": rnn_rows,
    }


def report(results):
    lines = []
    for workload, rows in results.items():
        base = rows[0]
        lines.append(f"\n{workload}")
        lines.append(f"  {'':<32} {'peak memory':>12} {'memory':>8} {'time':>10} {'time':>7} {'vs no checkpointing':>20}")
        for row in rows:
            lines.append(
                f"  {row['system']:<32} {row['peak_MB']:>9.2f} MB {row['peak_MB'] / base['peak_MB']:>7.3f}x "
                f"{row['seconds'] * 1e3:>8.1f} ms {row['seconds'] / base['seconds']:>6.2f}x "
                f"{row['difference']:>20.1e}"
            )
    return "\n".join(lines)


def main(argv=None):
    command.main(__doc__, run, report, argv)


if __name__ == "__main__":
    main()
