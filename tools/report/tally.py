"""What the report shows, computed from merged results, without any formatting: counts
per backend and flow, the support matrix, failures with their repro commands, error
signatures, the slowest tests, delegation coverage, numerical quality with its borderline
passes, and the cases declared by non-strict expectations. Kept apart from `markdown.py`
so the numbers can be tested without parsing markdown.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from etsuite.backends.harness.contract.nodeids import repro_command, test_case_id
from etsuite.backends.harness.contract.record import (
    OutputStatistics,
    SubtestRecord,
    delegation_share,
)
from etsuite.backends.harness.contract.statuses import ORDER, Status
from etsuite.tools.report import classify
from etsuite.tools.report import core_aten as core_aten_ops
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


# ---------------------------------------------------------------- support matrix

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


def support_matrix(results: list[TestResult]) -> list[tuple[str, dict]]:
    """(test case, {flow key: Counter of statuses}) per test case, sorted by case. A
    correct test of a quantizing flow counts as (status, how it ran), e.g.
    (pass, "delegated, float"), so the matrix can tell int from float."""
    cells: dict[str, dict] = {}
    for result in results:
        how = computation(result)
        key = result.status if how is None else (result.status, how)
        cells.setdefault(case_of(result), {}).setdefault(flow_key(result), Counter())[key] += 1
    return sorted(cells.items())


# ---------------------------------------------------------------- quantized or not

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


def computations(results: list[TestResult], order: list[FlowKey]) -> list[tuple[FlowKey, Counter]]:
    """Per quantizing flow, the correct tests counted by how they ran."""
    rows: dict = {}
    for result in results:
        found = computation(result)
        if found is not None:
            rows.setdefault(flow_key(result), Counter())[found] += 1
    return [(key, rows[key]) for key in order if key in rows]


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


def _grouped(failures: list[Failure], key) -> list[Group]:
    groups: dict[tuple, Group] = {}
    for failure in failures:
        k = key(failure)
        groups.setdefault(k, Group(k)).failures.append(failure)
    return list(groups.values())


def by_stage(failures: list[Failure]) -> list[Group]:
    """Groups keyed (status, stage), in the statuses' order (contract.ORDER)."""
    rank = ORDER
    groups = _grouped(failures, lambda f: (f.status, f.stage or ""))
    return sorted(groups, key=lambda g: (rank[g.key[0]], g.key[1]))


def by_signature(failures: list[Failure]) -> list[Group]:
    """Groups keyed (signature,), most frequent first."""
    groups = _grouped(failures, lambda f: (f.signature,))
    return sorted(groups, key=lambda g: (-g.count, g.key))


def by_place(failures: list[Failure]) -> list[Group]:
    """Localized failures keyed (flow, place), most frequent first: which op breaks how
    many tests of a flow."""
    localized = [f for f in failures if f.place is not None]
    groups = _grouped(localized, _place_key)
    return sorted(groups, key=lambda g: (-g.count, g.key))


OPERATORS = "operators"   # the suite of one-op tests (backends/suite/operators/)


def suite_of(result: TestResult) -> str:
    """The test's suite as its records say (operators, models, examples, a backend's own
    `<backend>/test`: the harness derives it from the node id's folder); "?" when no
    record says (a test that failed before its first subtest)."""
    return next((r.suite for r in result.records if r.suite), "?")


def suites_of(group: Group) -> Counter:
    """Tests of a group per suite (operators, models, ...), from the records."""
    return Counter({f.result.nodeid: suite_of(f.result) for f in group.failures}.values())


@dataclass
class Places:
    """Where a run's failures break, for the summary and the page alike: the localized
    failures by (flow, place) (`by_place`), the failures whose localization could not
    place them (the record's `reason` says why), and per (flow, op) the operator tests
    that fail on that op, so a model failure localized to an op can say that the op
    fails alone too."""

    groups: list[Group]
    not_localized: list[Failure]
    operator_tests: dict[tuple[str, str], list[TestResult]]

    @property
    def shown(self) -> bool:
        """Localization was asked of some failure (--localize): there is something to say."""
        return bool(self.groups or self.not_localized)

    def also_as_operator_test(self, failure: Failure) -> list[TestResult]:
        """For a failure outside the operator suite localized to a node: the operator
        tests of that node's op failing on the same flow ([] otherwise)."""
        if failure.place is None or not (failure.localization or {}).get("node") \
                or suite_of(failure.result) == OPERATORS:
            return []
        return [result for result in self.operator_tests.get(_place_key(failure), [])
                if result is not failure.result]


