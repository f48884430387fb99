"""Delegation coverage: per flow, the delegated share of the lowered graphs' nodes, per
subtest the share of its computing nodes a delegate took (its median, and the subtests
where the delegate is not the primary compute), and the most frequent undelegated ops.
The results table shows the same share per flow."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from etsuite.backends.harness.contract.record import delegation_share
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, percent, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


@dataclass
class Coverage:
    backend: str | None
    flow: str | None
    lowered: int = 0              # subtests that got as far as lowering
    delegated: int = 0
    undelegated: int = 0
    undelegated_ops: Counter = field(default_factory=Counter)
    # Per lowered subtest that computes: (result, share of its computing nodes delegated,
    # share of its distinct computing ops delegated); record.delegation_share's rule.
    case_shares: list = field(default_factory=list)

    @property
    def nodes(self) -> int:
        return self.delegated + self.undelegated

    def median_share(self) -> float | None:
        """The median per subtest of the computing nodes' delegated share."""
        return statistics.median(s for _, s, _ in self.case_shares) if self.case_shares else None

    def minority(self) -> list:
        """The subtests whose delegate is not the primary compute: under half of their
        computing nodes delegated (most of the graph ran on portable kernels)."""
        return [(result, share) for result, share, _ in self.case_shares if share < 0.5]

    @property
    def share(self) -> float | None:
        return self.delegated / self.nodes if self.nodes else None


def _count_nodes(row: Coverage, result: TestResult) -> None:
    for record in result.records:
        if record.delegated_nodes is None:
            continue
        row.lowered += 1
        row.delegated += record.delegated_nodes or 0
        row.undelegated += record.undelegated_nodes or 0
        row.undelegated_ops.update(record.undelegated_ops)
        shares = delegation_share(record.delegated_ops or {}, record.undelegated_ops or {})
        if shares is not None:
            row.case_shares.append((result, *shares))


def coverage(results: list[TestResult], order: list[tally.FlowKey]) -> list[Coverage]:
    """Delegated / total nodes per flow, over the subtests that were lowered."""
    rows = {key: Coverage(*key) for key in order}
    for result in results:
        _count_nodes(rows[tally.flow_key(result)], result)
    return [row for row in rows.values() if row.lowered]


def total_coverage(results: list[TestResult]) -> Coverage:
    """Delegated / total nodes over every flow (the portable baseline included)."""
    row = Coverage(None, None)
    for result in results:
        _count_nodes(row, result)
    return row


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    def minority(row: Coverage) -> str:
        cases = row.minority()
        if not row.delegated or not cases:
            return "–" if not row.delegated else "0"
        shown = ", ".join(f"{code(tally.test_name(result))} {percent(share)}"
                          for result, share in cases[:3])
        return f"{len(cases)}: {shown}" + (", …" if len(cases) > 3 else "")

    def render(rows: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "lowered subtests", "delegated nodes", "total nodes",
                      "delegated", "per subtest (median)", "delegate not the primary compute",
                      "most frequent undelegated ops"], [
            [row.backend, flow_label(row.flow), row.lowered, row.delegated, row.nodes,
             percent(row.share), percent(row.median_share()) if row.delegated else "–",
             minority(row),
             ", ".join(f"{op} ×{n}" for op, n in row.undelegated_ops.most_common(3)) or "–"]
            for row in rows])

    rows = coverage(merged.results, order)
    intro = ("Nodes of the lowered graphs, summed over the subtests that got as far as "
             "lowering. Per subtest, the share of its computing nodes a delegate took "
             "(quantize and dequantize nodes, which compute nothing of the model's, left "
             "out): its median, and the subtests where it is under half (most of the graph "
             "ran on portable kernels)." if rows else "")
    return [Section(heading="## Delegation coverage\n", intro=intro, items=rows,
                   render_items=render,
                   empty="No subtest was lowered.\n", unit="flows")]
