"""Declared input-dependent (non-strict): the tests of cases a non-strict `[[fail]]` entry
declares, whether each failed as declared or passed, and the entry; so their pass is not
read as a fix nor their xfail as a failure that reproduces. In the summary and on the
page; the headline counts them too (`header.py`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify, tally
from etsuite.tools.report.formatting import code, plural, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label, result_index
from etsuite.tools.report.size_limit import Section

NON_STRICT_HEADING = "Declared input-dependent (non-strict)"


@dataclass
class Declared:
    """A test of a case that a non-strict [[fail]] entry declares (input-dependent: at one
    seed it fails with the declared status and is an xfail, at another it passes, and
    neither fails the run), so its pass is not mistaken for a fix nor its xfail for a
    failure that reproduces."""

    result: TestResult
    entry: str | None          # the entry, "path:line" (`declared_by`)
    observed: str | None       # under an xfail: the status the pipeline gave


def is_non_strict(result: TestResult) -> bool:
    return any(record.declared_strict is False for record in result.records)


def non_strict(results: list[TestResult], order: list[tally.FlowKey]) -> list[Declared]:
    """The tests of non-strict declared cases, in flow order, then node id."""
    rank = {key: index for index, key in enumerate(order)}
    found = [r for r in results if is_non_strict(r)]
    found.sort(key=lambda r: (rank.get(tally.flow_key(r), len(rank)), r.nodeid))
    return [Declared(result,
                     next((x.declared_by for x in result.records if x.declared_by), None),
                     next((x.observed_status for x in result.records
                           if x.status is Status.XFAIL and x.observed_status), None))
            for result in found]


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Cases a non-strict [[fail]] entry declares, apart: their pass is no fix and their
    xfail no failure that reproduces, so neither should be read as one."""
    declared = non_strict(merged.results, order)
    if not declared:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test case", "flow", "this run", "entry"], [
            [code(tally.display_case(case_id(d.result.nodeid, d.result.flow))),
             flow_label(d.result.flow), non_strict_outcome(d),
             code(d.entry) if d.entry else "–"] for d in items])

    statuses = Counter(d.result.status for d in declared)
    failed = statuses[Status.XFAIL]
    passed = sum(statuses[s] for s in classify.PASSING)
    rest = len(declared) - failed - passed
    intro = (f"{plural(len(declared), 'test')} of cases declared by a non-strict `[[fail]]` "
             f"entry (input-dependent: each may fail with the declared status or pass, and "
             f"neither fails the run): {failed} failed as declared (xfail), {passed} passed "
             f"(counted as correct)" + (f", {rest} neither" if rest else "") + ".\n\n")
    return [Section(heading=f"## {NON_STRICT_HEADING}\n", intro=intro, items=declared,
                    render_items=render, unit="tests")]


def non_strict_outcome(declared: Declared) -> str:
    """What a non-strict declared test did this run, in words."""
    status = declared.result.status
    if status is Status.XFAIL:
        return f"failed as declared (xfail{f'; {declared.observed}' if declared.observed else ''})"
    if status in classify.PASSING:
        return "passed" + (" (undelegated)" if status is Status.PASS_UNDELEGATED else "")
    if status in classify.FAILING:
        return f"failed: {status} (not the declared failure)"
    return str(status)


def page(merged: Merged, order: list[tally.FlowKey]) -> list:
    """The tests of non-strict declared cases: [result, entry, observed status] each."""
    index = result_index(merged)
    return [[index[id(d.result)], d.entry, d.observed]
            for d in non_strict(merged.results, order)]
