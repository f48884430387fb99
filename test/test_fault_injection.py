"""Fault injection: tests that segfault, abort, exit, hang in native code, loop forever
in Python or break in a fixture, mixed with normal tests, under xdist and without it.
Every normal result must survive, every fault must get its own status, and the run must
end in bounded time. A SIGKILLed session must leave its finished results readable."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import TEST_FLOWS_CONFTEST
from etsuite.backends.harness.contract.stream import facts_of_header, header_of
from etsuite.tools.report import loading
from etsuite.tools.report.summary import main as summary_main

FAULTS = """
import ctypes
import os

import pytest
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def test_normal_before():
    assert 1 + 1 == 2


def test_segfault():
    ctypes.string_at(0)


def test_abort():
    os.abort()


def test_exit_3():
    os._exit(3)


@pytest.mark.time_limit(4)
def test_native_sleep():
    ctypes.CDLL(None).sleep(1000)


@pytest.mark.time_limit(4)
def test_python_loop():
    while True:
        pass


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture broke on purpose")


def test_fixture_error(broken_fixture):
    pass


def test_add_then_crash(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4), torch.randn(4)))


def test_normal_after():
    assert "still" + "running"
"""

# What the summary tool must make of each test, by test name.
EXPECTED_STATUSES = {
    "test_normal_before": "pass",
    "test_segfault": "fail_crash",
    "test_abort": "fail_crash",
    "test_exit_3": "fail_crash",
    "test_native_sleep": "fail_timeout",
    "test_python_loop": "fail_timeout",
    "test_fixture_error": "error",
    "test_add_then_crash[portable]": "pass",
    "test_add_then_crash[portable_aborting]": "fail_crash",
    "test_normal_after": "pass",
}

EXPECTED_OUTCOMES = {
    "test_normal_before": "passed",
    "test_segfault": "failed",
    "test_abort": "failed",
    "test_exit_3": "failed",
    "test_native_sleep": "failed",
    "test_python_loop": "failed",
    "test_fixture_error": "error",
    "test_add_then_crash[portable]": "passed",
    "test_add_then_crash[portable_aborting]": "failed",
    "test_normal_after": "passed",
}


@pytest.fixture
def faulty_project(pytester):
    pytester.makeconftest(TEST_FLOWS_CONFTEST)
    pytester.makepyfile(test_faults=FAULTS)
    return pytester


def call_text(run, name):
    test = run.tests[f"test_faults.py::{name}"]
    return json.dumps(test.get("call", {}))


@pytest.mark.parametrize("mode", [["-n", "2"], ["-p", "no:xdist"]], ids=["xdist", "no_xdist"])
def test_every_fault_contained_and_reported(faulty_project, run_suite, mode):
    started = time.monotonic()
    run = run_suite("--flow", "portable", "--flow", "portable_aborting", "--seed", "3", *mode)
    elapsed = time.monotonic() - started
    assert run.report is not None, run.stdout + run.stderr
    outcomes = {nodeid.split("::", 1)[1]: t["outcome"] for nodeid, t in run.tests.items()}
    assert outcomes == EXPECTED_OUTCOMES
    assert elapsed < 900  # the 4 s limits stopped them: not 1000 s of sleep (generous for loaded CI)

    assert "SIGSEGV" in call_text(run, "test_segfault")
    assert "SIGABRT" in call_text(run, "test_abort")
    assert "exited with code 3" in call_text(run, "test_exit_3")
    assert "fail_timeout: exceeded its time limit of 4s" in call_text(run, "test_native_sleep")
    assert "fail_timeout: " in call_text(run, "test_python_loop")
    (lost,) = run.records("test_segfault")  # a plain test's lost child is a record too
    assert (lost["status"], lost["flow"]) == ("fail_crash", None) and "SIGSEGV" in lost["error"]
    assert "fixture broke on purpose" in json.dumps(run.tests["test_faults.py::test_fixture_error"])

    (passing,) = run.records("test_add_then_crash[portable]")
    assert passing["status"] == "pass"
    (crashed,) = run.records("test_add_then_crash[portable_aborting]")
    assert crashed["status"] == "fail_crash" and crashed["stage"] == "run"
    assert "SIGABRT" in crashed["error"] and crashed["subtest"] == 0
    assert crashed["seed"] == 3 and "--seed 3" in crashed["repro"]
    # faulthandler's last words are in the record, not on the console
    assert "Fatal Python error: Aborted" in crashed["crash_dump"]
    assert "Fatal Python error: Segmentation fault" in lost["crash_dump"]
    assert "Fatal Python error" not in run.stdout + run.stderr
    assert crashed["flow"] == "portable_aborting" and crashed["backend"] == "faulty"
    assert run.ret == 1
    assert not list(faulty_project.path.glob("reports/*.partial.jsonl"))  # finished: stream removed

    merged = loading.load_all([str(faulty_project.path / "reports" / "run.json")])
    statuses = {r.nodeid.split("::", 1)[1]: r.status for r in merged.results}
    assert statuses == EXPECTED_STATUSES
    markdown = faulty_project.path / "summary.md"
    assert summary_main([str(faulty_project.path / "reports"), "--output", str(markdown)]) == 0
    assert crashed["repro"] in markdown.read_text()  # the exact repro command is printed


def test_xdist_worker_crash_without_isolation_is_a_crash_record(faulty_project, run_suite):
    """With isolation off, the crash takes the xdist worker down; the plugin still gives
    the test a fail_crash record, so the status never has to be parsed from text."""
    run = run_suite("--flow", "portable", "--flow", "portable_aborting", "--isolation", "none",
                    "-n", "1", "-k", "add_then_crash", "--seed", "8")
    (crashed,) = run.records("test_add_then_crash[portable_aborting]")
    assert crashed["status"] == "fail_crash" and "crashed" in crashed["error"]
    assert crashed["flow"] == "portable_aborting" and "--seed 8" in crashed["repro"]
    merged = loading.load_all([str(faulty_project.path / "reports" / "run.json")])
    statuses = {r.nodeid.split("::", 1)[1]: r.status for r in merged.results}
    assert statuses == {"test_add_then_crash[portable]": "pass",
                        "test_add_then_crash[portable_aborting]": "fail_crash"}


SLOW_TESTS = """
import time
import pytest

