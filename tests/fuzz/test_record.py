"""A sweep's record (tests/fuzz/record.py): what is written is read back, a resumed sweep
skips what is held, and results of other code or other modes are not added to."""

import pytest

from tests.fuzz import __main__ as sweep
from tests.fuzz import record
from tests.fuzz.harness import Outcome

MODES = ["first", "forward", "fwd_over_rev"]


def test_lines_read_back(tmp_path):
    path = tmp_path / "record.txt"
    assert record.start(path, MODES) == set()
    outcomes = {
        4: {"first": Outcome("correct"), "forward": Outcome("correct"), "fwd_over_rev": Outcome("refused", "", "SsadError: a | b")},
        9: {"first": Outcome("crashed", "", "KeyError: 'N'"), "forward": Outcome("unfair"), "fwd_over_rev": Outcome("blocked")},
        2: {"first": Outcome("wrong"), "forward": Outcome("correct"), "fwd_over_rev": Outcome("blocked")},
    }
    with open(path, "a") as handle:
        for seed, by_mode in outcomes.items():
            handle.write(record.line(seed, by_mode, MODES) + "\n")
    assert path.read_text().splitlines()[1:] == [
        "4 ccr fwd_over_rev: SsadError: a / b",
        "9 Xub first: KeyError: 'N'",
        "2 Wcb first: wrong",
    ]
    held, modes = record.read(path, MODES)
    assert modes == MODES
    assert held == {
        4: {"first": ("correct", ""), "forward": ("correct", ""), "fwd_over_rev": ("refused", "SsadError: a / b")},
        9: {"first": ("crashed", "KeyError: 'N'"), "forward": ("unfair", ""), "fwd_over_rev": ("blocked", "")},
        2: {"first": ("wrong", "wrong"), "forward": ("correct", ""), "fwd_over_rev": ("blocked", "")},
    }
    assert record.start(path, MODES) == {2, 4, 9}
    assert "holds for the code here" in record.describe(path)


def test_other_code_or_modes_refused(tmp_path):
    path = tmp_path / "record.txt"
    record.start(path, MODES)
    with pytest.raises(record.RecordError, match="other code or with other modes"):
        record.start(path, MODES[:2])
    path.write_text(record.header(MODES).replace("code ", "code 0", 1) + "\n1 ccc\n")
    with pytest.raises(record.RecordError, match="start a new record"):
        record.read(path, MODES)
    assert "made on other code" in record.describe(path)
    assert set(record.read(path)[0]) == {1}  # a tally reads it all the same


def test_a_resumed_sweep_runs_only_what_is_not_held(tmp_path, capsys):
    path = tmp_path / "record.txt"
    record.start(path, ["first"])
    with open(path, "a") as handle:
        handle.write("0 c\n1 u\n")
    sweep.main(["0", "3", "--modes", "first", "--record", str(path), "--failures", str(tmp_path / "f.txt")])
    printed = capsys.readouterr().out
    assert "1 programs (seeds 0..2)" in printed  # seed 2 alone ran
    assert "3 programs in" in printed
    held, _ = record.read(path, ["first"])
    assert set(held) == {0, 1, 2} and held[0]["first"] == ("correct", "") and held[1]["first"] == ("unfair", "")
    sweep.main(["--tally", str(path)])
    assert "3 programs (seeds 0..2)" in capsys.readouterr().out


def test_structural_checks_on_one_program_in_n(tmp_path, monkeypatch):
    from ssad.backend import pipeline
    from ssad.transform import mirror

    seen = []

    def evaluate(program, modes):
        seen.append((mirror.ENABLED, pipeline.CHECK_CLOSURE))
        return {mode: Outcome("correct") for mode in modes}

    monkeypatch.setattr("tests.fuzz.generate.from_seed", lambda seed: None)
    monkeypatch.setattr("tests.fuzz.harness.evaluate", evaluate)
    for seed in range(4):
        sweep.run_seed((seed, ["first"], 60, 3))
    assert seen == [(True, True), (False, False), (False, False), (True, True)]
    assert mirror.ENABLED and pipeline.CHECK_CLOSURE  # as the test suite set them
    path = tmp_path / "record.txt"
    record.start(path, ["first"], 3)
    assert "structural checks on seeds divisible by 3; modes first" in path.read_text()
    with pytest.raises(record.RecordError):
        record.start(path, ["first"])
    assert record.start(path, ["first"], 3) == set()
    assert "holds for the code here" in record.describe(path)
