"""The markdown summary: sections in the order a backend author reads them (totals,
per-flow table, changes since the baseline, support matrix, failure breakdown, the
cases declared non-strict, the budget breaches, the failures with their repro commands,
the passes close to their bound, slow tests, delegation and numerical quality), tables
by tabulate.

Everything here formats; the numbers come from `tally` and `baseline_diff`. Output is
deterministic (no clock, sorted where order is not meaningful) so it can be checked
line by line and diffed between runs.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from etsuite.backends.harness.contract.costs import shown_limit
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import trim_error, where_it_breaks
from etsuite.backends.harness.contract.statuses import ORDER, Status
from etsuite.tools.report import case_costs, classify, drift, tally
from etsuite.tools.report.backend_notes import backend_notes
from etsuite.tools.report.baseline_diff import Changes
from etsuite.tools.report.formatting import (
    code,
    fenced,
    in_words,
    listed,
    percent,
    plural,
    prose,
    seconds,
    shorten,
    table,
)
from etsuite.tools.report.loading import Merged, Run, TestResult, seed_policy_text
from etsuite.tools.report.sharded_runs import sharded_runs
from etsuite.tools.report.signature import message_line
from etsuite.tools.report.size_limit import Section

DEFAULT_TITLE = "ExecuTorch backend test report"
ERROR_SHOWN = 800        # characters of an error shown in a failure block
ERROR_IN_TABLE = 120     # characters of an error shown in a table cell

# Support-matrix cells: one short mark per status.
CELL = {
    Status.PASS: "✅",
    Status.PASS_UNDELEGATED: "🟡",
    Status.FAIL_QUANTIZE: "❌ quantize",
    Status.FAIL_LOWER: "❌ lower",
    Status.FAIL_SERIALIZE: "❌ serialize",
    Status.FAIL_LOAD: "❌ load",
    Status.FAIL_RUN: "❌ run",
    Status.FAIL_MISMATCH: "❌ mismatch",
    Status.FAIL_RECIPE_ACCURACY: "📉 recipe accuracy",
    Status.FAIL_BUDGET: "💸 budget",
    Status.FAIL_CRASH: "💥 crash",
    Status.FAIL_TIMEOUT: "⏰ timeout",
    Status.FAIL_INFRA: "🔌 infra",
    Status.FAIL_TEST: "❌ test",
    Status.ERROR: "❗ error",
    Status.XPASS: "❗ xpass",
    Status.XFAIL: "➖ xfail",
    Status.SKIP_INVALID: "⏩ invalid",
    Status.SKIP_UNSUPPORTED: "⏩",
    Status.SKIP: "⏩",
    Status.LOWERED_NOT_RUN: "📦",
    Status.UNAVAILABLE: "🚫",
}
LEGEND = ("✅ pass (in a quantizing flow: ✅ int, the delegated ops ran quantized; ✅ float, "
          "the quantizer left them in floating point; ✅ int+float, some of each) · "
          "🟡 pass, but the backend took no node · ❌ failed at the named stage · "
          "📉 the backend computes its quantized program faithfully, but the recipe's "
          "quantization is too far from fp32 eager · "
          "💥 crash · ⏰ timeout · 🔌 the runner's device or connection failed, not the "
          "program · ❗ error in setup/teardown or unexpected pass · "
          "➖ expected failure · ⏩ skipped (invalid: the test itself is broken) · "
          "📦 lowered, no runtime on this host · 🚫 backend unavailable · "
          "blank: not in these reports")
NO_FLOW = "(no flow)"
NO_BACKEND = "(none)"
NON_STRICT_HEADING = "Declared input-dependent (non-strict)"
BORDERLINE_SHOWN = 50    # borderline passes listed; the page lists them all


@dataclass
class Options:
    title: str = DEFAULT_TITLE
    slowest: int = 10
    # Folder the summary is written to: artifact links are made relative to it.
    link_from: str = "."


def flow_label(flow: str | None) -> str:
    return flow or NO_FLOW


# ---------------------------------------------------------------- sections

def header(merged: Merged, title: str, changes: Changes | None = None) -> Section:
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
    declared = Counter(r.status for r in results if tally.is_non_strict(r))
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
        lines.append(f"- **Since the baseline:** {_changes_counts(changes)} (see Changes since "
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


def _left_out(total: tally.FlowRow) -> str:
    """What a headline share leaves out, next to it: "; 266 without one: 250 not run, ..."."""
    found = total.without_verdict()
    if not found:
        return ""
    return f"; {sum(n for _, n in found)} without one: {in_words(found)}"


def _declared_lines(results: list[TestResult]) -> list[str]:
    """How many declared failures this host checked, and how many it could not."""
    unchecked = tally.declared_unchecked(results)
    checked = tally.declared_checked(results)
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
    return (f", {count} of them from non-strict declared cases (see {NON_STRICT_HEADING})"
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


def runs_section(merged: Merged) -> Section:
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


MAX_RESULT_COLUMNS = 12
"""The widest results table: a six-backend merge with a column for every status was 24
columns, unreadable in a GitHub step summary. Only the statuses that occur get a column;
when those are still too many, the passes (already counted as correct and delegated) lose
theirs and the failures share one that names them, which always fits (7 + 1 + 4)."""


Cell = Callable[[tally.FlowRow], object]


def result_columns(rows: list[tally.FlowRow]) -> list[tuple[str, Cell]]:
    """The per-status columns of the results table: (header, row -> cell)."""
    total = tally.total_row(rows)
    present = [c for c in classify.COLUMNS if total.counts[c]]
    columns: list[tuple[str, Cell]] = [(str(c), _count_of(c)) for c in present]
    if len(_FIXED_COLUMNS) + len(columns) <= MAX_RESULT_COLUMNS:
        return columns
    failing = [c for c in present if c in classify.FAILING]
    folded: list[tuple[str, Cell]] = [("failing", _failing_cell(failing))] if failing else []
    return folded + [(str(c), _count_of(c)) for c in present
                     if c not in classify.FAILING and c not in classify.PASSING]


_FIXED_COLUMNS = ("backend", "flow", "tests", "correct", "correct, delegated",
                  "delegated nodes", "test time")


def _count_of(column: Status | str) -> Cell:
    return lambda row: row.counts[column]


def _failing_cell(statuses: Iterable[Status | str]) -> Cell:
    def cell(row: tally.FlowRow) -> str:
        found = [f"{str(s).removeprefix('fail_')} {row.counts[s]}"
                 for s in statuses if row.counts[s]]
        return f"{row.failing} ({', '.join(found)})" if found else "0"
    return cell


def of_verdicts(count: int, row: tally.FlowRow, share: float | None) -> str:
    """A count with its denominator and share: "1 of 1 (100.0 %)"."""
    return f"{count} of {row.verdicts} ({percent(share)})"


def flows_section(merged: Merged, order: list[tally.FlowKey]) -> Section:
    rows = tally.flow_rows(merged, order)
    shown = []
    previous = object()
    for row in rows:  # grouped by backend: its name on its first row
        shown.append(([(row.backend or NO_BACKEND) if row.backend != previous else "",
                       flow_label(row.flow)], row))
        previous = row.backend
    if len(rows) > 1:
        shown.append((["**all**", ""], tally.total_row(rows)))

    shares = {(c.backend, c.flow): c.share for c in tally.coverage(merged.results, order)}
    total_share = tally.total_coverage(merged.results).share
    statuses = result_columns(rows)

    def render(items: list) -> tuple[str, list[str]]:
        headers = [*_FIXED_COLUMNS[:-1], *(name for name, _ in statuses), _FIXED_COLUMNS[-1]]
        return table(headers, [
            [*names, row.total, of_verdicts(row.passing, row, row.pass_rate),
             of_verdicts(row.delegated_passing, row, row.delegated_pass_rate)
             if row.delegates else "– (no delegate)",
             percent(total_share if names[0] == "**all**" else shares.get((row.backend, row.flow))),
             *(cell(row) for _, cell in statuses), seconds(row.duration)]
            for names, row in items])

    notes = [f"- **{note.backend}** {prose(note.line())}"
             for note in backend_notes(merged, rows)]
    outro = ("Correct: pass + pass_undelegated, of the tests with a verdict (passing + "
             "failing); correct, delegated: pass only (the backend took nodes and the "
             "outputs match); delegated nodes: the delegated share of the lowered graphs' "
             "nodes. Only the statuses that occur have a column. fail_test is a failure "
             "outside any subtest, error one in setup, teardown or collection.\n"
             + ("\n" + "\n".join(notes) + "\n" if notes else ""))
    return Section(heading="## Results by backend and flow\n", items=shown,
                   render_items=render, outro=outro, empty="No tests.\n", cuttable=False)


def matrix_section(merged: Merged, order: list[tally.FlowKey]) -> Section:
    rows = tally.support_matrix(merged.results)
    present = {key for _, cells in rows for key in cells}
    columns = [key for key in order if key in present]

    def render(items: list) -> tuple[str, list[str]]:
        headers = ["test case", *(flow_label(flow) for _, flow in columns)]
        return table(headers, [[code(tally.display_case(case)),
                                *(matrix_cell(cells.get(key)) for key in columns)]
                               for case, cells in items])

    return Section(heading="## Support matrix\n",
                   intro=f"Each test case per flow. {LEGEND}.\n\n", items=rows,
                   render_items=render, empty="No tests.\n", unit="test cases")


def matrix_cell(statuses: Counter | None) -> str:
    """Marks in status order; a correct test of a quantizing flow also says how it ran
    (int, int+float, float; 🟡 is not delegated)."""
    if not statuses:
        return ""
    marks = []
    for key in sorted(statuses, key=_mark_order):
        count = statuses[key]
        if count:
            status, how = (key[0], tally.SHORT.get(key[1])) if isinstance(key, tuple) else (key, None)
            marks.append(CELL[status] + (f" {how}" if how else "")
                         + (f" ×{count}" if count > 1 else ""))
    return ", ".join(marks)


def _mark_order(key: Status | tuple[Status, str]) -> tuple:
    """A status before its (status, how it ran) keys, those by how; statuses in the
    contract's order. Sorting only the keys a cell has: a matrix at 40,000 tests has
    750,000 cells, and walking every status for each was most of the summary's time."""
    if isinstance(key, tuple):
        return (ORDER[key[0]], 1, key[1])
    return (ORDER[key], 0, "")


