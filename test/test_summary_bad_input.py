"""Bad input stops the summary with one line naming the file and exit code 2, and
writes nothing. Every broken file is derived at test time from a real report."""

import json
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.report import REPORT_KEY, facts_of_report, records_of_test
from etsuite.tools.report import loading, summary

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"
REAL = (DATA / "portable.json").read_text()
STREAM = (DATA / "killed.partial.jsonl").read_text().splitlines()
FIRST_TEST = "backends/suite/operators/test_add.py::test_add_same_shape[portable]"


def _report(**updates) -> str:
    data = json.loads(REAL)
    data.update(updates)
    return json.dumps(data)


def _with_first_test(**updates) -> str:
    data = json.loads(REAL)
    data["tests"][0].update(updates)
    return json.dumps(data)


def _with_first_record(**updates) -> str:
    data = json.loads(REAL)
    records_of_test(data["tests"][0])[0].update(updates)
    return json.dumps(data)


def _stream_version(version) -> str:
    header = json.loads(STREAM[0])
    header["etsuite_stream"] = version
    return "\n".join([json.dumps(header)] + STREAM[1:])


FACTS = facts_of_report(json.loads(REAL))
CASES = {
    "empty.json": ("", "empty file"),
    "blank.json": ("\n  \n", "empty file"),
    "truncated.json": (REAL[: len(REAL) // 2], "not valid JSON (truncated?): "),
    "list.json": ("[1, 2]", "not a pytest-json-report (no 'summary' and 'exitcode' keys)"),
    "other.json": (json.dumps({"name": "x", "tests": []}),
                   "not a pytest-json-report (no 'summary' and 'exitcode' keys)"),
    "summary-only.json": (
        json.dumps({k: v for k, v in json.loads(REAL).items() if k != "tests"}),
        "a pytest-json-report without per-test results (written with --json-report-summary?)"),
    "future.json": (_report(**{REPORT_KEY: dict(FACTS, schema_version=2)}),
                    "unknown schema version 2 (this tool reads version 1)"),
    "unversioned.json": (_report(**{REPORT_KEY: {"seed": 1}}),
                         "unknown schema version None (this tool reads version 1)"),
    "bad-outcome.json": (_with_first_test(outcome="meh"),
                         f"tests[0] ({FIRST_TEST}) has unknown outcome 'meh'"),
    "bad-status.json": (_with_first_record(status="fail_sometimes"),
                        f"{FIRST_TEST}: a subtest record is invalid: unknown status 'fail_sometimes'"),
    "bad-outputs.json": (_with_first_record(outputs={"max_abs_error": 0.0}),
                         f"{FIRST_TEST}: a subtest record is invalid: outputs must be a list, got dict"),
    "bad-rerun.json": (_with_first_record(rerun={"same_inputs": "pass"}),
                       f"{FIRST_TEST}: a subtest record is invalid: a rerun without 'other_inputs'"),
    "bad-flows.json": (_report(**{REPORT_KEY: dict(FACTS, flows=["portable"])}),
                       f"'{REPORT_KEY}' facts are invalid: facts.flows must be an object or "
                       f"null, got a list"),
    # Wrong types: before, a traceback in the summary (or, for metadata, 0 subtests).
    "duration.json": (_with_first_test(call={"outcome": "passed", "duration": "slow"}),
                      f"{FIRST_TEST}: tests[0].call.duration must be a finite number or null, "
                      f"got text: 'slow'"),
    "metadata.json": (_with_first_test(metadata="x"),
                      f"{FIRST_TEST}: tests[0].metadata must be an object or null, got text"),
    "nan-duration.json": (_with_first_test(call={"outcome": "passed", "duration": float("nan")}),
                          f"{FIRST_TEST}: tests[0].call.duration must be a finite number or "
                          f"null, got a number: nan"),
    "created.json": (_report(created=1e300),
                     "the run's start (1e+300 epoch seconds) is not a date between 1970 and 2100"),
    "exitcode.json": (_report(exitcode="1"),
                      "the report.exitcode must be an integer or null, got text: '1'"),
    "stream-duration.partial.jsonl": (
        "\n".join(STREAM[:1] + [json.dumps({"report": {"nodeid": "a.py::t", "when": "call",
                                                        "outcome": "passed",
                                                        "duration": [1]}})]),
        "a.py::t: line 2: the report.duration must be a finite number or null, got a "
        "list: [1]"),
    "future.partial.jsonl": (_stream_version(2),
                             "unknown schema version 2 (this tool reads version 1)"),
    "notastream.partial.jsonl": ("\n".join(STREAM[1:]),
                                 "not a results stream (no 'etsuite_stream' first line)"),
    "broken.partial.jsonl": ("\n".join(STREAM[:2] + ["{not json"] + STREAM[2:]),
                             "line 3 is not valid JSON: "),
}

# A record field of the wrong type (before: a traceback in the summary, or markup kept
# into the page): {file: (the field, its value, what the loader says of it)}.
WRONG_FIELDS = {
    "timings.json": ("timings", "fast", "'timings' must be an object, got text: 'fast'"),
    "timing.json": ("timings", {"run": "fast"},
                    "'timings'['run'] must be a finite number, got text: 'fast'"),
    "nodes.json": ("delegated_nodes", "4",
                   "'delegated_nodes' must be an integer or null, got text: '4'"),
    "pte-size.json": ("pte_size", "<img src=x onerror=alert(1)>", "'pte_size' must be an "
                      "integer or null, got text: '<img src=x onerror=alert(1)>'"),
    "subtest.json": ("subtest", "<b>0</b>", "'subtest' must be an integer, got text: '<b>0</b>'"),
    "op-count.json": ("delegated_ops", {"aten.add.Tensor": "1"},
                      "'delegated_ops'['aten.add.Tensor'] must be an integer, got text: '1'"),
    "output.json": ("outputs", [{"max_abs_error": "big"}],
                    "'max_abs_error' must be a number or null, got text: 'big'"),
    "cost.json": ("cost", {"calls": [{"median": "quick"}]},
                  "'cost'.calls[0].median must be a finite number or null, got text: 'quick'"),
}
CASES.update({name: (_with_first_record(**{field: value}),
                     f"{FIRST_TEST}: a subtest record is invalid: field {said}")
              for name, (field, value, said) in WRONG_FIELDS.items()})


@pytest.fixture(params=sorted(CASES))
def bad_file(request, tmp_path):
    text, message = CASES[request.param]
    path = tmp_path / request.param
    path.write_text(text)
    return str(path), message


def test_the_loader_names_the_file_and_the_problem(bad_file):
    path, message = bad_file
    with pytest.raises(loading.BadInput) as error:
        loading.load(path)
    assert str(error.value).startswith(f"{path}: {message}")
    assert "\n" not in str(error.value)


def test_the_cli_stops_with_one_line_and_exit_code_2(bad_file, tmp_path, capsys):
    path, message = bad_file
    output = tmp_path / "out" / "summary.md"
    code = summary.main([str(DATA / "portable.json"), path, "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"summary: error: {path}: {message}")
    assert err.count("\n") == 1
    assert not output.parent.exists()  # nothing written, not even the folder


def test_a_bad_baseline_is_bad_input_too(bad_file, tmp_path, capsys):
    path, _ = bad_file
    output = tmp_path / "summary.md"
    output.write_text("previous summary\n")
    code = summary.main([str(DATA / "portable.json"), "--baseline", path, "--output", str(output)])
    assert code == 2
    assert output.read_text() == "previous summary\n"  # left as it was


def test_an_unreadable_file_is_refused(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(loading.BadInput, match="cannot read"):
        loading.load(str(path))


def test_a_report_over_the_size_bound_is_refused_unread(tmp_path):
    """Before: any report was read whole, a 2 GB one into more memory than a CI runner
    has. A sparse file of the bound plus one byte takes no disk."""
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(loading.MAX_INPUT_BYTES + 1)
    with pytest.raises(loading.BadInput, match=r"huge.json: larger than 1024 MiB, the most"):
        loading.load(str(path))


def test_a_missing_input_is_bad_input(tmp_path, capsys):
    missing = str(tmp_path / "nowhere.json")
    assert summary.main([missing]) == 2
    assert capsys.readouterr().err == f"summary: error: {missing}: no such file or folder\n"


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        summary.main([str(DATA / "portable.json"), "--fail-on", "regressions"])
    assert exit_.value.code == 2
    assert "--fail-on regressions needs --baseline" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        summary.main([str(DATA / "portable.json"), "--size-limit", "lots"])
    assert exit_.value.code == 2