def _place_key(failure: Failure, op: str | None = None) -> tuple[str, str]:
    """(flow, place) of a failure, or (flow, op) of one of its ops."""
    return (failure.result.flow or "(no flow)", str(failure.place if op is None else op))


def _operator_ops(failure: Failure) -> set[str]:
    """The ops an operator-suite failure is a failure of: the op it was localized to, or,
    when it was not localized to a node, every op of its lowered graph (an operator test's
    graph is its op, with little around it; a failure before lowering names none)."""
    if (failure.localization or {}).get("node") and failure.place is not None:
        return {failure.place}
    return set(failure.ops)


def places(failures: list[Failure]) -> Places:
    """Where the failures (in the summary's order) break: `Places`."""
    operator_tests: dict[tuple[str, str], dict[int, TestResult]] = {}
    for failure in failures:
        if suite_of(failure.result) == OPERATORS:
            for op in sorted(_operator_ops(failure)):
                operator_tests.setdefault(_place_key(failure, op), {}).setdefault(
                    id(failure.result), failure.result)
    return Places(by_place(failures),
                  [f for f in failures if f.localization and f.place is None],
                  {key: list(found.values()) for key, found in operator_tests.items()})


# ---------------------------------------------------------------- time and delegation

def slowest(results: list[TestResult], limit: int) -> list[TestResult]:
    ranked = sorted(results, key=lambda r: (-r.duration, r.nodeid))
    return [r for r in ranked[:limit] if r.duration > 0]


def slowest_stage(result: TestResult) -> tuple[str, float] | None:
    totals: defaultdict[str, float] = defaultdict(float)
    for record in result.records:
        for stage, seconds in record.timings.items():
            totals[stage] += seconds or 0.0
    return max(totals.items(), key=lambda item: item[1]) if totals else None


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


def coverage(results: list[TestResult], order: list[FlowKey]) -> list[Coverage]:
    """Delegated / total nodes per flow, over the subtests that were lowered."""
    rows = {key: Coverage(*key) for key in order}
    for result in results:
        _count_nodes(rows[flow_key(result)], result)
    return [row for row in rows.values() if row.lowered]


def total_coverage(results: list[TestResult]) -> Coverage:
    """Delegated / total nodes over every flow (the portable baseline included)."""
    row = Coverage(None, None)
    for result in results:
        _count_nodes(row, result)
    return row


@dataclass
class CoreAtenRow:
    """Per flow, which of the `total` core ATen overloads its lowered graphs held: per
    overload, the op-level test cases that held it (operators and generated suites),
    those of them where a delegate took it, and the cases of other suites (models,
    examples, ...)."""

    backend: str | None
    flow: str | None
    core: frozenset
    operator_cases: dict = field(default_factory=dict)   # overload -> {test case}
    delegated_cases: dict = field(default_factory=dict)  # overload -> {test case}
    other_cases: dict = field(default_factory=dict)      # overload -> {test case}

    @property
    def total(self) -> int:
        return len(self.core)

    @property
    def covered(self) -> list[str]:
        return sorted(self.operator_cases)

    @property
    def only_in_models(self) -> list[str]:
        return sorted(set(self.other_cases) - set(self.operator_cases))

    @property
    def uncovered(self) -> list[str]:
        return sorted(self.core - set(self.operator_cases) - set(self.other_cases))

    @property
    def delegated(self) -> list[str]:
        """Covered overloads a delegate took in at least one operator test case."""
        return sorted(self.delegated_cases)