def computation_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = tally.computations(merged.results, order)
    if not rows:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", *tally.COMPUTATIONS], [
            [key[0], flow_label(key[1]), *(counts[c] for c in tally.COMPUTATIONS)]
            for key, counts in items])

    intro = ("Correct tests of the quantizing flows by how they ran: delegated with "
             "quantize/dequantize around every delegated op, around some, around none (the "
             "quantizer left the op in floating point), or not delegated.\n\n")
    return [Section(heading="## Quantized or not\n", intro=intro, items=rows,
                    render_items=render, unit="flows", cuttable=False)]


def stage_section(failures: list[tally.Failure]) -> Section:
    def render(groups: list) -> tuple[str, list[str]]:
        return table(["status", "stage", "failures", "tests", "flows"], [
            [g.key[0], g.key[1] or "–", g.count, g.tests, listed(g.flows())] for g in groups])

    return Section(heading="## Failures by stage\n", items=tally.by_stage(failures),
                   render_items=render, empty="No failures.\n", cuttable=False)


def signature_section(failures: list[tally.Failure]) -> Section:
    def render(groups: list) -> tuple[str, list[str]]:
        return table(["failures", "status", "flows", "error signature", "example"], [
            [g.count, ", ".join(g.statuses()), listed(g.flows()), code(g.key[0]),
             code(g.failures[0].result.nodeid)] for g in groups])

    groups = tally.by_signature(failures)
    intro = ("Numbers, addresses and paths are normalized so that similar errors group."
             if groups else "")
    return Section(heading="## Failures by error signature\n", intro=intro,
                   items=groups, render_items=render,
                   empty="No failures.\n", unit="signatures")


