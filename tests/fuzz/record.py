"""A sweep's results kept in a file, so that a long sweep can be run in parts on one code.

    .venv/bin/python -m tests.fuzz 0 10000 --modes ... -j 2 --record tests/fuzz/records/five-modes.txt
    .venv/bin/python -m tests.fuzz --tally tests/fuzz/records/five-modes.txt

The file's first line names the code its results hold for (`fingerprint`: the sources of
ssad and of the sweep, and the versions of Python, NumPy and gast), the modes, in order, and
the programs the structural checks ran on (`--structural-checks N`: the seeds that are
multiples of N; 0 for none).
Each later line is one program: its seed, a letter per mode (`LETTERS`), and, for a program
refused, wrong or crashed in some mode, what happened (`mode: kind`). A sweep given a record
runs only the seeds it does not hold, and appends each program as it finishes, so a sweep
stopped part-way keeps what it ran. It refuses to add to a record made on other code or with
other modes: results of two versions of ssad do not add up to a sweep of either.
"""

import hashlib
import pathlib
import platform

import gast
import numpy as np

LETTERS = {"correct": "c", "refused": "r", "wrong": "W", "crashed": "X", "unfair": "u", "blocked": "b"}
STATUSES = {letter: status for status, letter in LETTERS.items()}
_ROOT = pathlib.Path(__file__).resolve().parents[2]
# what a program's outcome depends on: ssad itself, and how the sweep makes and judges programs
SOURCES = ("ssad", "tests/fuzz/generate.py", "tests/fuzz/harness.py", "tests/fuzz/__main__.py",
           "tests/fuzz/__init__.py")


def fingerprint():
    """A short hash of the sources and versions that decide every outcome of a sweep."""
    digest = hashlib.sha256()
    for source in SOURCES:
        path = _ROOT / source
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    versions = f"python {platform.python_version()}, numpy {np.__version__}, gast {gast.__version__}"
    digest.update(versions.encode())
    return digest.hexdigest()[:16], versions


def header(modes, every=1):
    code, versions = fingerprint()
    checks = "every program" if every == 1 else f"seeds divisible by {every}" if every else "no program"
    return f"# ssad sweep: code {code} ({versions}); structural checks on {checks}; modes {','.join(modes)}"


def _header_parts(first):
    """(modes, every) of a record's first line."""
    checks = first.split("; structural checks on ", 1)[1].split("; modes ", 1)[0]
    every = 1 if checks == "every program" else 0 if checks == "no program" else int(checks.rsplit(" ", 1)[1])
    return first.rsplit("; modes ", 1)[1].split(","), every


def describe(path):
    """The record's first line, and whether it holds for the code here."""
    first = pathlib.Path(path).read_text().split("\n", 1)[0]
    here = header(*_header_parts(first))
    fits = "holds for the code here" if first == here else "made on other code than the code here"
    return f"{first}\n({fits}: {here[len('# ssad sweep: '):]})"


class RecordError(Exception):
    """The record was made on other code or in other modes."""


def read(path, modes=None, every=1):
    """{seed: {mode: (status, kind)}} from a record, with its modes; checks it fits the code
    (and `modes` and `every`, when modes are given)."""
    lines = pathlib.Path(path).read_text().splitlines()
    if not lines or not lines[0].startswith("# ssad sweep: "):
        raise RecordError(f"{path} is not a record of a sweep")
    recorded_modes = _header_parts(lines[0])[0]
    if modes is not None and lines[0] != header(modes, every):
        raise RecordError(f"{path} was made on other code or with other modes:\n  {lines[0]}\n"
                          f"this sweep is\n  {header(modes, every)}\nstart a new record (another file)")
    results = {}
    for line in lines[1:]:
        seed, letters, *rest = line.split(" ", 2)
        kinds = dict(part.split(": ", 1) for part in rest[0].split(" | ")) if rest else {}
        results[int(seed)] = {mode: (STATUSES[letter], kinds.get(mode, ""))
                              for mode, letter in zip(recorded_modes, letters, strict=True)}
    return results, recorded_modes


def start(path, modes, every=1):
    """The seeds a record holds already (an empty set for a new record, whose header it writes)."""
    path = pathlib.Path(path)
    if path.exists() and path.stat().st_size:
        return set(read(path, modes, every)[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header(modes, every) + "\n")
    return set()


def line(seed, outcomes, modes):
    """One program's line: its seed, a letter per mode, and the kind of each failure or refusal."""
    letters = "".join(LETTERS[outcomes[mode].status] for mode in modes)
    notes = [f"{mode}: {' '.join(outcomes[mode].kind.replace('|', '/').split()) or outcomes[mode].status}"
             for mode in modes
             if outcomes[mode].status in ("refused", "wrong", "crashed")]
    return f"{seed} {letters}" + (" " + " | ".join(notes) if notes else "")
