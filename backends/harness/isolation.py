"""Process isolation: each test runs in a forked child, so a segfault, abort,
`os._exit` or a hang in native code ends only that child.

The parent (the pytest process, or an xdist worker) forks before the test's setup; the
child runs the whole setup/call/teardown protocol and streams progress events (stage
entered, subtest record done) and finally its serialized reports back through a pipe.
If the child dies (`fail_crash`) or outlives its time limit (the parent kills it with
SIGKILL, which works on native code, unlike a Python signal handler: `fail_timeout`), the
parent calls the `pytest_etsuite_child_lost` hook with the records received so far, and
`verdicts.py` makes the report. This module imports nothing of the plugin.

The test ends when the child exits, not when the pipe closes (a process the test forked
may hold it open); then the processes it left and its scratch folder go with it
(confinement.py).

The child sets torch to one intra-op thread: the OpenMP pool of the parent does not
survive fork, and using it would hang the child.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import os
import select
import signal
import sys
import tempfile
import threading
import time
import traceback
from typing import IO, Any, Callable

import pytest
from _pytest.runner import runtestprotocol

from etsuite.backends.harness import confinement
from etsuite.backends.harness.contract.record import trim_error
from etsuite.backends.harness.contract.statuses import Status

PROGRESS_KEY = pytest.StashKey[Callable[[dict], None]]()
CRASH_TARGET_KEY = pytest.StashKey[tuple]()
# The stages whose crash a second run bisects (case/bisection.py): the backend's.
LOCALIZED_CRASH_STAGES = ("lower", "serialize", "load", "run")
DEFAULT_TIME_LIMITS = ("backends/suite/models/=1200", "=300")
TIME_LIMITS_INI = "etsuite_time_limits"
CRASH_DUMP_LIMIT = 6000  # characters of a faulthandler dump kept in the record


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants a number of seconds, got {text!r}") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"wants a positive number of seconds, got {text!r}")
    return value


def addoption(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption("--isolation", choices=("fork", "none"), default=None,
                    help="run each test in a forked child (default where fork exists) "
                         "or in the pytest process itself (none: no crash or hang protection)")
    group.addoption("--time-limit", type=_seconds, default=None, metavar="SECONDS",
                    help="time limit of every test, overriding suite defaults and markers")
    parser.addini(TIME_LIMITS_INI, type="linelist", default=list(DEFAULT_TIME_LIMITS),
                  help="per-suite default time limits, 'path/prefix/=SECONDS' per line; "
                       "the longest matching prefix wins, '=SECONDS' is the fallback")


def register_markers(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "time_limit(seconds): this test's time limit under fork isolation")


class SettingError(ValueError):
    """A bad setting, with where it came from; the plugin turns it into a usage error."""


def parse_time_limits(config: pytest.Config) -> list[tuple[str, float]]:
    """The ini lines as (path prefix, seconds), longest prefix first. Raises SettingError
    naming the bad line and the file it came from."""
    where = f"{TIME_LIMITS_INI} in {config.inipath or 'the ini file'}"
    parsed = []
    for line in config.getini(TIME_LIMITS_INI):
        prefix, equals, seconds = line.rpartition("=")
        if not equals:
            raise SettingError(f"{where}: line {line!r} is not 'path/prefix/=SECONDS'")
        try:
            parsed.append((prefix.strip(), _seconds(seconds.strip())))
        except argparse.ArgumentTypeError as error:
            raise SettingError(f"{where}: line {line!r} {error}") from None
    return sorted(parsed, key=lambda entry: -len(entry[0]))


def check_time_limit_marker(item: pytest.Item) -> None:
    """A time_limit marker takes one positive number of seconds; raises SettingError."""
    marker = item.get_closest_marker("time_limit")
    if marker is None:
        return
    if len(marker.args) != 1 or marker.kwargs:
        raise SettingError(f"{item.nodeid}: @pytest.mark.time_limit takes exactly one "
                           f"number of seconds, got args={marker.args!r} kwargs={marker.kwargs!r}")
    try:
        _seconds(str(marker.args[0]))
    except argparse.ArgumentTypeError as error:
        raise SettingError(f"{item.nodeid}: @pytest.mark.time_limit {error}") from None


def isolation_mode(config: pytest.Config) -> str:
    chosen = config.option.isolation
    if chosen is None:
        chosen = "fork" if hasattr(os, "fork") else "none"
    if config.option.usepdb or getattr(config.option, "trace", False):
        chosen = "none"  # a debugger needs the test in this process
    return chosen


def header_line(config: pytest.Config) -> str:
    mode = isolation_mode(config)
    if mode == "fork":
        return "etsuite: isolation fork (one child per test; crashes and hangs are contained)"
    return "etsuite: isolation none (a crash ends the session, hangs are not interrupted)"


def progress_sink(item: pytest.Item) -> Callable[[dict], None]:
    """Where the test's runner sends progress events: the pipe in a forked child."""
    return item.stash.get(PROGRESS_KEY, lambda event: None)