def core_aten(merged: Merged, order: list[FlowKey]) -> list[CoreAtenRow]:
    """Core ATen coverage per flow, over the subtests that got as far as lowering; empty
    when no run's facts name the core overloads (reports older than the key)."""
    core = core_aten_ops.denominator(merged.runs)
    if core is None:
        return []
    rows = {key: CoreAtenRow(key[0], key[1], core) for key in order}
    lowered: set = set()
    for result in merged.results:
        row = rows[flow_key(result)]
        for record in result.records:
            if record.delegated_nodes is None:
                continue
            lowered.add(flow_key(result))
            held, delegated = core_aten_ops.ops_of_record(record, core)
            operators = record.suite in core_aten_ops.OPERATOR_SUITES
            for op in held:
                table = row.operator_cases if operators else row.other_cases
                table.setdefault(op, set()).add(record.test_case)
            for op in delegated if operators else ():
                row.delegated_cases.setdefault(op, set()).add(record.test_case)
    return [row for key, row in rows.items() if key in lowered]


# ---------------------------------------------------------------- numerical quality

RATIO_BUCKETS = (0.01, 0.1, 0.5, 1.0)  # upper edges of max error / bound; beyond: over


BORDERLINE_RATIO = 0.7
"""A pass whose worst output's max error reached this share of its rule's bound is listed as
borderline. A case's inputs come from the session seed, so a pass this close to the bound is
the one likely to flip to fail_mismatch at another seed (or after a small numerical change)
and to make a pinned-seed gate disagree with the next seed: it is shown before it flips."""


@dataclass
class Quality:
    """Per flow, over the subtests whose outputs were compared: the worst output's SQNR
    (None: no error at all) and its max error in units of its bound."""

    backend: str | None
    flow: str | None
    sqnr: list = field(default_factory=list)     # dB, finite values only
    exact: int = 0                               # subtests without any error
    ratios: list = field(default_factory=list)
    borderline: int = 0                          # passing subtests at BORDERLINE_RATIO or more

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


def _has_ratio(output: OutputStatistics) -> bool:
    ratio = output.error_ratio
    return isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and not math.isnan(ratio)


def _judged(record: SubtestRecord) -> list[OutputStatistics]:
    """The outputs that carry an error ratio: those a rule judged and measured (an exact
    rule that failed has None, an output no rule judged has none)."""
    return [o for o in record.outputs if _has_ratio(o)]


def worst_ratio(record: SubtestRecord) -> float | None:
    """The largest max error, in units of its rule's bound, over the record's outputs (1 is
    the bound); None when no output has a ratio."""
    return max((o.error_ratio for o in _judged(record) if o.error_ratio is not None), default=None)


def is_borderline(record: SubtestRecord) -> bool:
    """A passing subtest that used BORDERLINE_RATIO or more of its bound."""
    ratio = worst_ratio(record)
    return record.status in classify.PASSING and ratio is not None and ratio >= BORDERLINE_RATIO


def quality(results: list[TestResult], order: list[FlowKey]) -> list[Quality]:
    rows = {key: Quality(*key) for key in order}
    for result in results:
        row = rows[flow_key(result)]
        for record in result.records:
            judged = _judged(record)
            if not judged:
                continue
            row.ratios.append(worst_ratio(record))
            row.borderline += is_borderline(record)
            sqnrs = [o.sqnr_db for o in judged if o.sqnr_db is not None]
            if sqnrs:
                row.sqnr.append(min(sqnrs))
            else:
                row.exact += 1
    return [row for row in rows.values() if row.ratios]


@dataclass
class Borderline:
    """One passing subtest close to its bound, with what a reader needs to rerun it."""

    result: TestResult
    record: SubtestRecord
    ratio: float

    @property
    def repro(self) -> str:
        return self.record.repro or repro(self.result)


def borderline(results: list[TestResult]) -> list[Borderline]:
    """Every borderline pass, closest to its bound first (then by node id and subtest)."""
    found = []
    for result in results:
        for record in result.records:
            ratio = worst_ratio(record)
            if ratio is not None and is_borderline(record):
                found.append(Borderline(result, record, ratio))
    return sorted(found, key=lambda b: (-b.ratio, b.result.nodeid, b.record.subtest))


# ---------------------------------------------------------------- non-strict declarations

