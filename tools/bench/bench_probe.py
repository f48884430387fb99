"""A pytest plugin the benchmark loads into both harnesses (`-p etsuite.tools.bench.bench_probe`):
it samples each pytest process's memory after every test and notes when each phase of the
process began and ended (its start, plugins configured, collection done, first test, last
test, session end), then writes one JSON file per process, the xdist controller included,
into $ETSUITE_BENCH_PROBE_DIR: peak memory per worker, its growth over a long run, and where
a run's wall time goes. It changes nothing about how tests run."""

from __future__ import annotations

import json
import os
import resource
import time

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
# Wall-clock times (time.time()) of this process's phases, by name (see pytest_unconfigure).
_times: dict[str, float] = {}
# Seconds from the process's start to its first test: interpreter, imports, collection
# and (ours) the warm-up, which every xdist worker pays before it can run anything.
_startup: list[float | None] = []


def pytest_configure(config: pytest.Config) -> None:
    _times["configured"] = time.time()


def pytest_collection_finish(session: pytest.Session) -> None:
    _times["collected"] = time.time()


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if not _startup:
        _startup.append(_seconds_since_process_start())
        _times["first_test"] = time.time()


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _samples.append(round(_rss_mb(), 1))
    _times["last_test"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _times["session_finish"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    folder = os.environ.get("ETSUITE_BENCH_PROBE_DIR")
    if not folder:
        return
    _times["unconfigured"] = time.time()
    alive = _seconds_since_process_start()
    if alive is not None:
        _times["started"] = _times["unconfigured"] - alive
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    facts = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        # A test run in a forked child (our isolation) peaks there, not in the worker.
        "peak_rss_mb": round(max(own, children), 1),
        "rss_after_each_test_mb": _samples,
        "startup_s": _startup[0] if _startup else None,
        "times": _times,
    }
    with open(os.path.join(folder, f"{os.getpid()}.json"), "w", encoding="utf-8") as handle:
        json.dump(facts, handle)
