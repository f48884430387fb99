"""`--shard K/N`: which of the selected items each of N disjoint shards runs, so that the
shards take about equal time by the items' expected seconds (below).

Items of one test case (`contract.case_id`: the node id without the flow) form one group,
so every flow of a case runs on the same machine, where work done once per case can be
shared; the groups go longest first to the shard with the least time so far (greedy
longest-processing-time packing). When whole groups balance clearly worse than single
items would (a few huge cases), single items are packed instead: the plan says which.

The plan depends only on the node ids and the durations, never on collection order or
the machine, so every shard of a run, the pytest process and each xdist worker compute
the same plan and each keeps its own part.

Why not pytest-split: it packs single items only (it cannot keep a case's flows
together), estimates an unknown test by the mean of every recorded test (blind to the
flow's cost), reads one durations file written by its own `--store-durations` run (not
one per backend refreshed from reports), and its selection hook would run in an order
relative to this plugin's deselection that nothing fixes.

Expected seconds: what the backend's `durations.json` recorded for an item's node id, else
the median of the recorded items of its flow (a quantized flow costs several times an fp32
one), else the median of all recorded items, else one second (an even split by count).
Under xdist the longest items are also handed out first.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from etsuite.backends.harness.contract.durations import durations_of
from etsuite.backends.harness.contract.nodeids import case_id, param_ids

# Whole test cases are kept together unless that makes the longest shard this much
# longer than packing single items would.
GROUPING_TOLERANCE = 0.05


class ShardError(ValueError):
    """A malformed --shard value; the plugin makes it a usage error."""


def parse_shard(text: str, option: str = "--shard") -> tuple[int, int]:
    """'2/4' -> (2, 4): the second of four shards (or slices, for `option`), from 1."""
    parts = text.strip().split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ShardError(f"{option} wants K/N (e.g. 2/4), got {text!r}")
    index, count = (int(p) for p in parts)
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"{option} {text}: K must be between 1 and N (N >= 1)")
    return index, count


@dataclass
class Plan:
    shards: list[list[str]]      # node ids of each shard, in the order given
    predicted: list[float]       # estimated seconds of each shard
    grouped: bool                # whole test cases kept together
    items: int                   # items of the whole selection
    digest: str                  # of the whole selection's node ids
    estimated: int               # items without a recorded duration

    def facts(self) -> dict:
        return {"items": self.items, "digest": self.digest, "grouped": self.grouped,
                "estimated": self.estimated,
                "predicted": [round(seconds, 1) for seconds in self.predicted]}


def _pack(groups: dict[str, list[str]], cost: dict[str, float], count: int
          ) -> tuple[list[set[str]], list[float]]:
    """Longest group first, each to the shard with the least time so far (lowest index
    on a tie); equal costs are ordered by group key, so the result is deterministic."""
    totals = {key: sum(cost[n] for n in members) for key, members in groups.items()}
    shards: list[set[str]] = [set() for _ in range(count)]
    loads = [0.0] * count
    for key in sorted(totals, key=lambda k: (-totals[k], k)):
        target = min(range(count), key=lambda i: (loads[i], i))
        shards[target].update(groups[key])
        loads[target] += totals[key]
    return shards, loads


def plan(items: list[Item], durations: dict[str, float], count: int) -> Plan:
    cost = estimates(items, durations)
    by_case: dict[str, list[str]] = {}
    for item in items:
        by_case.setdefault(case_id(item.nodeid, item.flow), []).append(item.nodeid)
    shards, loads = _pack(by_case, cost, count)
    grouped = True
    if any(len(members) > 1 for members in by_case.values()):
        single_shards, single_loads = _pack({i.nodeid: [i.nodeid] for i in items}, cost, count)
        if max(loads) > max(single_loads) * (1 + GROUPING_TOLERANCE):
            shards, loads, grouped = single_shards, single_loads, False
    ordered = [[i.nodeid for i in items if i.nodeid in shard] for shard in shards]
    digest = hashlib.sha1("\n".join(sorted(i.nodeid for i in items)).encode()).hexdigest()
    return Plan(shards=ordered, predicted=loads, grouped=grouped, items=len(items),
                digest=digest[:12],
                estimated=sum(1 for i in items if i.nodeid not in durations))


# Expected seconds per item
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
