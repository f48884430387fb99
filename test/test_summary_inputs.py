"""tools/report/loading.py and tools/report/classify.py on real reports (test/data/reports/README.md
says how each was made): finding inputs, classifying every outcome, merging backends,
shards, duplicates and killed sessions, and refusing bad input."""

import json
import os
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.report import REPORT_KEY
from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify, loading, tally
from etsuite.tools.report.sections import matrix

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"
PIPELINE = "test/data/reports/src/pipeline_cases.py::"
OUTCOMES = "test/data/reports/src/outcome_cases.py::"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


def statuses(path) -> dict:
    _, results = loading.load(str(path))
    return {r.nodeid: r.status for r in results}


# ---------------------------------------------------------------- classification

PIPELINE_STATUSES = {
    "test_add[portable]": Status.PASS,
    "test_add[xnnpack]": Status.PASS,
    "test_add[faulty_mismatch]": Status.FAIL_MISMATCH,
    "test_add[faulty_quantize]": Status.FAIL_QUANTIZE,
    "test_add[faulty_lower]": Status.FAIL_LOWER,
    "test_add[faulty_lowered_only]": Status.LOWERED_NOT_RUN,
    "test_add[faulty_fixed]": Status.XPASS,
    "test_add[missing_sdk]": Status.UNAVAILABLE,
    "test_cumsum[xnnpack]": Status.PASS_UNDELEGATED,
    "test_cumsum[faulty_fixed]": Status.SKIP_UNSUPPORTED,
    "test_two_subtests[xnnpack]": Status.PASS_UNDELEGATED,
    "test_two_subtests[faulty_lowered_only]": Status.PASS_UNDELEGATED,
    "test_known_gap[faulty_mismatch]": Status.XFAIL,
    "test_unsupported_case[faulty_mismatch]": Status.SKIP_UNSUPPORTED,
    "test_invalid_model[portable]": Status.SKIP_INVALID,
}

OUTCOME_STATUSES = {
    "test_crash_in_runner[portable]": Status.FAIL_CRASH,
    "test_plain_crash": Status.FAIL_CRASH,
    "test_hang[portable]": Status.FAIL_TIMEOUT,
    "test_setup_error[portable]": Status.ERROR,
    "test_teardown_error[portable]": Status.ERROR,
    "test_regressed[portable]": Status.FAIL_TEST,
    "test_fixed[portable]": Status.PASS,
    "test_plain_failure": Status.FAIL_TEST,
    "test_plain_xfail": Status.XFAIL,
    "test_plain_xpass": Status.XPASS,
    "test_plain_strict_xpass": Status.XPASS,
    "test_plain_skip": Status.SKIP,
    "test_plain_pass": Status.PASS,
    "test_added_since[portable]": Status.PASS,
}


@pytest.mark.parametrize("test, expected", sorted(PIPELINE_STATUSES.items()))
def test_every_pipeline_status_is_counted(test, expected):
    assert statuses(DATA / "pipeline.json")[PIPELINE + test] == expected


@pytest.mark.parametrize("test, expected", sorted(OUTCOME_STATUSES.items()))
def test_every_pytest_outcome_is_counted(test, expected):
    assert statuses(DATA / "outcomes.json")[OUTCOMES + test] == expected


def test_a_collection_error_is_a_result():
    _, results = loading.load("test/data/reports/outcomes.json")
    broken = [r for r in results if r.nodeid == "test/data/reports/src/broken_module.py"]
    assert [(r.status, r.phase, r.flow) for r in broken] == [(Status.ERROR, "collect", None)]
    assert "no_such_module_for_the_fixture" in broken[0].longrepr


def test_every_test_of_the_report_is_counted_once():
    data = json.loads((DATA / "pipeline.json").read_text())
    _, results = loading.load("test/data/reports/pipeline.json")
    assert sorted(r.nodeid for r in results) == sorted(t["nodeid"] for t in data["tests"])


def test_a_stream_classifies_like_the_json_report():
    """The same cases, once as a JSON report and once as a results stream."""
    from_json = statuses(DATA / "outcomes.json")
    from_stream = statuses(DATA / "streams" / "outcomes.partial.jsonl")
    from_json.pop("test/data/reports/src/broken_module.py")  # streams carry no collection
    assert from_stream == from_json


def test_a_test_without_records_gets_its_flow_from_the_node_id():
    _, results = loading.load("test/data/reports/outcomes.json")
    setup_error = next(r for r in results if "test_setup_error" in r.nodeid)
    assert (setup_error.flow, setup_error.backend, setup_error.records) == ("portable", "portable", [])


def test_pass_rate_never_divides_by_zero():
    assert classify.pass_rate(0, 0) is None
    assert classify.pass_rate(3, 1) == 0.75


# ---------------------------------------------------------------- inputs

def test_a_folder_gives_its_reports_and_streams_only():
    found = loading.expand_inputs(["test/data/reports"])
    assert [os.path.basename(p) for p in found] == [
        "killed.partial.jsonl", "outcomes.json", "pipeline.json", "portable.json",
        "streamed.partial.jsonl", "xnnpack-shard1.json", "xnnpack-shard2.json"]


