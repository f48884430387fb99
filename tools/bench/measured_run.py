"""One pytest run of the benchmark, measured: a fresh process tree timed for wall and CPU,
its report, and what the probe (bench_probe.py) noted in each of its processes. Shared by
the comparison with the reference (benchmark.py) and the optional parts (own_suites.py)."""

from __future__ import annotations

import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from etsuite.tools.bench.inner_loop import PrivateWarm
from etsuite.tools.bench.phases import phases_of

PROBE = "etsuite.tools.bench.bench_probe"


@dataclass
class MeasuredRun:
    """One pytest process tree: its time, memory and what it reported."""

    label: str
    wall_s: float
    cpu_s: float
    peak_rss_mb: list[float]
    rss_samples: list[list[float]]
    # Per worker: seconds from its process's start to its first test (bench_probe).
    startup_s: list[float] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)
    # Where the wall time went, seconds per phase (phases_of); empty without probe times.
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def phase_row(self) -> tuple[str, int, float, dict[str, float]]:
        """This run as a row of phases.phase_table."""
        return self.label, len(self.peak_rss_mb), self.wall_s, self.phases

    @property
    def verdicts(self) -> dict[tuple, str]:
        return {case_key(test["nodeid"]): verdict(test) for test in self.tests}


def run_pytest(label: str, args: list[str], scratch: str,
               warm: PrivateWarm | None = None) -> MeasuredRun:
    """Run pytest in a fresh process (so each run pays its own imports), timing wall and
    CPU (the process tree's, from the kernel's accounting of waited-for children). With
    `warm`, the run goes through that warm process (`--warm`) and its CPU includes the
    server's share."""
    report = os.path.join(scratch, f"{label}.json")
    probe_dir = tempfile.mkdtemp(dir=scratch)
    env = dict(warm.env if warm else os.environ, ETSUITE_BENCH_PROBE_DIR=probe_dir)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if warm:
        warm.begin()
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PROBE,
         "--json-report", f"--json-report-file={report}", *args, *(["--warm"] if warm else [])],
        capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = warm.note_run() if warm else 0.0
    if not os.path.exists(report):
        sys.exit(f"benchmark: {label} wrote no report (exit {completed.returncode}):\n"
                 f"{completed.stdout[-3000:]}{completed.stderr[-3000:]}")
    with open(report, encoding="utf-8") as handle:
        tests = json.load(handle)["tests"]
    probes = []
    for path in sorted(glob.glob(os.path.join(probe_dir, "*.json"))):
        with open(path, encoding="utf-8") as handle:
            probes.append(json.load(handle))
    workers = [p for p in probes if p["worker"] != "main"] or probes
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) + server_cpu
    return MeasuredRun(label, wall, cpu, [p["peak_rss_mb"] for p in workers],
               [p["rss_after_each_test_mb"] for p in workers],
               [p["startup_s"] for p in workers if p.get("startup_s") is not None], tests,
               phases_of(probes))


def case_key(nodeid: str) -> tuple:
    """A node id without its folder and with its parameters as a set: the two harnesses
    put the flow and dtype parameters in different orders."""
    path, _, rest = nodeid.partition("::")
    name, _, params = rest.partition("[")
    return os.path.basename(path), name, tuple(sorted(params.rstrip("]").split("-")))


def verdict(test: dict) -> str:
    """pass / fail / skip, comparable between the harnesses: a pass without delegation and
    a declared expected failure are still a pass and a failure."""
    outcome = test["outcome"]
    if outcome in ("passed", "xpassed"):
        return "pass"
    if outcome in ("failed", "xfailed", "error"):
        return "fail"
    return "skip"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def progress(line: str) -> None:
    print(f"benchmark: {line}", file=sys.stderr, flush=True)
