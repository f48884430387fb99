"""The summary's top: the headline figures (tests, correct, correct and delegated, the
declared failures this host could check, seeds, versions, runs, shards, duplicates, time)
and the table of the runs merged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify, tally
from etsuite.tools.report.baseline_diff import Changes
from etsuite.tools.report.formatting import code, in_words, percent, plural, seconds, table
from etsuite.tools.report.loading import Merged, Run, TestResult, seed_policy_text
from etsuite.tools.report.sections import baseline, non_strict
from etsuite.tools.report.sharded_runs import sharded_runs
from etsuite.tools.report.size_limit import Section


def markdown(merged: Merged, title: str, changes: Changes | None = None) -> list[Section]:
    """The headline figures, then the table of the runs merged."""
    return [headline(merged, title, changes), runs_table(merged)]


def headline(merged: Merged, title: str, changes: Changes | None = None) -> Section:
    results = merged.results
    counts = Counter(r.status for r in results)
    passing = sum(counts[s] for s in classify.PASSING)
    failing = sum(counts[s] for s in classify.VERDICT_FAILING)
    infra = counts[Status.FAIL_INFRA]
    xfail = counts[Status.XFAIL]
    other = len(results) - passing - failing - infra - xfail
    subtests = sum(len(r.records) for r in results)
    rate = classify.pass_rate(passing, failing)
    total = tally.total_row(tally.flow_rows(merged, tally.flow_order(merged)))
    delegated = total.delegated_passing
    left_out = _left_out(total)
    flaky = sum(1 for r in results if tally.is_flaky(r))
    declared = Counter(r.status for r in results if non_strict.is_non_strict(r))
    delegated_rate = delegated / (passing + failing) if rate is not None else None
    lines = [
        f"- **Tests:** {len(results)} ({plural(subtests, 'subtest')}): {passing} passing, "
        f"{failing} failing{f' ({flaky} of them flaky)' if flaky else ''}, "
        + (f"{infra} failed for the runner's device or connection, not the program "
           f"(fail_infra: failing the run, counted in no rate), " if infra else "") +
        f"{plural(xfail, 'expected failure')}"
        f"{f' ({declared[Status.XFAIL]} of them non-strict)' if declared[Status.XFAIL] else ''}, "
        f"{other} skipped, unavailable or not run",
        f"- **Correct:** {percent(rate)}" + (
            f" ({passing} of {passing + failing} tests with a verdict, "
            f"{counts[Status.PASS_UNDELEGATED]} of them undelegated"
            f"{_non_strict_note(sum(declared[s] for s in classify.PASSING))}{left_out})"
            if rate is not None else
            f" (no test reached a verdict{left_out})"),
        f"- **Correct and delegated:** {percent(delegated_rate)}"
        + (f" ({delegated} of {passing + failing} tests with a verdict: outputs match and a "
           f"backend took the computation; the portable baseline's passes are not counted)"
           if rate is not None else ""),
        *_declared_lines(results),
        f"- **Seeds:** {_seeds(merged.runs)}",
        f"- **Versions:** torch {_distinct(r.version('torch') for r in merged.runs)}, "
        f"executorch {_distinct(r.version('executorch') for r in merged.runs)}",
        f"- **Runs merged:** {len(merged.runs)}" + _incomplete_note(merged),
        *_shard_lines(merged),
    ]
    if changes is not None:
        lines.append(f"- **Since the baseline:** {baseline.changes_counts(changes)} (see Changes since "
                     f"the baseline)")
    if merged.duplicates:
        conflicts = sum(1 for d in merged.duplicates if d.conflict)
        agreement = (f"{conflicts} with different results" if conflicts else
                     "all with the same result")
        lines.append(f"- **Duplicates:** {plural(len(merged.duplicates), 'test')} seen in more "
                     f"than one run, each counted once ({agreement}; see Duplicates)")
    lines.append(f"- **Test time:** {seconds(sum(r.duration for r in results))} "
                 f"(sum of test durations, not wall time: each run's wall time is in the table "
                 f"below)")
    return Section(heading=f"# {title}\n", intro="\n".join(lines) + "\n", cuttable=False)


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


def _left_out(total: tally.FlowRow) -> str:
    """What a headline share leaves out, next to it: "; 266 without one: 250 not run, ..."."""
    found = total.without_verdict()
    if not found:
        return ""
    return f"; {sum(n for _, n in found)} without one: {in_words(found)}"


def _declared_lines(results: list[TestResult]) -> list[str]:
    """How many declared failures this host checked, and how many it could not."""
    unchecked = declared_unchecked(results)
    checked = declared_checked(results)
    if not unchecked and not checked:
        return []
    per_backend = ", ".join(f"{b} {n}" for b, n in sorted(unchecked.items()))
    return [f"- **Declared failures:** {checked} checked on this host, "
            f"{sum(unchecked.values())} not checkable on this host"
            + (f" ({per_backend}: lowered but not run, or the flow is unavailable)"
               if unchecked else "")]


def _non_strict_note(count: int) -> str:
    """How many correct tests are cases a non-strict entry declares, which may fail at
    another seed: a headline figure says what it counts."""
    return (f", {count} of them from non-strict declared cases "
            f"(see {non_strict.NON_STRICT_HEADING})"
            if count else "")


def _seeds(runs: list[Run]) -> str:
    """Each run's seed with its seed policy; runs that share both are said once, with how
    many they are when they differ. `$` is escaped: GitHub would read $...$ as math."""
    counted = Counter((str(run.seed) if run.seed is not None else "unknown",
                       seed_policy_text(run.seed_policy)) for run in runs)
    said = {key: f"{key[0]}, seed policy {key[1]}".replace("$", "\\$") for key in counted}
    if len(counted) <= 1:
        return next(iter(said.values()), "unknown")
    return "; ".join(f"{plural(n, 'run')}: {said[key]}" for key, n in sorted(counted.items()))


def _distinct(values: Iterable[object]) -> str:
    counted = Counter(str(v) if v is not None else "unknown" for v in values)
    if len(counted) <= 1:
        return next(iter(counted), "unknown")
    return ", ".join(f"{value} ({plural(n, 'run')})" for value, n in sorted(counted.items()))


def _incomplete_note(merged: Merged) -> str:
    incomplete = merged.incomplete
    if not incomplete:
        return ", all complete"
    names = ", ".join(code(run.path) for run in incomplete)
    return (f", **{len(incomplete)} incomplete** ({names}: no \"finished\" line, "
            f"the session was killed or crashed)")


def _shard_lines(merged: Merged) -> list[str]:
    """One line per sharded run: which shards reported, and each one that did not."""
    lines = []
    for group in sharded_runs(merged.runs):
        present = ", ".join(str(k) for k in sorted(group.shards))
        missing = "; ".join(f"**{line}**" for line in group.missing_lines())
        lines.append(f"- **Shards of {group.selection}** (run {code(group.id)}): {present} of "
                     f"{group.count}" + (f"; {missing}" if missing else ", all present"))
    return lines


def runs_table(merged: Merged) -> Section:
    sharded = any(run.shard for run in merged.runs)

    def render(runs: list) -> tuple[str, list[str]]:
        headers = ["run", "kind", "tests", "seed", "exit code", "finished", "duration"]
        rows = [[code(run.path), run.kind, run.tests, run.seed,
                 "–" if run.exitcode is None else run.exitcode,
                 "yes" if run.finished else "**no**", seconds(run.duration)] for run in runs]
        if sharded:  # only then: reports of unsharded runs keep their table as it was
            headers.insert(1, "shard")
            for row, run in zip(rows, runs, strict=True):
                row.insert(1, "{}/{}".format(*run.shard) if run.shard else "–")
        return table(headers, rows)

    return Section(heading="", intro="", items=merged.runs, render_items=render, unit="runs")
