"""Shards of one run, put together: every report written with `--shard K/N` names its
run (id and selection, `contract.facts.RunFacts`), so the reports of one run can be told from
those of another run and a shard that never reported can be named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from etsuite.tools.report.loading import Run


@dataclass
class ShardedRun:
    """The reports of one sharded run: same id, selection and shard count."""

    id: str
    selection: str
    count: int
    shards: dict[int, list[Run]] = field(default_factory=dict)  # K -> its reports

    @property
    def missing(self) -> list[int]:
        return [k for k in range(1, self.count + 1) if k not in self.shards]

    def missing_lines(self) -> list[str]:
        return [f"{self.selection}: shard {k}/{self.count} missing" for k in self.missing]

    @property
    def plan(self) -> dict | None:
        """The shard plan a report of this run recorded (all of them compute the same)."""
        for runs in self.shards.values():
            for run in runs:
                if isinstance(run.identity.plan, dict):
                    return run.identity.plan
        return None


def sharded_runs(runs: list[Run]) -> list[ShardedRun]:
    """The sharded runs among these reports, ordered by selection and id."""
    found: dict[tuple, ShardedRun] = {}
    for run in runs:
        if run.shard is None:
            continue
        index, count = run.shard
        key = (str(run.identity.id), str(run.identity.selection), count)
        group = found.setdefault(key, ShardedRun(*key))
        group.shards.setdefault(index, []).append(run)
    return [found[key] for key in sorted(found)]


def missing_shards(runs: list[Run]) -> list[str]:
    """One line per shard that no report covers, e.g. 'xnnpack: shard 3/4 missing'."""
    return [line for group in sharded_runs(runs) for line in group.missing_lines()]
