"""A sweep over seeded programs that reports every failure instead of stopping at the first.

    .venv/bin/python -m tests.fuzz 0 2000                       # seeds 0..1999, first order and jvp
    .venv/bin/python -m tests.fuzz 0 2000 --modes all -j 2      # every mode, on two processes
    .venv/bin/python -m tests.fuzz 0 500 --modes autograd --failures out.txt
    .venv/bin/python -m tests.fuzz 0 10000 --modes ... --record FILE   # in parts: see record.py
    .venv/bin/python -m tests.fuzz --tally FILE                          # the table of a record

Modes (`--modes` takes a comma-separated list, or `all`):

    first         ssad.grad (all arguments, one by name) and ssad.vjp, against finite differences
    forward       ssad.jvp, against finite differences
    fwd_over_rev  ssad.jvp(ssad.grad(f)), against differences of ssad.grad(f)
    rev_over_rev  ssad.grad of <ssad.grad(f), t>, against differences of ssad.grad(f)
    grad_inside   ssad.grad of a function that calls ssad.grad(f), against finite differences
    compiled      ssad.grad(f, compile=True), against finite differences (refused: it ran as
                  NumPy code after a NativeWarning, whose gradient is compared all the same)
    checkpointed  ssad.grad(f, checkpoint=...) in each strategy, against finite differences and
                  against the gradient without checkpointing
    autograd      ssad's gradient, jvp(grad) and grad(<grad, v>) against autograd's, where
                  autograd can run the program

Prints a table per mode: correct, refused with ssad.SsadError (by message kind; an
acceptable answer at second order only), wrong, crashed (by exception kind), unfair
(no trustworthy reference at that point) and blocked (first order failed, so the
second-order modes were not run). Every wrong or crashed program is written, with its
point and the message, to `--failures` (default fuzz-failures.txt).
"""

import argparse
import collections
import multiprocessing
import signal
import sys
import time
import warnings

from tests.fuzz import record

