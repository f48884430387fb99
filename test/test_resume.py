"""--resume continues a killed run: the tests its results stream holds as finished are not
run again, they go into the new report unchanged, with the killed run's seed, and the
exit status counts them. Real sessions (portable flow) killed for real."""

import json

import pytest

from conftest import run_forked
from etsuite.backends.harness.contract.report import facts_of_report, records_of_test
from etsuite.backends.harness.contract.stream import facts_of_header
from etsuite.backends.harness.upkeep import entries_from_sweeps, sweeps
from etsuite.tools.report import loading

CASES = """
import os
import pathlib
import signal

import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def test_a(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(3), torch.randn(3)))


def test_a2_crashes_in_the_first_session(test_runner):
    if not pathlib.Path("second_session").exists():
        os.abort()  # a crash ends the test, not the session: it is not run again


def test_b_fails(test_runner):
    assert False, "fails on purpose"


def test_c_kills_the_first_session(test_runner):
    if not pathlib.Path("second_session").exists():
        os.kill(os.getppid(), signal.SIGKILL)  # the pytest process: the session dies here


def test_d(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4), torch.randn(4)))
"""

STREAM = "reports/run.partial.jsonl"
ARGS = ("--flow", "portable", "-p", "no:cacheprovider", "--json-report",
        "--json-report-file=reports/run.json")


def stream_reports(path) -> dict:
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {e["report"]["nodeid"].split("::")[1]: e["report"]
            for e in entries if "report" in e and e["report"]["when"] == "call"}


@pytest.fixture
def killed_run(pytester):
    pytester.makepyfile(test_cases=CASES)
    first = run_forked(pytester, *ARGS, "-p", "no:xdist")
    assert first.ret == -9, first.stdout.str()  # SIGKILL
    assert not (pytester.path / "reports/run.json").exists()
    before = stream_reports(pytester.path / STREAM)
    assert set(before) == {"test_a[portable]", "test_a2_crashes_in_the_first_session[portable]",
                           "test_b_fails[portable]"}
    (pytester.path / "second_session").write_text("")
    return pytester, before


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]], ids=["no_xdist", "xdist"])
def test_resume_runs_only_what_the_killed_run_did_not_finish(killed_run, mode):
    pytester, before = killed_run
    header = json.loads((pytester.path / STREAM).read_text().splitlines()[0])
    resumed = run_forked(pytester, *ARGS, "--resume", *mode)
    out = resumed.stdout.str()
    assert "etsuite: resuming reports/run.partial.jsonl: 3 tests finished before" in out
    assert f"seed {facts_of_header(header)['seed']} " in out  # the killed run's seed, not a new one
    assert resumed.ret == 1  # test_b_fails, carried over, still fails the run

    report = json.loads((pytester.path / "reports/run.json").read_text())
    tests = {t["nodeid"].split("::")[1]: t for t in report["tests"]}
    assert {name: t["outcome"] for name, t in tests.items()} == {
        "test_a[portable]": "passed", "test_b_fails[portable]": "failed",
        "test_a2_crashes_in_the_first_session[portable]": "failed",  # carried, not rerun
        "test_c_kills_the_first_session[portable]": "passed", "test_d[portable]": "passed"}
    # The carried tests are the killed run's, record for record; only c and d ran now.
    assert records_of_test(tests["test_a[portable]"]) == before["test_a[portable]"]["records"]
    assert "fails on purpose" in tests["test_b_fails[portable]"]["call"]["longrepr"]
    assert facts_of_report(report)["seed"] == facts_of_header(header)["seed"]
    assert report["summary"]["total"] == 5 and "deselected" not in report["summary"]
    assert "etsuite: and 3 tests carried over from the killed run (2 failed, 1 passed)" in out
    assert out.strip().splitlines()[-1].lstrip("= ").startswith("2 passed")  # only c and d ran
    assert not (pytester.path / STREAM).exists()  # finished: the stream goes as usual
    merged = loading.load_all([str(pytester.path / "reports/run.json")])  # the summary reads it
    assert {r.nodeid.split("::")[1]: r.status.value for r in merged.results} == {
        "test_a[portable]": "pass", "test_b_fails[portable]": "fail_test",
        "test_a2_crashes_in_the_first_session[portable]": "fail_crash",
        "test_c_kills_the_first_session[portable]": "pass", "test_d[portable]": "pass"}


def test_resume_refuses_another_selection_and_starts_afresh_without_a_stream(killed_run):
    pytester, _ = killed_run
    other = run_forked(pytester, "--flow", "xnnpack", *ARGS[1:], "--resume")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    assert "is a run of portable, not of xnnpack" in other.stderr.str()
    other_seed = run_forked(pytester, *ARGS, "--resume", "--seed", "1")
    assert other_seed.ret == pytest.ExitCode.USAGE_ERROR and "resume with its seed" in \
        other_seed.stderr.str()

    (pytester.path / STREAM).unlink()
    fresh = run_forked(pytester, *ARGS, "--resume", "-p", "no:xdist")
    assert "no results stream left to continue; running all" in fresh.stdout.str()
    report = json.loads((pytester.path / "reports/run.json").read_text())
    assert len(report["tests"]) == 5


def test_update_expectations_reads_the_finished_tests_of_a_killed_run(killed_run):
    pytester, before = killed_run
    seed, tests = sweeps.tests_in(pytester.path / STREAM)
    tests = dict(tests)
    # test_c was running when the session died: not finished, not observed; the crash of
    # test_a2 ended that test only, so it counts.
    assert set(tests) == {f"test_cases.py::{name}" for name in before}
    assert tests["test_cases.py::test_a[portable]"] == before["test_a[portable]"]["records"]
    header = json.loads((pytester.path / STREAM).read_text().splitlines()[0])
    assert seed == facts_of_header(header)["seed"]
    seen = entries_from_sweeps.observe([pytester.path / STREAM], "portable")
    (passed,) = seen[("test_cases.py::test_a", "portable")].outcomes
    assert passed.status is None and passed.seed == seed
    (crash,) = seen[("test_cases.py::test_a2_crashes_in_the_first_session", "portable")].outcomes
    assert crash.status.value == "fail_crash" and "SIGABRT" in crash.error
    assert len(seen) == 2  # test_b's failure is the test's own, outside any subtest


def test_a_sharded_run_resumes_as_the_same_shard_only():
    """The stream's facts name the shard as K and N (`RunFacts.shard`, `.shards`)."""
    from etsuite.backends.harness.contract.facts import RunFacts, SessionFacts
    from etsuite.backends.harness.recording import Resumed
    from etsuite.backends.harness.session import RunIdentity, _check_resumable

    facts = SessionFacts(seed=5, versions={}, flows={}, run=RunFacts("ci-7", "portable", 2, 3))
    resumed = Resumed(STREAM, facts, {})
    _check_resumable(resumed, RunIdentity("ci-7", "portable", (2, 3)), None)
    with pytest.raises(pytest.UsageError, match="is a run of portable shard 2/3, not of "
                                                "portable shard 1/3: select the same"):
        _check_resumable(resumed, RunIdentity("ci-7", "portable", (1, 3)), None)
