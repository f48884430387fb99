"""The inner-loop benchmark (`make bench ARGS=--inner-loop`): how long a backend author
waits for a verdict, with and without the warm process (backends/harness/warm/server.py).

Times, in one run and in this order: one repro command, one operator module over one
XNNPACK flow, and the same module over the four XNNPACK flows; each twice in a row cold
(a new interpreter per run, as today) and then twice with `--warm` (the first warm run
starts the server, the second finds it warm). Each row is set against its ideal, the
summed durations of its tests (from the JSON report) over its workers, so the ratio says
how much of the wait is not testing. CPU seconds are printed beside wall time (on a shared
machine wall time is noisy): for a warm run they include the server's, read from
/proc (the sessions and xdist workers are the server's children).

The server runs in a private runtime folder, so a warm process the user may have is
neither used nor stopped; it is stopped at the end.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from typing import Callable

from tabulate import tabulate

REPRO = "backends/suite/operators/test_add.py::test_add_same_shape[xnnpack]"
XNNPACK_FLOWS = ("xnnpack", "xnnpack_dynamic_int8_per_channel",
                 "xnnpack_static_int8_per_channel", "xnnpack_static_int8_per_tensor")


def server_cpu_s(pid: int | None) -> float:
    """CPU seconds of the server and of its children it has reaped (/proc/PID/stat
    utime, stime, cutime, cstime); 0 when there is no such process."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def listening_pid(runtime: str) -> int | None:
    """The warm server listening in the runtime folder `runtime`: the process at the other
    end of a connection to its socket (SO_PEERCRED: pid, uid, gid), whatever its module is
    called; None when no socket there answers. (The server logs the empty connection.)"""
    for path in sorted(glob.glob(os.path.join(runtime, "**", "*.sock"), recursive=True)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(path)
            except OSError:
                continue
            credentials = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                           struct.calcsize("3i"))
        return struct.unpack("3i", credentials)[0]
    return None


def summed_durations(report_path: str) -> tuple[int, float]:
    with open(report_path, encoding="utf-8") as handle:
        tests = json.load(handle)["tests"]
    return len(tests), sum(test.get(phase, {}).get("duration", 0.0) for test in tests
                           for phase in ("setup", "call", "teardown"))


class PrivateWarm:
    """A warm process of its own for a benchmark: a private runtime folder (so a server the
    user may have is neither used nor stopped), the server's pid once a run started it
    (found by its socket), and its CPU seconds so far; `stop` ends it and removes the
    folder."""

    def __init__(self) -> None:
        self.runtime = tempfile.mkdtemp(prefix="ewb", dir="/tmp")  # short: a socket path's limit
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.runtime)
        self.env.pop("ETSUITE_WARM", None)
        self.server: int | None = None
        self._cpu_before = 0.0

    def begin(self) -> None:
        """Before a warm run: the server's CPU seconds so far."""
        self._cpu_before = server_cpu_s(self.server)

    def note_run(self) -> float:
        """After a warm run: remember its server (the one listening now); the server CPU
        seconds to add to the run's (all of a new server's, else what it spent since
        `begin`)."""
        before = self._cpu_before
        server = listening_pid(self.runtime)
        if server != self.server:
            before = 0.0  # a new server: all of its CPU belongs to this run
        self.server = server
        return server_cpu_s(server) - before

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.server}/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except (OSError, TypeError):
            pass
        return 0.0

    def stop(self) -> None:
        """End the server and remove its folder. `--warm-stop` finds a server by the
        checkout it serves, and the benchmark's serves a scratch folder: the server found
        by its socket is ended too, or it would idle on for 15 minutes with 400 MB."""
        server = listening_pid(self.runtime) or self.server
        subprocess.run([sys.executable, "-m", "pytest", "--warm-stop"], env=self.env,
                       capture_output=True)
        if server is not None:
            _end(server)
        shutil.rmtree(self.runtime, ignore_errors=True)


def _end(pid: int, patience_s: float = 10.0) -> None:
    """SIGTERM, then wait until the process is gone: SIGKILL after `patience_s`, and
    give up waiting after as long again."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        started, killed = time.monotonic(), False
        while _alive(pid) and time.monotonic() - started < 2 * patience_s:
            if not killed and time.monotonic() - started > patience_s:
                os.kill(pid, signal.SIGKILL)
                killed = True
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead and not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class Runner:
    """Runs pytest commands in the checkout, cold or through a private warm process."""

    def __init__(self, scratch: str):
        self.scratch = scratch
        self.warm = PrivateWarm()
        self.count = 0

    def run(self, args: list[str], workers: int, warm: bool) -> dict:
        self.count += 1
        report = os.path.join(self.scratch, f"run{self.count}.json")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--json-report", f"--json-report-file={report}", *args,
                   *(["--warm"] if warm else [])]
        before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.warm.begin()
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, env=self.warm.env)
        wall = time.monotonic() - started
        after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after_children.ru_utime + after_children.ru_stime
               - before_children.ru_utime - before_children.ru_stime)
        if warm:
            cpu += self.warm.note_run()
        if not os.path.exists(report):
            sys.exit(f"inner loop: {' '.join(args)} wrote no report (exit {done.returncode}):\n"
                     f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        tests, summed = summed_durations(report)
        return {"wall": wall, "cpu": cpu, "tests": tests, "ideal": summed / max(workers, 1)}


def inner_loop(module: str, workers: str, progress: Callable[[str], object]) -> str:
    """The table, as markdown."""
    n = int(workers)
    module_path = os.path.join("backends", "suite", "operators", module)
    four = [option for flow in XNNPACK_FLOWS for option in ("--flow", flow)]
    cases = [
        ("(a) one repro command", [REPRO, "--seed", "1234", "-n", "0"], 1),
        (f"(b) {module}, one flow", [module_path, "--flow", "xnnpack", "-n", workers], n),
        (f"(b) {module}, four XNNPACK flows", [module_path, *four, "-n", workers], n),
    ]
    rows = []
    scratch = tempfile.mkdtemp(prefix="etsuite-inner-")
    runner = Runner(scratch)
    try:
        for warm in (False, True):
            for label, args, count in cases:
                for again in (False, True):
                    result = runner.run(args, count, warm)
                    mode = ("warm" if warm else "cold") + (", again (c)" if again else "")
                    if warm and not again and label == cases[0][0]:
                        mode += " (starts the server)"
                    rows.append([label, mode, result["tests"], count, result["wall"],
                                 result["cpu"], result["ideal"],
                                 result["wall"] / result["ideal"] if result["ideal"] else 0])
                    progress(f"inner loop: {label}, {mode}: {result['wall']:.1f} s")
        rss = runner.warm.rss_mb()
    finally:
        runner.warm.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    table = tabulate(rows, headers=["what", "run", "tests", "workers", "wall s", "CPU s",
                                    "ideal s", "wall / ideal"],
                     floatfmt=".2f", tablefmt="github")
    return (f"{table}\n\n- ideal: the tests' summed durations (setup + call + teardown, from "
            f"the JSON report) over the workers; targets: a warm repro command <= 5 s, the "
            f"module over the four flows <= 1.3x its ideal\n"
            f"- the warm process's resident memory after these runs: {rss:.0f} MB")
