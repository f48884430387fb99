"""The report tools on real sharded reports (test/data/reports/shards/, see the README
there): the summary recognises the shards of one run and names a missing one, the
balance report shows predicted against measured time, and the durations file is
recorded from reports."""

import json
import shutil
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.durations import durations_of
from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.backends.harness.contract.report import facts_of_report
from etsuite.tools.bench import shard_balance
from etsuite.tools.report import loading, summary
from etsuite.tools.report.sharded_runs import missing_shards, sharded_runs
from etsuite.tools.upkeep import update_durations

REPO = Path(__file__).resolve().parent.parent
SHARDS = REPO / "test" / "data" / "reports" / "shards"
SHARD_FILES = [SHARDS / f"portable-shard{k}of3.json" for k in (1, 2, 3)]
UNSHARDED = SHARDS / "portable-unsharded.json"
SELECTION = "portable backends/suite/operators/test_add.py backends/suite/operators/test_relu.py"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def facts(path: Path) -> SessionFacts:
    return SessionFacts.from_dict(facts_of_report(json.loads(path.read_text())))


def test_the_fixtures_are_three_shards_of_one_run():
    for k, path in enumerate(SHARD_FILES, 1):
        run = facts(path).run
        assert (run.id, run.selection, run.shard, run.shards) == ("fixture", SELECTION, k, 3)
    assert facts(UNSHARDED).run.shard is None


def test_the_shards_of_one_run_are_one_sharded_run():
    merged = loading.load_all([str(p) for p in SHARD_FILES])
    (group,) = sharded_runs(merged.runs)
    assert (group.id, group.selection, group.count) == ("fixture", SELECTION, 3)
    assert sorted(group.shards) == [1, 2, 3] and group.missing == []
    assert missing_shards(merged.runs) == []
    # The unsharded run is no shard of anything.
    assert sharded_runs(loading.load_all([str(UNSHARDED)]).runs) == []


def test_merged_shards_equal_the_unsharded_run():
    merged = loading.load_all([str(p) for p in SHARD_FILES])
    whole = loading.load_all([str(UNSHARDED)])
    assert not merged.duplicates
    assert {r.nodeid: r.status for r in merged.results} == \
        {r.nodeid: r.status for r in whole.results}
    assert shard_balance.differences(merged, whole) == []


def test_the_summary_shows_the_shards(tmp_path, capsys):
    output = tmp_path / "summary.md"
    assert summary.main([*map(str, SHARD_FILES), "--output", str(output),
                         "--fail-on", "failures"]) == 0
    text = output.read_text(encoding="utf-8")
    assert f"- **Shards of {SELECTION}** (run `fixture`): 1, 2, 3 of 3, all present" in text
    header = next(line for line in text.splitlines() if line.startswith("| run "))
    assert [c.strip() for c in header.strip("|").split("|")][:2] == ["run", "shard"]
    for k in (1, 2, 3):
        assert f"| {k}/3 " in text
    assert "missing" not in capsys.readouterr().err


def test_a_missing_shard_is_named_and_fails_a_gate(tmp_path, capsys):
    output = tmp_path / "summary.md"
    present = [str(SHARD_FILES[0]), str(SHARD_FILES[2])]
    assert summary.main([*present, "--output", str(output)]) == 0  # a scoreboard
    line = f"{SELECTION}: shard 2/3 missing"
    assert f"1, 3 of 3; **{line}**" in output.read_text(encoding="utf-8")
    assert f"summary: {line}\n" in capsys.readouterr().err
    # Every test that ran passed: only the missing shard makes the gate fail.
    assert summary.main([*present, "--output", str(output), "--fail-on", "failures"]) == 1


