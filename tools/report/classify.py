"""One status per test, so every test lands in exactly one column of the report.

The harness gives each subtest a status (`contract.statuses.Status`), but not every test has
records: a plain test without a flow, an error in a fixture, a collection error. Counting
only records would hide those, so a test's status is derived from its pytest outcome and
refined by its records. The statuses only a test can have (`contract.statuses.TEST_ONLY`):

- `fail_test`: the test failed outside any subtest (an assert in the test body after
  its subtests passed, or a failing test that has no flow).
- `error`: setup, teardown or collection raised.
- `skip`: a plain pytest skip, with no record saying why.

Crashes and timeouts arrive as records (the harness writes one for the subtest that was
running), never as text to parse.
"""

from __future__ import annotations

from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, SKIPPING, Status

# The count columns of the per-flow table: skip_invalid, skip_unsupported and plain
# skips share one column; every other status has its own.
SKIP_COLUMN = Status.SKIP
SKIP_STATUSES = frozenset({Status.SKIP_INVALID, Status.SKIP_UNSUPPORTED, Status.SKIP})
COLUMNS = tuple(s for s in Status if s not in (Status.SKIP_INVALID, Status.SKIP_UNSUPPORTED))

# pytest's categories of a test (pytest-json-report's `outcome`).
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_STRICT_XPASS = "[XPASS(strict)]"


# Failures that judge the program: every failing status but fail_infra (a lost runner
# device says nothing about the program, so rates leave it out and say so).
VERDICT_FAILING = FAILING - {Status.FAIL_INFRA}


def column_of(status: Status) -> Status:
    return SKIP_COLUMN if status in SKIP_STATUSES else status


def classify(outcome: str, records: list[SubtestRecord], longrepr: str | None) -> Status:
    """The test's status: its first failing subtest if any, else what pytest says,
    refined by the records (which skip, delegated or not)."""
    statuses = [r.status for r in records]
    failing = [s for s in statuses if s in FAILING]
    if failing:
        return failing[0]
    if outcome == "error":
        return Status.ERROR
    if outcome == "failed":
        return Status.XPASS if (longrepr or "").lstrip().startswith(_STRICT_XPASS) else Status.FAIL_TEST
    if outcome == "xfailed":
        return Status.XFAIL
    if outcome == "xpassed":
        return Status.XPASS
    if outcome == "skipped":
        skipping = [s for s in statuses if s in SKIPPING]
        return skipping[0] if skipping else Status.SKIP
    return Status.PASS_UNDELEGATED if Status.PASS_UNDELEGATED in statuses else Status.PASS


def pass_rate(passing: int, failing: int) -> float | None:
    """Passing share of the tests that reached a verdict; None when none did (a group
    of only skips must not divide by zero)."""
    decided = passing + failing
    return passing / decided if decided else None


__all__ = ["FAILING", "PASSING", "VERDICT_FAILING", "Status", "classify", "column_of", "pass_rate"]