def where_section(places: tally.Places) -> list[Section]:
    """Localized failures grouped by the op they start at, per flow (--localize), with the
    operator tests that fail on the same op; absent when no failure was localized or tried."""
    if not places.shown:
        return []
    also = {id(g): _also_in(places, g.failures) for g in places.groups}
    also_column = any(also.values())

    def render(groups: list) -> tuple[str, list[str]]:
        return table(["flow", "where it breaks", "failures", "tests"]
                     + ["also fails as an operator test"] * also_column + ["example"], [
            [code(g.key[0]), code(g.key[1]), g.count,
             ", ".join(f"{n} {suite}" for suite, n in sorted(tally.suites_of(g).items()))]
            + [listed([code(tally.test_name(r)) for r in also[id(g)]], 3) or "–"] * also_column
            + [code(g.failures[0].result.nodeid)] for g in groups])

    not_localized = len(places.not_localized)
    intro = ("The op each localized failure starts at: for a mismatch, the first node whose "
             "runtime output left the flow's rule, or the delegate call that holds it; for "
             "a failure to lower, serialize, load or run, the last node of the smallest "
             "prefix of the graph that fails the same way."
             + (" A model or example failure whose op fails as an operator test of the same "
                "flow too names that test." if also_column else "")
             + (f" {plural(not_localized, 'failure')} could not be localized (the record's "
                f"`localization` says why)." if not_localized else ""))
    return [Section(heading="## Where it breaks\n", intro=intro, items=places.groups,
                    render_items=render, empty="No failure was localized.\n", unit="places")]


def _also_in(places: tally.Places, failures: list[tally.Failure]) -> list[TestResult]:
    """The operator tests the failures' op also fails in, each once, in order."""
    found: dict[int, TestResult] = {}
    for failure in failures:
        for result in places.also_as_operator_test(failure):
            found.setdefault(id(result), result)
    return list(found.values())


