"""What the plugin writes: the results stream, and the session facts and subtest records
in the JSON report (formats defined in `contract.stream` and `contract.report`).

pytest-json-report writes its file only when the session ends, so a killed run would
leave nothing. Next to `reports/X.json` the plugin therefore appends one JSON line per
test report to `reports/X.partial.jsonl` as each test finishes (flushed, from the process
that receives all reports: the pytest process or the xdist controller). When the session
ends and the JSON report exists, the stream is removed; when it is killed, the stream
stays and `tools/` reads it as a partial report.

The records of each test travel on its reports (`attach_records`, which survives xdist's
report serialization) to the process that writes: there they go into the stream as each
test ends, and into each test's `metadata.subtests` of the JSON report through
pytest-json-report's public `pytest_json_modifyreport` hook.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, NoReturn

import pytest

from etsuite.backends.harness.contract import stream as cs
from etsuite.backends.harness.contract.facts import FlowFacts, SessionFacts
from etsuite.backends.harness.contract.record import trim_error
from etsuite.backends.harness.contract.report import put_facts, put_records
from etsuite.backends.harness.flows.registry import backend_folders
from etsuite.backends.harness.state import Resumed, SessionState
from etsuite.backends.harness.workers import is_xdist_worker

EXIT_REPORT_PATH = 6  # the report path cannot be written
RECORDS_ATTRIBUTE = "etsuite_records"


def attach_records(report: pytest.TestReport, records: list[dict]) -> None:
    """Carry a test's record dicts on its report (plain data: xdist serializes it)."""
    setattr(report, RECORDS_ATTRIBUTE, records)


def records_of(report: pytest.TestReport) -> list[dict]:
    return getattr(report, RECORDS_ATTRIBUTE, None) or []


def addoption(group: pytest.OptionGroup) -> None:
    group.addoption("--results-stream", default=None, metavar="PATH",
                    help="append one JSON line per finished test here (default: next to "
                         "--json-report-file, as NAME.partial.jsonl)")
    group.addoption("--resume", action="store_true", default=False,
                    help="continue a killed run: the tests its results stream holds as "
                         "finished are not run again and go into this run's report as they "
                         "were (same seed, same selection)")


def stream_path(config: pytest.Config) -> str | None:
    json_path = _json_path(config)
    return config.option.results_stream or (cs.stream_path_for(json_path) if json_path else None)


def _json_path(config: pytest.Config) -> str | None:
    return getattr(config.option, "json_report_file", None) if getattr(
        config.option, "json_report", False) else None


class ResumeError(ValueError):
    """A results stream that --resume cannot continue; the plugin makes it a usage error."""


def load_resumed(path: str) -> Resumed:
    """Read a killed run's stream. A test that was running when it died has not ended
    (`contract.stream.test_ended`): it runs again."""
    try:
        with open(path, encoding="utf-8") as stream_file:
            entries = cs.stream_entries(stream_file.read())
    except OSError as error:
        raise ResumeError(f"--resume: cannot read {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise ResumeError(f"--resume: {path}: {error}") from None
    header = cs.header_of(entries)
    if header is None:
        raise ResumeError(f"--resume: {path} is not a results stream")
    try:
        facts = SessionFacts.from_dict(cs.facts_of_header(header) or {})
    except ValueError as error:
        raise ResumeError(f"--resume: {path}: {error}") from None
    return Resumed(path, facts, cs.ended_tests(entries[1:]))


def resumed_run(config: pytest.Config) -> Resumed | None:
    """The run --resume continues (None without --resume, or when no stream is left)."""
    path = stream_path(config)
    if not config.option.resume or is_xdist_worker(config):
        return None
    if path is None:
        raise ResumeError("--resume needs the results stream of the run to continue: "
                          "--json-report-file or --results-stream")
    if not os.path.exists(path):
        return None
    return load_resumed(path)


def configure(config: pytest.Config, state: SessionState) -> None:
    if is_xdist_worker(config):
        return  # xdist workers send their reports to the controller, which writes
    config.pluginmanager.register(
        ResultsStream(config, state, stream_path(config), _json_path(config)), "etsuite-stream")
    if state.resumed:
        config.pluginmanager.register(ResumedOutcome(state.resumed), "etsuite-resumed")


class ResumedOutcome:
    """A resumed run fails if a test it carried over failed; set before the JSON report
    and the stream record the exit status."""

    def __init__(self, resumed: Resumed):
        self.resumed = resumed
        self.outcomes: dict[str, int] = {}
        for phases in resumed.tests.values():
            outcome = cs.outcome_of_phases(phases)
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        self.failed = bool(self.outcomes.get("failed") or self.outcomes.get("error"))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.outcomes.items()))
        terminalreporter.write_line(
            f"etsuite: and {len(self.resumed.tests)} tests carried over from the killed run "
            f"({counts}), in the report as they were")


def _fail_unwritable(path: str, error: OSError) -> NoReturn:
    sys.stderr.write(f"etsuite: cannot write report file {path}: {error.strerror or error}\n")
    pytest.exit(f"cannot write report file {path}", returncode=EXIT_REPORT_PATH)


