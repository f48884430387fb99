"""What changed since the baseline and across earlier runs: in the summary, the status
changes (regressions, lost delegation, fixes, other, new, removed) and the metric drift;
on the page, the history (each earlier run's figures per flow, the changes, and the
reviewer's list of everything that moved, worst first). The comparison itself is
`baseline_diff.py` and `drift.py`, which the `--fail-on` gates use too."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable

from etsuite.backends.harness.contract.costs import time_per_call
from etsuite.tools.report import drift, tally
from etsuite.tools.report.baseline_diff import Change, Changes
from etsuite.tools.report.formatting import code, plural, shorten, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import (
    ERROR_IN_TABLE,
    flow_label,
    plain,
    result_index,
    times,
    when,
)
from etsuite.tools.report.signature import message_line
from etsuite.tools.report.size_limit import Section


def markdown(changes: Changes | None) -> list[Section]:
    """The changes since the baseline, then the metric drift; nothing without a baseline."""
    if changes is None:
        return []
    return [*changes_sections(changes), drift_section(changes)]


def changes_sections(changes: Changes) -> list[Section]:
    base = changes.baseline
    summary = (f"Baseline: {plural(len(base.runs), 'run')} "
               f"({', '.join(code(run.path) for run in base.runs)}), "
               f"{plural(len(base.results), 'test')}. {changes_counts(changes)}.\n")
    if base.incomplete:
        summary += "The baseline includes an incomplete run: some tests may be missing from it.\n"
    sections = [Section(heading="## Changes since the baseline\n", intro=summary, cuttable=False)]

    def was_now(items: list) -> tuple[str, list[str]]:
        return table(["test", "flow", "was", "now", "error"], [
            [code(c.nodeid), flow_label(c.flow), c.was.status, c.now.status,
             _first_error(c.now) or _first_error(c.was)] for c in items])

    def one_side(attribute: str) -> Callable[[list], tuple[str, list[str]]]:
        def render(items: list) -> tuple[str, list[str]]:
            return table(["test", "flow", "status"], [
                [code(c.nodeid), flow_label(c.flow), getattr(c, attribute).status]
                for c in items])
        return render

    for title, items, render in (
        ("Regressions (passed in the baseline, fail now)", changes.regressions, was_now),
        ("Lost delegation (passed delegated in the baseline, pass undelegated now)",
         changes.lost_delegation, was_now),
        ("Fixes (failed in the baseline, pass now)", changes.fixes, was_now),
        ("Other status changes", changes.other, was_now),
        ("New tests", changes.new, one_side("now")),
        ("Removed tests", changes.removed, one_side("was")),
    ):
        if items:
            sections.append(Section(heading=f"### {title}\n", items=items,
                                    render_items=render, unit="tests"))
    return sections


def changes_counts(changes: Changes) -> str:
    worse = sum(1 for d in changes.drift if d.worse)
    return (f"**{plural(len(changes.regressions), 'regression')}**, "
            f"**{len(changes.delegation_regressions())} lost delegation**, "
            f"{plural(len(changes.fixes), 'fix', 'fixes')}, {len(changes.new)} new, "
            f"{len(changes.removed)} removed, {plural(len(changes.other), 'other change')}; "
            f"metric drift: {worse} worse, {len(changes.drift) - worse} better")


def drift_section(changes: Changes) -> Section:
    """Each subtest metric that moved beyond its threshold since the baseline, worst first:
    what a reviewer scans for a silent loss (delegation, size, speed) under a green status."""
    def render(items: list) -> tuple[str, list[str]]:
        return table(["change", "metric", "test", "subtest", "flow", "was", "now", "factor"], [
            [d.bucket, d.metric, code(d.result.nodeid), d.subtest, flow_label(d.result.flow),
             d.was, d.now, times(d.factor)] for d in items])

    intro = ("Per subtest (matched by node id and subtest index), each metric that got at "
             f"least {drift.WORSE_FACTOR:g}x worse or better and moved by more than its noise "
             "floor; a subtest whose status crossed between passing and failing is one "
             "`status` row. Metrics: "
             + "; ".join(f"`{m.name}` {m.label}" for m in drift.METRICS)
             + ". `--fail-on` can name each metric as a gate.\n\n")
    return Section(heading="## Metric drift\n", intro=intro, items=changes.drift,
                   render_items=render, unit="changes",
                   empty="No metric moved beyond its threshold.\n")


def _first_error(result: TestResult) -> str:
    """The message line of the test's first failure, short enough for a table cell."""
    found = tally.failures_of(result)
    return shorten(message_line(found[0].error), ERROR_IN_TABLE) if found else ""


@dataclass
class HistoryPoint:
    """One earlier run (the merged reports of one CI run) shown in the history."""

    label: str
    merged: Merged


