"""The numbers every part of the report shares, computed from merged results without any
formatting: the flows in order and their rows of counts, test cases and their names, the
failing subtests with their repro commands, and how close a record's outputs came to their
bound (with the borderline rule). Each section's own numbers are in its module of
`sections/`, beside its markdown and its page data; kept apart from the formatting so the
numbers can be tested without parsing markdown.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from etsuite.backends.harness.contract.nodeids import repro_command, test_case_id
from etsuite.backends.harness.contract.record import OutputStatistics, SubtestRecord
from etsuite.backends.harness.contract.statuses import ORDER, Status
from etsuite.tools.report import classify
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.signature import signature

FlowKey = tuple  # (backend or None, flow or None)


def flow_key(result: TestResult) -> FlowKey:
    return (result.backend, result.flow)


def flow_order(merged: Merged) -> list[FlowKey]:
    """Flows in registry order (portable first; each run's facts list every known flow
    in that order), then flows only the results name, then tests without a flow. A flow
    a run selected is listed even with no test, so an unavailable backend never vanishes."""
    known: dict[str, FlowKey] = {}
    for run in merged.runs:
        for name, facts in run.flows().items():
            known.setdefault(name, (facts.backend, name))
    wanted = {flow_key(r) for r in merged.results}
    wanted |= {(facts.backend, name) for run in merged.runs
               for name, facts in run.flows().items() if facts.selected}
    keys = [key for key in known.values() if key in wanted]
    extra = wanted - set(keys)
    named = sorted((k for k in extra if k[1] is not None), key=lambda k: (str(k[0]), k[1]))
    unnamed = sorted((k for k in extra if k[1] is None), key=lambda k: str(k[0]))
    return _grouped_by_backend(keys + named) + unnamed


def _grouped_by_backend(keys: list[FlowKey]) -> list[FlowKey]:
    """Each backend's flows together, backends in the order they first appear: reports of
    different checkouts list the registry in different orders, and a backend split in two
    places reads as two."""
    first: dict = {}
    for key in keys:
        first.setdefault(key[0], len(first))
    return sorted(keys, key=lambda key: first[key[0]])  # stable: a backend's own order kept


# ---------------------------------------------------------------- per flow

@dataclass
class FlowRow:
    backend: str | None
    flow: str | None
    counts: Counter = field(default_factory=Counter)   # column -> tests
    total: int = 0
    duration: float = 0.0
    unavailable: list = field(default_factory=list)    # reasons, from the runs' facts
    delegates: bool = True                              # False: portable kernels only
    delegated_correct: int = 0                          # `pass` in a delegating flow
    enable_hint: str | None = None                      # how to enable it, when unavailable

    @property
    def passing(self) -> int:
        return sum(self.counts[s] for s in classify.PASSING)

    @property
    def failing(self) -> int:
        """Failures that are verdicts about the program (fail_infra is not one)."""
        return sum(self.counts[s] for s in classify.VERDICT_FAILING)

    @property
    def pass_rate(self) -> float | None:
        return classify.pass_rate(self.passing, self.failing)

    @property
    def verdicts(self) -> int:
        """The denominator of every rate: the tests that passed or failed."""
        return self.passing + self.failing

    def without_verdict(self) -> list[tuple[str, int]]:
        """The tests a rate leaves out, by why (NO_VERDICT), those that occur: a share
        of 1 out of 21 tests must say so next to its percentage."""
        found = [(label, sum(self.counts[s] for s in statuses)) for label, statuses in NO_VERDICT]
        return [(label, count) for label, count in found if count]

    @property
    def delegated_passing(self) -> int:
        """Correct and delegated: `pass` only (pass_undelegated ran on portable kernels),
        and none in a flow that delegates nothing."""
        return self.delegated_correct

    @property
    def delegated_pass_rate(self) -> float | None:
        decided = self.passing + self.failing
        return self.delegated_passing / decided if decided else None

    def add(self, result: TestResult) -> None:
        self.counts[classify.column_of(result.status)] += 1
        self.delegated_correct += result.status is Status.PASS and self.delegates
        self.total += 1
        self.duration += result.duration


# Why a test has no verdict, in the order a reader asks: it could not run here, it was
# skipped, it is a declared expected failure, or the runner failed (not the program).
# Keys are FlowRow.counts' columns.
NO_VERDICT = (("not run", (Status.LOWERED_NOT_RUN,)), ("unavailable", (Status.UNAVAILABLE,)),
              ("skipped", (classify.SKIP_COLUMN,)), ("xfail", (Status.XFAIL,)),
              ("infrastructure failures", (Status.FAIL_INFRA,)))


def non_delegating(merged: Merged) -> set[str]:
    """Flows that hand nothing to a backend (portable kernels only): their `pass` is not
    "correct and delegated". The runs' facts say so; for reports written before they did,
    a flow none of whose records delegated a node counts as one."""
    said = {name: facts.delegates for run in merged.runs
            for name, facts in run.flows().items() if facts.delegates is not None}
    delegated: dict[str, bool] = {}
    for result in merged.results:
        for record in result.records:
            if result.flow and record.delegated_nodes is not None:
                delegated[result.flow] = delegated.get(result.flow, False) or \
                    record.delegated_nodes > 0 or record.status is Status.PASS_UNDELEGATED
    return {name for name in set(said) | set(delegated)
            if not said.get(name, delegated.get(name, True))}


def flow_rows(merged: Merged, order: list[FlowKey]) -> list[FlowRow]:
    rows = {key: FlowRow(*key) for key in order}
    portable_only = non_delegating(merged)
    for key, row in rows.items():
        row.delegates = key[1] not in portable_only
    for result in merged.results:
        rows[flow_key(result)].add(result)
    for run in merged.runs:
        for name, facts in run.flows().items():
            key = (facts.backend, name)
            reason = facts.unavailable
            if facts.selected and reason and reason not in rows[key].unavailable:
                rows[key].unavailable.append(reason)
                rows[key].enable_hint = rows[key].enable_hint or facts.enable_hint
    return [rows[key] for key in order]


def total_row(rows: list[FlowRow]) -> FlowRow:
    total = FlowRow(None, None)
    for row in rows:
        total.counts.update(row.counts)
        total.delegated_correct += row.delegated_correct
        total.total += row.total
        total.duration += row.duration
    return total


# ---------------------------------------------------------------- test cases

def display_case(case: str) -> str:
    """Shorter row names: the shared suites' common prefix says nothing."""
    for prefix in ("backends/suite/", "backends/"):
        if case.startswith(prefix):
            return case[len(prefix):]
    return case


