"""A sweep over seeded programs that reports every failure instead of stopping at the first.

    .venv/bin/python -m tests.fuzz 0 2000          # seeds 0..1999
    .venv/bin/python -m tests.fuzz 0 2000 -v       # also print each failing program

Prints one line per failing seed and a summary; `python -m tests.fuzz.generate A B`
prints the programs themselves.
"""

import argparse
import collections
import time
import warnings

from tests.fuzz.generate import from_seed
from tests.fuzz.harness import Unfair, check


def main():
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("start", type=int)
    parser.add_argument("stop", type=int)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--second-order", action="store_true", help="also check forward over reverse")
    options = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    counts = collections.Counter()
    began = time.perf_counter()
    for seed in range(options.start, options.stop):
        program = from_seed(seed)
        try:
            check(program, second_order=options.second_order)
            counts["passed"] += 1
        except Unfair:
            counts["skipped"] += 1
        except AssertionError as error:
            counts["failed"] += 1
            message = str(error)
            print(f"seed {seed}: {message.splitlines()[0]}", flush=True)
            if options.verbose:
                print(message, flush=True)
    elapsed = time.perf_counter() - began
    print(f"{dict(counts)} in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
