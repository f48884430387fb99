"""Results by backend and flow: per flow its tests, correct and correct-and-delegated
with their denominators, the delegated share of nodes and a column per status that occurs;
the notes of backends that did not run here. In the summary and as the page's table."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify, tally
from etsuite.tools.report.backend_notes import backend_notes
from etsuite.tools.report.formatting import in_words, percent, prose, seconds, table
from etsuite.tools.report.loading import Merged
from etsuite.tools.report.sections import coverage
from etsuite.tools.report.sections.common import NO_BACKEND, flow_label
from etsuite.tools.report.size_limit import Section

MAX_RESULT_COLUMNS = 12
"""The widest results table: a six-backend merge with a column for every status was 24
columns, unreadable in a GitHub step summary. Only the statuses that occur get a column;
when those are still too many, the passes (already counted as correct and delegated) lose
theirs and the failures share one that names them, which always fits (7 + 1 + 4)."""


Cell = Callable[[tally.FlowRow], object]


def result_columns(rows: list[tally.FlowRow]) -> list[tuple[str, Cell]]:
    """The per-status columns of the results table: (header, row -> cell)."""
    total = tally.total_row(rows)
    present = [c for c in classify.COLUMNS if total.counts[c]]
    columns: list[tuple[str, Cell]] = [(str(c), _count_of(c)) for c in present]
    if len(_FIXED_COLUMNS) + len(columns) <= MAX_RESULT_COLUMNS:
        return columns
    failing = [c for c in present if c in classify.FAILING]
    folded: list[tuple[str, Cell]] = [("failing", _failing_cell(failing))] if failing else []
    return folded + [(str(c), _count_of(c)) for c in present
                     if c not in classify.FAILING and c not in classify.PASSING]


_FIXED_COLUMNS = ("backend", "flow", "tests", "correct", "correct, delegated",
                  "delegated nodes", "test time")


def _count_of(column: Status | str) -> Cell:
    return lambda row: row.counts[column]


def _failing_cell(statuses: Iterable[Status | str]) -> Cell:
    def cell(row: tally.FlowRow) -> str:
        found = [f"{str(s).removeprefix('fail_')} {row.counts[s]}"
                 for s in statuses if row.counts[s]]
        return f"{row.failing} ({', '.join(found)})" if found else "0"
    return cell


def of_verdicts(count: int, row: tally.FlowRow, share: float | None) -> str:
    """A count with its denominator and share: "1 of 1 (100.0 %)"."""
    return f"{count} of {row.verdicts} ({percent(share)})"


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = tally.flow_rows(merged, order)
    shown = []
    previous = object()
    for row in rows:  # grouped by backend: its name on its first row
        shown.append(([(row.backend or NO_BACKEND) if row.backend != previous else "",
                       flow_label(row.flow)], row))
        previous = row.backend
    if len(rows) > 1:
        shown.append((["**all**", ""], tally.total_row(rows)))

    shares = {(c.backend, c.flow): c.share for c in coverage.coverage(merged.results, order)}
    total_share = coverage.total_coverage(merged.results).share
    statuses = result_columns(rows)

    def render(items: list) -> tuple[str, list[str]]:
        headers = [*_FIXED_COLUMNS[:-1], *(name for name, _ in statuses), _FIXED_COLUMNS[-1]]
        return table(headers, [
            [*names, row.total, of_verdicts(row.passing, row, row.pass_rate),
             of_verdicts(row.delegated_passing, row, row.delegated_pass_rate)
             if row.delegates else "– (no delegate)",
             percent(total_share if names[0] == "**all**" else shares.get((row.backend, row.flow))),
             *(cell(row) for _, cell in statuses), seconds(row.duration)]
            for names, row in items])

    notes = [f"- **{note.backend}** {prose(note.line())}"
             for note in backend_notes(merged, rows)]
    outro = ("Correct: pass + pass_undelegated, of the tests with a verdict (passing + "
             "failing); correct, delegated: pass only (the backend took nodes and the "
             "outputs match); delegated nodes: the delegated share of the lowered graphs' "
             "nodes. Only the statuses that occur have a column. fail_test is a failure "
             "outside any subtest, error one in setup, teardown or collection.\n"
             + ("\n" + "\n".join(notes) + "\n" if notes else ""))
    return [Section(heading="## Results by backend and flow\n", items=shown,
                   render_items=render, outro=outro, empty="No tests.\n", cuttable=False)]


def verdict_words(row: tally.FlowRow) -> str:
    """A share's denominator in words, shown next to it: "1 of 1 with a verdict; 20 not run"."""
    left_out = row.without_verdict()
    return f"{row.passing} of {row.verdicts} with a verdict" + (
        f"; {in_words(left_out)}" if left_out else "")


def page(rows: list[tally.FlowRow], status_index: dict[Status, int]) -> dict:
    def row_data(row: tally.FlowRow) -> dict:
        return {"backend": row.backend, "flow": row.flow, "total": row.total,
                "counts": {status_index[s]: n for s, n in row.counts.items() if n},
                "passing": row.passing, "delegated": row.delegated_passing,
                "failing": row.failing, "duration": round(row.duration, 3),
                "unavailable": row.unavailable, "delegates": row.delegates,
                "verdict": verdict_words(row)}

    return {"rows": [row_data(row) for row in rows],
            "total": row_data(tally.total_row(rows))}
