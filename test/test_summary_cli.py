"""`python -m etsuite.tools.report.summary`: inputs and outputs, exit codes (--fail-on), the baseline,
$GITHUB_STEP_SUMMARY, the full version beside a cut summary, speed, and that the tool
never imports torch or executorch."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.report import put_records, records_of_test
from etsuite.tools.report import summary
from etsuite.tools.report.size_limit import size

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def run(*args) -> int:
    return summary.main([str(a) for a in args])


# ---------------------------------------------------------------- outputs

def test_writes_the_output_and_leaves_no_temporary_file(tmp_path, capsys):
    output = tmp_path / "new" / "summary.md"
    assert run("test/data/reports", "--output", output) == 0
    assert output.read_text(encoding="utf-8").startswith("# ExecuTorch backend test report\n")
    assert sorted(p.name for p in output.parent.iterdir()) == ["summary.md"]
    plain = tmp_path / "plain"
    plain.write_text("")
    assert output.stat().st_mode == plain.stat().st_mode  # readable like any new file
    assert capsys.readouterr().err == f"summary: 83 tests, 24 failing, 7 runs -> {output}\n"


def test_without_output_the_summary_goes_to_stdout(capsys):
    assert run("test/data/reports/portable.json") == 0
    assert capsys.readouterr().out == (DATA / "expected" / "portable.md").read_text(encoding="utf-8")


def test_the_default_input_is_the_reports_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "reports").mkdir()
    shutil.copy(DATA / "portable.json", tmp_path / "reports" / "portable.json")
    monkeypatch.chdir(tmp_path)
    assert run() == 0
    assert "`reports/portable.json`" in capsys.readouterr().out


def test_a_cut_summary_has_its_full_version_beside_it(tmp_path):
    output = tmp_path / "summary.md"
    assert run("test/data/reports", "--output", output, "--size-limit", "12KiB") == 0
    cut, full = output.read_text(encoding="utf-8"), (tmp_path / "summary.full.md").read_text(
        encoding="utf-8")
    assert size(cut) <= 12 * 1024 < size(full)
    assert "The full report is `summary.full.md`." in cut
    assert "This summary was cut" not in full and "_Cut to fit" not in full
    # A later summary that fits removes the stale full version.
    assert run("test/data/reports/portable.json", "--output", output) == 0
    assert not (tmp_path / "summary.full.md").exists()


def test_the_size_limits_old_name_still_works_for_one_release(tmp_path, capsys):
    """`--budget` was the size limit's name; "budget" is now only a backend's cost limit."""
    output = tmp_path / "summary.md"
    assert run("test/data/reports", "--output", output, "--budget", "12KiB") == 0
    assert "summary: --budget is deprecated and goes in the next release: use --size-limit\n" \
        in capsys.readouterr().err
    by_old_name = output.read_bytes()
    assert run("test/data/reports", "--output", output, "--size-limit", "12KiB") == 0
    assert "deprecated" not in capsys.readouterr().err
    assert output.read_bytes() == by_old_name and len(by_old_name) <= 12 * 1024
    assert "--budget" not in summary.build_parser().format_help()


def test_the_step_summary_is_appended_to(tmp_path, monkeypatch):
    step = tmp_path / "step.md"
    step.write_text("## Earlier step output\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert run("test/data/reports/portable.json", "--output", tmp_path / "s.md") == 0
    text = step.read_text(encoding="utf-8")
    assert text.startswith("## Earlier step output\n# ExecuTorch backend test report\n")
    assert text.endswith((tmp_path / "s.md").read_text(encoding="utf-8") + "\n")


def test_the_step_summary_never_exceeds_its_limit(tmp_path, monkeypatch):
    step = tmp_path / "step.md"
    step.write_text("x" * (summary.STEP_SUMMARY_LIMIT - 10_000))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert run("test/data/reports", "--output", tmp_path / "s.md") == 0
    assert summary.STEP_SUMMARY_LIMIT - 10_000 < step.stat().st_size <= summary.STEP_SUMMARY_LIMIT
    assert "This summary was cut to fit" in step.read_text(encoding="utf-8")


def test_a_full_step_summary_is_left_alone(tmp_path, monkeypatch, capsys):
    step = tmp_path / "step.md"
    step.write_text("x" * summary.STEP_SUMMARY_LIMIT)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert run("test/data/reports/portable.json", "--output", tmp_path / "s.md") == 0
    assert step.stat().st_size == summary.STEP_SUMMARY_LIMIT
    assert "is full; the summary was not appended" in capsys.readouterr().err


def test_an_unwritable_output_is_an_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert run("test/data/reports/portable.json", "--output", blocker / "summary.md") == 2
    assert capsys.readouterr().err.startswith("summary: error: cannot write")


# ---------------------------------------------------------------- exit codes

@pytest.mark.parametrize("inputs, fail_on, expected", [
    (["test/data/reports/outcomes.json"], "never", 0),
    (["test/data/reports/outcomes.json"], "failures", 1),
    (["test/data/reports/portable.json"], "failures", 0),
    # Every test of the killed run passed, but the run is incomplete.
    (["test/data/reports/killed.partial.jsonl"], "failures", 1),
])
def test_fail_on_failures(inputs, fail_on, expected):
    assert run(*inputs, "--fail-on", fail_on) == expected


def test_fail_on_regressions_gates_on_the_baseline_only(capsys):
    args = ["test/data/reports/outcomes.json", "--fail-on", "regressions", "--baseline"]
    assert run(*args, "test/data/reports/baseline/outcomes.json") == 1
    # The same failures, but none of them new: not a regression.
    assert run(*args, "test/data/reports/outcomes.json") == 0
    assert "**0 regressions**" in capsys.readouterr().out


def test_the_baseline_accepts_folders_and_globs(capsys):
    assert run("test/data/reports/outcomes.json", "--baseline", "test/data/reports/base*") == 0
    out = capsys.readouterr().out
    assert "Baseline: 1 run (`test/data/reports/baseline/outcomes.json`), 15 tests." in out
    assert "| `test/data/reports/src/outcome_cases.py::test_removed_since[portable]` |" in out


# ---------------------------------------------------------------- light and fast

def test_runs_as_a_module_without_torch_or_executorch(tmp_path):
    """What `tox -e summary` runs, from the repository root, checked for heavy imports."""
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['etsuite.tools.report.summary', 'test/data/reports', '--output', sys.argv[1]]\n"
        "try:\n"
        "    runpy.run_module('etsuite.tools.report.summary', run_name='__main__')\n"
        "except SystemExit as exit_:\n"
        "    heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'executorch'))\n"
        "    print(exit_.code, heavy)\n")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "s.md")], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout == "0 []\n", done.stderr
    assert (tmp_path / "s.md").exists()


def _big_report(path: Path, copies: int) -> int:
    """Real tests, repeated under new node ids: a report of thousands of tests."""
    data = json.loads((DATA / "pipeline.json").read_text())
    tests = []
    for copy in range(copies):
        for test in data["tests"]:
            nodeid = test["nodeid"].replace("::test_", f"::test_{copy}_")
            records = [dict(r, test_id=nodeid, test_case=nodeid.split("[")[0])
                       for r in records_of_test(test)]
            tests.append(dict(test, nodeid=nodeid))
            put_records(tests[-1], records)
    data["tests"] = tests
    path.write_text(json.dumps(data))
    return len(tests)


def test_thousands_of_tests_fit_the_size_limit(tmp_path):
    """Speed is measured by the benchmark, not here; this checks the big case works."""
    count = _big_report(tmp_path / "big.json", 100)
    assert count == 4800
    assert run(tmp_path / "big.json", "--output", tmp_path / "s.md") == 0
    assert size((tmp_path / "s.md").read_text(encoding="utf-8")) <= summary.DEFAULT_SIZE_LIMIT
