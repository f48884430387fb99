"""Numerical quality: per flow, over the subtests whose outputs were compared, the
distribution of the worst output's SQNR and of its max error in units of the rule's
bound, and how many passes are borderline (listed by `borderline.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from etsuite.tools.report import tally
from etsuite.tools.report.formatting import table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section

RATIO_BUCKETS = (0.01, 0.1, 0.5, 1.0)  # upper edges of max error / bound; beyond: over


@dataclass
class Quality:
    """Per flow, over the subtests whose outputs were compared: the worst output's SQNR
    (None: no error at all) and its max error in units of its bound."""

    backend: str | None
    flow: str | None
    sqnr: list = field(default_factory=list)     # dB, finite values only
    exact: int = 0                               # subtests without any error
    ratios: list = field(default_factory=list)
    borderline: int = 0                          # passing subtests at tally.BORDERLINE_RATIO or more

    def buckets(self) -> list[int]:
        edges = (0.0, *RATIO_BUCKETS)
        counts = [sum(1 for r in self.ratios if low < r <= high) if low else
                  sum(1 for r in self.ratios if r <= high)
                  for low, high in zip(edges, edges[1:], strict=False)]
        return counts + [sum(1 for r in self.ratios if r > RATIO_BUCKETS[-1])]


def percentile(values: list, share: float) -> float | None:
    """Nearest-rank percentile (share in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(share * len(ordered) + 0.5)) - 1))]


def quality(results: list[TestResult], order: list[tally.FlowKey]) -> list[Quality]:
    rows = {key: Quality(*key) for key in order}
    for result in results:
        row = rows[tally.flow_key(result)]
        for record in result.records:
            judged = tally.judged(record)
            if not judged:
                continue
            row.ratios.append(tally.worst_ratio(record))
            row.borderline += tally.is_borderline(record)
            sqnrs = [o.sqnr_db for o in judged if o.sqnr_db is not None]
            if sqnrs:
                row.sqnr.append(min(sqnrs))
            else:
                row.exact += 1
    return [row for row in rows.values() if row.ratios]


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = quality(merged.results, order)
    if not rows:
        return []
    edges = ("0", *(f"{e:g}" for e in RATIO_BUCKETS))
    buckets = [f"≤ {edges[1]}", *(f"{low}–{high}" for low, high in zip(edges[1:], edges[2:], strict=False)),
               f"> {edges[-1]}"]

    borderline = f"borderline passes (≥ {tally.BORDERLINE_RATIO:g})"

    def db(value: float | None) -> str:
        return "–" if value is None else f"{value:.1f}"

    def render(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "compared", "no error", "SQNR min", "SQNR p5",
                      "SQNR median", "error/bound p95", *buckets, borderline], [
            [row.backend, flow_label(row.flow), len(row.ratios), row.exact, db(min(row.sqnr, default=None)),
             db(percentile(row.sqnr, 0.05)), db(percentile(row.sqnr, 0.5)),
             f"{percentile(row.ratios, 0.95):.3g}", *row.buckets(), row.borderline]
            for row in items])

    intro = ("Per flow, over the subtests whose outputs were compared: the worst output's "
             "SQNR in dB (no error: an exact match) and its max error in units of the "
             "rule's bound (over 1 fails), counted in buckets. A flow that passes just "
             "barely shows up in the last buckets. Borderline passes: the passing subtests "
             f"at {tally.BORDERLINE_RATIO:g}x of the bound or more (each is listed under "
             "Borderline passes).\n\n")
    return [Section(heading="## Numerical quality\n", intro=intro, items=rows,
                    render_items=render, unit="flows")]
