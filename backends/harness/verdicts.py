"""Where a test's final statuses and its outcome are decided: one function, `decide`,
for every way a test ends. Its body returned (the pipeline's records), or its forked
child was lost (a crash or timeout: the records the child finished, plus one for the
subtest it was in). Either way the flow's expectations are applied by the same rule
engine (`expectations.judge`) and the same outcome comes out: an expected failure, a
failure with its message, a skip, or a pass. The hooks below only hand that outcome to
pytest and attach the records to the test's reports.

pytest's own xfail (a marker, or `pytest.xfail` in a test body) is followed here too, so
that a record never says pass where pytest says xfail.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from etsuite.backends.harness import recording
from etsuite.backends.harness.case.runner import TestContext, new_record
from etsuite.backends.harness.contract.nodeids import param_ids, test_case_id
from etsuite.backends.harness.contract.record import (
    SubtestRecord,
    error_headline,
    where_it_breaks,
)
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, Status
from etsuite.backends.harness.flows.budgets import check as check_budgets
from etsuite.backends.harness.flows.expectations import DeclaredOutcome, judge, rewrite_status
from etsuite.backends.harness.items import (
    RUNNER_KEY,
    case_of,
    flow_of,
    record_for_item,
    records_for,
    repro_command,
    suite_of,
)
from etsuite.backends.harness.state import SessionState

if TYPE_CHECKING:  # xdist's types, for the annotations only
    from xdist.scheduler.protocol import Scheduling

    from etsuite.backends.harness.flows.flow import Flow


@dataclass
class Outcome:
    """What a test's records make of it: at most one of xfail, failure and skip; none
    is a pass."""

    records: list[SubtestRecord]   # with their final statuses
    xfail: str | None = None       # an expected failure: pytest's xfail reason
    failure: str | None = None     # the test fails with this message
    skip: str | None = None        # no subtest passed (nor failed): why


def decide(flow: Flow | None, case: str, records: list[SubtestRecord], repro: str | None = None,
           lost: str | None = None, host: str | None = None) -> Outcome:
    """The final statuses (records are updated in place) and the test's outcome.

    `lost` describes a lost child ("fail_crash: ..."): its death is the failure unless
    an expectation declares it. `flow` is None only for a lost test that has no flow.
    A passing subtest that breaks one of the flow's budgets (`host`: the class of host
    its time budgets are for, --budget-host) is a fail_budget before the expectations
    judge it, so only an entry that names fail_budget absorbs it."""
    if flow is not None:
        check_budgets(flow.budgets, flow.name, case, records, host)
    declared = judge(flow.expectations, flow.name, case, records) if flow else DeclaredOutcome()
    # (no flow: the DeclaredOutcome() above, with no xfail reason)
    xfail = f"{flow.name}: {declared.xfail_reason}" if declared.xfail_reason else None  # type: ignore[union-attr]
    if lost is not None:
        failure = f"{lost}\n{declared.failure}" if declared.failure else lost
        return Outcome(records, xfail=xfail, failure=None if xfail else failure)
    if xfail:
        return Outcome(records, xfail=xfail)
    failing = [r for r in records if r.status in FAILING]
    if failing or declared.failure:
        return Outcome(records, failure=_failure_message(declared, failing, records, repro))
    if not any(r.status in PASSING for r in records):
        first = records[0]
        return Outcome(records, skip=f"{first.status}: {first.error or ''}".strip())
    return Outcome(records)


def _failure_message(declared: DeclaredOutcome, failing: list, records: list, repro: str | None) -> str:
    """First line says how (for the short summary), then every failing subtest."""
    lines = []
    if declared.failure:
        lines.append(declared.failure)
    if failing:
        first = failing[0]
        where = where_it_breaks(first.localization)
        at = f" at {where}" if where else ""
        lines.append(f"{len(failing)} of {len(records)} subtests failed; subtest "
                     f"{first.subtest}: {first.status}{at}: {error_headline(first.error or '')}")
    for r in failing:
        flaky = " [flaky: passed when run again on the same inputs]" if r.flaky else ""
        where = where_it_breaks(r.localization)
        breaks = f", breaks at {where}" if where else ""
        lines.append(f"  subtest {r.subtest}: {r.status} at {r.stage}{breaks}{flaky}: {r.error}")
    lines.append(f"repro: {repro}")
    return "\n".join(lines)


def follow_pytest_xfail(item: pytest.Item, report: pytest.TestReport,
                        records: list[SubtestRecord]) -> None:
    """pytest decided xfail itself (a marker, `pytest.xfail`): failing subtests are xfail;
    a strict xfail's unexpected pass (reported as failed) makes the passing ones xpass.
    For a flow's own expected failure, `decide` has done this already."""
    if report.when not in ("call", "setup"):
        return
    if hasattr(report, "wasxfail"):
        for record in records:
            if record.status in FAILING:
                rewrite_status(record, Status.XFAIL)
    elif report.failed and item.get_closest_marker("xfail") is not None:
        for record in records:
            if record.status in PASSING:
                rewrite_status(record, Status.XPASS)