def crash_target(item: pytest.Item) -> tuple[int, str] | None:
    """(subtest, stage) the test's first child died at, in the run that localizes it."""
    return item.stash.get(CRASH_TARGET_KEY, None)


class IsolationPlugin:
    """Registered by the plugin only when isolation is on. `prime` is called once, in
    the parent, before the first test that uses the harness is forked."""

    def __init__(self, config: pytest.Config, time_limits: list[tuple[str, float]],
                 prime: Callable[[], None]):
        self.config = config
        self.time_limits = time_limits
        self.prime = prime
        self.warmed_up = False

    def time_limit(self, item: pytest.Item) -> float:
        """--time-limit, else the test's time_limit marker, else the suite default."""
        if self.config.option.time_limit:
            return self.config.option.time_limit
        marker = item.get_closest_marker("time_limit")
        if marker is not None:
            return float(marker.args[0])
        path = item.nodeid.split("::", 1)[0]
        return next((s for prefix, s in self.time_limits if path.startswith(prefix)), 300.0)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        if not self.warmed_up and "test_runner" in getattr(item, "fixturenames", ()):
            self.warmed_up = True
            self.prime()
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in run_in_child(item, self.time_limit(item)):
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def _child_main(item: pytest.Item, write_fd: int, dump_file: IO[bytes]) -> None:
    """Runs in the forked child; never returns. A fatal signal's faulthandler dump goes
    to `dump_file`, which the parent reads into the crash record, not to the console."""
    code = 0
    try:
        faulthandler.enable(file=dump_file, all_threads=True)
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


def run_in_child(item: pytest.Item, limit: float) -> list:
    """The test's reports, from a forked child; a lost child's made by the plugin, with
    the crash localized by a second child when it died in a backend's stage."""
    events, status, timed_out, duration, dump = _fork(item, limit)
    for event in events:
        if event["event"] == "reports":
            return [_report_from_json(item.config, data) for data in event["reports"]]
    localization = None
    subtest, stage = _where_lost(events)
    if not timed_out and stage in LOCALIZED_CRASH_STAGES \
            and "test_runner" in getattr(item, "fixturenames", ()) \
            and item.config.getoption("localize", "off") != "off":
        localization = localize_crash(item, subtest, stage, limit)
    return [_lost_child_report(item, events, status, timed_out, limit, duration, dump,
                               localization)]


def localize_crash(item: pytest.Item, subtest: int, stage: str, limit: float) -> dict | None:
    """Run the test again in a second child that stops before the stage its first child
    died in, at that subtest, and bisects the crash there (each attempt forked); the
    localization its record of that subtest holds. None: the case is not localized."""
    item.stash[CRASH_TARGET_KEY] = (subtest, stage)
    try:
        events, status, timed_out, _, _ = _fork(item, limit)
    finally:
        del item.stash[CRASH_TARGET_KEY]
    for event in events:
        if event["event"] == "record" and event["record"].get("subtest") == subtest:
            return event["record"].get("localization")
    if any(event["event"] == "reports" for event in events):
        return None  # it ended before that subtest: the case is not localized
    how = "ran out of time" if timed_out else _describe_exit(status).replace(
        "the test process was ", "")
    return {"method": "bisection over graph prefixes", "localized": False,
            "reason": f"not localized: the run that localizes the crash {how} before "
                      f"subtest {subtest} was recorded"}