def test_name(result: TestResult) -> str:
    """The test as its file names it (the node id after the path, e.g. `test_sin[xnnpack]`):
    how a line points at a test whose folder it already said."""
    return result.nodeid.split("::", 1)[-1]


def case_of(result: TestResult) -> str:
    for record in result.records:
        if record.test_case:
            return record.test_case
    return test_case_id(result.nodeid)


# ---------------------------------------------------------------- failures

@dataclass
class Failure:
    """One failing subtest, or a failing test that no failing record explains."""

    result: TestResult
    status: Status
    stage: str | None
    subtest: int | None
    error: str | None
    localization: dict | None = None   # where it starts (the record's; None: not asked)
    ops: frozenset = frozenset()       # the ops of its lowered graph (delegated or not)

    @property
    def signature(self) -> str:
        return signature(self.error)

    @property
    def place(self) -> str | None:
        """The op (or delegate) the failure was localized to, without its source line
        (so that failures in different tests group); None: not localized."""
        found = self.localization
        if not found or not found.get("localized"):
            return None
        if found.get("node") or found.get("added"):  # added: an op the lowering added
            return str(found.get("target"))
        return f"inside delegate {found.get('delegate')}"


def failures_of(result: TestResult) -> list[Failure]:
    if result.status not in classify.FAILING:
        return []
    found = [Failure(result, r.status, r.stage, r.subtest, r.error or result.longrepr,
                     r.localization, frozenset(r.delegated_ops) | frozenset(r.undelegated_ops))
             for r in result.records if r.status in classify.FAILING]
    return found or [Failure(result, result.status, result.phase, None, result.longrepr)]


def failing_tests(merged: Merged, order: list[FlowKey]) -> list[tuple[TestResult, list[Failure]]]:
    """Failing tests in flow order, then node id."""
    rank = {key: index for index, key in enumerate(order)}
    failing = [r for r in merged.results if r.status in classify.FAILING]
    failing.sort(key=lambda r: (rank.get(flow_key(r), len(rank)), r.nodeid))
    return [(r, failures_of(r)) for r in failing]


def is_flaky(result: TestResult) -> bool:
    """A failing test whose failing records all passed when run again on the same
    inputs: flaky, not broken (it still counts as failing)."""
    failing = [r for r in result.records if r.status in classify.FAILING]
    return bool(failing) and all(r.flaky for r in failing)


def repro(result: TestResult) -> str:
    """The record's own command when there is one; else one built the same way from the
    node id and the run's seed."""
    for record in result.records:
        if record.repro and record.status in classify.FAILING:
            return record.repro
    for record in result.records:
        if record.repro:
            return record.repro
    return repro_command(result.run.flow(result.flow).tox_env, result.nodeid, result.seed)


@dataclass
class Group:
    key: tuple
    failures: list = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.failures)

    @property
    def tests(self) -> int:
        return len({f.result.nodeid for f in self.failures})

    def flows(self) -> list[str]:
        return sorted({f.result.flow or "(no flow)" for f in self.failures})

    def statuses(self) -> list[str]:
        seen = {f.status for f in self.failures}
        return sorted(seen, key=ORDER.__getitem__)


def grouped(failures: list[Failure], key: Callable[[Failure], tuple]) -> list[Group]:
    groups: dict[tuple, Group] = {}
    for failure in failures:
        k = key(failure)
        groups.setdefault(k, Group(k)).failures.append(failure)
    return list(groups.values())


# ---------------------------------------------------------------- judged outputs

BORDERLINE_RATIO = 0.7
"""A pass whose worst output's max error reached this share of its rule's bound is listed as
borderline. A case's inputs come from the session seed, so a pass this close to the bound is
the one likely to flip to fail_mismatch at another seed (or after a small numerical change)
and to make a pinned-seed gate disagree with the next seed: it is shown before it flips."""


def _has_ratio(output: OutputStatistics) -> bool:
    ratio = output.error_ratio
    return isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and not math.isnan(ratio)


def judged(record: SubtestRecord) -> list[OutputStatistics]:
    """The outputs that carry an error ratio: those a rule judged and measured (an exact
    rule that failed has None, an output no rule judged has none)."""
    return [o for o in record.outputs if _has_ratio(o)]


def worst_ratio(record: SubtestRecord) -> float | None:
    """The largest max error, in units of its rule's bound, over the record's outputs (1 is
    the bound); None when no output has a ratio."""
    return max((o.error_ratio for o in judged(record) if o.error_ratio is not None), default=None)


def is_borderline(record: SubtestRecord) -> bool:
    """A passing subtest that used BORDERLINE_RATIO or more of its bound."""
    ratio = worst_ratio(record)
    return record.status in classify.PASSING and ratio is not None and ratio >= BORDERLINE_RATIO
