"""What a record says its program costs, read the one way both the drift comparison
(tools/report/drift.py) and the budgets (flows/budgets.py) read it: the delegated share of
the computing nodes, the memory-planned bytes and the time per call."""

from __future__ import annotations

from dataclasses import dataclass

from etsuite.backends.harness.contract.record import SubtestRecord, delegation_share


def delegated_share(record: SubtestRecord) -> float | None:
    """Share of the computing nodes a delegate took (quantize/dequantize left out); None
    when the program was not lowered or computes nothing."""
    if record.delegated_nodes is None:
        return None
    shares = delegation_share(record.delegated_ops or {}, record.undelegated_ops or {})
    return shares[0] if shares is not None else None


def planned_bytes(record: SubtestRecord) -> int | None:
    """The memory-planned buffers of every method, summed; None when no native runner
    reported them."""
    planned = (record.cost or {}).get("planned_memory") or {}
    return sum(sum(sizes) for sizes in planned.values()) if planned else None


# The limits a budget may set (`budgets.toml`, flows/budgets.py), by the names the file and
# a record's `budget_breaches` give them: a share is a floor, the others are ceilings.
SHARE_LIMIT, PTE_LIMIT, PLANNED_LIMIT, TIME_LIMIT = (
    "min_delegation_share", "max_pte_bytes", "max_planned_bytes", "max_ms_per_call")


def shown_limit(limit: str, value: float) -> str:
    """A measured cost or a limit in its limit's unit, as a breach's error and the
    summary's breaches say it: a share to 3 places, a time in ms, sizes in bytes."""
    if limit == SHARE_LIMIT:
        return f"{value:.3f}"
    if limit == TIME_LIMIT:
        return f"{value:.3f} ms"
    return f"{int(value)} bytes"


# How far one in-process call, timed once, moves between identical runs on a shared
# 2-core host (up to 0.3 ms on 22 subtests; 5.1 ms once in 194 on a host loaded by other
# runs; docs/measurements.md, 2026-12-06), about twice the largest: a change or a margin
# smaller than this is noise.
SINGLE_CALL_NOISE_S = 0.010


@dataclass(frozen=True)
class CallTime:
    """Seconds per call, and how they were measured."""

    seconds: float
    repeated: bool        # a runner's median over several timed calls
    spread: float         # that median's own spread (p90 - median, summed over methods)
    basis: str            # "calls of <runtime>" or "one call"


def time_per_call(record: SubtestRecord) -> CallTime | None:
    """A runner's median over its timed calls (summed over the methods), else the one
    in-process call (`timings["run"]`); None when nothing ran."""
    calls = [c for c in (record.cost or {}).get("calls") or [] if c.get("median") is not None]
    if calls:
        return CallTime(sum(c["median"] for c in calls),
                        all((c.get("iterations") or 1) > 1 for c in calls),
                        sum(max((c.get("p90") or c["median"]) - c["median"], 0.0) for c in calls),
                        f"calls of {record.runtime}")
    if "run" in record.timings:
        return CallTime(record.timings["run"], False, 0.0, "one call")
    return None