def test_an_unsharded_summary_has_no_shard_column(tmp_path):
    output = tmp_path / "summary.md"
    assert summary.main([str(UNSHARDED), "--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    assert "Shards of" not in text and "| shard" not in text


def test_the_balance_report_shows_predicted_and_measured_time(capsys):
    assert shard_balance.main([*map(str, SHARD_FILES), "--unsharded", str(UNSHARDED)]) == 0
    out = capsys.readouterr().out
    predicted = facts(SHARD_FILES[0]).run.plan["predicted"]
    assert len(predicted) == 3
    rows = [line for line in out.splitlines() if line.startswith("| ") and "/3" in line]
    assert len(rows) == 3
    for k, row in enumerate(rows, 1):
        cells = [c.strip() for c in row.strip("|").split("|")]
        _, results = loading.load(str(SHARD_FILES[k - 1]))
        assert cells[0] == f"{k}/3" and cells[1] == str(len(results))
        assert cells[2] == f"{predicted[k - 1]:.1f} s"
        assert cells[3] == f"{sum(r.duration for r in results):.1f} s"
    assert "max/mean" in out and "The same 7 tests with the same statuses." in out


def test_the_balance_report_lists_differences_and_missing_shards(tmp_path, capsys):
    _, first = loading.load(str(SHARD_FILES[0]))
    dropped, changed = first[0].nodeid, first[1].nodeid
    data = json.loads(UNSHARDED.read_text())
    data["tests"] = [t for t in data["tests"] if t["nodeid"] != dropped]
    next(t for t in data["tests"] if t["nodeid"] == changed)["outcome"] = "failed"
    edited = tmp_path / "unsharded.json"
    edited.write_text(json.dumps(data))
    assert shard_balance.main([str(SHARD_FILES[0]), str(SHARD_FILES[1]),
                              "--unsharded", str(edited)]) == 1
    out = capsys.readouterr().out
    assert f"- {SELECTION}: shard 3/3 missing" in out
    assert "| 3/3 " in out and "**missing**" in out
    assert f"- only in the shards: {dropped} (pass)" in out
    assert f"- {changed}: pass in the shards, fail_test unsharded" in out
    _, third = loading.load(str(SHARD_FILES[2]))
    assert all(f"- only in the unsharded run: {r.nodeid} (pass)" in out for r in third)
    assert shard_balance.main([str(UNSHARDED)]) == 2  # no sharded report at all


def test_durations_are_recorded_from_reports(tmp_path):
    output = tmp_path / "durations.json"
    output.write_text(json.dumps({"version": 1, "durations": {"old.py::t[portable]": 3.0}}))
    assert update_durations.main(["--backend", "portable", str(SHARDS), "--output", str(output)]) == 0
    recorded = durations_of(json.loads(output.read_text()))
    merged = loading.load_all(loading.expand_inputs([str(SHARDS)]))
    expected = {r.nodeid: round(r.duration, 3) for r in merged.results}
    assert len(expected) == 7
    assert recorded == {**expected, "old.py::t[portable]": 3.0}  # the old entry is kept
    assert update_durations.main(["--backend", "portable", str(SHARD_FILES[0]), "--output",
                           str(output), "--replace"]) == 0
    _, first = loading.load(str(SHARD_FILES[0]))
    assert set(durations_of(json.loads(output.read_text()))) == {r.nodeid for r in first}


def test_a_test_a_killed_session_was_running_gets_no_duration(tmp_path):
    """The killed fixture, with the start line of the test it would have run next: that
    test was running when the session died."""
    killed = tmp_path / "killed.partial.jsonl"
    running = "backends/suite/operators/test_add.py::test_add_broadcast[xnnpack_dynamic_int8_per_channel]"
    original = (REPO / "test" / "data" / "reports" / "killed.partial.jsonl").read_text()
    killed.write_text(original + json.dumps({"start": running}) + "\n")
    _, results = loading.load(str(killed))
    cut_off = [r.nodeid for r in results if r.longrepr == loading.SESSION_ENDED]
    assert cut_off == [running]
    output = tmp_path / "durations.json"
    assert update_durations.main(["--backend", "xnnpack", str(killed), "--output", str(output)]) == 0
    recorded = durations_of(json.loads(output.read_text()))
    assert cut_off[0] not in recorded and len(recorded) == len(results) - 1


def test_durations_refuse_reports_without_the_backend(tmp_path, capsys):
    copy = tmp_path / "portable.json"
    shutil.copy(UNSHARDED, copy)
    assert update_durations.main(["--backend", "xnnpack", str(copy), "--output",
                           str(tmp_path / "d.json")]) == 2
    assert "no test of backend 'xnnpack'" in capsys.readouterr().err
