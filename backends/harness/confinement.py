"""What a test's forked child (isolation.py) owns and gives back when the test ends:
every process it started, and its scratch folder.

- Processes: the child leads a session of its own (setsid), so whatever it forks or
  execs stays in that session, in any process group (a localization's attempts lead
  groups of their own). At the end, on time or at the time limit, the parent SIGKILLs
  every process of the session. A process that starts a session of its own (a runner's
  relay) means to outlive the test and is left alone.
- Scratch: a new folder is the child's TMPDIR (in its environment, for the programs it
  runs, and for Python's `tempfile`), removed by the parent afterwards however the test
  ended. What must outlive a test (device locks, a relay's socket, the relay itself)
  takes `session_tmp()` and `outliving_environment()` instead.

Standard library only: remote/resident.py imports it, and also runs as a script.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from typing import Any

# The temporary folder of the outermost pytest session, kept for what outlives a test.
SESSION_TMP_ENV = "ETSUITE_SESSION_TMPDIR"
SCRATCH_PREFIX = "etsuite-test-"
KILL_ROUNDS_S = 10.0  # a session whose processes keep appearing this long is left


def session_tmp() -> str:
    """The temporary folder shared by every test of the run (not a test's scratch)."""
    return os.environ.get(SESSION_TMP_ENV) or tempfile.gettempdir()


def outliving_environment() -> dict[str, str]:
    """This process's environment for a process that outlives the test: the session's
    TMPDIR, not the test's scratch folder (which is removed when the test ends)."""
    env = dict(os.environ)
    env["TMPDIR"] = env.pop(SESSION_TMP_ENV, "") or tempfile.gettempdir()
    return env


def make_scratch() -> str:
    """In the parent: the next test's scratch folder (inside the parent's own TMPDIR, so a
    test that runs pytest sessions of its own removes their scratch with its own)."""
    return tempfile.mkdtemp(prefix=SCRATCH_PREFIX)


def remove_scratch(folder: str) -> None:
    """In the parent, after `end_session`: the folder and everything in it, even entries
    the test made read-only."""

    def writable_then_again(function: Any, path: str, _error: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
            function(path)

    shutil.rmtree(folder, onerror=writable_then_again)


def enter(scratch: str, parent: int, die_with_parent: bool) -> None:
    """In the forked child, first: lead a session of its own and take `scratch` as TMPDIR.
    With `die_with_parent` (the parent forked from its main thread, whose end is the
    process's), the kernel kills the child if the parent dies without ending it."""
    os.setsid()
    if die_with_parent and sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(70)
    os.environ.setdefault(SESSION_TMP_ENV, tempfile.gettempdir())
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch


def end_session(leader: int) -> None:
    """In the parent, before reaping `leader` (so its id cannot be reused meanwhile):
    SIGKILL the child and every live process of its session. Linux finds them in /proc;
    elsewhere the child's process group is what can be reached."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(leader, signal.SIGKILL)
    if not os.path.isdir("/proc/self"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, signal.SIGKILL)
        return
    deadline = time.monotonic() + KILL_ROUNDS_S
    while time.monotonic() < deadline:
        members = session_members(leader)
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def session_members(session: int) -> list[int]:
    """The live processes (not zombies) of `session`, from /proc/PID/stat (read with
    plain system calls: this runs after every test)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            handle = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
        except OSError:
            continue  # ended meanwhile
        try:
            fields = os.read(handle, 1024).rsplit(b")", 1)[1].split(None, 4)
        except (OSError, IndexError):
            continue
        finally:
            os.close(handle)
        # After the command name: state, ppid, pgrp, session.
        if int(fields[3]) == session and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members