def test_globs_files_and_folders_mix_and_repeat_once():
    found = loading.expand_inputs([
        "test/data/reports/xnnpack-*.json", "test/data/reports/xnnpack-shard1.json",
        "test/data/reports/baseline"])
    assert found == ["test/data/reports/xnnpack-shard1.json",
                     "test/data/reports/xnnpack-shard2.json",
                     "test/data/reports/baseline/outcomes.json"]


@pytest.mark.parametrize("argument, message", [
    ("test/data/reports/nothing.json", "no such file or folder"),
    ("test/data/reports/*.nothing", "no file matches this pattern"),
    ("test/data/reports/src", "no reports (*.json, *.partial.jsonl) in this folder"),
])
def test_missing_inputs_are_refused(argument, message):
    with pytest.raises(loading.BadInput) as error:
        loading.expand_inputs([argument])
    assert str(error.value) == f"{argument}: {message}"


# ---------------------------------------------------------------- merging

def test_two_backends_and_two_shards_merge():
    merged = loading.load_all(loading.expand_inputs([
        "test/data/reports/portable.json", "test/data/reports/xnnpack-shard*.json"]))
    assert merged.duplicates == [] and merged.incomplete == []
    order = tally.flow_order(merged)
    rows = {row.flow: row for row in tally.flow_rows(merged, order)}
    assert [flow for _, flow in order] == [
        "portable", "xnnpack", "xnnpack_dynamic_int8_per_channel",
        "xnnpack_static_int8_per_channel", "xnnpack_static_int8_per_tensor"]
    assert {flow: row.total for flow, row in rows.items()} == dict.fromkeys(rows, 4)
    cases = {case for case, _ in matrix.support_matrix(merged.results)}
    assert len(cases) == 4  # both shards' cases, every flow


def test_duplicates_are_counted_once_and_conflicts_listed():
    merged = loading.load_all(["test/data/reports/outcomes.json",
                               "test/data/reports/baseline/outcomes.json"])
    current, baseline = merged.runs
    newest = max(merged.runs, key=lambda run: run.started)
    assert len(merged.results) == 16  # 15 in each, one added and one removed since
    assert all(d.kept.run is newest for d in merged.duplicates)
    conflicts = sorted(d.nodeid.split("::")[1] for d in merged.duplicates if d.conflict)
    assert conflicts == ["test_fixed[portable]", "test_regressed[portable]"]
    assert len(merged.duplicates) == 14


def test_the_newest_run_wins_a_duplicate_whatever_the_input_order():
    paths = ["test/data/reports/outcomes.json", "test/data/reports/baseline/outcomes.json"]
    kept = [{r.nodeid: r.run.path for r in loading.load_all(order).results}
            for order in (paths, paths[::-1])]
    assert kept[0] == kept[1]


def test_a_killed_session_is_read_as_an_incomplete_run():
    run, results = loading.load("test/data/reports/killed.partial.jsonl")
    assert (run.kind, run.finished, run.exitcode, run.seed) == ("stream", False, None, 1234)
    assert len(results) == 3 and {r.status for r in results} == {Status.PASS}
    assert all(r.records and r.duration > 0 for r in results)


def test_a_killed_session_merges_with_the_shards_it_repeats():
    merged = loading.load_all(loading.expand_inputs([
        "test/data/reports/xnnpack-shard1.json", "test/data/reports/killed.partial.jsonl"]))
    assert [run.path for run in merged.incomplete] == ["test/data/reports/killed.partial.jsonl"]
    assert len(merged.duplicates) == 3 and not any(d.conflict for d in merged.duplicates)
    assert len(merged.results) == 8


def test_a_finished_stream_is_complete():
    run, results = loading.load("test/data/reports/streamed.partial.jsonl")
    assert (run.finished, run.exitcode, len(results)) == (True, 0, 1)


def test_a_stream_cut_inside_its_last_line_is_still_read(tmp_path):
    text = (DATA / "killed.partial.jsonl").read_text()
    cut = tmp_path / "cut.partial.jsonl"
    cut.write_text(text[:-200])  # the writer was killed in the middle of a line
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut.read_text().splitlines()[-1])
    run, results = loading.load(str(cut))
    assert not run.finished and len(results) == 3
    assert results[-1].status == Status.PASS  # setup and call were complete; teardown was cut


def test_a_session_that_died_during_a_test_counts_it_as_crashed(tmp_path):
    """Without fork isolation the stream has the setup of the test that was running."""
    lines = (DATA / "killed.partial.jsonl").read_text().splitlines()
    path = tmp_path / "died.partial.jsonl"
    path.write_text("\n".join(lines[:-2]) + "\n")  # the last test's call and teardown
    _, results = loading.load(str(path))
    assert results[-1].status == Status.FAIL_CRASH
    assert "no call report" in results[-1].longrepr


def test_a_report_written_without_the_plugin_is_still_read(tmp_path):
    """A pytest-json-report of a run without this plugin has no session facts; its tests
    count from their outcomes, with no seed or flow list."""
    data = json.loads((DATA / "portable.json").read_text())
    del data[REPORT_KEY]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    run, results = loading.load(str(path))
    assert run.facts is None and run.seed is None
    assert {r.status for r in results} == {Status.PASS} and {r.flow for r in results} == {"portable"}
