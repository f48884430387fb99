"""Metric drift since a baseline: per subtest (node id + subtest index), how what a program
costs and how close it comes to eager moved, beside its status.

A status says whether a case works; it does not say that XNNPACK stopped taking the
graph, that the `.pte` doubled or that a call got slower. Each metric below is read from
both records of a subtest and the change bucketed by how many times worse or better it
got. A change is called only when it also clears the metric's floor, the smallest
absolute change that is more than this machine's run-to-run noise
(docs/explanation/metric-drift.md has the figures the floors were set from).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from etsuite.backends.harness.contract.costs import (
    SINGLE_CALL_NOISE_S,
    delegated_share,
    planned_bytes,
    time_per_call,
)
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import PASSING, Status
from etsuite.tools.report import classify, tally
from etsuite.tools.report.loading import Merged, TestResult

# Buckets, worst first: the order the markdown lists them in.
STARTED_FAILING = "started failing"
WORSE_2X = "≥2x worse"
WORSE = "≥1.25x worse"
BETTER = "≥1.25x better"
BETTER_2X = "≥2x better"
STARTED_PASSING = "started passing"
BUCKETS = (STARTED_FAILING, WORSE_2X, WORSE, BETTER, BETTER_2X, STARTED_PASSING)
WORSE_BUCKETS = frozenset({STARTED_FAILING, WORSE_2X, WORSE})
WORSE_FACTOR, MUCH_WORSE_FACTOR = 1.25, 2.0

# The pseudo-metric of a subtest whose status crossed between passing and failing.
STATUS = "status"

# Floors (the smallest absolute change called drift), set from three runs of one selection
# at one seed on a shared 2-core host (docs/measurements.md, 2026-12-06): lowering times
# moved by up to 1.01 s (3.4x) between identical runs, so 2 s; an in-process call, timed
# once to 0.1 ms, by up to 0.3 ms (3x), and once in 194 by 5.1 ms on a loaded host, so
# 10 ms; a runner's median over repeated calls
# must also move by more than either run's own spread of it (p90 - median).
LOWERING_FLOOR_S = 2.0
SINGLE_CALL_FLOOR_S = SINGLE_CALL_NOISE_S
REPEATED_CALLS_FLOOR_S = 0.0001
SIZE_FLOOR_BYTES = 1024
MEMORY_FLOOR_BYTES = 1024
ERROR_RATIO_FLOOR = 0.05     # of the rule's bound
SQNR_CAP_DB = 60.0           # above it the error is too small to matter to any rule
LOWERING_STAGES = ("quantize", "lower", "serialize")  # what the flow's recipe runs


@dataclass(frozen=True)
class Reading:
    """One metric of one record: its value, the floor that applies to it, and how it was
    measured (values measured differently are not compared)."""

    value: float
    floor: float
    basis: str = ""


@dataclass(frozen=True)
class Metric:
    name: str                    # as `--fail-on` and the table name it
    label: str
    higher_is_better: bool
    read: Callable[[SubtestRecord], Reading | None]
    show: Callable[[float], str]
    in_db: bool = False          # a change in dB, turned into an amplitude factor


def _delegation(record: SubtestRecord) -> Reading | None:
    share = delegated_share(record)
    return Reading(share, 0.0) if share is not None else None


def _size(record: SubtestRecord) -> Reading | None:
    return Reading(record.pte_size, SIZE_FLOOR_BYTES) if record.pte_size else None


def _memory(record: SubtestRecord) -> Reading | None:
    total = planned_bytes(record)
    return Reading(total, MEMORY_FLOOR_BYTES) if total is not None else None


def _error(record: SubtestRecord) -> Reading | None:
    worst = tally.worst_ratio(record)
    return Reading(worst, ERROR_RATIO_FLOOR) if worst is not None else None


def _sqnr(record: SubtestRecord) -> Reading | None:
    """The lowest SQNR over the outputs, capped: fp32 outputs at 130 or 150 dB are both
    "no error worth a rule"."""
    found = [o.sqnr_db for o in record.outputs if isinstance(o.sqnr_db, (int, float))]
    return Reading(min(min(found), SQNR_CAP_DB), 0.0) if found else None


def _lowering(record: SubtestRecord) -> Reading | None:
    spent = [record.timings[s] for s in LOWERING_STAGES if s in record.timings]
    return Reading(sum(spent), LOWERING_FLOOR_S) if "lower" in record.timings else None


def _runtime(record: SubtestRecord) -> Reading | None:
    """Seconds per call, with the floor its way of measuring needs: a runner's median
    over repeated calls must also move by more than its own spread."""
    call = time_per_call(record)
    if call is None:
        return None
    floor = max(REPEATED_CALLS_FLOOR_S, call.spread) if call.repeated else SINGLE_CALL_FLOOR_S
    return Reading(call.seconds, floor, call.basis)


def _percent(value: float) -> str:
    return f"{100 * value:.0f} %"


def _bytes(value: float) -> str:
    return f"{value / 1024:.1f} KiB"


def _ms(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value >= 0.01 else f"{value * 1e3:.2f} ms"


METRICS = (
    Metric("delegation", "delegated share of computing nodes", True, _delegation, _percent),
    Metric("size", ".pte size", False, _size, _bytes),
    Metric("memory", "planned memory", False, _memory, _bytes),
    Metric("error", "worst error / bound", False, _error, lambda v: f"{v:.3g}"),
    Metric("sqnr", "lowest SQNR", True, _sqnr, lambda v: f"{v:.1f} dB", in_db=True),
    Metric("lowering", "lowering time", False, _lowering, lambda v: f"{v:.2f} s"),
    Metric("runtime", "time per call", False, _runtime, _ms),
)
METRIC_NAMES = tuple(m.name for m in METRICS)


@dataclass(frozen=True)
class Drift:
    """One metric of one subtest that moved beyond its threshold (or its status crossing
    between passing and failing, metric STATUS)."""

    result: TestResult            # the current side
    subtest: int
    metric: str
    bucket: str
    was: str
    now: str
    factor: float | None = None   # how many times worse (> 1) or better (< 1)

    @property
    def worse(self) -> bool:
        return self.bucket in WORSE_BUCKETS


def factor_of(metric: Metric, was: float, now: float) -> float:
    """How many times worse `now` is than `was` (below 1: better)."""
    if metric.in_db:
        return 10 ** ((was - now) / 20) if metric.higher_is_better else 10 ** ((now - was) / 20)
    worse, better = (was, now) if metric.higher_is_better else (now, was)
    if better == 0:
        return 1.0 if worse == 0 else math.inf
    return worse / better


def bucket_of(factor: float) -> str | None:
    if factor >= MUCH_WORSE_FACTOR:
        return WORSE_2X
    if factor >= WORSE_FACTOR:
        return WORSE
    if factor <= 1 / MUCH_WORSE_FACTOR:
        return BETTER_2X
    if factor <= 1 / WORSE_FACTOR:
        return BETTER
    return None


def metric_drift(metric: Metric, was: SubtestRecord, now: SubtestRecord) -> tuple[str, float] | None:
    """(bucket, factor) when the metric moved beyond its ratio and its floor; None when it
    did not, or is missing or measured differently on one side."""
    return _moved(metric, metric.read(was), metric.read(now))


def _moved(metric: Metric, before: Reading | None, after: Reading | None) -> tuple[str, float] | None:
    if before is None or after is None or before.basis != after.basis:
        return None
    if abs(after.value - before.value) < max(before.floor, after.floor):
        return None
    factor = factor_of(metric, before.value, after.value)
    bucket = bucket_of(factor)
    return (bucket, factor) if bucket is not None else None


def _status_drift(result: TestResult, was: SubtestRecord, now: SubtestRecord) -> Drift | None:
    if was.status in PASSING and now.status in classify.VERDICT_FAILING:
        bucket = STARTED_FAILING
    elif was.status in classify.VERDICT_FAILING and now.status in PASSING:
        bucket = STARTED_PASSING
    else:
        return None
    return Drift(result, now.subtest, STATUS, bucket, str(was.status), str(now.status))


def subtest_drift(result: TestResult, was: SubtestRecord, now: SubtestRecord) -> list[Drift]:
    """Every metric of one subtest that moved, with its status when that crossed."""
    status = _status_drift(result, was, now)
    if status is not None:
        return [status]  # a failing side measured nothing comparable
    found = []
    for metric in METRICS:
        before, after = metric.read(was), metric.read(now)
        moved = _moved(metric, before, after)
        if moved is not None and before is not None and after is not None:
            found.append(Drift(result, now.subtest, metric.name, moved[0],
                               metric.show(before.value), metric.show(after.value), moved[1]))
    return found


def _rank(drift: Drift) -> tuple:
    """Worst first: by bucket, then by how far it moved, then by name (deterministic)."""
    factor = drift.factor if drift.factor is not None else math.inf
    moved = -factor if drift.worse else factor
    return (BUCKETS.index(drift.bucket), moved, drift.result.nodeid, drift.subtest, drift.metric)


def compare_metrics(current: Merged, baseline: Merged) -> list[Drift]:
    """The drift of every subtest present in both runs, worst first."""
    before = {(r.nodeid, rec.subtest): rec for r in baseline.results for rec in r.records}
    found = []
    for result in current.results:
        for record in result.records:
            was = before.get((result.nodeid, record.subtest))
            if was is not None:
                found.extend(subtest_drift(result, was, record))
    return sorted(found, key=_rank)


def lost_delegation(drift: list[Drift]) -> list[Drift]:
    """Subtests whose delegated share fell beyond its threshold: a regression of
    delegation even when every status still says pass."""
    return [d for d in drift if d.metric == "delegation" and d.worse]


def lost_delegation_status(was: Status, now: Status) -> bool:
    """A test that passed delegated and now passes only on portable kernels."""
    return was is Status.PASS and now is Status.PASS_UNDELEGATED