@dataclass
class Declared:
    """A test of a case that a non-strict [[fail]] entry declares (input-dependent: at one
    seed it fails with the declared status and is an xfail, at another it passes, and
    neither fails the run), so its pass is not mistaken for a fix nor its xfail for a
    failure that reproduces."""

    result: TestResult
    entry: str | None          # the entry, "path:line" (`declared_by`)
    observed: str | None       # under an xfail: the status the pipeline gave


def is_non_strict(result: TestResult) -> bool:
    return any(record.declared_strict is False for record in result.records)


def non_strict(results: list[TestResult], order: list[FlowKey]) -> list[Declared]:
    """The tests of non-strict declared cases, in flow order, then node id."""
    rank = {key: index for index, key in enumerate(order)}
    found = [r for r in results if is_non_strict(r)]
    found.sort(key=lambda r: (rank.get(flow_key(r), len(rank)), r.nodeid))
    return [Declared(result,
                     next((x.declared_by for x in result.records if x.declared_by), None),
                     next((x.observed_status for x in result.records
                           if x.status is Status.XFAIL and x.observed_status), None))
            for result in found]


def declared_unchecked(results: list[TestResult]) -> Counter:
    """{backend: tests of a declared [[fail]] case that this host could not check}: every
    subtest ended without a verdict (lowered but not run, unavailable), so the entry
    (a fail_load, fail_run or fail_mismatch of a flow that does not execute here) was
    neither confirmed nor found stale."""
    return Counter(r.backend or "?" for r in results
                   if any(x.declared_by for x in r.records)
                   and r.status in (Status.LOWERED_NOT_RUN, Status.UNAVAILABLE))


def declared_checked(results: list[TestResult]) -> int:
    """Tests of a declared [[fail]] case whose entry this run confirmed or found stale."""
    return sum(1 for r in results if any(x.declared_by for x in r.records)
               and r.status not in (Status.LOWERED_NOT_RUN, Status.UNAVAILABLE))


# ---------------------------------------------------------------- stateful programs

@dataclass
class Stateful:
    """Per flow, its stateful subtests (`lower_and_run_steps`): how many, how many
    matched at every step, the ones that diverged (with the step), and the runtime's
    time: the first step (a prefill) and the median of the later ones (per token for
    decode steps), each a median over the subtests that ran."""

    backend: str | None
    flow: str | None
    subtests: int = 0
    matched: int = 0
    diverged: list = field(default_factory=list)   # (result, record) that failed a step
    first_ms: list = field(default_factory=list)
    later_ms: list = field(default_factory=list)
    in_delegate: int = 0                           # whose state updates run in a delegate
    lowest_sqnr_db: float | None = None            # the lowest SQNR of any step and output

    @staticmethod
    def median(values: list) -> float | None:
        return statistics.median(values) if values else None


def stateful(results: list[TestResult], order: list[FlowKey]) -> list[Stateful]:
    rows = {key: Stateful(*key) for key in order}
    for result in results:
        for record in result.records:
            if not record.steps:
                continue
            row = rows[flow_key(result)]
            row.subtests += 1
            row.in_delegate += record.state == "delegate"
            if record.failed_step is not None:
                row.diverged.append((result, record))
            elif record.step_errors is not None and record.status.passing:
                row.matched += 1
            sqnr = [value for step in record.step_sqnr_db or [] for value in step
                    if value is not None]
            if sqnr:
                known = [] if row.lowest_sqnr_db is None else [row.lowest_sqnr_db]
                row.lowest_sqnr_db = min(sqnr + known)
            # (a runner that timed no call gives None for it)
            first, *later = record.step_ms or [None]
            if first is not None:
                row.first_ms.append(first)
            later = [ms for ms in later if ms is not None]
            if later:
                row.later_ms.append(statistics.median(later))
    return [row for row in rows.values() if row.subtests]


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


def costs(results: list[TestResult], order: list[FlowKey]) -> list[Cost]:
    """The `Cost` rows, flows in `order`, then by runtime."""
    rows: dict[tuple, Cost] = {}
    for result in results:
        for record in result.records:
            found = record.cost
            if not found:
                continue
            key = (*flow_key(result), record.runtime)
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
