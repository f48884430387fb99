"""Slowest tests: the longest tests with their slowest stage."""

from __future__ import annotations

from collections import defaultdict

from etsuite.tools.report.formatting import code, seconds, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


def slowest(results: list[TestResult], limit: int) -> list[TestResult]:
    ranked = sorted(results, key=lambda r: (-r.duration, r.nodeid))
    return [r for r in ranked[:limit] if r.duration > 0]


def slowest_stage(result: TestResult) -> tuple[str, float] | None:
    totals: defaultdict[str, float] = defaultdict(float)
    for record in result.records:
        for stage, spent in record.timings.items():
            totals[stage] += spent or 0.0
    return max(totals.items(), key=lambda item: item[1]) if totals else None


def markdown(merged: Merged, limit: int) -> list[Section]:
    def render(items: list) -> tuple[str, list[str]]:
        rows = []
        for result in items:
            stage = slowest_stage(result)
            rows.append([code(result.nodeid), flow_label(result.flow), result.status,
                         seconds(result.duration),
                         f"{stage[0]} ({seconds(stage[1])})" if stage else "–"])
        return table(["test", "flow", "status", "duration", "slowest stage"], rows)

    return [Section(heading="## Slowest tests\n", items=slowest(merged.results, limit),
                   render_items=render, empty="No timings.\n", unit="tests")]
