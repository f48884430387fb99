"""What each case costs in each flow, the page's charts: the delegated share per case and
the time per call beside the portable flow's, read from the records the one way drift
and budgets read them (`contract/costs.py`).

A status says whether a case works; these say where it runs and what it costs, case by
case, so a reader sees which cases a backend leaves to portable kernels and which run
slower than portable. (The summary's budget breaches are `budget_breaches.py`.)"""

from __future__ import annotations

import math
from dataclasses import dataclass

from etsuite.backends.harness.contract.costs import delegated_share, time_per_call
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.tools.report import tally
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import plain, result_index

PORTABLE = "portable"   # the flow every other flow's time per call is compared with


def case_share(result: TestResult) -> float | None:
    """The lowest delegated share over the test's subtests (the part of the case that
    runs most on portable kernels); None when no subtest was lowered."""
    found = [share for share in map(delegated_share, result.records) if share is not None]
    return min(found) if found else None


def shares(merged: Merged, order: list[tally.FlowKey]) -> dict[tally.FlowKey, list[tuple[TestResult, float]]]:
    """Per flow that delegates, its lowered cases with their share, lowest first (then by
    node id): the cases a backend leaves to portable kernels lead."""
    portable_only = tally.non_delegating(merged)
    found: dict[tally.FlowKey, list[tuple[TestResult, float]]] = {
        key: [] for key in order if key[1] is not None and key[1] not in portable_only}
    for result in merged.results:
        share = case_share(result)
        if share is not None and tally.flow_key(result) in found:
            found[tally.flow_key(result)].append((result, share))
    return {key: sorted(rows, key=lambda row: (row[1], row[0].nodeid))
            for key, rows in found.items() if rows}


@dataclass(frozen=True)
class Relative:
    """One test's time per call beside the portable flow's for the same case, summed over
    the subtests measured the same way on both."""

    result: TestResult
    seconds: float
    portable_seconds: float
    basis: str            # how both were measured ("one call", "calls of <runtime>")

    @property
    def ratio(self) -> float:
        """Times slower than portable (below 1: faster)."""
        return self.seconds / self.portable_seconds if self.portable_seconds else math.inf


@dataclass
class FlowRuntime:
    """One flow's cases with a portable counterpart (slowest relative to portable first)
    and its timed cases without one: not in the portable run, or measured differently."""

    key: tally.FlowKey
    relative: list[Relative]
    unmatched: list[TestResult]


def _timed(result: TestResult) -> dict[int, tuple[float, str]]:
    """{subtest: (seconds per call, basis)} of the subtests whose call was timed."""
    found = {}
    for record in result.records:
        call = time_per_call(record)
        if call is not None:
            found[record.subtest] = (call.seconds, call.basis)
    return found


def has_portable_run(merged: Merged) -> bool:
    """Whether any portable subtest's call was timed: the reference the runtime charts need."""
    return any(_timed(r) for r in merged.results if r.flow == PORTABLE)


def runtimes(merged: Merged, order: list[tally.FlowKey]) -> list[FlowRuntime]:
    """Per flow other than portable with a timed case: each case's time per call relative
    to the portable run of the same case (same node id but the flow, same subtest index,
    measured the same way). Empty when no portable run was timed."""
    if not has_portable_run(merged):
        return []
    portable = {case_id(r.nodeid, r.flow): _timed(r) for r in merged.results
                if r.flow == PORTABLE}
    rows: dict[tally.FlowKey, FlowRuntime] = {}
    for result in merged.results:
        timed = _timed(result)
        if result.flow in (None, PORTABLE) or not timed:
            continue
        key = tally.flow_key(result)
        row = rows.setdefault(key, FlowRuntime(key, [], []))
        reference = portable.get(case_id(result.nodeid, result.flow), {})
        matched = [(seconds, reference[subtest][0], basis)
                   for subtest, (seconds, basis) in sorted(timed.items())
                   if subtest in reference and reference[subtest][1] == basis]
        if not matched:
            row.unmatched.append(result)
            continue
        row.relative.append(Relative(result, sum(m[0] for m in matched),
                                     sum(m[1] for m in matched), matched[0][2]))
    rank = {key: index for index, key in enumerate(order)}
    for row in rows.values():
        row.relative.sort(key=lambda r: (-r.ratio, r.result.nodeid))
        row.unmatched.sort(key=lambda r: r.nodeid)
    return sorted(rows.values(), key=lambda row: rank.get(row.key, len(rank)))


def page(merged: Merged, order: list[tally.FlowKey],
         flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """The cost charts per flow: "shares", [flow, [[result, delegated
    share], ...] lowest first]; "runtime", [flow, [[result, ratio to portable, seconds,
    portable seconds, basis], ...] slowest first, [results without a portable
    counterpart]]; "portable": whether a portable run was timed (without one the page
    says so instead of a runtime chart); "timed_flows": the flows other than portable
    with a timed call (each gets that message or its chart). None when no case was
    lowered or timed."""
    index = result_index(merged)
    share_rows = shares(merged, order)
    runtime_rows = runtimes(merged, order)
    portable = has_portable_run(merged)
    timed_flows = sorted({flow_index[tally.flow_key(r)] for r in merged.results
                          if r.flow not in (None, PORTABLE)
                          and any(time_per_call(x) for x in r.records)})
    if not share_rows and not timed_flows:
        return None
    return {"portable": portable,
            "timed_flows": timed_flows,
            "shares": [[flow_index[key], [[index[id(r)], round(s, 4)] for r, s in rows]]
                       for key, rows in share_rows.items()],
            "runtime": [[flow_index[row.key],
                         [[index[id(x.result)], plain(round(x.ratio, 4)), round(x.seconds, 7),
                           round(x.portable_seconds, 7), x.basis] for x in row.relative],
                         [index[id(r)] for r in row.unmatched]] for row in runtime_rows]}