def flaky_section(failing: list[tuple[TestResult, list[tally.Failure]]]) -> list[Section]:
    flaky = [result for result, _ in failing if tally.is_flaky(result)]
    if not flaky:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        rows = []
        for result in items:
            reruns = [r.rerun for r in result.records if r.flaky and r.rerun]
            rows.append([code(result.nodeid), flow_label(result.flow), result.status,
                         "; ".join(f"same inputs: {r.same_inputs}, other inputs: "
                                   f"{r.other_inputs}" for r in reruns) or "–",
                         code(tally.repro(result))])
        return table(["test", "flow", "status", "run again", "repro"], rows)

    intro = (f"{plural(len(flaky), 'failing test')} did not fail again when run a second "
             f"time on the same inputs: flaky, not broken. They still count as failing.\n\n")
    return [Section(heading="## Flaky\n", intro=intro, items=flaky, render_items=render,
                    unit="flaky tests")]


def non_strict_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Cases a non-strict [[fail]] entry declares, apart: their pass is no fix and their
    xfail no failure that reproduces, so neither should be read as one."""
    declared = tally.non_strict(merged.results, order)
    if not declared:
        return []

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test case", "flow", "this run", "entry"], [
            [code(tally.display_case(case_id(d.result.nodeid, d.result.flow))),
             flow_label(d.result.flow), non_strict_outcome(d),
             code(d.entry) if d.entry else "–"] for d in items])

    statuses = Counter(d.result.status for d in declared)
    failed = statuses[Status.XFAIL]
    passed = sum(statuses[s] for s in classify.PASSING)
    rest = len(declared) - failed - passed
    intro = (f"{plural(len(declared), 'test')} of cases declared by a non-strict `[[fail]]` "
             f"entry (input-dependent: each may fail with the declared status or pass, and "
             f"neither fails the run): {failed} failed as declared (xfail), {passed} passed "
             f"(counted as correct)" + (f", {rest} neither" if rest else "") + ".\n\n")
    return [Section(heading=f"## {NON_STRICT_HEADING}\n", intro=intro, items=declared,
                    render_items=render, unit="tests")]


def non_strict_outcome(declared: tally.Declared) -> str:
    """What a non-strict declared test did this run, in words."""
    status = declared.result.status
    if status is Status.XFAIL:
        return f"failed as declared (xfail{f'; {declared.observed}' if declared.observed else ''})"
    if status in classify.PASSING:
        return "passed" + (" (undelegated)" if status is Status.PASS_UNDELEGATED else "")
    if status in classify.FAILING:
        return f"failed: {status} (not the declared failure)"
    return str(status)


def budget_breach_sections(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """The `fail_budget` subtests, one table per flow, the worst breach (measured/limit)
    first: which limit of `budgets.toml` each broke, by how much, and the entry to raise
    or the regression to fix. Absent when nothing broke a budget."""
    found = case_costs.breaches(merged, order)
    if not found:
        return []
    count = sum(len(rows) for rows in found.values())
    intro = (f"{plural(count, 'breach', 'breaches')} of the limits in `budgets.toml` by "
             "subtests whose outputs were correct (each is a `fail_budget`): the measured "
             "value, the limit and the entry that sets it. Times over: measured / limit "
             "(for `min_delegation_share`, limit / measured).\n")
    sections = [Section(heading="## Budget breaches\n", intro=intro, cuttable=False)]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test", "subtest", "limit", "measured", "limit value", "times over",
                      "entry"], [
            [code(b.result.nodeid), b.record.subtest, code(b.limit) if b.limit else "–",
             _limit_figure(b.limit, b.measured), _limit_figure(b.limit, b.value),
             _factor(b.overshoot) if b.overshoot is not None else "–",
             code(b.source) if b.source else shorten(message_line(b.record.error),
                                                     ERROR_IN_TABLE)]
            for b in items])

    for (backend, flow), rows in found.items():
        sections.append(Section(heading=f"### {flow_label(flow)} ({backend or NO_BACKEND})\n",
                                items=rows, render_items=render, unit="breaches"))
    return sections


def _limit_figure(limit: str | None, value: float | None) -> str:
    """A measured value or a limit in its limit's unit, as the breach's error says it."""
    return "–" if limit is None or value is None else shown_limit(limit, value)


def failures_section(failing: list[tuple[TestResult, list[tally.Failure]]], link_from: str = ".",
                     places: tally.Places | None = None) -> Section:
    def render(items: list) -> tuple[str, list[str]]:
        return "", [failure_block(number, result, found, link_from, places)
                    for number, (result, found) in enumerate(items, 1)]

    intro = (f"{plural(len(failing), 'failing test')}, each with the command that reproduces "
             f"it (paste it at the repository root).") if failing else ""
    return Section(heading="## Failures\n", intro=intro, items=failing, render_items=render,
                   empty="No failures.\n", unit="failing tests")


def artifact_links(result: TestResult, link_from: str) -> str:
    """Links to the subtests' artifact folders, relative to the summary's folder."""
    links = [f"[subtest {r.subtest}]({os.path.relpath(r.artifacts, link_from)})"
             for r in result.records if r.artifacts]
    return f"\nArtifacts (.pte, inputs, eager and runtime outputs): {', '.join(links)}\n" \
        if links else ""


def repro_lines(result: TestResult) -> str:
    """The minimal repros of a test's localized failures (case/repro.py), if any."""
    lines = []
    for record in result.records:
        repro = (record.localization or {}).get("repro") or {}
        if repro.get("folder"):
            reproduces = repro.get("reproduces")
            alone = "still fails alone" if reproduces is True else \
                f"passes alone ({repro.get('status')}): it fails only in its context" \
                if reproduces is False else f"could not be run alone ({repro.get('status')})"
            lines.append(f"\nMinimal repro of subtest {record.subtest}, {code(repro['op'])} "
                         f"{alone}:\n" + fenced(f"{repro['folder']}/repro.py", "text"))
            window = repro.get("subgraph") or {}
            if window.get("folder"):
                lines.append(f"\nThe smallest window of the graph that still fails: "
                             f"{window['nodes']} nodes, {code(window['first'])} to "
                             f"{code(window['last'])}:\n"
                             + fenced(f"{window['folder']}/subgraph.py", "text"))
    return "".join(lines)


