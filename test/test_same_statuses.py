"""tools/report/same_statuses.py: two runs compared test for test and subtest for subtest, on
the checked-in reports (a copy with one status changed must be found)."""

from __future__ import annotations

import json
from pathlib import Path

from etsuite.backends.harness.contract.report import records_of_test
from etsuite.tools.report import same_statuses

DATA = Path(__file__).parent / "data" / "reports"


def test_a_run_is_the_same_as_itself(capsys):
    report = str(DATA / "pipeline.json")
    assert same_statuses.main([report, report]) == 0
    out = capsys.readouterr().out
    assert out.endswith(": the same\n") and not out.startswith("0 tests")


def test_a_changed_subtest_status_and_a_missing_test_are_found(tmp_path, capsys):
    data = json.loads((DATA / "pipeline.json").read_text())
    changed = next(t for t in data["tests"] if records_of_test(t))
    records = records_of_test(changed)
    was = records[0]["status"]
    records[0]["status"] = "fail_run" if was != "fail_run" else "fail_load"
    dropped = next(t for t in data["tests"] if t is not changed)
    data["tests"].remove(dropped)
    after = tmp_path / "after.json"
    after.write_text(json.dumps(data))
    assert same_statuses.main([str(DATA / "pipeline.json"), str(after)]) == 1
    out = capsys.readouterr().out
    assert f"{changed['nodeid']}: subtests [(0, '{was}'" in out
    assert f"{dropped['nodeid']}: only in the before run" in out
    assert "differences" in out.splitlines()[-1]


def test_unreadable_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert same_statuses.main([str(bad), str(bad)]) == 2
    assert "same_statuses:" in capsys.readouterr().err
