"""`python -m etsuite.tools.report.same_statuses BEFORE AFTER`: whether two runs of the same
selection gave every test and every subtest the same status. A refactoring that must
not change a verdict (issue 39's rooms, say) is checked with it: run the selection at one
seed before and after, then compare. BEFORE and AFTER are each any number of reports,
streams or folders, comma-separated, as the summary takes them.

Each test is compared by its final status and each subtest by its status and, where an
expectation rewrote it, the status the pipeline observed. A test in one run and not in
the other is a difference too. Exit 0 when nothing differs, 1 when something does (each
difference listed), 2 for unreadable input.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from etsuite.tools.report import loading


@dataclass
class StatusDifferences:
    """What `compare` found: how many tests and subtests it compared, and every status
    that differs."""

    tests: int = 0
    subtests: int = 0
    differences: list[str] = field(default_factory=list)


def _subtest_statuses(result: loading.TestResult) -> list[tuple[int, str, str | None]]:
    return sorted((r.subtest, r.status.value, r.observed_status) for r in result.records)


def compare(before: loading.Merged, after: loading.Merged) -> StatusDifferences:
    was = {r.nodeid: r for r in before.results}
    now = {r.nodeid: r for r in after.results}
    found = StatusDifferences()
    for nodeid in sorted(set(was) | set(now)):
        old, new = was.get(nodeid), now.get(nodeid)
        if old is None or new is None:
            found.differences.append(f"{nodeid}: only in the {'after' if old is None else 'before'} run")
            continue
        found.tests += 1
        if old.status != new.status:
            found.differences.append(f"{nodeid}: {old.status.value} -> {new.status.value}")
        old_subtests, new_subtests = _subtest_statuses(old), _subtest_statuses(new)
        found.subtests += len(new_subtests)
        if old_subtests != new_subtests:
            found.differences.append(f"{nodeid}: subtests {old_subtests} -> {new_subtests}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="same_statuses", description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="reports, streams or folders of the first run (comma-separated)")
    parser.add_argument("after", help="the same of the second run")
    args = parser.parse_args(argv)
    try:
        before = loading.load_all(loading.expand_inputs(args.before.split(",")))
        after = loading.load_all(loading.expand_inputs(args.after.split(",")))
    except loading.BadInput as error:
        print(f"same_statuses: {error}", file=sys.stderr)
        return 2
    found = compare(before, after)
    for line in found.differences:
        print(line)
    verdict = "the same" if not found.differences else f"{len(found.differences)} differences"
    print(f"{found.tests} tests and {found.subtests} subtests in both runs: {verdict}")
    return 1 if found.differences else 0


if __name__ == "__main__":
    sys.exit(main())