def started(merged: Merged) -> float | None:
    """When the earliest of its runs started: the order of history points."""
    times = [run.started for run in merged.runs if run.started is not None]
    return min(times) if times else None


def _point(label: str, merged: Merged) -> dict:
    order = tally.flow_order(merged)
    flows = {}
    runtimes = _median_runtimes(merged)
    for row in tally.flow_rows(merged, order):
        flows[row.flow or ""] = {"backend": row.backend, "total": row.total,
                                 "passing": row.passing, "delegated": row.delegated_passing,
                                 "failing": row.failing, "pass_rate": row.pass_rate,
                                 "median_runtime": runtimes.get(row.flow)}
    versions = sorted({(run.version("torch"), run.version("executorch")) for run in merged.runs},
                      key=str)
    return {"label": label, "started": when(started(merged)),
            "versions": [{"torch": t, "executorch": e} for t, e in versions],
            "runs": [run.path for run in merged.runs], "flows": flows}


def _median_runtimes(merged: Merged) -> dict[str | None, float]:
    """Per flow, the median time per call of its timed subtests (`contract/costs.py`)."""
    found: dict[str | None, list[float]] = {}
    for result in merged.results:
        for record in result.records:
            call = time_per_call(record)
            if call is not None:
                found.setdefault(result.flow, []).append(call.seconds)
    return {flow: statistics.median(seconds) for flow, seconds in found.items()}


# What the reviewer's list of changes shows first: status regressions, lost delegation,
# then the metric drift in its own order (drift.BUCKETS, worst first), then the other
# status changes, what got better, and the fixes. The first group reads as worse.
REVIEW_WORSE = ("regression", "lost delegation",
                *(b for b in drift.BUCKETS if b in drift.WORSE_BUCKETS))


REVIEW_ORDER = (*REVIEW_WORSE, "other status change",
                *(b for b in drift.BUCKETS if b not in drift.WORSE_BUCKETS), "fix")


def _review(changes: Changes, index: dict[int, int]) -> list[dict]:
    """The baseline comparison as one list, worst first: each test's status change and
    each subtest metric that drifted, with what it was and is, how many times worse or
    better, whether it is a loss, and the cell it opens (None: the test is not in this
    run). A subtest's own status crossing is left out where its test's regression or
    fix already says it."""
    rows = []

    def add(kind: str, nodeid: str, flow: str | None, metric: str, subtest: int | None,
            was: Any, now: Any, factor: float | None, result: TestResult | None) -> None:
        rows.append({"kind": kind, "worse": kind in REVIEW_WORSE, "nodeid": nodeid,
                     "flow": flow, "metric": metric, "subtest": subtest, "was": was, "now": now,
                     "factor": None if factor is None else plain(factor),
                     "result": index.get(id(result)) if result is not None else None})

    def status(result: TestResult | None) -> str | None:
        return result.status.value if result is not None else None

    for kind, found in (("regression", changes.regressions), ("fix", changes.fixes),
                        ("lost delegation", changes.lost_delegation),
                        ("other status change", changes.other)):
        for change in found:
            add(kind, change.nodeid, change.flow, drift.STATUS, None, status(change.was),
                status(change.now), None, change.now)
    said = {c.nodeid for c in (*changes.regressions, *changes.fixes)}
    for moved in changes.drift:
        if moved.metric == drift.STATUS and moved.result.nodeid in said:
            continue
        add(moved.bucket, moved.result.nodeid, moved.result.flow, moved.metric,
            moved.subtest, moved.was, moved.now, moved.factor, moved.result)
    rank = {kind: position for position, kind in enumerate(REVIEW_ORDER)}
    # Stable: within a kind, drift keeps its order (by factor), status changes by node id.
    return sorted(rows, key=lambda row: rank[row["kind"]])


def _change(change: Change, index: dict[int, int]) -> dict:
    def side(result: TestResult | None) -> dict | None:
        if result is None:
            return None
        found = tally.failures_of(result)
        return {"status": result.status.value, "error": found[0].error if found else None}

    # "result": the cell this run's side is, so a click opens it (None: a removed test).
    return {"nodeid": change.nodeid, "flow": change.flow, "was": side(change.was),
            "now": side(change.now), "result": index.get(id(change.now))}


def page(merged: Merged, changes: Changes | None, history: list[HistoryPoint]) -> dict | None:
    if not history and changes is None:
        return None
    points = [_point(p.label, p.merged) for p in history] + [_point("this run", merged)]
    diff = None
    if changes is not None:
        index = result_index(merged)
        diff = {"against": [run.path for run in changes.baseline.runs],
                **{name: [_change(c, index) for c in getattr(changes, name)]
                   for name in ("regressions", "lost_delegation", "fixes", "other", "new", "removed")},
                "review": _review(changes, index)}
    return {"points": points, "changes": diff}
