"""What a test's forked child leaves behind (isolation.py, confinement.py): nothing. A
test that forks or execs processes ends when its child ends, not when its last
descendant closes the result pipe; those processes are killed with it, on time or at its
time limit; its scratch files (TMPDIR) go even when it is SIGKILLed; and every result of
the run is still there."""

import json
import os
import tempfile
import time
from pathlib import Path

from etsuite.backends.harness import confinement
from etsuite.backends.harness.remote import pool, resident

GRANDCHILDREN = """
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def note(name, value):
    Path(os.environ["NOTES"], name).write_text(str(value))


def test_forks_a_grandchild_and_passes():
    pid = os.fork()
    if pid == 0:  # the grandchild holds the result pipe open, and sleeps
        time.sleep(120)
        os._exit(0)
    note("forked", pid)


def test_execs_a_grandchild_and_passes():
    note("execd", subprocess.Popen(["sleep", "120"]).pid)


@pytest.mark.time_limit(3)
def test_execs_a_grandchild_and_hangs():
    grandchild = subprocess.Popen(["sleep", "120"])
    note("hung", grandchild.pid)
    time.sleep(120)


def test_after():
    pass
"""

SCRATCH = """
import os
import signal
import subprocess
import tempfile
from pathlib import Path


def note(name, value):
    Path(os.environ["NOTES"], name).write_text(str(value))


def test_writes_scratch_then_is_killed():
    handle, path = tempfile.mkstemp(prefix="left-behind-")
    os.close(handle)
    note("python", path)
    made = subprocess.run(["sh", "-c", 'mktemp "${TMPDIR:-/tmp}/left-behind-sh.XXXXXX"'],
                          capture_output=True, text=True, check=True)
    note("shell", made.stdout.strip())
    os.kill(os.getpid(), signal.SIGKILL)


def test_after():
    note("after", f"{os.environ.get('TMPDIR')} {tempfile.gettempdir()}")
"""


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def gone_within(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, 9)  # leave nothing behind, whatever the verdict
            return False
        time.sleep(0.05)
    return True


def test_a_test_ends_with_its_child_and_takes_its_processes_along(pytester, run_suite,
                                                                   monkeypatch):
    """A forked grandchild holding the result pipe no longer keeps the test waiting for
    its time limit; a grandchild that was exec'd is killed when the test passes and when
    the test is killed at its time limit; every test keeps its result."""
    notes = pytester.mkdir("notes")
    monkeypatch.setenv("NOTES", str(notes))
    pytester.makepyfile(test_grandchildren=GRANDCHILDREN)
    started = time.monotonic()
    run = run_suite("-p", "no:xdist", "--time-limit", "20", "-k", "not hangs")
    first = time.monotonic() - started
    outcomes = {nodeid.split("::")[1]: test["outcome"] for nodeid, test in run.tests.items()}
    assert outcomes == {"test_forks_a_grandchild_and_passes": "passed",
                        "test_execs_a_grandchild_and_passes": "passed",
                        "test_after": "passed"}, run.stdout
    assert first < 15, f"the run waited for the grandchild: {first:.1f} s"
    for name in ("forked", "execd"):
        assert gone_within(int((notes / name).read_text())), f"the {name} grandchild survived"

    run = run_suite("-p", "no:xdist", "-k", "hangs or after")
    outcomes = {nodeid.split("::")[1]: test["outcome"] for nodeid, test in run.tests.items()}
    assert outcomes == {"test_execs_a_grandchild_and_hangs": "failed",
                        "test_after": "passed"}, run.stdout
    assert "exceeded its time limit of 3s" in str(run.tests[
        "test_grandchildren.py::test_execs_a_grandchild_and_hangs"])
    assert gone_within(int((notes / "hung").read_text())), "the hung test's grandchild survived"


def test_a_tests_scratch_folder_goes_even_when_it_is_killed(pytester, run_suite, monkeypatch):
    """TMPDIR of a test's child (Python's tempfile and programs it runs) is a folder of its
    own, removed after the test, here one that SIGKILLed itself before its clean-up."""
    notes = pytester.mkdir("notes")
    monkeypatch.setenv("NOTES", str(notes))
    pytester.makepyfile(test_scratch=SCRATCH)
    run = run_suite("-p", "no:xdist")
    outcomes = {nodeid.split("::")[1]: test["outcome"] for nodeid, test in run.tests.items()}
    assert outcomes == {"test_writes_scratch_then_is_killed": "failed",
                        "test_after": "passed"}, run.stdout
    (crashed,) = run.records("test_writes_scratch_then_is_killed")
    assert crashed["status"] == "fail_crash" and "SIGKILL" in crashed["error"]
    for name in ("python", "shell"):
        left = Path((notes / name).read_text())
        assert left.name.startswith("left-behind-")
        assert not left.exists(), f"{left} outlived its test"
        assert not left.parent.exists(), f"the scratch folder {left.parent} outlived its test"
    environment, python = (notes / "after").read_text().split()
    assert environment == python and not Path(python).exists()  # the next test's, removed too


def test_what_outlives_a_test_stays_outside_its_scratch_folder(tmp_path, monkeypatch):
    """Device locks, a relay's socket and the relay's TMPDIR serve every test of the run:
    in a child confined as a test's is, none of them is inside its scratch folder."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv(pool.LOCKS_ENV, raising=False)
    scratch = confinement.make_scratch()
    answer = tmp_path / "answer.json"
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            confinement.enter(scratch, os.getppid(), die_with_parent=False)
            answer.write_text(json.dumps({
                "tmp": tempfile.gettempdir(), "locks": pool.device_lock_folder(),
                "relay socket": resident._socket_folder(),
                "relay TMPDIR": confinement.outliving_environment()["TMPDIR"]}))
            code = 0
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    confinement.remove_scratch(scratch)
    seen = json.loads(answer.read_text())
    assert seen.pop("tmp") == scratch
    for what, path in seen.items():
        assert not path.startswith(scratch), f"{what} is in the test's scratch folder: {path}"
