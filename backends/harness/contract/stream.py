"""The results stream: next to `reports/X.json` a running session appends one JSON object
per line to `reports/X.partial.jsonl`, so a killed session leaves its finished tests
behind; the report tools and --resume read it. Line kinds, each an object with one of
these keys:"""

from __future__ import annotations

import json
from typing import Any, cast

from etsuite.backends.harness.contract.facts import SCHEMA_VERSION, SessionFacts
from etsuite.backends.harness.contract.report import PHASE_SHAPE, REPORT_SUFFIX
from etsuite.backends.harness.contract.shapes import ANYTHING, TEXT, Fields, ListOf, Maybe

STREAM_SUFFIX = ".partial.jsonl"
STREAM_HEADER = "etsuite_stream"   # first line: {STREAM_HEADER: version, "facts", "started", "args"}
STREAM_START = "start"             # {"start": nodeid} when a test starts
# {"report": {nodeid, when, outcome, duration, wasxfail, longrepr, records}} per phase report
STREAM_REPORT = "report"
# What a reader checks of a "report" line's object (its records: SubtestRecord.from_dict).
REPORT_LINE_SHAPE = Fields({**PHASE_SHAPE.fields, "nodeid": TEXT,
                            "records": Maybe(ListOf(ANYTHING))})
STREAM_COLLECT_ERROR = "collect_error"  # {"collect_error": {nodeid, longrepr}}
STREAM_FINISHED = "finished"       # {"finished": exitstatus} at a clean end


def stream_header(facts: SessionFacts, started: float, args: list[str]) -> dict:
    """The first line: the format's version, the session facts, when the session started
    (epoch seconds) and its command-line arguments."""
    return {STREAM_HEADER: SCHEMA_VERSION, "facts": facts.to_dict(), "started": started,
            "args": args}


def header_of(entries: list) -> dict | None:
    """The stream's first line when it is a header (None: this is no results stream)."""
    first = entries[0] if entries else None
    return first if isinstance(first, dict) and STREAM_HEADER in first else None


def facts_of_header(header: dict) -> Any:
    """The session facts of a header line, as stored (None when it has none)."""
    return header.get("facts")


def phase_category(when: str, phase: dict) -> str:
    """pytest's category of one phase report (setup, call or teardown), as
    pytest_report_teststatus says it: passed, failed, error, skipped, xfailed, xpassed."""
    outcome, wasxfail = phase.get("outcome"), phase.get("wasxfail")
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if wasxfail is not None:
        return "xfailed" if outcome == "skipped" else "xpassed"
    # As written: pytest's outcome string; a reader checks it against the known ones.
    return cast(str, outcome)


def outcome_of_phases(phases: dict) -> str:
    """A test's outcome from its phase reports ({when: report}): the last phase that did
    not pass decides, as in pytest-json-report."""
    outcome = "passed"
    for when in ("setup", "call", "teardown"):
        if when in phases:
            category = phase_category(when, phases[when])
            if category != "passed":
                outcome = category
    return outcome


def test_ended(phases: dict) -> bool:
    """Whether a test's phase reports ({when: report}) show it ended: pytest reported its
    teardown, or the isolation reported its lost child (a crash or a timeout: one call
    report, no setup). A test that was running when the session died has neither."""
    return "teardown" in phases or ("call" in phases and "setup" not in phases)


def stream_entries(text: str) -> list:
    """The JSON objects of a results stream's lines. The last line may be cut short (the
    writer was killed mid-line) and is dropped; any other bad line is a ValueError."""
    lines, entries = text.splitlines(), []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number == len(lines):
                break
            raise ValueError(f"line {number} is not valid JSON: {error.msg}") from None
    return entries


def ended_tests(entries: list) -> dict[str, dict]:
    """{node id: {when: report}} of the tests a stream shows ended (`test_ended`)."""
    phases: dict[str, dict] = {}
    for entry in entries:
        report = entry.get(STREAM_REPORT) if isinstance(entry, dict) else None
        if isinstance(report, dict) and isinstance(report.get("nodeid"), str):
            phases.setdefault(report["nodeid"], {})[report.get("when")] = report
    return {nodeid: by_when for nodeid, by_when in phases.items() if test_ended(by_when)}


def records_of_phases(phases: dict) -> list:
    """A test's record dicts: those of the phase report that carries the most."""
    return max((phase.get("records") or [] for phase in phases.values()), key=len, default=[])


def stream_path_for(json_report_path: str) -> str:
    base = json_report_path[:-len(REPORT_SUFFIX)] if json_report_path.endswith(REPORT_SUFFIX) \
        else json_report_path
    return base + STREAM_SUFFIX
