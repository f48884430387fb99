"""`python -m etsuite.tools.bench.shard_balance REPORT... [--unsharded REPORT...]`: how well a
sharded run was balanced, and whether it found what an unsharded run found.

Per shard: the seconds its plan predicted (recorded by the harness in the report's
`run.plan`), the seconds its tests took (sum of their durations: what the plan
predicts) and the session's wall time, then max/mean of each over the shards (1.0 is a
perfect balance). With `--unsharded`, the merged shards are compared with an unsharded
run test for test: the same node ids with the same statuses, or each difference listed
(exit 1).
"""

from __future__ import annotations

import argparse
import sys

from etsuite.tools.report import loading
from etsuite.tools.report.formatting import seconds, table
from etsuite.tools.report.sharded_runs import ShardedRun, sharded_runs


def _ratio(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values or not sum(values):
        return "–"
    return f"{max(values) / (sum(values) / len(values)):.2f}"


def balance_table(group: ShardedRun, tests: dict[str, list]) -> str:
    """Markdown: one row per shard, then max/mean of each column over the shards."""
    predicted = (group.plan or {}).get("predicted") or []
    rows: list[list[object]] = []
    columns: tuple[list, list, list] = ([], [], [])  # predicted, test and wall seconds
    for k in range(1, group.count + 1):
        runs = group.shards.get(k, [])
        guess = predicted[k - 1] if k <= len(predicted) else None
        if not runs:
            rows.append([f"{k}/{group.count}", "**missing**", seconds(guess), "–", "–", "–"])
            columns[0].append(guess)
            continue
        results = [r for run in runs for r in tests[run.path]]
        took = sum(r.duration for r in results)
        wall = sum(run.duration or 0.0 for run in runs)
        for column, value in zip(columns, (guess, took, wall), strict=True):
            column.append(value)
        rows.append([f"{k}/{group.count}", len(results), seconds(guess), seconds(took),
                     seconds(wall), f"{took / guess:.2f}" if guess else "–"])
    rows.append(["max/mean", "", *(_ratio(column) for column in columns), ""])
    head, lines = table(["shard", "tests", "predicted", "measured (sum of tests)",
                         "wall time", "measured/predicted"], rows)
    return head + "".join(lines)


def differences(sharded: loading.Merged, unsharded: loading.Merged) -> list[str]:
    """Each test that is in one and not the other, or has another status."""
    ours = {r.nodeid: r.status for r in sharded.results}
    theirs = {r.nodeid: r.status for r in unsharded.results}
    found = [f"only in the shards: {n} ({ours[n]})" for n in sorted(set(ours) - set(theirs))]
    found += [f"only in the unsharded run: {n} ({theirs[n]})"
              for n in sorted(set(theirs) - set(ours))]
    found += [f"{n}: {ours[n]} in the shards, {theirs[n]} unsharded"
              for n in sorted(set(ours) & set(theirs)) if ours[n] != theirs[n]]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m etsuite.tools.bench.shard_balance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="REPORT",
                        help="the shards' reports (files, globs, folders)")
    parser.add_argument("--unsharded", nargs="+", default=[], metavar="REPORT",
                        help="reports of the same selection run unsharded, to compare with")
    args = parser.parse_args(argv)
    try:
        loaded = [loading.load(path, order) for order, path in
                  enumerate(loading.expand_inputs(args.inputs))]
        unsharded = loading.load_all(loading.expand_inputs(args.unsharded)) \
            if args.unsharded else None
    except loading.BadInput as error:
        sys.stderr.write(f"shard_balance: error: {error}\n")
        return 2
    groups = sharded_runs([run for run, _ in loaded])
    if not groups:
        sys.stderr.write("shard_balance: error: no report of a sharded run (--shard K/N)\n")
        return 2
    tests = {run.path: results for run, results in loaded}
    out = []
    for group in groups:
        plan = group.plan or {}
        out.append(f"## {group.selection} (run `{group.id}`), {group.count} shards\n\n"
                   f"Plan: {plan.get('items', '?')} tests, "
                   f"{'whole test cases kept together' if plan.get('grouped') else 'single tests'}"
                   f", {plan.get('estimated', '?')} without a recorded duration.\n\n")
        out.append(balance_table(group, tests) + "\n")
        out.extend(f"- {line}\n" for line in group.missing_lines())
    status = 0
    if unsharded is not None:
        merged = loading.merge(loaded)
        found, count = differences(merged, unsharded), len(merged.results)
        out.append("\n## Sharded vs unsharded\n\n" + (
            "\n".join(f"- {line}" for line in found) + "\n" if found else
            f"The same {count} tests with the same statuses.\n"))
        status = 1 if found else 0
    sys.stdout.write("".join(out))
    return status


if __name__ == "__main__":
    sys.exit(main())
