"""One time budget for the project's property-based fuzzers (test/test_fuzz_*.py).

`make test` runs each fuzz target briefly; `make fuzz-inputs MINUTES=N` sets
ETSUITE_FUZZ_SECONDS so that each target runs for about N minutes. A target that finds a
traceback, a hang or a file written outside its scratch folder fails like any test."""

from __future__ import annotations

import functools
import os
from collections import Counter

from hypothesis import HealthCheck, settings

SHORT_RUN_SECONDS = 10.0  # per fuzz target inside `make test`
TRIED: Counter = Counter()  # cases run per fuzz target, printed after the run (test/conftest.py)


def fuzz_seconds() -> float:
    """Seconds each fuzz target may spend: ETSUITE_FUZZ_SECONDS or the short default."""
    value = os.environ.get("ETSUITE_FUZZ_SECONDS", "")
    try:
        seconds = float(value) if value else SHORT_RUN_SECONDS
    except ValueError:
        raise SystemExit(f"ETSUITE_FUZZ_SECONDS={value!r} is not a number of seconds") from None
    if not 0 < seconds < 7 * 24 * 3600:
        raise SystemExit(f"ETSUITE_FUZZ_SECONDS={value!r} is out of range")
    return seconds


def fuzz_settings(examples_per_second: float = 50.0) -> settings:
    """Hypothesis settings for one target: as many examples as its budget allows at the
    target's expected rate, no per-example deadline (a hang is caught by the test's own
    time limit), no database in the checkout."""
    return settings(
        max_examples=max(20, int(fuzz_seconds() * examples_per_second)),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )


def counted(target):
    """Counts the cases a fuzz target ran (goes under @given, so Hypothesis sees the
    target's own signature through functools.wraps)."""
    @functools.wraps(target)
    def run_one(*args, **kwargs):
        TRIED[target.__name__] += 1
        return target(*args, **kwargs)
    return run_one
