"""The support matrix: a row per test case, a column per flow, one mark per status (a
correct test of a quantizing flow also says how it ran). The page draws the same matrix
from its grid (`page.py`)."""

from __future__ import annotations

from collections import Counter

from etsuite.backends.harness.contract.statuses import ORDER, Status
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections import quantized
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section

# Support-matrix cells: one short mark per status.
CELL = {
    Status.PASS: "✅",
    Status.PASS_UNDELEGATED: "🟡",
    Status.FAIL_QUANTIZE: "❌ quantize",
    Status.FAIL_LOWER: "❌ lower",
    Status.FAIL_SERIALIZE: "❌ serialize",
    Status.FAIL_LOAD: "❌ load",
    Status.FAIL_RUN: "❌ run",
    Status.FAIL_MISMATCH: "❌ mismatch",
    Status.FAIL_RECIPE_ACCURACY: "📉 recipe accuracy",
    Status.FAIL_BUDGET: "💸 budget",
    Status.FAIL_CRASH: "💥 crash",
    Status.FAIL_TIMEOUT: "⏰ timeout",
    Status.FAIL_INFRA: "🔌 infra",
    Status.FAIL_TEST: "❌ test",
    Status.ERROR: "❗ error",
    Status.XPASS: "❗ xpass",
    Status.XFAIL: "➖ xfail",
    Status.SKIP_INVALID: "⏩ invalid",
    Status.SKIP_UNSUPPORTED: "⏩",
    Status.SKIP: "⏩",
    Status.LOWERED_NOT_RUN: "📦",
    Status.UNAVAILABLE: "🚫",
}


LEGEND = ("✅ pass (in a quantizing flow: ✅ int, the delegated ops ran quantized; ✅ float, "
          "the quantizer left them in floating point; ✅ int+float, some of each) · "
          "🟡 pass, but the backend took no node · ❌ failed at the named stage · "
          "📉 the backend computes its quantized program faithfully, but the recipe's "
          "quantization is too far from fp32 eager · "
          "💥 crash · ⏰ timeout · 🔌 the runner's device or connection failed, not the "
          "program · ❗ error in setup/teardown or unexpected pass · "
          "➖ expected failure · ⏩ skipped (invalid: the test itself is broken) · "
          "📦 lowered, no runtime on this host · 🚫 backend unavailable · "
          "blank: not in these reports")


def support_matrix(results: list[TestResult]) -> list[tuple[str, dict]]:
    """(test case, {flow key: Counter of statuses}) per test case, sorted by case. A
    correct test of a quantizing flow counts as (status, how it ran), e.g.
    (pass, "delegated, float"), so the matrix can tell int from float."""
    cells: dict[str, dict] = {}
    for result in results:
        how = quantized.computation(result)
        key = result.status if how is None else (result.status, how)
        cells.setdefault(tally.case_of(result), {}).setdefault(tally.flow_key(result), Counter())[key] += 1
    return sorted(cells.items())


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = support_matrix(merged.results)
    present = {key for _, cells in rows for key in cells}
    columns = [key for key in order if key in present]

    def render(items: list) -> tuple[str, list[str]]:
        headers = ["test case", *(flow_label(flow) for _, flow in columns)]
        return table(headers, [[code(tally.display_case(case)),
                                *(matrix_cell(cells.get(key)) for key in columns)]
                               for case, cells in items])

    return [Section(heading="## Support matrix\n",
                   intro=f"Each test case per flow. {LEGEND}.\n\n", items=rows,
                   render_items=render, empty="No tests.\n", unit="test cases")]


def matrix_cell(statuses: Counter | None) -> str:
    """Marks in status order; a correct test of a quantizing flow also says how it ran
    (int, int+float, float; 🟡 is not delegated)."""
    if not statuses:
        return ""
    marks = []
    for key in sorted(statuses, key=_mark_order):
        count = statuses[key]
        if count:
            status, how = (key[0], quantized.SHORT.get(key[1])) if isinstance(key, tuple) else (key, None)
            marks.append(CELL[status] + (f" {how}" if how else "")
                         + (f" ×{count}" if count > 1 else ""))
    return ", ".join(marks)


def _mark_order(key: Status | tuple[Status, str]) -> tuple:
    """A status before its (status, how it ran) keys, those by how; statuses in the
    contract's order. Sorting only the keys a cell has: a matrix at 40,000 tests has
    750,000 cells, and walking every status for each was most of the summary's time."""
    if isinstance(key, tuple):
        return (ORDER[key[0]], 1, key[1])
    return (ORDER[key], 0, "")