@pytest.mark.parametrize("n", range(40))
def test_slow(n):
    time.sleep(0.25)
"""


def test_sigkill_leaves_finished_results_readable(pytester):
    pytester.makepyfile(test_slow=SLOW_TESTS)
    report_dir = pytester.path / "reports"
    report_dir.mkdir()
    stale = report_dir / "run.json"
    stale.write_text('{"stale": "from an earlier run"}')
    stream = report_dir / "run.partial.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--json-report",
         f"--json-report-file={stale}"],
        cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if stream.exists() and stream.read_text().count('"when": "teardown"') >= 5:
            break
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()

    assert not stale.exists()  # the previous run's report cannot pass for this one
    lines = [json.loads(line) for line in stream.read_text().splitlines()]
    assert header_of(lines) and "seed" in facts_of_header(lines[0])
    assert not any("finished" in line for line in lines)
    finished = {line["report"]["nodeid"] for line in lines
                if "report" in line and line["report"]["when"] == "teardown"}
    assert 5 <= len(finished) < 40
    calls = [line["report"] for line in lines if "report" in line and line["report"]["when"] == "call"]
    assert all(call["outcome"] == "passed" for call in calls)

    # The summary tool reads the partial run, says it is incomplete, and names the test
    # that was running when the session died.
    merged = loading.load_all([str(stream)])
    assert [run.finished for run in merged.runs] == [False]
    statuses = [r.status for r in merged.results]
    assert statuses.count("pass") == len(finished)
    assert statuses.count("fail_crash") == 1
    markdown = pytester.path / "partial.md"
    assert summary_main([str(stream), "--output", str(markdown)]) == 0
    assert "incomplete" in markdown.read_text()