class Verdicts:
    def __init__(self, state: SessionState):
        self.state = state

    @pytest.hookimpl(wrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> Generator[None, object, object]:
        """After the test body: its outcome from its records."""
        result = yield
        runner = pyfuncitem.stash.get(RUNNER_KEY, None)
        if runner is None or not runner.records:
            return result
        outcome = decide(runner.flow, case_of(pyfuncitem, runner.flow), runner.records,
                         runner.context.repro, host=pyfuncitem.config.getoption("budget_host"))
        if outcome.xfail:
            pytest.xfail(outcome.xfail)
        if outcome.failure:
            pytest.fail(outcome.failure, pytrace=False)
        if outcome.skip:
            pytest.skip(outcome.skip)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        records = records_for(item, self.state)
        if records:
            follow_pytest_xfail(item, report, records)
        recording.attach_records(report, [r.to_dict() for r in records])
        return report

    def pytest_etsuite_child_lost(self, item: pytest.Item, status: Status, message: str,
                                  stage: str | None, records: list[dict[str, Any]],
                                  duration: float, crash_dump: str | None,
                                  localization: dict | None = None) -> pytest.TestReport:
        """The isolation layer lost the test's child: the records it finished, plus one
        for the subtest that was running when it died (or ran out of time)."""
        lost = record_for_item(item, self.state, len(records), status=status, stage=stage,
                               error=message, crash_dump=crash_dump, localization=localization)
        in_progress = [SubtestRecord.from_dict(r) for r in records] + [lost]
        flow = flow_of(item, self.state)
        where = where_it_breaks(localization)
        at = f" at {where}" if where else ""
        outcome = decide(flow, case_of(item, flow), in_progress, lost=f"{status}{at}: {message}",
                         host=item.config.getoption("budget_host"))
        report = pytest.TestReport(
            nodeid=item.nodeid, location=item.location,
            keywords={k: 1 for k in item.keywords}, outcome="failed",
            longrepr=outcome.failure or f"{status}: {message}", when="call", sections=[],
            duration=duration, user_properties=[],
        )
        if outcome.xfail:
            report.outcome, report.wasxfail = "skipped", outcome.xfail
        recording.attach_records(report, [r.to_dict() for r in outcome.records])
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Scheduling) -> None:
        """pytest-xdist lost a worker while it ran `crashitem` (isolation off): give the
        report a fail_crash record, so the status travels as a field like any other.
        xdist has made the report failed already, so the record is not judged."""
        state = self.state
        flow = next((state.flows[p] for p in param_ids(crashitem) if p in state.flows), None)
        if flow is None:
            return
        context = TestContext(
            test_id=crashitem, test_case=test_case_id(crashitem), suite=suite_of(crashitem),
            params={}, seed=state.seed, repro=repro_command(flow, crashitem, state.seed))
        error = f"the xdist worker running this test crashed: {report.longrepr}"
        record = new_record(flow, context, 0, status=Status.FAIL_CRASH, error=error[:1200])
        recording.attach_records(report, [record.to_dict()])
