"""One status per test, so every test lands in exactly one column of the report.

The harness gives each subtest a status (`backends.harness.taxonomy`), but not every
test has records: a plain test without a flow, an error in a fixture, a crash outside
the runner, a collection error. Counting only records would hide those, so a test's
status is derived from its pytest outcome first and refined by its records. Three
statuses exist only here, for outcomes no subtest describes:

- `fail_test`: the test failed outside any subtest (an assert in the test body after
  its subtests passed, or a failing test that has no flow).
- `error`: setup, teardown or collection raised.
- `skip`: a plain pytest skip, with no record saying why.
"""

from __future__ import annotations

import re

from backends.harness import taxonomy as tx

FAIL_TEST = "fail_test"
ERROR = "error"
SKIP = "skip"

# Every status a test can have, in the order the report shows them.
TEST_STATUSES = (
    tx.PASS, tx.PASS_UNDELEGATED,
    tx.FAIL_QUANTIZE, tx.FAIL_LOWER, tx.FAIL_SERIALIZE, tx.FAIL_LOAD, tx.FAIL_RUN,
    tx.FAIL_MISMATCH, tx.FAIL_CRASH, tx.FAIL_TIMEOUT, FAIL_TEST, ERROR,
    tx.XPASS, tx.XFAIL, tx.SKIP_INVALID, tx.SKIP_UNSUPPORTED, SKIP,
    tx.LOWERED_NOT_RUN, tx.UNAVAILABLE,
)
PASSING = tx.PASSING
FAILING = tx.FAILING | {FAIL_TEST, ERROR}

# The count columns of the per-flow table: skip_invalid, skip_unsupported and plain
# skips share one column; every other status has its own.
SKIP_COLUMN = "skip"
COLUMNS = tuple(s for s in TEST_STATUSES if s not in (tx.SKIP_INVALID, tx.SKIP_UNSUPPORTED))


def column_of(status: str) -> str:
    return SKIP_COLUMN if status in (tx.SKIP_INVALID, tx.SKIP_UNSUPPORTED, SKIP) else status


# pytest's categories of a test (pytest-json-report's `outcome`).
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")

# The isolation layer writes `[fail_crash] ...` / `[fail_timeout] ...` as the longrepr of a
# test whose process died; xdist says "worker 'gw0' crashed while running ..." when a
# worker dies without isolation.
# (xdist puts a "[gw0] linux -- Python ..." line in front, hence MULTILINE.)
_LOST_PREFIX = re.compile(r"^\[(%s|%s)\]" % (tx.FAIL_CRASH, tx.FAIL_TIMEOUT), re.MULTILINE)
_XDIST_CRASH = re.compile(r"worker '[^']*' crashed while running")
_STRICT_XPASS = "[XPASS(strict)]"


def classify(outcome: str, records: list[dict], longrepr: str | None) -> str:
    """The test's status: its first failing subtest if any, else what pytest says,
    refined by the records (which skip, delegated or not)."""
    statuses = [r["status"] for r in records]
    failing = [s for s in statuses if s in tx.FAILING]
    if failing:
        return failing[0]
    text = (longrepr or "").lstrip()
    if outcome in ("failed", "error"):
        lost = _LOST_PREFIX.search(text)
        if lost:
            return lost.group(1)
        if _XDIST_CRASH.search(text):
            return tx.FAIL_CRASH
    if outcome == "error":
        return ERROR
    if outcome == "failed":
        return tx.XPASS if text.startswith(_STRICT_XPASS) else FAIL_TEST
    if outcome == "xfailed":
        return tx.XFAIL
    if outcome == "xpassed":
        return tx.XPASS
    if outcome == "skipped":
        skipping = [s for s in statuses if s in tx.SKIPPING]
        return skipping[0] if skipping else SKIP
    return tx.PASS_UNDELEGATED if tx.PASS_UNDELEGATED in statuses else tx.PASS


def pass_rate(passing: int, failing: int) -> float | None:
    """Passing share of the tests that reached a verdict; None when none did (a group
    of only skips must not divide by zero)."""
    decided = passing + failing
    return passing / decided if decided else None
