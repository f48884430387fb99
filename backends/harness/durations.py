"""How long each selected item is expected to take: what the backend's `durations.json`
recorded for its node id, else an estimate. `--shard K/N` balances its shards by these
seconds (shard_plan.py) and, under xdist, the longest items are handed out first.

An item not recorded yet costs the median of the recorded items of its flow (a quantized
flow costs several times an fp32 one), else the median of all recorded items, else one
second (which makes an even split by count).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from etsuite.backends.harness.contract.durations import durations_of
from etsuite.backends.harness.contract.nodeids import param_ids

DEFAULT_SECONDS = 1.0


class DurationsError(ValueError):
    """A malformed durations file; the plugin makes it a usage error."""


@dataclass(frozen=True)
class Item:
    nodeid: str
    flow: str | None


def load_durations(paths: list[Path]) -> dict[str, float]:
    """Recorded seconds per node id from these files (a missing file records nothing)."""
    durations: dict[str, float] = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            durations.update(durations_of(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, OSError) as error:  # JSONDecodeError is a ValueError
            raise DurationsError(f"{path}: {error}") from None
    return durations


def estimates(items: list[Item], durations: dict[str, float]) -> dict[str, float]:
    """Seconds per item: recorded, else the median of its flow's recorded items, else
    the median of all recorded items, else DEFAULT_SECONDS."""
    flows = {item.flow for item in items if item.flow}
    by_flow: dict[str, list[float]] = {}
    for nodeid, seconds in durations.items():
        for flow in set(param_ids(nodeid)) & flows:
            by_flow.setdefault(flow, []).append(seconds)
    overall = statistics.median(durations.values()) if durations else DEFAULT_SECONDS
    medians = {flow: statistics.median(values) for flow, values in by_flow.items()}
    return {item.nodeid: durations.get(
                item.nodeid, medians.get(item.flow, overall) if item.flow else overall)
            for item in items}


def longest_first(items: list[Item], durations: dict[str, float]) -> list[str]:
    """Node ids by estimated seconds, longest first; equal estimates keep their order."""
    cost = estimates(items, durations)
    return [item.nodeid for item in sorted(items, key=lambda item: -cost[item.nodeid])]
