"""Read the inputs: pytest-json-report files and the harness's results streams
(`X.partial.jsonl`, left behind by a killed session), validate them, and merge them
into one list of per-test results.

Validation is strict because a summary built from a half-read file is worse than none:
every problem raises `BadInput` with a one-line message that names the file. A stream
is the exception for its last line only: a session killed while writing leaves a
truncated last line, which is the normal state of a killed stream, not corruption.

When the same test (node id, which includes the flow) appears in several runs, the
result of the run that started last is kept: a rerun of a failure is the newer answer.
Every repeat is returned as a `Duplicate`, so the report can list the disagreements.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from typing import Any, TypeGuard

from etsuite.backends.harness.contract import stream as cs
from etsuite.backends.harness.contract.facts import (
    SCHEMA_VERSION,
    SEED_POLICIES,
    FlowFacts,
    RunFacts,
    SessionFacts,
)
from etsuite.backends.harness.contract.nodeids import param_ids
from etsuite.backends.harness.contract.record import RecordError, SubtestRecord
from etsuite.backends.harness.contract.report import (
    REPORT_KEY,
    REPORT_SHAPE,
    REPORT_SUFFIX,
    TEST_SHAPE,
    facts_of_report,
    records_of_test,
)
from etsuite.backends.harness.contract.shapes import INTEGER, ListOf, Maybe, ShapeError, check
from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify

STREAM_SUFFIX = cs.STREAM_SUFFIX
UNEXPECTED_PASS = "passed, but it is marked xfail"
SESSION_ENDED = "the session ended while this test ran (no call report)"


class BadInput(Exception):
    """An input the tool refuses; str() is one line that names the file."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass
class Run:
    """One input file: a finished pytest-json-report, or a results stream."""

    path: str
    kind: str                  # "report" or "stream"
    facts: SessionFacts | None  # the plugin's session facts (None: a run without it)
    finished: bool             # False for a stream without a "finished" line
    exitcode: int | None
    started: float | None      # epoch seconds, orders runs for duplicates
    duration: float | None
    order: int = 0             # position among the inputs, breaks ties of `started`
    tests: int = 0

    @property
    def seed(self) -> int | None:
        return self.facts.seed if self.facts else None

    @property
    def seed_policy(self) -> str | None:
        """Where the run's seed came from: a key of contract.facts.SEED_POLICIES, None in
        reports older than the key (`seed_policy_text` says it in words)."""
        return self.facts.seed_policy if self.facts else None

    def version(self, package: str) -> str | None:
        return self.facts.versions.get(package) if self.facts else None

    def flows(self) -> dict[str, FlowFacts]:
        return self.facts.flows if self.facts else {}

    def flow(self, name: str | None) -> FlowFacts:
        """What the run's facts say of a flow (all None when they do not know it)."""
        known = self.flows().get(name) if name is not None else None
        return known or FlowFacts()

    @property
    def identity(self) -> RunFacts:
        """The run's id, selection and shard (all None in older reports)."""
        return (self.facts.run if self.facts else None) or RunFacts()

    @property
    def shard(self) -> tuple[int, int] | None:
        index, count = self.identity.shard, self.identity.shards
        return (index, count) if isinstance(index, int) and isinstance(count, int) else None


SEED_POLICY_NOT_RECORDED = "not recorded"


def seed_policy_text(policy: str | None) -> str:
    """A seed policy key with what it means (contract.facts.SEED_POLICIES), e.g. "pinned: $ETSUITE_SEED
    ($ETSUITE_SEED, ...)". Reports older than the key say "not recorded"; a key this tool
    does not know (a newer writer) is shown as it is, never dropped."""
    if policy is None:
        return SEED_POLICY_NOT_RECORDED
    description = SEED_POLICIES.get(policy) if isinstance(policy, str) else None
    return f"{policy}: {description}" if description else f"{policy} (a policy this tool does not know)"


@dataclass
class TestResult:
    """One test (one flow) as the report counts it."""

    __test__ = False  # not a pytest test class, despite the name

    nodeid: str
    flow: str | None
    backend: str | None
    outcome: str               # pytest's category: passed, failed, error, skipped, ...
    phase: str | None          # where a non-passing outcome came from (setup, call, ...)
    records: list[SubtestRecord]
    longrepr: str | None
    duration: float
    run: Run
    # Given by the reader when it knows better than the outcome (a test a killed
    # session was running); otherwise derived from the outcome and the records.
    status: Status

    @property
    def seed(self) -> int | None:
        for record in self.records:
            if record.seed is not None:
                return record.seed
        return self.run.seed


