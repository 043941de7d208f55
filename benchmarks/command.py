"""The command line the side benchmarks share (`checkpointing.py`, `long_loops.py`):
`[--quick] [--json PATH]`, the table printed, the results written as JSON when asked."""

import argparse
import json
from pathlib import Path


def main(doc, run, report, argv=None):
    """Parse `argv`, `run(quick)`, print `report(results)` and write them to `--json`."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args(argv)
    results = run(options.quick)
    print(report(results))
    if options.json is not None:
        options.json.write_text(json.dumps(results, indent=2) + "\n")
