"""A pytest plugin that makes the in-process runtime slower by a fixed time per call while
its outputs stay the same: how metric drift's runtime thresholds are checked on a whole
suite (a slowed run against a healthy baseline must call the executed cases slower; see
docs/explanation/metric-drift.md). Off unless asked for:

    ETSUITE_SLOW_RUNTIME_MS=30 tox -e xnnpack -- -p etsuite.backends.harness.flows.slow_runtime ...

ETSUITE_SLOW_RUNTIME_MATCH, when set, slows only the tests whose node id contains it."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

DELAY_VARIABLE = "ETSUITE_SLOW_RUNTIME_MS"
MATCH_VARIABLE = "ETSUITE_SLOW_RUNTIME_MATCH"


def delay_seconds(text: str) -> float:
    """The delay a run asked for, in seconds; a clear error for anything but a
    non-negative number of milliseconds."""
    try:
        ms = float(text)
    except ValueError:
        ms = -1.0
    if not ms >= 0 or ms == float("inf"):
        raise pytest.UsageError(f"{DELAY_VARIABLE}={text!r}: give milliseconds per call, "
                                f"a non-negative number such as 30")
    return ms / 1000


def pytest_configure(config: pytest.Config) -> None:
    text = os.environ.get(DELAY_VARIABLE, "")
    if not text:
        return
    delay, match = delay_seconds(text), os.environ.get(MATCH_VARIABLE, "")
    from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime

    execute = ExecuTorchRuntime.execute
    if getattr(execute, "slowed_by", None) is not None:
        return  # configured twice in one process (xdist's worker re-reads its options)

    def slowed_execute(self: Any, loaded: Any, inputs: list) -> list:
        if match in os.environ.get("PYTEST_CURRENT_TEST", ""):
            time.sleep(delay)
        return execute(self, loaded, inputs)

    slowed_execute.slowed_by = delay  # type: ignore[attr-defined]
    ExecuTorchRuntime.execute = slowed_execute  # type: ignore[method-assign]