def failure_block(number: int, result: TestResult, found: list[tally.Failure], link_from: str = ".",
                  places: tally.Places | None = None) -> str:
    where = f"flow {code(result.flow)} ({result.backend})" if result.flow else NO_FLOW
    flaky = " · **flaky** (passed when run again)" if tally.is_flaky(result) else ""
    lines = [f"**{number}. {code(result.nodeid)}** · {where} · {result.status}{flaky} · "
             f"run {code(result.run.path)}\n"]
    for failure in found:
        subtest = f"subtest {failure.subtest}: " if failure.subtest is not None else ""
        stage = f" at {failure.stage}" if failure.stage else ""
        place = where_it_breaks(failure.localization)
        at = f", breaks at {code(place)}" if place else ""
        also = places.also_as_operator_test(failure) if places else []
        at += f"; also fails as an operator test: {_tests(also)}" if also else ""
        lines.append(f"\n{subtest}{failure.status}{stage}{at}\n")
        lines.append(fenced(trim_error(failure.error or "(no error text)", ERROR_SHOWN), "text"))
    lines.append(artifact_links(result, link_from))
    lines.append(repro_lines(result))
    lines.append("\nRepro:\n" + fenced(tally.repro(result), "sh") + "\n")
    return "".join(lines)


def _tests(results: list[TestResult]) -> str:
    return ", ".join(code(tally.test_name(r)) for r in results)


