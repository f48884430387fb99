"""Where the harness's data sits in a pytest-json-report file: the session facts under
REPORT_KEY at its top level, and each test's record dicts under `metadata` -> `subtests`
of the test's entry in `tests`. The plugin writes and every reader reads them through
these functions, so the places are named once."""

from __future__ import annotations

from typing import Any

from etsuite.backends.harness.contract import shapes as sh
from etsuite.backends.harness.contract.facts import SessionFacts

REPORT_SUFFIX = ".json"
REPORT_KEY = "etsuite"
_METADATA = "metadata"
_RECORDS = "subtests"


def facts_of_report(report: dict) -> Any:
    """The session facts a report holds, as stored (None: a run without this plugin);
    `SessionFacts.from_dict` reads them once the caller checked their version."""
    return report.get(REPORT_KEY)


def put_facts(report: dict, facts: SessionFacts) -> None:
    report[REPORT_KEY] = facts.to_dict()


def records_of_test(test: dict) -> list:
    """The record dicts of one test entry (`tests[i]`), as stored ([] when it has none):
    `SubtestRecord.from_dict` reads each."""
    metadata = test.get(_METADATA)
    return (metadata.get(_RECORDS) if isinstance(metadata, dict) else None) or []


def put_records(test: dict, records: list[dict]) -> None:
    """Store record dicts on a test entry, keeping its other metadata. The entry gets a
    metadata object of its own, so a copy made with dict(entry) keeps its records."""
    metadata = test.get(_METADATA)
    test[_METADATA] = {**(metadata if isinstance(metadata, dict) else {}), _RECORDS: records}


# One phase's report (setup, call, teardown) as pytest-json-report writes it under a test
# entry, and as the results stream writes it on a "report" line.
PHASE_SHAPE = sh.Fields({
    "outcome": sh.Maybe(sh.TEXT), "duration": sh.Maybe(sh.FINITE), "when": sh.Maybe(sh.TEXT),
    "longrepr": sh.ANYTHING, "wasxfail": sh.ANYTHING, "xfail_reason": sh.ANYTHING})
# The parts of a report file the tools read (what `records_of_test` finds is typed by
# `SubtestRecord.from_dict`).
REPORT_SHAPE = sh.Fields({
    "exitcode": sh.Maybe(sh.INTEGER), "created": sh.Maybe(sh.FINITE),
    "duration": sh.Maybe(sh.FINITE), "tests": sh.ListOf(sh.OBJECT),
    "collectors": sh.Maybe(sh.ListOf(sh.Fields({
        "nodeid": sh.Maybe(sh.TEXT), "outcome": sh.ANYTHING, "longrepr": sh.ANYTHING})))})
TEST_SHAPE = sh.Fields({
    "nodeid": sh.TEXT, "outcome": sh.TEXT,
    _METADATA: sh.Maybe(sh.Fields({_RECORDS: sh.Maybe(sh.ListOf(sh.ANYTHING))})),
    **{when: sh.Maybe(PHASE_SHAPE) for when in ("setup", "call", "teardown")}})
