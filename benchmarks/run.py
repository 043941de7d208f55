"""Time ssad's gradients against hand-written ones (and autograd, PyTorch, JAX where installed).

    python benchmarks/run.py [--quick] [--only NAME ...] [--peers NAME ...] [--json PATH] [--plot PATH]
                             [--unsettled]

For each workload in `workloads.py`, in one run: the function alone, the gradient
written by hand, ssad's gradient, and every installed peer, each checked against the
hand-written gradient before it is timed. Times are medians of repeated runs, each
run long enough (about 20 ms, or 5 ms with --quick) to make timer resolution
negligible. Also measured: ssad's transform time (the first `grad(f)` and first call
of a function it has not seen), the overhead of a cached `grad(f)` call over calling
the generated function directly, the cost of ssad's forward sweep against the
function alone for straight-line code, and the peak memory (tracemalloc) of the RNN
gradient against the hand-written one. Before timing, the run settles glibc's allocator
(`settle_allocator`), so no workload's figures depend on the workloads before it;
`--unsettled` times from the state a new process starts in instead.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402

import ssad  # noqa: E402

HERE = Path(__file__).resolve().parent

# ----- timing -----


def _calls_per_run(call, target_seconds):
    """How many calls of `call` take about `target_seconds` (after a warm-up call)."""
    call()  # warm caches (and compile, for systems that do)
    number = 1
    while True:
        elapsed = timeit.timeit(call, number=number)
        if elapsed >= target_seconds / 4 or number >= 1_000_000:
            break
        number *= 4
    return max(1, int(number * target_seconds / max(elapsed, 1e-9)))


def median_times(calls, target_seconds, repeats):
    """Median seconds per call of each of `calls` (a dict), their runs interleaved.

    Interleaving (a run of each, then again) spreads any drift of the machine's speed
    over all systems alike, so the ratios between them stay fair.
    """
    numbers = {name: _calls_per_run(call, target_seconds) for name, call in calls.items()}
    samples = {name: [] for name in calls}
    gc.collect()
    for _ in range(repeats):
        for name, call in calls.items():
            samples[name].append(timeit.timeit(call, number=numbers[name]) / numbers[name])
    return {name: statistics.median(values) for name, values in samples.items()}


def peak_memory(call):
    """Peak bytes allocated (tracemalloc) while `call` runs, above what was held before."""
    call()
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ----- the systems compared -----


def _as_tuple(gradient, count):
    return tuple(gradient) if count > 1 else (gradient,)


def ssad_system(workload):
    gradient = ssad.grad(workload.function, wrt=workload.wrt)
    return lambda *args: gradient(*args)


def ssad_compiled_system(workload):
    gradient = ssad.grad(workload.function, wrt=workload.wrt, compile="strict")
    return lambda *args: gradient(*args)


_FIRST_CALL = """
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
import numba  # noqa: F401  (imported before the clock starts, as ssad is)
import ssad, workloads
workload = next(w for w in workloads.WORKLOADS if w.name == {name!r})
args = workload.inputs(np.random.default_rng(0))
start = time.perf_counter()
ssad.grad(workload.function, wrt=workload.wrt, compile="strict")(*args)
print(time.perf_counter() - start)
"""


def compiled_first_calls(workload):
    """(seconds, seconds): `grad(f, compile="strict")` and its first call in a new process
    with an empty disk cache, then in a second process that finds the first one's."""
    script = _FIRST_CALL.format(here=str(HERE), name=workload.name)
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, SSAD_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True,
                                  check=True)
            times.append(float(done.stdout.split()[-1]))
    return tuple(times)


def autograd_system(workload):
    import autograd
    import autograd.numpy as anp

    gradient = autograd.grad(workloads.with_numpy(workload.function, anp), workload.wrt)
    return gradient


def _jax_gradient(workload):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    return jax.grad(workloads.with_numpy(workload.function, jnp), argnums=workload.wrt)


def _jax_caller(gradient):
    import jax

    def call(*args):
        return jax.block_until_ready(gradient(*args))

    return call


def jax_system(workload):
    return _jax_caller(_jax_gradient(workload))


def jax_jit_system(workload):
    import jax

    # Static loop bounds and integer arrays are fine under jit; Python floats become tracers.
    return _jax_caller(jax.jit(_jax_gradient(workload)))


def torch_system(workload):
    import torch

    function = TORCH_FUNCTIONS[workload.name]

    def call(*args):
        tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=(i in workload.wrt)) if _is_float(a) else _to_torch(a) for i, a in enumerate(args)]
        value = function(*tensors)
        inputs = [tensors[i] for i in workload.wrt]
        return tuple(g.numpy() if g.dim() else g.item() for g in torch.autograd.grad(value, inputs))

    return call


