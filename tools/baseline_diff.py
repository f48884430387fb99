"""What changed since a baseline run: the section a reviewer reads first, and what
`--fail-on regressions` gates on.

A regression is a test that passed in the baseline and fails now; a fix is the reverse.
Any other change of status (pass -> pass_undelegated, fail_lower -> fail_run, pass ->
skip, ...) is listed, but gates nothing. Tests are matched by node id, which includes
the flow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from etsuite.tools import classify
from etsuite.tools.loading import Merged, TestResult


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
    other: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)


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
        elif was.status != now.status:
            changes.other.append(Change(nodeid, was, now))
    changes.removed = [Change(n, r, None) for n, r in sorted(before.items()) if n not in after]
    return changes
