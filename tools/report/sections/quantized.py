"""Quantized or not: the correct tests of the quantizing flows by how they ran (delegated
quantized, partly, in floating point, or not delegated). The support matrix marks its
cells with the same words."""

from __future__ import annotations

from collections import Counter

from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section

NOT_DELEGATED = "not delegated"
COMPUTATIONS = ("delegated, quantized", "delegated, partly quantized", "delegated, float",
                NOT_DELEGATED)
SHORT = {"delegated, quantized": "int", "delegated, partly quantized": "int+float",
         "delegated, float": "float"}


def computation(result: TestResult) -> str | None:
    """How a correct test of a quantizing flow ran (one of COMPUTATIONS), from its
    records' `delegated_precision`; None when the test is not correct or no record says
    (a flow that does not quantize, or a report older than the field)."""
    if result.status is Status.PASS_UNDELEGATED:
        return NOT_DELEGATED if _quantizing(result) else None
    if result.status is not Status.PASS:
        return None
    seen = {r.delegated_precision for r in result.records if r.delegated_precision}
    if not seen:
        return None
    return {frozenset({"quantized"}): "delegated, quantized",
            frozenset({"float"}): "delegated, float"}.get(frozenset(seen),
                                                          "delegated, partly quantized")


def _quantizing(result: TestResult) -> bool:
    return bool(result.run.flow(result.flow).quantizes) or any(
        r.delegated_precision for r in result.records)


def computations(results: list[TestResult], order: list[tally.FlowKey]
                 ) -> list[tuple[tally.FlowKey, Counter]]:
    """Per quantizing flow, the correct tests counted by how they ran."""
    rows: dict = {}
    for result in results:
        found = computation(result)
        if found is not None:
            rows.setdefault(tally.flow_key(result), Counter())[found] += 1
    return [(key, rows[key]) for key in order if key in rows]


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = computations(merged.results, order)
    if not rows:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", *COMPUTATIONS], [
            [key[0], flow_label(key[1]), *(counts[c] for c in COMPUTATIONS)]
            for key, counts in items])

    intro = ("Correct tests of the quantizing flows by how they ran: delegated with "
             "quantize/dequantize around every delegated op, around some, around none (the "
             "quantizer left the op in floating point), or not delegated.\n\n")
    return [Section(heading="## Quantized or not\n", intro=intro, items=rows,
                    render_items=render, unit="flows", cuttable=False)]