def _is_float(a):
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _to_torch(a):
    import torch

    return torch.from_numpy(a) if isinstance(a, np.ndarray) else a


def _torch_functions():
    """The workloads written with torch operations (PyTorch has no NumPy-compatible namespace)."""
    import torch

    def trace(A, B):
        return torch.trace(A @ B)

    def euler(y, k, dt):
        for _ in range(200):
            y = y + dt * (-k * y + torch.sin(y))
        return y

    def mlp(W1, b1, W2, b2, x, labels):
        h = torch.tanh(x @ W1 + b1)
        logits = h @ W2 + b2
        return torch.nn.functional.cross_entropy(logits, labels)

    def rnn(Wx, Wh, b, xs):
        h = torch.zeros((xs.shape[1], Wh.shape[0]), dtype=xs.dtype)
        for t in range(xs.shape[0]):
            h = torch.tanh(xs[t] @ Wx + h @ Wh + b)
        return torch.sum(h * h)

    def bpr(U, V, users, positives, negatives):
        u = U[users]
        margin = torch.sum(u * (V[positives] - V[negatives]), dim=1)
        loss = torch.mean(torch.nn.functional.softplus(-margin))
        return loss + 0.01 * (torch.sum(u * u) + torch.sum(V[positives] ** 2) + torch.sum(V[negatives] ** 2))

    return {"trace": trace, "euler": euler, "mlp": mlp, "rnn": rnn, "bpr": bpr}


TORCH_FUNCTIONS = {}


def available_peers():
    peers = {}
    try:
        import autograd  # noqa: F401

        peers["autograd"] = autograd_system
    except ImportError:
        pass
    try:
        import torch  # noqa: F401

        TORCH_FUNCTIONS.update(_torch_functions())
        torch.set_num_threads(1)
        peers["torch"] = torch_system
    except ImportError:
        pass
    try:
        import jax  # noqa: F401

        peers["jax"] = jax_system
        peers["jax.jit"] = jax_jit_system
    except ImportError:
        pass
    return peers


def matches(got, expected):
    got = _as_tuple(got, len(expected)) if not isinstance(got, tuple) else got
    return len(got) == len(expected) and all(
        np.allclose(np.asarray(g, dtype=float), e, rtol=1e-7, atol=1e-10) for g, e in zip(got, expected, strict=True)
    )


# ----- ssad's own costs -----


def fresh_copy(function):
    """The same code as a new function object: ssad has not transformed it yet."""
    return types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__)


def transform_seconds(workload, args, repeats=5):
    """Median time of `grad(f)` plus its first call, minus a steady call: the transform."""
    steady = ssad.grad(workload.function, wrt=workload.wrt)
    steady(*args)
    times = []
    for _ in range(repeats):
        function = fresh_copy(workload.function)
        start = time.perf_counter()
        ssad.grad(function, wrt=workload.wrt)(*args)
        first = time.perf_counter() - start
        start = time.perf_counter()
        steady(*args)
        times.append(first - (time.perf_counter() - start))
    return statistics.median(times)


def cached_call_overhead(workload, args, target, repeats):
    """Seconds a `grad(f)` call adds over calling the generated function directly.

    Measured with the generated function swapped for one that returns its result at
    once, so the figure is the wrapper's own work (choosing the variant, fitting the
    gradients to the arguments), not a difference of two noisy timings.
    """
    wrapper = ssad.grad(workload.function, wrt=workload.wrt)
    entry = wrapper.variants.for_args(args)
    generated = entry.function
    result = generated(*args)
    entry.function = lambda *args: result
    try:
        times = median_times({"wrapper": lambda: wrapper(*args), "bare": lambda: entry.function(*args)}, target, repeats)
    finally:
        entry.function = generated
    return times["wrapper"] - times["bare"]


# ----- the run -----


def settle_allocator():
    """Put glibc's allocator in the state a long-running NumPy process reaches, so that no
    workload's figures depend on the workloads timed before it.

    glibc serves an allocation of 128 KiB or more with a fresh `mmap` (a page fault per
    page touched), and each such block freed raises that threshold to its own size, up to
    32 MiB; the heap is returned to the system whenever more than twice the threshold lies
    free at its top. So a call that makes and drops a few arrays larger than any freed so
    far has its heap trimmed after it and faulted in again by the next call, or not,
    depending on the sizes the process has freed before. One array of 32 MB, made and
    freed, takes the threshold to its maximum, where it stays.
    """
    np.ones(4_000_000)