def borderline_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Passes close to their bound, closest first, capped at BORDERLINE_SHOWN rows. Shown
    wherever outputs were compared (then "none" is news too); absent otherwise."""
    if not tally.quality(merged.results, order):
        return []
    found = tally.borderline(merged.results)
    shown = found[:BORDERLINE_SHOWN]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test case", "flow", "worst error/bound", "margin", "rule", "repro"], [
            [code(borderline_case(b)), flow_label(b.result.flow), f"{b.ratio:.2f}x",
             shorten(b.record.margin, ERROR_IN_TABLE) or "–",
             shorten(b.record.verdict_rule, ERROR_IN_TABLE) or "–", code(b.repro)]
            for b in items])

    bound = f"{tally.BORDERLINE_RATIO:g}x"
    intro = (f"{plural(len(found), 'passing subtest')} whose worst output's max error reached "
             f"{bound} of its rule's bound or more (1x is the bound): the passes most likely "
             f"to fail at another seed, closest first.\n\n") if found else ""
    more = len(found) - len(shown)
    outro = (f"…and {more} more, further from their bound (the page, `--page`, lists all "
             f"{len(found)}).\n" if more else "")
    return [Section(heading="## Borderline passes\n", intro=intro, items=shown,
                    render_items=render, outro=outro, unit="borderline passes",
                    empty=f"No passing subtest reached {bound} of its rule's bound.\n")]


def borderline_case(found: tally.Borderline) -> str:
    """The case (flow left out, as in the matrix), and the subtest when the test has more."""
    case = tally.display_case(case_id(found.result.nodeid, found.result.flow))
    return case + (f" (subtest {found.record.subtest})" if len(found.result.records) > 1 else "")


def stateful_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Stateful programs (a prefill, then decode steps on one loaded method): per flow,
    how many matched at every step, which diverged and at which step, and the runtime's
    milliseconds per step. Absent when no stateful subtest ran."""
    rows = tally.stateful(merged.results, order)
    if not rows:
        return []

    def ms(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    def render(items: list) -> tuple[str, list[str]]:
        return table(
            ["flow", "stateful subtests", "matched every step", "diverged", "first step ms",
             "later steps ms (median)", "lowest step SQNR dB", "state in delegate"],
            [[flow_label(r.flow), r.subtests, r.matched,
              "; ".join(f"{code(tally.display_case(case_id(result.nodeid, result.flow)))} "
                        f"at step {record.failed_step}" for result, record in r.diverged[:5])
              + (f"; …{len(r.diverged) - 5} more" if len(r.diverged) > 5 else "") or "–",
              ms(r.median(r.first_ms)), ms(r.median(r.later_ms)),
              "–" if r.lowest_sqnr_db is None else f"{r.lowest_sqnr_db:.1f}", r.in_delegate]
             for r in items])

    intro = ("Each program ran step after step on one loaded method, the runtime carrying "
             "its state (a KV cache), every step judged against eager; \"diverged at step "
             "k\" is the first step (from 0) whose outputs failed. Times are the runtime's "
             "per call: the first step is a prefill, the later ones one token each for "
             "decode steps (medians over the subtests that ran). The lowest step SQNR is "
             "over every step and output of the flow's stateful subtests (what a "
             "quantizing recipe's floor is set from).\n\n")
    return [Section(heading="## Stateful programs\n", intro=intro, items=rows,
                    render_items=render, unit="flows")]


def cost_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """What executing the programs cost where they ran, per flow and runtime, as the
    runner measured it (`tally.costs`); absent when no runner measured anything (a run in
    process measures no cost: its `run` time is in the stage times)."""
    rows = tally.costs(merged.results, order)
    if not rows:
        return []

    def median(values: list[float], scale: float, digits: int) -> str:
        return f"{statistics.median(values) * scale:.{digits}f}" if values else "–"

    def render(items: list) -> tuple[str, list[str]]:
        return table(
            ["flow", "runtime", "subtests", "per call µs (median of medians)",
             "per call µs (max of medians)", "peak RSS MB (max)",
             "planned memory KB (median)", "planned memory KB (max)"],
            [[flow_label(r.flow), code(r.runtime or "?"), r.subtests,
              median(r.call_medians, 1e6, 1),
              f"{max(r.call_medians) * 1e6:.1f}" if r.call_medians else "–",
              f"{max(r.peak_rss_bytes) / 2**20:.0f}" if r.peak_rss_bytes else "–",
              median(r.planned_bytes, 1 / 1024, 1),
              f"{max(r.planned_bytes) / 1024:.1f}" if r.planned_bytes else "–"]
             for r in items])

    intro = ("Measured by the runner that executed the programs (`--runner`, e.g. the native "
             "runner): per call, the median over its timed calls after a first, judged one; "
             "the executing process's peak memory; the programs' memory-planned buffers "
             "(all methods). Programs run in process are not in this table.\n\n")
    return [Section(heading="## What running cost\n", intro=intro, items=rows,
                    render_items=render, unit="rows")]


def slowest_section(merged: Merged, limit: int) -> Section:
    def render(items: list) -> tuple[str, list[str]]:
        rows = []
        for result in items:
            stage = tally.slowest_stage(result)
            rows.append([code(result.nodeid), flow_label(result.flow), result.status,
                         seconds(result.duration),
                         f"{stage[0]} ({seconds(stage[1])})" if stage else "–"])
        return table(["test", "flow", "status", "duration", "slowest stage"], rows)

    return Section(heading="## Slowest tests\n", items=tally.slowest(merged.results, limit),
                   render_items=render, empty="No timings.\n", unit="tests")


def coverage_section(merged: Merged, order: list[tally.FlowKey]) -> Section:
    def minority(row: tally.Coverage) -> str:
        cases = row.minority()
        if not row.delegated or not cases:
            return "–" if not row.delegated else "0"
        shown = ", ".join(f"{code(tally.test_name(result))} {percent(share)}"
                          for result, share in cases[:3])
        return f"{len(cases)}: {shown}" + (", …" if len(cases) > 3 else "")

    def render(rows: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "lowered subtests", "delegated nodes", "total nodes",
                      "delegated", "per subtest (median)", "delegate not the primary compute",
                      "most frequent undelegated ops"], [
            [row.backend, flow_label(row.flow), row.lowered, row.delegated, row.nodes,
             percent(row.share), percent(row.median_share()) if row.delegated else "–",
             minority(row),
             ", ".join(f"{op} ×{n}" for op, n in row.undelegated_ops.most_common(3)) or "–"]
            for row in rows])

    rows = tally.coverage(merged.results, order)
    intro = ("Nodes of the lowered graphs, summed over the subtests that got as far as "
             "lowering. Per subtest, the share of its computing nodes a delegate took "
             "(quantize and dequantize nodes, which compute nothing of the model's, left "
             "out): its median, and the subtests where it is under half (most of the graph "
             "ran on portable kernels)." if rows else "")
    return Section(heading="## Delegation coverage\n", intro=intro, items=rows,
                   render_items=render,
                   empty="No subtest was lowered.\n", unit="flows")