MODES = ("first", "forward", "fwd_over_rev", "rev_over_rev", "grad_inside", "compiled", "checkpointed", "autograd")
STATUSES = ("correct", "refused", "wrong", "crashed", "unfair", "blocked")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _autograd_outcomes(program):
    from tests import oracle
    from tests.fuzz.harness import MARGIN, Outcome, Unfair, load, refusal_kind, smallest_gap

    try:
        module = load(program.source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import numpy as np

            with np.errstate(all="raise", under="ignore"):
                value = module.f(*program.args())
        if not np.isfinite(value) or smallest_gap(program) < MARGIN:
            raise Unfair("near a kink or not finite")
    except Exception as error:
        return Outcome("unfair", f"{type(error).__name__}: {error}")
    verdicts = oracle.compare(module.f, program.args(), positions=(0, 1, 2), label="f")
    statuses = [v.status for v in verdicts]
    for bad in ("crashed", "wrong"):
        if bad in statuses:
            v = verdicts[statuses.index(bad)]
            detail = (f"{v.check} {bad}: {v.detail.splitlines()[0] if v.detail else ''}\n{v.detail}\n\n----- program -----\n{program.source}\n"
                      f"----- point -----\n{program.arguments_source()}\n")
            return Outcome(bad, detail, refusal_kind(v.detail.split("\n")[0]) if bad == "crashed" else "")
    if "autograd_cannot" in statuses and "agree" not in statuses:
        v = verdicts[statuses.index("autograd_cannot")]
        return Outcome("unfair", "autograd cannot run it: " + v.detail, "autograd cannot: " + v.detail[:60])
    if "refused" in statuses:
        v = verdicts[statuses.index("refused")]
        return Outcome("refused", v.detail, refusal_kind(v.detail.split("\n")[0]))
    return Outcome("correct")


def run_seed(task):
    """(seed, {mode: Outcome}) for one program; a worker of the pool."""
    seed, modes, timeout, every = task
    from ssad.backend import pipeline
    from ssad.transform import mirror
    from tests.fuzz.generate import from_seed
    from tests.fuzz.harness import Outcome, evaluate

    # the checks of the code's structure, on this program or not (see --structural-checks)
    before = mirror.ENABLED, pipeline.CHECK_CLOSURE
    mirror.ENABLED = pipeline.CHECK_CLOSURE = every > 0 and seed % every == 0

    warnings.simplefilter("ignore")
    warnings.filterwarnings("error", category=SyntaxWarning, module="<ssad")  # generated code Python warns about
    program = from_seed(seed)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        outcomes = evaluate(program, [m for m in modes if m != "autograd"])
        if "autograd" in modes:
            outcomes["autograd"] = _autograd_outcomes(program)
    except _Timeout:
        outcomes = {m: Outcome("crashed", f"timed out after {timeout} s\n{program!r}", "timeout") for m in modes}
    except Exception as error:  # the harness itself: still report, never lose the sweep
        outcomes = {m: Outcome("crashed", f"harness error {error!r}\n{program!r}", "harness") for m in modes}
    finally:
        signal.alarm(0)
        mirror.ENABLED, pipeline.CHECK_CLOSURE = before
    return seed, outcomes


def summarize(results, modes, out=sys.stdout):
    counts = {m: collections.Counter() for m in modes}
    kinds = {m: collections.Counter() for m in modes}
    for _, outcomes in results:
        for mode in modes:
            outcome = outcomes[mode]
            counts[mode][outcome.status] += 1
            if outcome.status in ("refused", "crashed") and outcome.kind:
                kinds[mode][(outcome.status, outcome.kind)] += 1
    width = max(len(m) for m in modes)
    print(f"{'mode':<{width}}  " + "  ".join(f"{s:>8}" for s in STATUSES) + "     total", file=out)
    for mode in modes:
        total = sum(counts[mode].values())
        print(f"{mode:<{width}}  " + "  ".join(f"{counts[mode][s]:>8}" for s in STATUSES) + f"  {total:>8}",
              file=out)
    for mode in modes:
        if kinds[mode]:
            print(f"\n{mode}: refusals and crashes by kind", file=out)
            for (status, kind), n in kinds[mode].most_common():
                print(f"  {n:>5}  {status:<8} {kind}", file=out)
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("start", type=int, nargs="?")
    parser.add_argument("stop", type=int, nargs="?")
    parser.add_argument("--modes", default="first,forward", help=f"comma-separated, or all: {', '.join(MODES)}")
    parser.add_argument("--second-order", action="store_true", help="add the three second-order modes")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="processes (the machine's cores, say)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per program before it counts as crashed")
    parser.add_argument("--failures", default="fuzz-failures.txt", help="where wrong and crashed programs go")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print each failing program")
    parser.add_argument("--check", action="store_true", help="exit with status 1 when a program is wrong or crashed")
    parser.add_argument(
        "--structural-checks", type=int, default=1, metavar="N",
        help="check that each adjoint sweep reads what its forward sweep had (ssad/transform/mirror.py) "
             "and that ssad's front end accepts each generated function (CHECK_CLOSURE), as the test suite "
             "does, on the programs whose seed is a multiple of N (1, the default: all; 0: none); "
             "the sweep runs about twice as fast without them",
    )
    parser.add_argument("--record", help="a file of results to resume and extend (tests/fuzz/record.py)")
    parser.add_argument("--tally", metavar="RECORD", help="print the table of a record and stop")
    options = parser.parse_args(argv)
    if options.tally:
        results, modes = record.read(options.tally)
        print(f"{len(results)} programs (seeds {min(results, default=0)}..{max(results, default=-1)}) "
              f"in {options.tally}\n{record.describe(options.tally)}\n")
        summarize(_outcomes(results), modes)
        return
    if options.start is None or options.stop is None:
        parser.error("give the first seed and the seed after the last (or --tally RECORD)")
    modes = list(MODES) if options.modes == "all" else options.modes.split(",")
    if options.second_order:
        modes += [m for m in ("fwd_over_rev", "rev_over_rev", "grad_inside") if m not in modes]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes {unknown}; choose from {MODES}")
    done = set()
    if options.record:
        try:
            done = record.start(options.record, modes, options.structural_checks)
        except record.RecordError as error:
            sys.exit(str(error))
    tasks = [(seed, modes, options.timeout, options.structural_checks) for seed in range(options.start, options.stop) if seed not in done]
    began = time.perf_counter()
    results = []
    kept = open(options.record, "a") if options.record else None
    with open(options.failures, "w") as failures:
        if options.jobs > 1:
            # each worker forks once and keeps its caches; maxtasksperchild bounds memory
            with multiprocessing.get_context("fork").Pool(options.jobs, maxtasksperchild=200) as pool:
                stream = pool.imap_unordered(run_seed, tasks, chunksize=1)
                results = _collect(stream, failures, options.verbose, kept, modes)
        else:
            results = _collect(map(run_seed, tasks), failures, options.verbose, kept, modes)
    if kept:
        kept.close()
    results.sort(key=lambda r: r[0])
    elapsed = time.perf_counter() - began
    print(f"\n{len(results)} programs (seeds {options.start}..{options.stop - 1}) in {elapsed:.0f} s; "
          f"failures written to {options.failures}\n")
    counts = summarize(results, modes)
    if options.record:
        held, _ = record.read(options.record, modes, options.structural_checks)
        print(f"\n{len(held)} programs in {options.record}, with those of earlier runs:\n")
        counts = summarize(_outcomes(held), modes)
    if options.check and any(counts[m]["wrong"] or counts[m]["crashed"] for m in modes):
        sys.exit(1)


def _outcomes(held):
    """A record's results as `run_seed` returns them."""
    from tests.fuzz.harness import Outcome

    return [(seed, {mode: Outcome(status, "", kind) for mode, (status, kind) in modes.items()})
            for seed, modes in sorted(held.items())]


def _collect(stream, failures, verbose, kept=None, modes=()):
    results = []
    for seed, outcomes in stream:
        results.append((seed, outcomes))
        if kept:
            kept.write(record.line(seed, outcomes, modes) + "\n")
            kept.flush()
        for mode, outcome in outcomes.items():
            if outcome.status in ("wrong", "crashed"):
                first = outcome.detail.splitlines()[0] if outcome.detail else outcome.kind
                print(f"seed {seed} [{mode}] {outcome.status}: {first[:160]}", flush=True)
                failures.write(f"===== seed {seed} mode {mode}: {outcome.status}\n{outcome.detail}\n\n")
                failures.flush()
                if verbose:
                    print(outcome.detail, flush=True)
    return results


if __name__ == "__main__":
    main()