class ResultsStream:
    def __init__(self, config: pytest.Config, state: SessionState, path: str | None,
                 json_path: str | None):
        self.config = config
        self.state = state
        self.path = path
        self.json_path = json_path
        self.file = None
        self.started = time.time()
        self.records: dict[str, list[dict]] = {}  # node id -> records, for the JSON report
        if json_path:
            self._prepare_json_path(json_path)
        if path:
            try:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                self.file = open(path, "w", encoding="utf-8", buffering=1)
            except OSError as error:
                _fail_unwritable(path, error)
            self._write(cs.stream_header(session_facts(state), self.started,
                                         list(config.invocation_params.args)))
        # A resumed run's stream starts with what the killed run finished, so that it can
        # be resumed again, and its report holds every test.
        for phases in (state.resumed.tests.values() if state.resumed else ()):
            for when in ("setup", "call", "teardown"):
                if when in phases:
                    self._write({cs.STREAM_REPORT: phases[when]})

    @staticmethod
    def _prepare_json_path(json_path: str) -> None:
        """Fail early on an unwritable report path, and drop the previous run's report so
        a killed run cannot be mistaken for a finished one."""
        try:
            os.makedirs(os.path.dirname(json_path) or ".", exist_ok=True)
            if os.path.exists(json_path):
                os.remove(json_path)
            with open(json_path + ".probe", "w"):
                pass
            os.remove(json_path + ".probe")
        except OSError as error:
            _fail_unwritable(json_path, error)

    def _write(self, entry: dict) -> None:
        if self.file is not None:
            self.file.write(json.dumps(entry, default=str) + "\n")
            self.file.flush()

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self._write({cs.STREAM_START: nodeid})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._write({cs.STREAM_COLLECT_ERROR: {
                "nodeid": report.nodeid,
                "longrepr": trim_error(str(report.longrepr), 4000),
            }})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        longrepr = None
        if report.longrepr is not None and not report.passed:
            longrepr = trim_error(str(report.longrepr), 4000)
        records = records_of(report)
        if records:
            self.records[report.nodeid] = records
        self._write({cs.STREAM_REPORT: {
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "duration": round(report.duration, 4),
            "wasxfail": getattr(report, "wasxfail", None),
            "longrepr": longrepr,
            "records": records,
        }})

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        put_facts(json_report, session_facts(self.state))
        for test in json_report.get("tests", []):
            records = self.records.get(test.get("nodeid"))
            if records:
                put_records(test, records)
        if self.state.resumed:
            _add_resumed_tests(json_report, self.state.resumed)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session,
                             exitstatus: int | pytest.ExitCode) -> None:
        self._write({cs.STREAM_FINISHED: int(session.exitstatus)})

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.file is None:
            return
        self.file.close()
        self.file = None
        report_written = self.json_path and os.path.exists(self.json_path) and \
            os.path.getmtime(self.json_path) >= self.started - 1
        if report_written and self.path is not None and self.path != self.json_path:
            os.remove(self.path)


def _add_resumed_tests(json_report: dict, resumed: Resumed) -> None:
    """The carried-over tests in pytest-json-report's form (they were deselected here)."""
    summary = json_report.setdefault("summary", {})
    for nodeid, phases in resumed.tests.items():
        test: dict[str, Any] = {"nodeid": nodeid, "outcome": cs.outcome_of_phases(phases)}
        for when, phase in phases.items():
            test[when] = {"outcome": phase.get("outcome"), "duration": phase.get("duration")}
            if phase.get("longrepr"):
                test[when]["longrepr"] = phase["longrepr"]
            if phase.get("wasxfail") is not None:
                test[when]["wasxfail"] = phase["wasxfail"]
        records = cs.records_of_phases(phases)
        if records:
            put_records(test, records)
        json_report.setdefault("tests", []).append(test)
        summary[test["outcome"]] = summary.get(test["outcome"], 0) + 1
        summary["total"] = summary.get("total", 0) + 1
    deselected = summary.pop("deselected", 0) - len(resumed.tests)  # they were not run here
    if deselected > 0:
        summary["deselected"] = deselected


def session_facts(state: SessionState) -> SessionFacts:
    """Session facts stored in every report (JSON and stream)."""
    from importlib.metadata import PackageNotFoundError, version

    def package_version(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    folders = backend_folders()
    try:
        from etsuite.backends.harness.case.delegation import core_aten_overloads

        core: list[str] | None = list(core_aten_overloads())
    except ImportError:  # no torch here: the report has no denominator for coverage
        core = None
    return SessionFacts(
        seed=state.seed,
        versions={name: package_version(name) for name in ("torch", "executorch")},
        flows={
            f.name: FlowFacts(
                backend=f.backend,
                tox_env=f.backend if f.backend in folders else None,
                description=f.description,
                delegates=f.delegates,
                quantizes=f.quantizes,
                selected=f in state.selected,
                unavailable=state.unavailable.get(f.name),
                enable_hint=f.enable_hint or None,
            )
            for f in state.flows.values()
        },
        run=state.run.facts(),
        seed_policy=state.seed_policy,
        core_aten_ops=core,
    )