@dataclass
class Duplicate:
    nodeid: str
    kept: TestResult
    others: list[TestResult]

    @property
    def conflict(self) -> bool:
        return any(other.status != self.kept.status for other in self.others)


@dataclass
class Merged:
    runs: list[Run]
    results: list[TestResult]   # one per node id, in first-seen order
    duplicates: list[Duplicate]

    @property
    def incomplete(self) -> list[Run]:
        return [run for run in self.runs if not run.finished]


# ---------------------------------------------------------------- finding the inputs

def _is_report_name(name: str) -> bool:
    return name.endswith(REPORT_SUFFIX) or name.endswith(STREAM_SUFFIX)


def expand_inputs(arguments: list[str]) -> list[str]:
    """Files, globs and folders (their *.json and *.partial.jsonl, not recursive) to a
    list of files, each once, in the order given."""
    found: list[str] = []
    for argument in arguments:
        if glob.has_magic(argument):
            matches = sorted(glob.glob(argument, recursive=True))
            if not matches:
                raise BadInput(argument, "no file matches this pattern")
            for match in matches:
                found.extend(_folder_reports(match) if os.path.isdir(match) else [match])
        elif os.path.isdir(argument):
            found.extend(_folder_reports(argument))
        elif os.path.exists(argument):
            found.append(argument)
        else:
            raise BadInput(argument, "no such file or folder")
    unique, seen = [], set()
    for path in found:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _folder_reports(folder: str) -> list[str]:
    names = sorted(n for n in os.listdir(folder) if _is_report_name(n)
                   and os.path.isfile(os.path.join(folder, n)))
    if not names:
        raise BadInput(folder, f"no reports (*{REPORT_SUFFIX}, *{STREAM_SUFFIX}) in this folder")
    return [os.path.join(folder, n) for n in names]


def history_inputs(folder: str) -> list[tuple[str, list[str]]]:
    """A folder of earlier runs, one entry each: a subfolder holding that run's reports
    (e.g. a downloaded CI artifact), or a single report file. Returns (entry name, its
    files) in name order; the caller orders the runs by when they started."""
    if not os.path.isdir(folder):
        raise BadInput(folder, "not a folder (--history wants a folder of earlier runs)")
    entries = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            entries.append((name, _folder_reports(path)))
        elif _is_report_name(name):
            entries.append((name, [path]))
    if not entries:
        raise BadInput(folder, "no earlier runs in this folder (subfolders of reports, or "
                               f"*{REPORT_SUFFIX} / *{STREAM_SUFFIX} files)")
    return entries


# ---------------------------------------------------------------- reading one input

# A larger input is refused before it is read: parsed whole, a report takes about twice
# its size in memory, and the largest merge the project makes (`make test-all`, 40,000
# tests) writes far less than this.
MAX_INPUT_BYTES = 1024 * 1024 * 1024