def _fork(item: pytest.Item, limit: float) -> tuple[list, int, bool, float, str | None]:
    """Run the test's protocol in a forked child: its events, exit status, whether it
    was killed at `limit`, the seconds it took and a fatal signal's faulthandler dump.
    The test is over when the child exits (a process it left behind may hold the pipe
    open); then every process of its session is killed and its scratch folder removed
    (confinement.py), whatever happened, an interrupt of this process included."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    scratch = confinement.make_scratch()
    parent = os.getpid()
    from_main_thread = threading.current_thread() is threading.main_thread()
    # Objects that exist now are never collected in the child: its garbage collector
    # would otherwise touch (and so copy) every page of the parent's heap.
    gc.freeze()
    started = time.monotonic()
    with tempfile.TemporaryFile() as dump_file:
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            confinement.enter(scratch, parent, die_with_parent=from_main_thread)
            _child_main(item, write_fd, dump_file)
        gc.unfreeze()  # the parent's own garbage stays collectable
        os.close(write_fd)
        try:
            events, timed_out = _collect_events(read_fd, pid, started + limit)
        finally:
            confinement.end_session(pid)
            os.close(read_fd)
            _, status = os.waitpid(pid, 0)
            confinement.remove_scratch(scratch)
        duration = time.monotonic() - started
        dump_file.seek(0)
        dump = dump_file.read().decode("utf-8", "replace").strip() or None
    return events, status, timed_out, duration, dump


def _report_from_json(config: pytest.Config, data: dict) -> Any:
    report = config.hook.pytest_report_from_serializable(config=config, data=data)
    if isinstance(report.longrepr, list):  # a skip's (path, line, reason); JSON made it a list
        report.longrepr = tuple(report.longrepr)
    return report


def _collect_events(read_fd: int, pid: int, deadline: float) -> tuple[list, bool]:
    """The child's newline-delimited JSON events until it exits (all it wrote is in the
    pipe by then) or the deadline passes; whether the deadline passed. The child is not
    reaped here."""
    exited = _exit_watch(pid)
    buffer = b""
    events: list[dict] = []
    watched = [read_fd, exited.fileno()] if exited else [read_fd]
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return events, True
            ready, _, _ = select.select(watched, [], [],
                                        min(remaining, 1.0 if exited else 0.05))
            done = (exited.fileno() in ready) if exited else _has_exited(pid)
            if read_fd in ready or done:
                chunk = _read_available(read_fd)
                if chunk is None:  # end of file: only the exit is left to wait for
                    watched = [fd for fd in watched if fd != read_fd]
                buffer += chunk or b""
                *lines, buffer = buffer.split(b"\n")
                events.extend(json.loads(line) for line in lines if line.strip())
            if done:
                return events, False
    finally:
        if exited:
            exited.close()


def _exit_watch(pid: int) -> IO[bytes] | None:
    """A file that becomes readable when the child exits (Linux's pidfd); None elsewhere,
    where the child is polled."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.fdopen(os.pidfd_open(pid), "rb", buffering=0)
    except OSError:
        return None


def _has_exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it."""
    found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return found is not None


def _read_available(read_fd: int) -> bytes | None:
    """What the pipe holds now, without waiting; None at end of file."""
    os.set_blocking(read_fd, False)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(read_fd, 1 << 16)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks) if chunks else None
        chunks.append(chunk)


def _where_lost(events: list) -> tuple[int, str | None]:
    """The subtest the child was in when it died (the count of records it finished) and
    the stage it had entered in it (None: it died between subtests)."""
    records = [e for e in events if e["event"] == "record"]
    # Only a stage entered after the last finished subtest tells where the child died.
    last_stage = None
    for event in events:
        if event["event"] == "record":
            last_stage = None
        elif event["event"] == "stage":
            last_stage = event["stage"]
    return len(records), last_stage


def _lost_child_report(item: pytest.Item, events: list, status: int, timed_out: bool,
                       limit: float, duration: float, dump: str | None = None,
                       localization: dict | None = None) -> pytest.TestReport:
    """The child ended without reporting: say how, and let the plugin make the report."""
    records = [e["record"] for e in events if e["event"] == "record"]
    _, last_stage = _where_lost(events)
    internal = [e["text"] for e in events if e["event"] == "internal_error"]
    if timed_out:
        verdict = Status.FAIL_TIMEOUT
        message = f"exceeded its time limit of {limit:g}s"
    else:
        verdict = Status.FAIL_CRASH
        message = _describe_exit(status)
    if last_stage:
        message += f" (last stage entered: {last_stage})"
    if internal:
        message += "\n" + internal[-1]
    return item.config.hook.pytest_etsuite_child_lost(
        item=item, status=verdict, message=trim_error(message), stage=last_stage,
        records=records, duration=duration,
        crash_dump=trim_error(dump, CRASH_DUMP_LIMIT) if dump else None,
        localization=localization)


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the test process was killed by {name} ({number})"
    return f"the test process exited with code {os.WEXITSTATUS(status)} before reporting"
