"""What changed since a baseline run: the section a reviewer reads first, and what
`--fail-on regressions` gates on.

A regression is a test that passed in the baseline and fails now; a fix is the reverse.
A test that passed delegated and now passes undelegated (pass -> pass_undelegated) lost
its delegation: the backend took nothing, so it is a regression of delegation, not a
pass. Any other change of status (fail_lower -> fail_run, pass -> skip, ...) is listed,
but gates nothing. Tests are matched by node id, which includes the flow; their metrics
(`drift.py`) by node id and subtest index.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from etsuite.tools.report import classify
from etsuite.tools.report.drift import Drift, compare_metrics, lost_delegation, lost_delegation_status
from etsuite.tools.report.loading import Merged, TestResult


@dataclass
class Change:
    nodeid: str
    was: TestResult | None
    now: TestResult | None

    @property
    def flow(self) -> str | None:
        result = self.now or self.was  # a change has at least one side
        return result.flow if result is not None else None


@dataclass
class Changes:
    baseline: Merged
    regressions: list[Change] = field(default_factory=list)
    fixes: list[Change] = field(default_factory=list)
    lost_delegation: list[Change] = field(default_factory=list)  # pass -> pass_undelegated
    other: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)     # per subtest and metric, worst first

    def delegation_regressions(self) -> list[str]:
        """Node ids that lost delegation: by status, or by a delegated share that fell
        beyond its threshold while the status stayed the same."""
        found = [c.nodeid for c in self.lost_delegation]
        found += [d.result.nodeid for d in lost_delegation(self.drift)]
        return list(dict.fromkeys(found))


def compare(current: Merged, baseline: Merged) -> Changes:
    changes = Changes(baseline)
    before = {r.nodeid: r for r in baseline.results}
    after = {r.nodeid: r for r in current.results}
    for nodeid, now in sorted(after.items()):
        was = before.get(nodeid)
        if was is None:
            changes.new.append(Change(nodeid, None, now))
        elif was.status in classify.PASSING and now.status in classify.VERDICT_FAILING:
            changes.regressions.append(Change(nodeid, was, now))
        elif was.status in classify.VERDICT_FAILING and now.status in classify.PASSING:
            changes.fixes.append(Change(nodeid, was, now))
        elif lost_delegation_status(was.status, now.status):
            changes.lost_delegation.append(Change(nodeid, was, now))
        elif was.status != now.status:
            changes.other.append(Change(nodeid, was, now))
    changes.removed = [Change(n, r, None) for n, r in sorted(before.items()) if n not in after]
    changes.drift = compare_metrics(current, baseline)
    return changes
