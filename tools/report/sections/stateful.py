"""Stateful programs (a prefill, then decode steps on one loaded method): per flow, how
many matched at every step, which diverged and at which step, the runtime's milliseconds
per step, the lowest step SQNR and how many keep their state in a delegate."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


@dataclass
class Stateful:
    """Per flow, its stateful subtests (`lower_and_run_steps`): how many, how many
    matched at every step, the ones that diverged (with the step), and the runtime's
    time: the first step (a prefill) and the median of the later ones (per token for
    decode steps), each a median over the subtests that ran."""

    backend: str | None
    flow: str | None
    subtests: int = 0
    matched: int = 0
    diverged: list = field(default_factory=list)   # (result, record) that failed a step
    first_ms: list = field(default_factory=list)
    later_ms: list = field(default_factory=list)
    in_delegate: int = 0                           # whose state updates run in a delegate
    lowest_sqnr_db: float | None = None            # the lowest SQNR of any step and output

    @staticmethod
    def median(values: list) -> float | None:
        return statistics.median(values) if values else None


def stateful(results: list[TestResult], order: list[tally.FlowKey]) -> list[Stateful]:
    rows = {key: Stateful(*key) for key in order}
    for result in results:
        for record in result.records:
            if not record.steps:
                continue
            row = rows[tally.flow_key(result)]
            row.subtests += 1
            row.in_delegate += record.state == "delegate"
            if record.failed_step is not None:
                row.diverged.append((result, record))
            elif record.step_errors is not None and record.status.passing:
                row.matched += 1
            sqnr = [value for step in record.step_sqnr_db or [] for value in step
                    if value is not None]
            if sqnr:
                known = [] if row.lowest_sqnr_db is None else [row.lowest_sqnr_db]
                row.lowest_sqnr_db = min(sqnr + known)
            # (a runner that timed no call gives None for it)
            first, *later = record.step_ms or [None]
            if first is not None:
                row.first_ms.append(first)
            later = [ms for ms in later if ms is not None]
            if later:
                row.later_ms.append(statistics.median(later))
    return [row for row in rows.values() if row.subtests]


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Stateful programs (a prefill, then decode steps on one loaded method): per flow,
    how many matched at every step, which diverged and at which step, and the runtime's
    milliseconds per step. Absent when no stateful subtest ran."""
    rows = stateful(merged.results, order)
    if not rows:
        return []

    def ms(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    def render(items: list) -> tuple[str, list[str]]:
        return table(
            ["flow", "stateful subtests", "matched every step", "diverged", "first step ms",
             "later steps ms (median)", "lowest step SQNR dB", "state in delegate"],
            [[flow_label(r.flow), r.subtests, r.matched,
              "; ".join(f"{code(tally.display_case(case_id(result.nodeid, result.flow)))} "
                        f"at step {record.failed_step}" for result, record in r.diverged[:5])
              + (f"; …{len(r.diverged) - 5} more" if len(r.diverged) > 5 else "") or "–",
              ms(r.median(r.first_ms)), ms(r.median(r.later_ms)),
              "–" if r.lowest_sqnr_db is None else f"{r.lowest_sqnr_db:.1f}", r.in_delegate]
             for r in items])

    intro = ("Each program ran step after step on one loaded method, the runtime carrying "
             "its state (a KV cache), every step judged against eager; \"diverged at step "
             "k\" is the first step (from 0) whose outputs failed. Times are the runtime's "
             "per call: the first step is a prefill, the later ones one token each for "
             "decode steps (medians over the subtests that ran). The lowest step SQNR is "
             "over every step and output of the flow's stateful subtests (what a "
             "quantizing recipe's floor is set from).\n\n")
    return [Section(heading="## Stateful programs\n", intro=intro, items=rows,
                    render_items=render, unit="flows")]
