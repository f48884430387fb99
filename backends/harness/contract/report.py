"""Where the harness's data sits in a pytest-json-report file: the session facts under
REPORT_KEY at its top level, and each test's record dicts under `metadata` -> `subtests`
of the test's entry in `tests`. The plugin writes and every reader reads them through
these functions, so the places are named once."""

from __future__ import annotations

from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.backends.harness.contract.shapes import (
    ANYTHING,
    FINITE,
    INTEGER,
    OBJECT,
    TEXT,
    Fields,
    ListOf,
    Maybe,
)

REPORT_SUFFIX = ".json"
REPORT_KEY = "etsuite"
_METADATA = "metadata"
_RECORDS = "subtests"


def facts_of_report(report: dict):
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
PHASE_SHAPE = Fields({"outcome": Maybe(TEXT), "duration": Maybe(FINITE), "when": Maybe(TEXT),
                      "longrepr": ANYTHING, "wasxfail": ANYTHING, "xfail_reason": ANYTHING})
# The parts of a report file the tools read (what `records_of_test` finds is typed by
# `SubtestRecord.from_dict`).
REPORT_SHAPE = Fields({"exitcode": Maybe(INTEGER), "created": Maybe(FINITE),
                       "duration": Maybe(FINITE), "tests": ListOf(OBJECT),
                       "collectors": Maybe(ListOf(Fields({"nodeid": Maybe(TEXT),
                                                          "outcome": ANYTHING,
                                                          "longrepr": ANYTHING})))})
TEST_SHAPE = Fields({"nodeid": TEXT, "outcome": TEXT,
                     _METADATA: Maybe(Fields({_RECORDS: Maybe(ListOf(ANYTHING))})),
                     **{when: Maybe(PHASE_SHAPE) for when in ("setup", "call", "teardown")}})
