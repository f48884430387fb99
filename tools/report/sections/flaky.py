"""Flaky: the failing tests whose failure did not come back when run again on the same
inputs (they still count as failing)."""

from __future__ import annotations

from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, plural, table
from etsuite.tools.report.loading import TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


def markdown(failing: list[tuple[TestResult, list[tally.Failure]]]) -> list[Section]:
    flaky = [result for result, _ in failing if tally.is_flaky(result)]
    if not flaky:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        rows = []
        for result in items:
            reruns = [r.rerun for r in result.records if r.flaky and r.rerun]
            rows.append([code(result.nodeid), flow_label(result.flow), result.status,
                         "; ".join(f"same inputs: {r.same_inputs}, other inputs: "
                                   f"{r.other_inputs}" for r in reruns) or "–",
                         code(tally.repro(result))])
        return table(["test", "flow", "status", "run again", "repro"], rows)

    intro = (f"{plural(len(flaky), 'failing test')} did not fail again when run a second "
             f"time on the same inputs: flaky, not broken. They still count as failing.\n\n")
    return [Section(heading="## Flaky\n", intro=intro, items=flaky, render_items=render,
                    unit="flaky tests")]
