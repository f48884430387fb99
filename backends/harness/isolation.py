"""Process isolation: each test runs in a forked child, so a segfault, abort,
`os._exit` or a hang in native code ends only that child.

The parent (the pytest process, or an xdist worker) forks before the test's setup; the
child runs the whole setup/call/teardown protocol and streams progress events (stage
entered, subtest record done) and finally its serialized reports back through a pipe.
If the child dies, the parent writes a `fail_crash` report with the records received so
far; if it outlives its time limit, the parent kills it (SIGKILL works on native code,
unlike a Python signal handler) and writes `fail_timeout`.

The child sets torch to one intra-op thread: the OpenMP pool of the parent does not
survive fork, and using it would hang the child.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import time
import traceback

import pytest
from _pytest.runner import runtestprotocol

from backends.harness import taxonomy as tx

PROGRESS_KEY = pytest.StashKey[object]()
DEFAULT_TIME_LIMITS = ("backends/suite/models/=1200", "=300")
KILL_GRACE_SECONDS = 1.0


def addoption(group, parser):
    group.addoption("--isolation", choices=("fork", "none"), default=None,
                    help="run each test in a forked child (default where fork exists) "
                         "or in the pytest process itself (none: no crash or hang protection)")
    group.addoption("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="time limit of every test, overriding suite defaults and markers")
    parser.addini("etsuite_time_limits", type="linelist", default=list(DEFAULT_TIME_LIMITS),
                  help="per-suite default time limits, 'path/prefix/=SECONDS' per line; "
                       "the longest matching prefix wins, '=SECONDS' is the fallback")


def register_markers(config):
    config.addinivalue_line(
        "markers", "time_limit(seconds): this test's time limit under fork isolation")


def isolation_mode(config) -> str:
    chosen = config.option.isolation
    if chosen is None:
        chosen = "fork" if hasattr(os, "fork") else "none"
    if config.option.usepdb or getattr(config.option, "trace", False):
        chosen = "none"  # a debugger needs the test in this process
    return chosen


def header_line(config) -> str:
    mode = isolation_mode(config)
    if mode == "fork":
        return "etsuite: isolation fork (one child per test; crashes and hangs are contained)"
    return "etsuite: isolation none (a crash ends the session, hangs are not interrupted)"


def time_limit(item) -> float:
    """--time-limit, else the test's time_limit marker, else the suite default."""
    if item.config.option.time_limit:
        return item.config.option.time_limit
    marker = item.get_closest_marker("time_limit")
    if marker is not None:
        return float(marker.args[0])
    path = item.nodeid.split("::", 1)[0]
    best_prefix, best = -1, 300.0
    for line in item.config.getini("etsuite_time_limits"):
        prefix, _, seconds = line.rpartition("=")
        if path.startswith(prefix.strip()) and len(prefix) > best_prefix:
            best_prefix, best = len(prefix), float(seconds)
    return best


def progress_sink(item):
    """Where the test's runner sends progress events: the pipe in a forked child."""
    return item.stash.get(PROGRESS_KEY, lambda event: None)


class IsolationPlugin:
    def __init__(self, config):
        self.config = config
        self.warmed_up = False

    def _warm_up_once(self, item) -> None:
        if self.warmed_up or "test_runner" not in getattr(item, "fixturenames", ()):
            return
        self.warmed_up = True
        from backends.harness.pipeline import warm_up
        from backends.harness.plugin import STATE_KEY

        warm_up(self.config.stash[STATE_KEY].selected)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if isolation_mode(self.config) != "fork":
            return None
        self._warm_up_once(item)
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in run_in_child(item, time_limit(item)):
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def _child_main(item, write_fd: int) -> None:
    """Runs in the forked child; never returns."""
    code = 0
    try:
        out = os.fdopen(write_fd, "w", buffering=1)

        def send(event: dict) -> None:
            out.write(json.dumps(event, default=str) + "\n")
            out.flush()

        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        item.stash[PROGRESS_KEY] = send
        reports = runtestprotocol(item, log=False, nextitem=None)
        hook = item.config.hook
        send({"event": "reports", "reports": [
            hook.pytest_report_to_serializable(config=item.config, report=r) for r in reports
        ]})
    except BaseException:  # noqa: BLE001 - report anything, then leave
        try:
            send({"event": "internal_error", "text": traceback.format_exc()})
        except Exception:
            pass
        code = 70
    finally:
        os._exit(code)


def run_in_child(item, limit: float) -> list:
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    # Objects that exist now are never collected in the child: its garbage collector
    # would otherwise touch (and so copy) every page of the parent's heap.
    gc.freeze()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child_main(item, write_fd)
    gc.unfreeze()  # the parent's own garbage stays collectable
    os.close(write_fd)
    events, timed_out = _collect_events(read_fd, pid, started + limit)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    duration = time.monotonic() - started
    for event in events:
        if event["event"] == "reports":
            return [_report_from_json(item.config, data) for data in event["reports"]]
    return [_lost_child_report(item, events, status, timed_out, limit, duration)]


def _report_from_json(config, data: dict):
    report = config.hook.pytest_report_from_serializable(config=config, data=data)
    if isinstance(report.longrepr, list):  # a skip's (path, line, reason); JSON made it a list
        report.longrepr = tuple(report.longrepr)
    return report


def _collect_events(read_fd: int, pid: int, deadline: float) -> tuple[list, bool]:
    """Read the child's newline-delimited JSON events until EOF or the deadline."""
    buffer, events = b"", []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            os.kill(pid, signal.SIGKILL)
            return events, True
        ready, _, _ = select.select([read_fd], [], [], min(remaining, 1.0))
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return events, False
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        events.extend(json.loads(line) for line in lines if line.strip())


def _lost_child_report(item, events, status, timed_out, limit, duration):
    """The child ended without reporting: build the call report and its records."""
    records = [e["record"] for e in events if e["event"] == "record"]
    # Only a stage entered after the last finished subtest tells where the child died.
    last_stage = None
    for event in events:
        if event["event"] == "record":
            last_stage = None
        elif event["event"] == "stage":
            last_stage = event["stage"]
    internal = [e["text"] for e in events if e["event"] == "internal_error"]
    if timed_out:
        verdict = tx.FAIL_TIMEOUT
        message = f"exceeded its time limit of {limit:g}s"
    else:
        verdict = tx.FAIL_CRASH
        message = _describe_exit(status)
    if last_stage:
        message += f" (last stage entered: {last_stage})"
    if internal:
        message += "\n" + internal[-1]

    from backends.harness.plugin import record_for_item

    in_progress = list(records)
    crash_record = record_for_item(item, status=verdict, stage=last_stage,
                                   error=tx.trim_error(message), subtest=len(records))
    if crash_record is not None:
        in_progress.append(crash_record)
    report = pytest.TestReport(
        nodeid=item.nodeid, location=item.location,
        keywords={k: 1 for k in item.keywords}, outcome="failed",
        longrepr=f"[{verdict}] {message}", when="call", sections=[],
        duration=duration, user_properties=[],
    )
    report.etsuite_records = in_progress
    report._json_report_extra = {"metadata": {"subtests": in_progress}} if in_progress else {}
    return report


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the test process was killed by {name} ({number})"
    return f"the test process exited with code {os.WEXITSTATUS(status)} before reporting"