def load(path: str, order: int = 0) -> tuple[Run, list[TestResult]]:
    """Read one file; raises BadInput for anything this tool cannot trust."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_INPUT_BYTES:
                raise BadInput(path, _too_large())
            raw = handle.read(MAX_INPUT_BYTES + 1)  # a file that grew, or a pipe
        if len(raw) > MAX_INPUT_BYTES:
            raise BadInput(path, _too_large())
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(path, f"cannot read: {getattr(error, 'strerror', None) or error}") from None
    del raw
    if not text.strip():
        raise BadInput(path, "empty file")
    if path.endswith(STREAM_SUFFIX):
        run, results = _load_stream(path, text)
    else:
        run, results = _load_report(path, text)
    run.order = order
    run.tests = len(results)
    return run, results


def _too_large() -> str:
    return (f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB, the most this tool reads "
            f"(split the run into shards, docs/reference/outputs.md)")


def _check_shape(path: str, value: Any, shape: object, where: str, about: str = "") -> None:
    """BadInput naming the file (and the test, when `about` says it) unless `value` has
    `shape`; `where` is how the message names the value (`tests[3]`)."""
    try:
        check(value, shape, where)
    except ShapeError as error:
        raise BadInput(path, f"{about}{error}") from None


def _check_facts(path: str, facts: Any, version: Any) -> SessionFacts:
    if version != SCHEMA_VERSION:
        raise BadInput(path, f"unknown schema version {version!r} "
                             f"(this tool reads version {SCHEMA_VERSION})")
    if not isinstance(facts, dict):
        raise BadInput(path, f"'{REPORT_KEY}' facts are not an object")
    try:
        return SessionFacts.from_dict(facts)
    except ValueError as error:
        raise BadInput(path, f"'{REPORT_KEY}' facts are invalid: {error}") from None


def _load_report(path: str, text: str) -> tuple[Run, list[TestResult]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(path, f"not valid JSON (truncated?): {error.msg} at line "
                             f"{error.lineno} column {error.colno}") from None
    if not isinstance(data, dict) or not {"summary", "exitcode"} <= data.keys():
        raise BadInput(path, "not a pytest-json-report (no 'summary' and 'exitcode' keys)")
    if not isinstance(data.get("tests"), list):
        raise BadInput(path, "a pytest-json-report without per-test results "
                             "(written with --json-report-summary?)")
    _check_shape(path, data, REPORT_SHAPE, "the report")
    facts = None
    raw = facts_of_report(data)
    if raw is not None:
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        facts = _check_facts(path, raw, version)
    created, duration = data.get("created"), data.get("duration")
    started = _epoch(path, created - duration) \
        if _is_number(created) and _is_number(duration) else None
    run = Run(path=path, kind="report", facts=facts, finished=True,
              exitcode=data.get("exitcode"), started=started,
              duration=duration if _is_number(duration) else None)
    results = [_result_from_json(path, index, test, run)
               for index, test in enumerate(data["tests"])]
    results.extend(_collection_errors(data.get("collectors") or [], run))
    return run, results


# When a run may have started, in epoch seconds: 1970 to 2100 (a page writes it as a date).
LATEST_START = 4102444800


def _epoch(path: str, started: float) -> float:
    if not 0 <= started <= LATEST_START:
        raise BadInput(path, f"the run's start ({started!r} epoch seconds) is not a date "
                             f"between 1970 and 2100")
    return started


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _result_from_json(path: str, index: int, test: Any, run: Run) -> TestResult:
    if not isinstance(test, dict) or not isinstance(test.get("nodeid"), str):
        raise BadInput(path, f"tests[{index}] has no node id")
    outcome = test.get("outcome")
    if outcome not in classify.OUTCOMES:
        raise BadInput(path, f"tests[{index}] ({test['nodeid']}) has unknown outcome {outcome!r}")
    _check_shape(path, test, TEST_SHAPE, f"tests[{index}]", f"{test['nodeid']}: ")
    phases = {when: test[when] for when in ("setup", "call", "teardown") if test.get(when)}
    records = _checked_records(path, test["nodeid"], records_of_test(test))
    phase, longrepr = _deciding_phase(outcome, phases)
    duration = sum(p.get("duration") or 0.0 for p in phases.values())
    return _new_result(test["nodeid"], outcome, phase, records, longrepr, duration, run)


def _deciding_phase(outcome: str, phases: dict) -> tuple[str | None, str | None]:
    """The phase whose report explains the outcome, and its text."""
    if outcome == "passed":
        return None, None
    if outcome == "xpassed":
        call = phases.get("call") or {}
        reason = call.get("wasxfail") or call.get("xfail_reason")
        return "call", UNEXPECTED_PASS + (f" (xfail reason: {reason})" if reason else "")
    order = ("setup", "teardown", "call") if outcome == "error" else ("call", "setup", "teardown")
    for when in order:
        phase = phases.get(when)
        if phase and phase.get("outcome") != "passed":
            return when, _text(phase.get("longrepr"))
    return None, None


def _text(longrepr: Any) -> str | None:
    if longrepr is None:
        return None
    if isinstance(longrepr, (list, tuple)) and len(longrepr) == 3:
        return str(longrepr[2])  # a skip's (path, line, reason)
    return str(longrepr)


def _collection_errors(collectors: list, run: Run) -> list[TestResult]:
    """A module that fails to import runs no test; without this it would vanish."""
    found = []
    for collector in collectors:
        if isinstance(collector, dict) and collector.get("outcome") == "failed":
            nodeid = collector.get("nodeid") or "(session)"
            found.append(_new_result(nodeid, "error", "collect", [],
                                     _text(collector.get("longrepr")), 0.0, run))
    return found


def _checked_records(path: str, nodeid: str, records: Any) -> list[SubtestRecord]:
    if not isinstance(records, list):
        raise BadInput(path, f"{nodeid}: subtests are not a list")
    checked = []
    for record in records:
        try:
            checked.append(SubtestRecord.from_dict(record))
        except RecordError as error:
            raise BadInput(path, f"{nodeid}: a subtest record is invalid: {error}") from None
    return checked


def _new_result(nodeid: str, outcome: str, phase: str | None, records: list[SubtestRecord],
                longrepr: str | None, duration: float, run: Run,
                status: Status | None = None) -> TestResult:
    flow = next((r.flow for r in records if r.flow), None) or \
        _flow_from_nodeid(nodeid, run.flows())
    backend = next((r.backend for r in records if r.backend), None) or run.flow(flow).backend
    if status is None:
        status = classify.classify(outcome, records, longrepr)
    return TestResult(nodeid=nodeid, flow=flow, backend=backend, outcome=outcome, phase=phase,
                      records=records, longrepr=longrepr, duration=duration, run=run,
                      status=status)


def _flow_from_nodeid(nodeid: str, flows: dict) -> str | None:
    """A test without records still names its flow in its parameter id."""
    return next((part for part in param_ids(nodeid) if part in flows), None)


# ---------------------------------------------------------------- results streams

_EXIT_STATUSES = ListOf(Maybe(INTEGER))


def _load_stream(path: str, text: str) -> tuple[Run, list[TestResult]]:
    try:
        entries = cs.stream_entries(text)
    except ValueError as error:
        raise BadInput(path, str(error)) from None
    header = cs.header_of(entries)
    if header is None:
        raise BadInput(path, f"not a results stream (no '{cs.STREAM_HEADER}' first line)")
    facts = _check_facts(path, cs.facts_of_header(header), header[cs.STREAM_HEADER])
    finished = [e[cs.STREAM_FINISHED] for e in entries[1:]
                if isinstance(e, dict) and cs.STREAM_FINISHED in e]
    _check_shape(path, finished, _EXIT_STATUSES, "a 'finished' line's exit status")
    started = header.get("started")
    run = Run(path=path, kind="stream", facts=facts, finished=bool(finished),
              exitcode=finished[-1] if finished else None,
              started=_epoch(path, started) if _is_number(started) else None, duration=None)
    phases_by_test: dict[str, dict] = {}
    for number, entry in enumerate(entries[1:], 2):
        if isinstance(entry, dict) and isinstance(entry.get(cs.STREAM_START), str) and not finished:
            # With fork isolation a test reports only when it ends: in a killed session the
            # "start" line is all that names the test that was running.
            phases_by_test.setdefault(entry[cs.STREAM_START], {})
        report = entry.get(cs.STREAM_REPORT) if isinstance(entry, dict) else None
        if report is None:
            continue
        if not isinstance(report, dict) or not isinstance(report.get("nodeid"), str):
            raise BadInput(path, f"report line {number} has no node id")
        _check_shape(path, report, cs.REPORT_LINE_SHAPE, f"line {number}: the report",
                     f"{report['nodeid']}: ")
        phases_by_test.setdefault(report["nodeid"], {})[report.get("when")] = report
    return run, [_result_from_stream(path, nodeid, phases, run)
                 for nodeid, phases in phases_by_test.items()]


def _result_from_stream(path: str, nodeid: str, phases: dict, run: Run) -> TestResult:
    for when in ("setup", "call", "teardown"):
        category = cs.phase_category(when, phases[when]) if when in phases else "passed"
        if category not in classify.OUTCOMES:
            raise BadInput(path, f"{nodeid}: unknown outcome {category!r}")
    outcome = cs.outcome_of_phases(phases)
    records = _checked_records(path, nodeid, cs.records_of_phases(phases))
    duration = sum(p.get("duration") or 0.0 for p in phases.values())
    setup_ran = phases.get("setup", {}).get("outcome") == "passed"
    if (setup_ran or not phases) and "call" not in phases:
        # The session died during this test: its call never reported.
        return _new_result(nodeid, "failed", "call", records, SESSION_ENDED, duration, run,
                           status=Status.FAIL_CRASH)
    phase, longrepr = _deciding_phase(outcome, phases)
    return _new_result(nodeid, outcome, phase, records, longrepr, duration, run)


# ---------------------------------------------------------------- merging

def load_all(paths: list[str]) -> Merged:
    """Load every file, then merge: each node id once, from the newest run."""
    loaded = [load(path, order) for order, path in enumerate(paths)]
    return merge(loaded)


def _recency(result: TestResult) -> tuple:
    started = result.run.started
    return (started if started is not None else float("-inf"), result.run.order)


def merge(loaded: list[tuple[Run, list[TestResult]]]) -> Merged:
    by_nodeid: dict[str, list[TestResult]] = {}
    for _, results in loaded:
        for result in results:
            by_nodeid.setdefault(result.nodeid, []).append(result)
    kept, duplicates = [], []
    for nodeid, seen in by_nodeid.items():
        newest = max(seen, key=_recency)
        kept.append(newest)
        if len(seen) > 1:
            duplicates.append(Duplicate(nodeid, newest, [r for r in seen if r is not newest]))
    return Merged(runs=[run for run, _ in loaded], results=kept, duplicates=duplicates)
