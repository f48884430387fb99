"""Budget breaches: every `fail_budget` subtest's breaches of the limits in
`budgets.toml`, one table per flow, worst (measured / limit) first, read from the
record's `budget_breaches` (`contract/costs.py` is how budgets and drift read costs)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from etsuite.backends.harness.contract.costs import SHARE_LIMIT, shown_limit
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, plural, shorten, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import ERROR_IN_TABLE, NO_BACKEND, flow_label, times
from etsuite.tools.report.signature import message_line
from etsuite.tools.report.size_limit import Section


@dataclass(frozen=True)
class RecordedBreach:
    """One limit one subtest broke, as its record says (`budget_breaches`)."""

    result: TestResult
    record: SubtestRecord
    limit: str | None          # None: a record written before breaches were kept apart
    measured: float | None
    value: float | None        # the limit
    source: str | None         # its entry, "path:line"

    @property
    def overshoot(self) -> float | None:
        """How many times over its limit (a share: how many times under its floor)."""
        if self.measured is None or self.value is None:
            return None
        over, under = (self.value, self.measured) if self.limit == SHARE_LIMIT else \
            (self.measured, self.value)
        return over / under if under else math.inf


def breaches(merged: Merged, order: list[tally.FlowKey]) -> dict[tally.FlowKey, list[RecordedBreach]]:
    """Per flow, every breach of its `fail_budget` subtests, worst (measured/limit) first;
    a breach without figures (an older record) last, its error says what it was."""
    found: dict[tally.FlowKey, list[RecordedBreach]] = {}
    for result in merged.results:
        for record in result.records:
            if record.status is not Status.FAIL_BUDGET:
                continue
            listed = found.setdefault(tally.flow_key(result), [])
            said = record.budget_breaches or [{}]
            listed.extend(RecordedBreach(result, record, b.get("limit"), b.get("measured"),
                                 b.get("value"), b.get("source")) for b in said)
    rank = {key: index for index, key in enumerate(order)}

    def worst_first(breach: RecordedBreach) -> tuple:
        over = breach.overshoot
        return (over is None, -(over or 0.0), breach.result.nodeid, breach.record.subtest)

    return {key: sorted(found[key], key=worst_first)
            for key in sorted(found, key=lambda k: rank.get(k, len(rank)))}


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """The `fail_budget` subtests, one table per flow, the worst breach (measured/limit)
    first: which limit of `budgets.toml` each broke, by how much, and the entry to raise
    or the regression to fix. Absent when nothing broke a budget."""
    found = breaches(merged, order)
    if not found:
        return []
    count = sum(len(rows) for rows in found.values())
    intro = (f"{plural(count, 'breach', 'breaches')} of the limits in `budgets.toml` by "
             "subtests whose outputs were correct (each is a `fail_budget`): the measured "
             "value, the limit and the entry that sets it. Times over: measured / limit "
             "(for `min_delegation_share`, limit / measured).\n")
    sections = [Section(heading="## Budget breaches\n", intro=intro, cuttable=False)]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test", "subtest", "limit", "measured", "limit value", "times over",
                      "entry"], [
            [code(b.result.nodeid), b.record.subtest, code(b.limit) if b.limit else "–",
             _limit_figure(b.limit, b.measured), _limit_figure(b.limit, b.value),
             times(b.overshoot) if b.overshoot is not None else "–",
             code(b.source) if b.source else shorten(message_line(b.record.error),
                                                     ERROR_IN_TABLE)]
            for b in items])

    for (backend, flow), rows in found.items():
        sections.append(Section(heading=f"### {flow_label(flow)} ({backend or NO_BACKEND})\n",
                                items=rows, render_items=render, unit="breaches"))
    return sections


def _limit_figure(limit: str | None, value: float | None) -> str:
    """A measured value or a limit in its limit's unit, as the breach's error says it."""
    return "–" if limit is None or value is None else shown_limit(limit, value)
