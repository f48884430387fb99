"""What running cost: per flow and runtime, what the runner that executed the programs
measured (the record's `cost`: time per call, peak memory, memory-planned buffers).
Programs run in process measure none. The page's per-case costs are `case_costs.py`."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


@dataclass
class Cost:
    """Per flow and runtime, what executing its programs cost where they ran, as the
    runner measured it (the record's `cost`: the native runner's timed calls, its peak
    memory and the programs' memory-planned buffers); runtimes that measure nothing (in
    process) are not counted."""

    backend: str | None
    flow: str | None
    runtime: str | None
    subtests: int = 0
    call_medians: list = field(default_factory=list)   # seconds, one per timed method call
    peak_rss_bytes: list = field(default_factory=list)
    planned_bytes: list = field(default_factory=list)  # per program, all methods' buffers


def costs(results: list[TestResult], order: list[tally.FlowKey]) -> list[Cost]:
    """The `Cost` rows, flows in `order`, then by runtime."""
    rows: dict[tuple, Cost] = {}
    for result in results:
        for record in result.records:
            found = record.cost
            if not found:
                continue
            key = (*tally.flow_key(result), record.runtime)
            row = rows.setdefault(key, Cost(*key))
            row.subtests += 1
            row.call_medians += [c["median"] for c in found.get("calls") or []
                                 if c.get("median") is not None]
            if found.get("peak_rss_bytes"):
                row.peak_rss_bytes.append(found["peak_rss_bytes"])
            planned = found.get("planned_memory") or {}
            if planned:
                row.planned_bytes.append(sum(sum(sizes) for sizes in planned.values()))
    rank = {key: index for index, key in enumerate(order)}
    return sorted(rows.values(), key=lambda r: (rank.get((r.backend, r.flow), len(rank)),
                                                str(r.runtime)))


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """What executing the programs cost where they ran, per flow and runtime, as the
    runner measured it (`costs`); absent when no runner measured anything (a run in
    process measures no cost: its `run` time is in the stage times)."""
    rows = costs(merged.results, order)
    if not rows:
        return []

    def median(values: list[float], scale: float, digits: int) -> str:
        return f"{statistics.median(values) * scale:.{digits}f}" if values else "–"

    def render(items: list) -> tuple[str, list[str]]:
        return table(
            ["flow", "runtime", "subtests", "per call µs (median of medians)",
             "per call µs (max of medians)", "peak RSS MB (max)",
             "planned memory KB (median)", "planned memory KB (max)"],
            [[flow_label(r.flow), code(r.runtime or "?"), r.subtests,
              median(r.call_medians, 1e6, 1),
              f"{max(r.call_medians) * 1e6:.1f}" if r.call_medians else "–",
              f"{max(r.peak_rss_bytes) / 2**20:.0f}" if r.peak_rss_bytes else "–",
              median(r.planned_bytes, 1 / 1024, 1),
              f"{max(r.planned_bytes) / 1024:.1f}" if r.planned_bytes else "–"]
             for r in items])

    intro = ("Measured by the runner that executed the programs (`--runner`, e.g. the native "
             "runner): per call, the median over its timed calls after a first, judged one; "
             "the executing process's peak memory; the programs' memory-planned buffers "
             "(all methods). Programs run in process are not in this table.\n\n")
    return [Section(heading="## What running cost\n", intro=intro, items=rows,
                    render_items=render, unit="rows")]