def core_aten_sections(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Per flow, N of M core ATen overloads held by the lowered graphs of operator tests
    (`tally.core_aten`), then each overload some flow's operator tests miss, cuttable.
    Absent when no report names the core overloads (an older harness wrote them)."""
    rows = tally.core_aten(merged, order)
    if not rows:
        return []
    total = rows[0].total
    portable_only = tally.non_delegating(merged)

    def figures(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "core ATen ops covered", "delegated in a case",
                      "only in model tests", "not covered"], [
            [row.backend, flow_label(row.flow), f"{len(row.covered)} of {row.total}",
             "–" if row.flow in portable_only else len(row.delegated),
             len(row.only_in_models), len(row.uncovered)]
            for row in items])

    def missing_in(op: str) -> tuple[list[str], list[str]]:
        nowhere = [flow_label(r.flow) for r in rows if op not in r.operator_cases
                   and op not in r.other_cases]
        models = [flow_label(r.flow) for r in rows if op in r.other_cases
                  and op not in r.operator_cases]
        return nowhere, models

    def flows_words(names: list[str]) -> str:
        return "every flow" if len(names) == len(rows) and len(rows) > 1 else \
            ", ".join(names) or "–"

    missing = sorted({op for row in rows for op in (*row.uncovered, *row.only_in_models)})

    def listing(items: list) -> tuple[str, list[str]]:
        return table(["core ATen op", "no test holds it in", "only model tests hold it in"],
                     [[code(op), *(flows_words(names) for names in missing_in(op))]
                      for op in items])

    intro = (f"Of the {total} overloads the installed torch tags core ATen (`torch.Tag.core`, "
             "from the reports' facts), those the lowered graphs of operator tests held, "
             "per flow, counted after partitioning (a view's `_copy` and ExecuTorch's dim "
             "order ops count as the core op they replace); delegated in a case: a "
             "delegate took it in at least one operator test. `backends/suite/core_aten.toml` "
             "says why each one no operator test covers is left out.\n\n")
    return [Section(heading="## Core ATen coverage\n", intro=intro, items=rows,
                    render_items=figures, unit="flows"),
            Section(heading="## Core ATen ops no operator test covers\n", items=missing,
                    render_items=listing, unit="ops",
                    empty="Every core ATen op is held by an operator test in every flow.\n")]


def quality_section(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    rows = tally.quality(merged.results, order)
    if not rows:
        return []
    edges = ("0", *(f"{e:g}" for e in tally.RATIO_BUCKETS))
    buckets = [f"≤ {edges[1]}", *(f"{low}–{high}" for low, high in zip(edges[1:], edges[2:], strict=False)),
               f"> {edges[-1]}"]

    borderline = f"borderline passes (≥ {tally.BORDERLINE_RATIO:g})"

    def db(value: float | None) -> str:
        return "–" if value is None else f"{value:.1f}"

    def render(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "compared", "no error", "SQNR min", "SQNR p5",
                      "SQNR median", "error/bound p95", *buckets, borderline], [
            [row.backend, flow_label(row.flow), len(row.ratios), row.exact, db(min(row.sqnr, default=None)),
             db(tally.percentile(row.sqnr, 0.05)), db(tally.percentile(row.sqnr, 0.5)),
             f"{tally.percentile(row.ratios, 0.95):.3g}", *row.buckets(), row.borderline]
            for row in items])

    intro = ("Per flow, over the subtests whose outputs were compared: the worst output's "
             "SQNR in dB (no error: an exact match) and its max error in units of the "
             "rule's bound (over 1 fails), counted in buckets. A flow that passes just "
             "barely shows up in the last buckets. Borderline passes: the passing subtests "
             f"at {tally.BORDERLINE_RATIO:g}x of the bound or more (each is listed under "
             "Borderline passes).\n\n")
    return [Section(heading="## Numerical quality\n", intro=intro, items=rows,
                    render_items=render, unit="flows")]


def duplicates_section(merged: Merged) -> list[Section]:
    if not merged.duplicates:
        return []
    conflicts = [d for d in merged.duplicates if d.conflict]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test", "kept (newest run)", "also seen"], [
            [code(d.nodeid), f"{d.kept.status} in {code(d.kept.run.path)}",
             "; ".join(f"{o.status} in {code(o.run.path)}" for o in d.others)] for d in items])

    intro = (f"{plural(len(merged.duplicates), 'test')} appear in more than one run; each is "
             f"counted once, from the run that started last. "
             + (f"{len(conflicts)} of them disagree:" if conflicts else "They all agree."))
    return [Section(heading="## Duplicates\n", intro=intro, items=conflicts,
                    render_items=render, unit="conflicts")]


def changes_sections(changes: Changes) -> list[Section]:
    base = changes.baseline
    summary = (f"Baseline: {plural(len(base.runs), 'run')} "
               f"({', '.join(code(run.path) for run in base.runs)}), "
               f"{plural(len(base.results), 'test')}. {_changes_counts(changes)}.\n")
    if base.incomplete:
        summary += "The baseline includes an incomplete run: some tests may be missing from it.\n"
    sections = [Section(heading="## Changes since the baseline\n", intro=summary, cuttable=False)]

    def was_now(items: list) -> tuple[str, list[str]]:
        return table(["test", "flow", "was", "now", "error"], [
            [code(c.nodeid), flow_label(c.flow), c.was.status, c.now.status,
             _first_error(c.now) or _first_error(c.was)] for c in items])

    def one_side(attribute: str) -> Callable[[list], tuple[str, list[str]]]:
        def render(items: list) -> tuple[str, list[str]]:
            return table(["test", "flow", "status"], [
                [code(c.nodeid), flow_label(c.flow), getattr(c, attribute).status]
                for c in items])
        return render

    for title, items, render in (
        ("Regressions (passed in the baseline, fail now)", changes.regressions, was_now),
        ("Lost delegation (passed delegated in the baseline, pass undelegated now)",
         changes.lost_delegation, was_now),
        ("Fixes (failed in the baseline, pass now)", changes.fixes, was_now),
        ("Other status changes", changes.other, was_now),
        ("New tests", changes.new, one_side("now")),
        ("Removed tests", changes.removed, one_side("was")),
    ):
        if items:
            sections.append(Section(heading=f"### {title}\n", items=items,
                                    render_items=render, unit="tests"))
    return sections


def _changes_counts(changes: Changes) -> str:
    worse = sum(1 for d in changes.drift if d.worse)
    return (f"**{plural(len(changes.regressions), 'regression')}**, "
            f"**{len(changes.delegation_regressions())} lost delegation**, "
            f"{plural(len(changes.fixes), 'fix', 'fixes')}, {len(changes.new)} new, "
            f"{len(changes.removed)} removed, {plural(len(changes.other), 'other change')}; "
            f"metric drift: {worse} worse, {len(changes.drift) - worse} better")


def drift_section(changes: Changes) -> Section:
    """Each subtest metric that moved beyond its threshold since the baseline, worst first:
    what a reviewer scans for a silent loss (delegation, size, speed) under a green status."""
    def render(items: list) -> tuple[str, list[str]]:
        return table(["change", "metric", "test", "subtest", "flow", "was", "now", "factor"], [
            [d.bucket, d.metric, code(d.result.nodeid), d.subtest, flow_label(d.result.flow),
             d.was, d.now, _factor(d.factor)] for d in items])

    intro = ("Per subtest (matched by node id and subtest index), each metric that got at "
             f"least {drift.WORSE_FACTOR:g}x worse or better and moved by more than its noise "
             "floor; a subtest whose status crossed between passing and failing is one "
             "`status` row. Metrics: "
             + "; ".join(f"`{m.name}` {m.label}" for m in drift.METRICS)
             + ". `--fail-on` can name each metric as a gate.\n\n")
    return Section(heading="## Metric drift\n", intro=intro, items=changes.drift,
                   render_items=render, unit="changes",
                   empty="No metric moved beyond its threshold.\n")


def _factor(factor: float | None) -> str:
    """How many times worse or better (the bucket says which)."""
    if factor is None:
        return "–"
    times = max(factor, 1 / factor) if factor else float("inf")
    return "∞" if times == float("inf") else f"{times:.2f}x"


def _first_error(result: TestResult) -> str:
    """The message line of the test's first failure, short enough for a table cell."""
    found = tally.failures_of(result)
    return shorten(message_line(found[0].error), ERROR_IN_TABLE) if found else ""


def build(merged: Merged, changes: Changes | None = None, options: Options | None = None
          ) -> list[Section]:
    """All sections of the summary, in reading order."""
    options = options or Options()
    order = tally.flow_order(merged)
    failing = tally.failing_tests(merged, order)
    failures = [f for _, found in failing for f in found]
    sections = [header(merged, options.title, changes), runs_section(merged), flows_section(merged, order)]
    if changes is not None:
        sections.extend(changes_sections(changes))
        sections.append(drift_section(changes))
    sections += computation_section(merged, order)
    sections += [
        matrix_section(merged, order),
        stage_section(failures),
        signature_section(failures),
    ]
    places = tally.places(failures)
    sections += where_section(places)
    sections += flaky_section(failing)
    sections += non_strict_section(merged, order)
    sections += budget_breach_sections(merged, order)
    sections.append(failures_section(failing, options.link_from, places))
    sections += borderline_section(merged, order)
    sections += stateful_section(merged, order)
    sections += cost_section(merged, order)
    sections += [
        slowest_section(merged, options.slowest),
        coverage_section(merged, order),
    ]
    sections += core_aten_sections(merged, order)
    sections += quality_section(merged, order)
    return sections + duplicates_section(merged)
