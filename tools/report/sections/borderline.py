"""Borderline passes: every passing subtest whose worst output reached `BORDERLINE_RATIO`
of its rule's bound (the rule is in `tally.py`: the numerical quality counts them per
flow too), closest first; the summary lists the first `BORDERLINE_SHOWN`, the page all."""

from __future__ import annotations

from dataclasses import dataclass

from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, plural, shorten, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections import quality
from etsuite.tools.report.sections.common import ERROR_IN_TABLE, flow_label, plain, result_index
from etsuite.tools.report.size_limit import Section

BORDERLINE_SHOWN = 50    # borderline passes listed; the page lists them all


@dataclass
class Borderline:
    """One passing subtest close to its bound, with what a reader needs to rerun it."""

    result: TestResult
    record: SubtestRecord
    ratio: float

    @property
    def repro(self) -> str:
        return self.record.repro or tally.repro(self.result)


def borderline(results: list[TestResult]) -> list[Borderline]:
    """Every borderline pass, closest to its bound first (then by node id and subtest)."""
    found = []
    for result in results:
        for record in result.records:
            ratio = tally.worst_ratio(record)
            if ratio is not None and tally.is_borderline(record):
                found.append(Borderline(result, record, ratio))
    return sorted(found, key=lambda b: (-b.ratio, b.result.nodeid, b.record.subtest))


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Passes close to their bound, closest first, capped at BORDERLINE_SHOWN rows. Shown
    wherever outputs were compared (then "none" is news too); absent otherwise."""
    if not quality.quality(merged.results, order):
        return []
    found = borderline(merged.results)
    shown = found[:BORDERLINE_SHOWN]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test case", "flow", "worst error/bound", "margin", "rule", "repro"], [
            [code(borderline_case(b)), flow_label(b.result.flow), f"{b.ratio:.2f}x",
             shorten(b.record.margin, ERROR_IN_TABLE) or "–",
             shorten(b.record.verdict_rule, ERROR_IN_TABLE) or "–", code(b.repro)]
            for b in items])

    bound = f"{tally.BORDERLINE_RATIO:g}x"
    intro = (f"{plural(len(found), 'passing subtest')} whose worst output's max error reached "
             f"{bound} of its rule's bound or more (1x is the bound): the passes most likely "
             f"to fail at another seed, closest first.\n\n") if found else ""
    more = len(found) - len(shown)
    outro = (f"…and {more} more, further from their bound (the page, `--page`, lists all "
             f"{len(found)}).\n" if more else "")
    return [Section(heading="## Borderline passes\n", intro=intro, items=shown,
                    render_items=render, outro=outro, unit="borderline passes",
                    empty=f"No passing subtest reached {bound} of its rule's bound.\n")]


def borderline_case(found: Borderline) -> str:
    """The case (flow left out, as in the matrix), and the subtest when the test has more."""
    case = tally.display_case(case_id(found.result.nodeid, found.result.flow))
    return case + (f" (subtest {found.record.subtest})" if len(found.result.records) > 1 else "")


def page(merged: Merged, order: list[tally.FlowKey],
         flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """The borderline passes, all of them, closest to their bound first: [result, subtest
    (None when the test has one), worst ratio, margin, rule, repro] each, and the count per
    flow whose outputs were compared. None when no outputs were compared (the section is
    not shown)."""
    rows = quality.quality(merged.results, order)
    if not rows:
        return None
    index = result_index(merged)
    return {"ratio": tally.BORDERLINE_RATIO,
            "rows": [[index[id(b.result)],
                      b.record.subtest if len(b.result.records) > 1 else None,
                      plain(b.ratio), b.record.margin, b.record.verdict_rule, b.repro]
                     for b in borderline(merged.results)],
            "flows": [[flow_index[(row.backend, row.flow)], row.borderline] for row in rows]}
