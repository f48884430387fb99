"""A pytest plugin the benchmark loads into both harnesses (`-p etsuite.tools.bench.bench_probe`):
it samples each pytest process's memory after every test and writes one JSON file per
process into $ETSUITE_BENCH_PROBE_DIR, so peak memory per worker can be compared and its
growth over a long run seen. It changes nothing about how tests run."""

from __future__ import annotations

import json
import os
import resource
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def _rss_mb() -> float:
    """Resident memory now (Linux /proc), 0 where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _seconds_since_process_start() -> float | None:
    """How long this process has existed (Linux /proc), None where it cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            # Field 22, counted after the command name's closing parenthesis.
            started_ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


_samples: list[float] = []
# Seconds from the process's start to its first test: interpreter, imports, collection
# and (ours) the warm-up, which every xdist worker pays before it can run anything.
_startup: list[float | None] = []


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if not _startup:
        _startup.append(_seconds_since_process_start())


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _samples.append(round(_rss_mb(), 1))


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = os.environ.get("ETSUITE_BENCH_PROBE_DIR")
    if not folder or not _samples:
        return
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    facts = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        # A test run in a forked child (our isolation) peaks there, not in the worker.
        "peak_rss_mb": round(max(own, children), 1),
        "rss_after_each_test_mb": _samples,
        "startup_s": _startup[0] if _startup else None,
    }
    with open(os.path.join(folder, f"{os.getpid()}.json"), "w", encoding="utf-8") as handle:
        json.dump(facts, handle)