def run(names, quick, chosen_peers=None, settle=True):
    target, repeats = (0.005, 5) if quick else (0.02, 11)
    if settle:
        settle_allocator()
    peers = available_peers()
    if chosen_peers is not None:
        peers = {name: make for name, make in peers.items() if name in chosen_peers}
    rng = np.random.default_rng(0)
    results = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "settings": {"target_seconds_per_run": target, "repeats": repeats, "allocator_settled": settle},
        "workloads": [],
    }
    for workload in workloads.WORKLOADS:
        if names and workload.name not in names:
            continue
        entry = measure(workload, workload.inputs(rng), peers, target, repeats)
        results["workloads"].append(entry)
        print(format_entry(entry), flush=True)
    twenty = workloads.TWENTY_LINES
    results["twenty_lines_transform_seconds"] = transform_seconds(twenty, twenty.inputs(rng), repeats=11)
    print(f"\nssad transform (first grad(f) and call) of a 20-line function (benchmarks/workloads.py, "
          f"twenty_lines): {results['twenty_lines_transform_seconds'] * 1e3:.1f} ms")
    return results


def measure(workload, args, peers, target, repeats):
    """One workload's entry of the results: times, checks, transform, overhead, memory."""
    expected = workload.hand(*args)
    entry = {"name": workload.name, "description": workload.description, "seconds": {}, "correct": {}, "notes": {},
             "first_call_seconds": {}}
    if _has_numba():
        cold, warm = compiled_first_calls(workload)
        entry["first_call_seconds"].update({"ssad compiled": cold, "ssad compiled, second process": warm})
    entry["transform_seconds"] = transform_seconds(workload, args)
    calls = {"function": lambda: workload.function(*args), "hand": lambda: workload.hand(*args)}
    systems = {"ssad": ssad_system}
    if _has_numba():
        systems["ssad compiled"] = ssad_compiled_system
    for name, make in {**systems, **peers}.items():
        start = time.perf_counter()
        try:
            call = make(workload)
            got = call(*args)
        except Exception as error:  # a peer that cannot run this workload is reported, not fatal
            if name == "ssad":
                raise
            entry["notes"][name] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
            continue
        if name == "jax.jit":
            entry["notes"][name] = f"compile {time.perf_counter() - start:.2f} s"
            entry["first_call_seconds"]["jax.jit"] = time.perf_counter() - start
        entry["correct"][name] = bool(matches(got, expected))
        calls[name] = lambda call=call: call(*args)
    generated = ssad.grad(workload.function, wrt=workload.wrt).variants.for_args(args).function
    calls["ssad generated, called directly"] = lambda: generated(*args)
    if workload.straight_line:
        # the forward sweep alone: the generated forward function `ssad.vjp` runs, which
        # returns the value and what the pullback needs; then the whole `ssad.vjp` call
        forward = forward_sweep(workload, args)
        calls["ssad forward sweep"] = lambda: forward(*args)
        calls["ssad.vjp call"] = lambda: ssad.vjp(workload.function, *args)
    tangents = hvp_direction(workload, args)
    gradient = ssad.grad(workload.function, wrt=workload.wrt)
    calls["ssad hvp: jvp(grad(f))"] = lambda: ssad.jvp(gradient, args, tangents)
    if "jax.jit" in peers and workload.loop:
        # tracing unrolls a Python loop: the jitted Hessian-vector product takes minutes to compile
        entry["notes"]["jax.jit hvp: jvp(grad(f))"] = "not timed on loop workloads (compile time)"
    elif "jax.jit" in peers:
        try:
            jax_hvp = jax_jit_hvp(workload, args)
            jax_hvp()
            calls["jax.jit hvp: jvp(grad(f))"] = jax_hvp
        except Exception as error:  # reported, not fatal, as for the gradients
            entry["notes"]["jax.jit hvp: jvp(grad(f))"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    entry["seconds"] = median_times(calls, target, repeats)
    entry["cached_call_overhead_seconds"] = cached_call_overhead(workload, args, target, repeats)
    if workload.name == "rnn":
        gradient = ssad.grad(workload.function, wrt=workload.wrt)
        entry["peak_bytes"] = {
            "hand": peak_memory(lambda: workload.hand(*args)),
            "ssad": peak_memory(lambda: gradient(*args)),
        }
    return entry


def hvp_direction(workload, args):
    """A fixed direction for the Hessian-vector product: one per differentiated argument."""
    rng = np.random.default_rng(1)
    return tuple(
        (float(rng.standard_normal()) if np.ndim(a) == 0 else rng.standard_normal(np.shape(a))) if i in workload.wrt
        else None
        for i, a in enumerate(args)
    )


def jax_jit_hvp(workload, args):
    """`jax.jvp(jax.grad(f))` under `jax.jit`, along `hvp_direction`, as a call of no arguments."""
    import jax

    gradient = _jax_gradient(workload)
    tangents = hvp_direction(workload, args)
    wrt = workload.wrt

    def hvp(*differentiated):
        def partial(*moving):
            full = list(args)
            for i, value in zip(wrt, moving, strict=True):
                full[i] = value
            return gradient(*full)

        return jax.jvp(partial, differentiated, tuple(tangents[i] for i in wrt))

    compiled = jax.jit(hvp)
    primals = tuple(args[i] for i in wrt)
    return lambda: jax.block_until_ready(compiled(*primals))


def forward_sweep(workload, args):
    """The generated forward function of `workload` (what `ssad.vjp` runs first)."""
    from ssad.backend.driver import compiled
    from ssad.runtime.handles import VJP

    names = tuple(workload.function.__code__.co_varnames[i] for i in range(len(args)))
    return compiled(workload.function, names, VJP, True, frozenset()).function


def _has_numba():
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def format_entry(entry):
    seconds = entry["seconds"]
    hand = seconds["hand"]
    lines = [f"\n{entry['name']}: {entry['description']}"]
    for name, value in seconds.items():
        if name == "hand":
            ratio = "1.00"
        elif name in ("ssad forward sweep", "ssad.vjp call"):
            ratio = f"{value / seconds['function']:.2f} of f"
        elif name == "ssad hvp: jvp(grad(f))":
            ratio = f"{value / seconds['ssad']:.2f} of grad"
        elif name == "jax.jit hvp: jvp(grad(f))" and "jax.jit" in seconds:
            ratio = f"{value / seconds['jax.jit']:.2f} of grad"
        else:
            ratio = f"{value / hand:.2f}"
        check = entry["correct"].get(name)
        mark = "" if check is None else ("  ok" if check else "  WRONG")
        note = f"  ({entry['notes'][name]})" if name in entry["notes"] else ""
        lines.append(f"  {name:<34}{_format_time(value):>12}  {ratio:>10}{mark}{note}")
    for name, note in entry["notes"].items():
        if name not in seconds:
            lines.append(f"  {name:<34}{'':>12}  {'-':>10}  ({note})")
    lines.append(f"  ssad transform (first grad(f) and call) {entry['transform_seconds'] * 1e3:.1f} ms")
    for name, value in entry.get("first_call_seconds", {}).items():
        lines.append(f"  first call with compilation, {name + ':':<30} {value * 1e3:.0f} ms")
    lines.append(f"  ssad cached-call overhead               {entry['cached_call_overhead_seconds'] * 1e6:.2f} us")
    if "peak_bytes" in entry:
        peak = entry["peak_bytes"]
        lines.append(
            f"  peak memory: hand {peak['hand'] / 1024:.0f} KiB, ssad {peak['ssad'] / 1024:.0f} KiB "
            f"({peak['ssad'] / peak['hand']:.2f}x)"
        )
    return "\n".join(lines)


def _format_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def plot(results, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart written")
        return
    systems = ["ssad", "ssad compiled", "autograd", "torch", "jax", "jax.jit"]
    names = [w["name"] for w in results["workloads"]]
    figure, axes = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(systems)
    for k, system in enumerate(systems):
        ratios = [w["seconds"].get(system, np.nan) / w["seconds"]["hand"] for w in results["workloads"]]
        if all(np.isnan(ratios)):
            continue
        axes.bar(np.arange(len(names)) + k * width, ratios, width, label=system)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.axhline(1.2, color="gray", linewidth=0.8, linestyle="--")
    axes.set_yscale("log")
    axes.set_xticks(np.arange(len(names)) + 0.4 - width / 2, names)
    axes.set_ylabel("time / hand-written gradient (log scale)")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"chart written to {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (noisier medians)")
    parser.add_argument("--only", nargs="*", default=[], help="workload names to run")
    parser.add_argument("--peers", nargs="*", default=None,
                        help="peers to time (autograd, torch, jax, jax.jit; default: every one installed)")
    parser.add_argument("--json", default=str(HERE / "results.json"), help="where to write the results")
    parser.add_argument("--plot", default=str(HERE / "ratios.png"), help="where to write the chart")
    parser.add_argument("--unsettled", action="store_true",
                        help="time with the allocator as the process starts (see settle_allocator)")
    options = parser.parse_args(argv)
    results = run(set(options.only), options.quick, options.peers, settle=not options.unsettled)
    Path(options.json).write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nresults written to {options.json}")
    plot(results, options.plot)


if __name__ == "__main__":
    main()
