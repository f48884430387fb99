"""What the plugin writes: the results stream, and the session facts and subtest records
in the JSON report (formats defined in `contract`).

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

import pytest

from etsuite.backends.harness import contract as ct

EXIT_REPORT_PATH = 6  # the report path cannot be written
RECORDS_ATTRIBUTE = "etsuite_records"


def attach_records(report, records: list[dict]) -> None:
    """Carry a test's record dicts on its report (plain data: xdist serializes it)."""
    setattr(report, RECORDS_ATTRIBUTE, records)


def records_of(report) -> list[dict]:
    return getattr(report, RECORDS_ATTRIBUTE, None) or []


def addoption(group):
    group.addoption("--results-stream", default=None, metavar="PATH",
                    help="append one JSON line per finished test here (default: next to "
                         "--json-report-file, as NAME.partial.jsonl)")


def configure(config, state) -> None:
    if hasattr(config, "workerinput"):
        return  # xdist workers send their reports to the controller, which writes
    json_path = getattr(config.option, "json_report_file", None) if getattr(
        config.option, "json_report", False) else None
    path = config.option.results_stream or (ct.stream_path_for(json_path) if json_path else None)
    config.pluginmanager.register(ResultsStream(config, state, path, json_path), "etsuite-stream")


def _fail_unwritable(path: str, error: OSError):
    sys.stderr.write(f"etsuite: cannot write report file {path}: {error.strerror or error}\n")
    pytest.exit(f"cannot write report file {path}", returncode=EXIT_REPORT_PATH)


class ResultsStream:
    def __init__(self, config, state, path: str | None, json_path: str | None):
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
            self._write({ct.STREAM_HEADER: ct.SCHEMA_VERSION, "facts": state.facts(),
                         "started": self.started, "args": list(config.invocation_params.args)})

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

    def pytest_runtest_logstart(self, nodeid, location):
        self._write({ct.STREAM_START: nodeid})

    def pytest_collectreport(self, report):
        if report.failed:
            self._write({ct.STREAM_COLLECT_ERROR: {
                "nodeid": report.nodeid,
                "longrepr": ct.trim_error(str(report.longrepr), 4000),
            }})

    def pytest_runtest_logreport(self, report):
        longrepr = None
        if report.longrepr is not None and not report.passed:
            longrepr = ct.trim_error(str(report.longrepr), 4000)
        records = records_of(report)
        if records:
            self.records[report.nodeid] = records
        self._write({ct.STREAM_REPORT: {
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "duration": round(report.duration, 4),
            "wasxfail": getattr(report, "wasxfail", None),
            "longrepr": longrepr,
            "records": records,
        }})

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report):
        json_report[ct.REPORT_KEY] = self.state.facts()
        for test in json_report.get("tests", []):
            records = self.records.get(test.get("nodeid"))
            if records:
                test.setdefault("metadata", {})["subtests"] = records

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self._write({ct.STREAM_FINISHED: int(exitstatus)})

    def pytest_unconfigure(self, config):
        if self.file is None:
            return
        self.file.close()
        self.file = None
        report_written = self.json_path and os.path.exists(self.json_path) and \
            os.path.getmtime(self.json_path) >= self.started - 1
        if report_written and self.path != self.json_path:
            os.remove(self.path)
