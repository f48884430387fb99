"""The support matrix as one self-contained HTML page (`summary --page reports/index.html`).

At a thousand cases by twenty flows nobody reads the markdown summary; people want to look
and click. This module turns merged results (and, when given, earlier runs) into plain data,
embeds it once, packed (gzip+base64: a core to draw from, and per backend the details a
click or a text filter unpacks), in a page whose CSS and JavaScript (`page.css` beside this
file; the script's parts in `page_script/`, one per view, then `page.js`) are inlined, so the file
opens from disk or from a CI artifact with no network. The browser renders the matrix
lazily (only the rows in view); with the packing, a `make test-all` merge of 40,000 tests
stays a light page (`page_scale.py` measures it).

Every number comes from `tally`, `case_costs` and `baseline_diff`, every status and record
field from the contract: the page holds no list of its own. Only the look of each status is
decided here.
"""

from __future__ import annotations

import base64
import enum
import gzip
import hashlib
import json
import math
import re
import statistics
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping

from etsuite.backends.harness.contract.costs import time_per_call
from etsuite.backends.harness.contract.facts import FlowFacts
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import RECORD_FIELDS
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, SKIPPING, STAGES, Status
from etsuite.tools.report import case_costs, drift, tally
from etsuite.tools.report.backend_notes import BackendNote, backend_notes
from etsuite.tools.report.baseline_diff import Change, Changes
from etsuite.tools.report.formatting import in_words
from etsuite.tools.report.loading import Merged, Run, TestResult, seed_policy_text

DEFAULT_TITLE = "ExecuTorch backend support matrix"

# How each status looks in a cell: background, text colour, short label. Passing statuses
# are green (delegated: solid; undelegated: pale, striped in the CSS), failures red to
# orange by stage, skips grey or blue.
STATUS_STYLE: dict[Status, tuple[str, str, str]] = {
    Status.PASS: ("#1f8a4c", "#ffffff", "pass"),
    Status.PASS_UNDELEGATED: ("#c9ecd2", "#14532d", "undelegated"),
    Status.FAIL_QUANTIZE: ("#b42318", "#ffffff", "quantize"),
    Status.FAIL_LOWER: ("#d92d20", "#ffffff", "lower"),
    Status.FAIL_SERIALIZE: ("#e04f16", "#ffffff", "serialize"),
    Status.FAIL_LOAD: ("#e46a11", "#ffffff", "load"),
    Status.FAIL_RUN: ("#c4320a", "#ffffff", "run"),
    Status.FAIL_MISMATCH: ("#f79009", "#1d1d1d", "mismatch"),
    Status.FAIL_RECIPE_ACCURACY: ("#fdb022", "#1d1d1d", "recipe accuracy"),
    Status.FAIL_BUDGET: ("#b54708", "#ffffff", "budget"),
    Status.FAIL_CRASH: ("#6e0c0c", "#ffffff", "crash"),
    Status.FAIL_TIMEOUT: ("#7a2e0e", "#ffffff", "timeout"),
    Status.FAIL_INFRA: ("#475467", "#ffffff", "infra"),
    Status.FAIL_TEST: ("#9e2a2b", "#ffffff", "test failed"),
    Status.ERROR: ("#5b2333", "#ffffff", "error"),
    Status.XPASS: ("#c11574", "#ffffff", "xpass"),
    Status.XFAIL: ("#e9d7fe", "#42307d", "xfail"),
    Status.SKIP_INVALID: ("#d0d5dd", "#1d2939", "invalid"),
    Status.SKIP_UNSUPPORTED: ("#eaecf0", "#344054", "unsupported"),
    Status.SKIP: ("#eaecf0", "#344054", "skip"),
    Status.LOWERED_NOT_RUN: ("#b2ddff", "#194185", "not run"),
    Status.UNAVAILABLE: ("#98a2b3", "#ffffff", "unavailable"),
}


def status_kind(status: Status) -> str:
    if status in PASSING:
        return "passing"
    if status in FAILING:
        return "failing"
    if status in SKIPPING:
        return "skipping"
    return "other"  # xfail: neither a pass nor a failure


@dataclass
class HistoryPoint:
    """One earlier run (the merged reports of one CI run) shown in the history."""

    label: str
    merged: Merged


# ---------------------------------------------------------------- the data object

def page_data(merged: Merged, changes: Changes | None = None,
              history: list[HistoryPoint] | None = None, title: str = DEFAULT_TITLE) -> dict:
    """Everything the page shows, as JSON-ready data in two parts: `core`, what the page
    needs to draw (the summary, and the matrix as columns of small integers: case, flow,
    status, delegated nodes, subtests per result), and `details`, one part per backend
    with each result's node id, pytest outcome, error text, repro and records, which the
    page unpacks only when a cell of that backend is opened or a text filter needs them.
    At 40,000 tests the details are most of the bytes; the core is what must be quick."""
    order = tally.flow_order(merged)
    flow_index = {key: index for index, key in enumerate(order)}
    backends = list(dict.fromkeys(backend for backend, _ in order))
    statuses = list(Status)
    status_index = {status: index for index, status in enumerate(statuses)}
    cases: dict[str, int] = {}
    runs = {id(run): index for index, run in enumerate(merged.runs)}
    grid: dict[str, list] = {"case": [], "flow": [], "status": [], "delegated": [],
                             "nodes": [], "subtests": []}
    details = [_Details() for _ in backends]
    backend_index = {backend: index for index, backend in enumerate(backends)}
    for result in merged.results:
        case = case_id(result.nodeid, result.flow)
        key = tally.flow_key(result)
        grid["case"].append(cases.setdefault(case, len(cases)))
        grid["flow"].append(flow_index[key])
        grid["status"].append(status_index[result.status])
        delegated, nodes = _nodes(result)
        grid["delegated"].append(delegated)
        grid["nodes"].append(nodes)
        grid["subtests"].append(len(result.records))
        details[backend_index[key[0]]].add(result, runs[id(result.run)])
    rows = tally.flow_rows(merged, order)
    core = {
        "title": title,
        "statuses": [{"name": s.value, "color": STATUS_STYLE[s][0], "text": STATUS_STYLE[s][1],
                      "label": STATUS_STYLE[s][2], "kind": status_kind(s)} for s in statuses],
        "fields": list(RECORD_FIELDS),
        "stages": list(STAGES),
        "backends": [{"name": b, **_note(n)} for b, n in zip(
            backends, _notes_by_backend(merged, rows, backends), strict=True)],
        "flows": [_flow_info(merged, key, backend_index) for key in order],
        "summary": _summary(rows, status_index),
        "cases": [tally.display_case(case) for case in cases],
        "grid": grid,
        "runs": [_run_info(run) for run in merged.runs],
        "history": _history(merged, changes, history or []),
        "borderline": _borderline(merged, order, flow_index),
        "non_strict": _non_strict(merged, order),
        "where": _where(merged, order, flow_index),
        "core_aten": _core_aten(merged, order, flow_index),
        "costs": _costs(merged, order, flow_index),
    }
    return {"core": core, "details": [d.data() for d in details]}


def _nodes(result: TestResult) -> tuple[int, int]:
    """Delegated and all nodes of the result's lowered graphs, -1 when no record says."""
    delegated = nodes = -1
    for record in result.records:
        if record.delegated_nodes is not None:
            delegated = max(delegated, 0) + record.delegated_nodes
            nodes = max(nodes, 0) + record.delegated_nodes + (record.undelegated_nodes or 0)
    return delegated, nodes


class _Details:
    """One backend's results in full, as columns (one list per result field and per
    record field): a column of text that repeats (errors, outcomes, reasons) is stored
    once per distinct value with indices, which is what keeps 40,000 tests light."""

    RESULT = ("nodeid", "outcome", "phase", "duration", "run", "longrepr", "repro", "records")

    def __init__(self) -> None:
        self.results: dict[str, list] = {name: [] for name in self.RESULT}
        self.records: dict[str, list] = {name: [] for name in RECORD_FIELDS}

    def add(self, result: TestResult, run: int) -> None:
        for name, value in zip(self.RESULT, (
                result.nodeid, result.outcome, result.phase, round(result.duration, 4), run,
                result.longrepr, tally.repro(result), len(result.records)), strict=True):
            self.results[name].append(value)
        for record in result.records:
            # Field by field rather than record.to_dict(): its dataclasses.asdict deep-copies
            # every record, which was most of the page's time at 40,000 tests.
            for name in RECORD_FIELDS:
                self.records[name].append(_plain(getattr(record, name)))

    def data(self) -> dict:
        return {"results": {k: _column(v) for k, v in self.results.items()},
                "records": {k: _column(v) for k, v in self.records.items()}}


def _column(values: list) -> list | dict:
    """A column as it is, or, when it is text that repeats, {"strings": distinct values,
    "index": one index per row (-1: null)}. Any column qualifies, so the page keeps no list
    of fields of its own."""
    if not values or not all(v is None or isinstance(v, str) for v in values):
        return values
    strings: dict[str, int] = {}
    index = [-1 if v is None else strings.setdefault(v, len(strings)) for v in values]
    if len(strings) > len(values) // 2:
        return values  # mostly distinct (node ids): indices would only add
    return {"strings": list(strings), "index": index}


def unpack_column(column: list | dict) -> list:
    """The inverse of `_column` (the page does the same in JavaScript)."""
    if isinstance(column, dict):
        return [None if i < 0 else column["strings"][i] for i in column["index"]]
    return column


def _plain(value: Any) -> Any:
    """A record's value as its JSON (what the contract's to_dict writes): a status as its
    name, a nested statistic by its own to_dict. JSON has no NaN or infinity (a NaN
    output's error is one): they travel as text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (str, int)) or value is None:
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    return value


def _result_index(merged: Merged) -> dict[int, int]:
    """Position of each result in the grid (by identity): how a section points at a cell."""
    return {id(result): index for index, result in enumerate(merged.results)}


def _borderline(merged: Merged, order: list[tally.FlowKey],
                flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """The borderline passes, all of them, closest to their bound first: [result, subtest
    (None when the test has one), worst ratio, margin, rule, repro] each, and the count per
    flow whose outputs were compared. None when no outputs were compared (the section is
    not shown)."""
    rows = tally.quality(merged.results, order)
    if not rows:
        return None
    index = _result_index(merged)
    return {"ratio": tally.BORDERLINE_RATIO,
            "rows": [[index[id(b.result)],
                      b.record.subtest if len(b.result.records) > 1 else None,
                      _plain(b.ratio), b.record.margin, b.record.verdict_rule, b.repro]
                     for b in tally.borderline(merged.results)],
            "flows": [[flow_index[(row.backend, row.flow)], row.borderline] for row in rows]}


def _core_aten(merged: Merged, order: list[tally.FlowKey],
               flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """Core ATen coverage per flow (`tally.core_aten`, as the summary's section): its
    total, and per flow [flow, covered: [[overload, operator test cases, of them
    delegated]], delegated in a case (None: the flow delegates nothing), only in model
    tests, the uncovered overloads]. None when no report names the core overloads (the
    section is not shown)."""
    rows = tally.core_aten(merged, order)
    if not rows:
        return None
    portable_only = tally.non_delegating(merged)
    return {"total": rows[0].total,
            "flows": [[flow_index[(row.backend, row.flow)],
                       [[op, len(row.operator_cases[op]), len(row.delegated_cases.get(op, ()))]
                        for op in row.covered],
                       None if row.flow in portable_only else len(row.delegated),
                       row.only_in_models, row.uncovered] for row in rows]}


def _costs(merged: Merged, order: list[tally.FlowKey], flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """The cost charts per flow (`case_costs`): "shares", [flow, [[result, delegated
    share], ...] lowest first]; "runtime", [flow, [[result, ratio to portable, seconds,
    portable seconds, basis], ...] slowest first, [results without a portable
    counterpart]]; "portable": whether a portable run was timed (without one the page
    says so instead of a runtime chart); "timed_flows": the flows other than portable
    with a timed call (each gets that message or its chart). None when no case was
    lowered or timed."""
    index = _result_index(merged)
    shares = case_costs.shares(merged, order)
    runtimes = case_costs.runtimes(merged, order)
    portable = case_costs.has_portable_run(merged)
    timed_flows = sorted({flow_index[tally.flow_key(r)] for r in merged.results
                          if r.flow not in (None, case_costs.PORTABLE)
                          and any(time_per_call(x) for x in r.records)})
    if not shares and not timed_flows:
        return None
    return {"portable": portable,
            "timed_flows": timed_flows,
            "shares": [[flow_index[key], [[index[id(r)], round(s, 4)] for r, s in rows]]
                       for key, rows in shares.items()],
            "runtime": [[flow_index[row.key],
                         [[index[id(x.result)], _plain(round(x.ratio, 4)), round(x.seconds, 7),
                           round(x.portable_seconds, 7), x.basis] for x in row.relative],
                         [index[id(r)] for r in row.unmatched]] for row in runtimes]}


def _non_strict(merged: Merged, order: list[tally.FlowKey]) -> list:
    """The tests of non-strict declared cases: [result, entry, observed status] each."""
    index = _result_index(merged)
    return [[index[id(d.result)], d.entry, d.observed]
            for d in tally.non_strict(merged.results, order)]


def _where(merged: Merged, order: list[tally.FlowKey], flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """Where the failures break (`tally.places`, as the summary's section): per localized
    place {flow, place, what it breaks in words, failures (subtests), tests: [result, its
    subtests that break there (None: the test has one), [[operator test's result, its
    name], ...] the op also fails in]}, and the failures localization could not place,
    [result, subtest, the record's reason] each. None when no failure was localized or
    tried (the section is not shown)."""
    failures = [f for _, found in tally.failing_tests(merged, order) for f in found]
    places = tally.places(failures)
    if not places.shown:
        return None
    index = _result_index(merged)

    def subtest(failure: tally.Failure) -> int | None:
        return failure.subtest if len(failure.result.records) > 1 else None

    def tests(group: tally.Group) -> list:
        found: dict[int, list] = {}
        for failure in group.failures:
            also = [[index[id(r)], tally.test_name(r)]
                    for r in places.also_as_operator_test(failure)]
            entry = found.setdefault(index[id(failure.result)],
                                     [index[id(failure.result)], [], also])
            if subtest(failure) is not None:
                entry[1].append(subtest(failure))
        return [[ri, subtests or None, also] for ri, subtests, also in found.values()]

    return {"groups": [{"flow": flow_index[tally.flow_key(g.failures[0].result)],
                        "place": g.key[1], "breaks": suite_words(tally.suites_of(g)),
                        "failures": g.count, "tests": tests(g)} for g in places.groups],
            "not_localized": [[index[id(f.result)], subtest(f),
                               (f.localization or {}).get("reason")]
                              for f in places.not_localized]}


def suite_words(suites: Mapping[str, int]) -> str:
    """Tests per suite in words, "3 model tests and 4 operator tests": a suite's folder
    name made singular (a backend's own `xnnpack/test` stays as it is)."""
    words = [f"{n} {suite.removesuffix('s') if '/' not in suite else suite} "
             f"test{'' if n == 1 else 's'}" for suite, n in sorted(suites.items())]
    return " and ".join(filter(None, [", ".join(words[:-1]), words[-1]])) if words else ""


def _notes_by_backend(merged: Merged, rows: list[tally.FlowRow],
                      backends: list) -> list:
    found = {note.backend: note for note in backend_notes(merged, rows)}
    return [found.get(backend) for backend in backends]


def _note(note: BackendNote | None) -> dict:
    """What the results table says once per backend: one line, the whole behind a click."""
    if note is None:
        return {"note": None, "note_full": None, "ran": True}
    return {"note": note.short(), "note_full": note.line(), "ran": note.ran}


def _flow_info(merged: Merged, key: tally.FlowKey,
               backend_index: dict[str | None, int]) -> dict:
    backend, flow = key
    facts = next((run.flows()[flow] for run in merged.runs if flow in run.flows()), FlowFacts())
    # A flow that delegates nothing (portable) has no delegated share to show.
    return {"backend": backend, "backend_index": backend_index[backend], "flow": flow,
            "description": facts.description,
            "delegates": True if facts.delegates is None else facts.delegates}


def verdict_words(row: tally.FlowRow) -> str:
    """A share's denominator in words, shown next to it: "1 of 1 with a verdict; 20 not run"."""
    left_out = row.without_verdict()
    return f"{row.passing} of {row.verdicts} with a verdict" + (
        f"; {in_words(left_out)}" if left_out else "")


def _summary(rows: list[tally.FlowRow], status_index: dict[Status, int]) -> dict:
    def row_data(row: tally.FlowRow) -> dict:
        return {"backend": row.backend, "flow": row.flow, "total": row.total,
                "counts": {status_index[s]: n for s, n in row.counts.items() if n},
                "passing": row.passing, "delegated": row.delegated_passing,
                "failing": row.failing, "duration": round(row.duration, 3),
                "unavailable": row.unavailable, "delegates": row.delegates,
                "verdict": verdict_words(row)}

    return {"rows": [row_data(row) for row in rows],
            "total": row_data(tally.total_row(rows))}


def _run_info(run: Run) -> dict:
    return {"path": run.path, "kind": run.kind, "seed": run.seed,
            "seed_policy": seed_policy_text(run.seed_policy), "finished": run.finished,
            "exitcode": run.exitcode, "started": _when(run.started), "tests": run.tests,
            "torch": run.version("torch"), "executorch": run.version("executorch")}


def _when(epoch: float | None) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch)) if epoch is not None else None


# ---------------------------------------------------------------- history

def started(merged: Merged) -> float | None:
    """When the earliest of its runs started: the order of history points."""
    times = [run.started for run in merged.runs if run.started is not None]
    return min(times) if times else None


def _point(label: str, merged: Merged) -> dict:
    order = tally.flow_order(merged)
    flows = {}
    runtimes = _median_runtimes(merged)
    for row in tally.flow_rows(merged, order):
        flows[row.flow or ""] = {"backend": row.backend, "total": row.total,
                                 "passing": row.passing, "delegated": row.delegated_passing,
                                 "failing": row.failing, "pass_rate": row.pass_rate,
                                 "median_runtime": runtimes.get(row.flow)}
    versions = sorted({(run.version("torch"), run.version("executorch")) for run in merged.runs},
                      key=str)
    return {"label": label, "started": _when(started(merged)),
            "versions": [{"torch": t, "executorch": e} for t, e in versions],
            "runs": [run.path for run in merged.runs], "flows": flows}


def _median_runtimes(merged: Merged) -> dict[str | None, float]:
    """Per flow, the median time per call of its timed subtests (`contract/costs.py`)."""
    found: dict[str | None, list[float]] = {}
    for result in merged.results:
        for record in result.records:
            call = time_per_call(record)
            if call is not None:
                found.setdefault(result.flow, []).append(call.seconds)
    return {flow: statistics.median(seconds) for flow, seconds in found.items()}


# What the reviewer's list of changes shows first: status regressions, lost delegation,
# then the metric drift in its own order (drift.BUCKETS, worst first), then the other
# status changes, what got better, and the fixes. The first group reads as worse.
REVIEW_WORSE = ("regression", "lost delegation",
                *(b for b in drift.BUCKETS if b in drift.WORSE_BUCKETS))
REVIEW_ORDER = (*REVIEW_WORSE, "other status change",
                *(b for b in drift.BUCKETS if b not in drift.WORSE_BUCKETS), "fix")


def _review(changes: Changes, index: dict[int, int]) -> list[dict]:
    """The baseline comparison as one list, worst first: each test's status change and
    each subtest metric that drifted, with what it was and is, how many times worse or
    better, whether it is a loss, and the cell it opens (None: the test is not in this
    run). A subtest's own status crossing is left out where its test's regression or
    fix already says it."""
    rows = []

    def add(kind: str, nodeid: str, flow: str | None, metric: str, subtest: int | None,
            was: Any, now: Any, factor: float | None, result: TestResult | None) -> None:
        rows.append({"kind": kind, "worse": kind in REVIEW_WORSE, "nodeid": nodeid,
                     "flow": flow, "metric": metric, "subtest": subtest, "was": was, "now": now,
                     "factor": None if factor is None else _plain(factor),
                     "result": index.get(id(result)) if result is not None else None})

    def status(result: TestResult | None) -> str | None:
        return result.status.value if result is not None else None

    for kind, found in (("regression", changes.regressions), ("fix", changes.fixes),
                        ("lost delegation", changes.lost_delegation),
                        ("other status change", changes.other)):
        for change in found:
            add(kind, change.nodeid, change.flow, drift.STATUS, None, status(change.was),
                status(change.now), None, change.now)
    said = {c.nodeid for c in (*changes.regressions, *changes.fixes)}
    for moved in changes.drift:
        if moved.metric == drift.STATUS and moved.result.nodeid in said:
            continue
        add(moved.bucket, moved.result.nodeid, moved.result.flow, moved.metric,
            moved.subtest, moved.was, moved.now, moved.factor, moved.result)
    rank = {kind: position for position, kind in enumerate(REVIEW_ORDER)}
    # Stable: within a kind, drift keeps its order (by factor), status changes by node id.
    return sorted(rows, key=lambda row: rank[row["kind"]])


def _change(change: Change, index: dict[int, int]) -> dict:
    def side(result: TestResult | None) -> dict | None:
        if result is None:
            return None
        found = tally.failures_of(result)
        return {"status": result.status.value, "error": found[0].error if found else None}

    # "result": the cell this run's side is, so a click opens it (None: a removed test).
    return {"nodeid": change.nodeid, "flow": change.flow, "was": side(change.was),
            "now": side(change.now), "result": index.get(id(change.now))}


def _history(merged: Merged, changes: Changes | None, history: list[HistoryPoint]) -> dict | None:
    if not history and changes is None:
        return None
    points = [_point(p.label, p.merged) for p in history] + [_point("this run", merged)]
    diff = None
    if changes is not None:
        index = _result_index(merged)
        diff = {"against": [run.path for run in changes.baseline.runs],
                **{name: [_change(c, index) for c in getattr(changes, name)]
                   for name in ("regressions", "lost_delegation", "fixes", "other", "new", "removed")},
                "review": _review(changes, index)}
    return {"points": points, "changes": diff}


# ---------------------------------------------------------------- the page

DATA_TYPE = "application/gzip+base64"
"""How the data travels inside the page: JSON, gzip-compressed, in base64 (which is safe
inside a <script> element as it is). The browser unpacks it with DecompressionStream; at
40,000 tests the plain JSON was 43 MiB, more than the browser parses in a second."""


def pack(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)).decode()


def unpack(packed: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(packed)).decode("utf-8"))


_SCRIPT = re.compile(r'<script id="etsuite-(data|details-\d+)" type="' + re.escape(DATA_TYPE)
                     + r'">([^<]*)</script>')


def read_page(html: str) -> dict:
    """The data a page holds ({"core", "details"}, as `page_data` made it): for tests and
    for anyone reading a page from a CI artifact with a script."""
    found = _SCRIPT.findall(html)
    core = [unpack(text) for name, text in found if name == "data"]
    if len(core) != 1:
        raise ValueError(f"a page holds its data once, this one {len(core)} times")
    details = {int(name.split("-")[1]): unpack(text) for name, text in found if name != "data"}
    return {"core": core[0], "details": [details[k] for k in sorted(details)]}


def _asset(name: str) -> str:
    return resources.files("etsuite.tools.report").joinpath(name).read_text(encoding="utf-8")


# The parts of the page's script, in `page_script/`, in the order they are inlined: each is one
# `const <part> = ...` (named as the file, in camelCase) that later parts and `page.js`
# use, so a part only uses the parts before it.
SCRIPT_PARTS = ("shared", "format", "detail", "filters", "matrix", "controls", "summary", "where",
                "borderline", "non_strict", "core_aten", "costs", "history")


def page_script() -> str:
    """The page's one script: the parts and then `page.js`, which draws the page, inside one
    async function (shared.js awaits the unpacked data), so they share one scope and leak
    nothing into the page's globals. One script, so the policy's hash covers all of it."""
    parts = "".join(_asset(f"page_script/{name}.js") for name in SCRIPT_PARTS)
    return f'\n"use strict";\n(async function () {{\n{parts}{_asset("page.js")}}})();\n'


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def content_security_policy(script: str) -> str:
    """The page's policy: only its own script (by its hash) runs, so markup that reached
    the page from a report (an `onerror=`, a `<script>`) is never executed; nothing is
    fetched, not even an image. Inline styles stay allowed: the page colours cells with
    them, and with nothing to fetch a style cannot send anything anywhere."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
            f"base-uri 'none'; form-action 'none'")


def render(data: dict) -> str:
    """The whole page: markup, inlined CSS and JavaScript under a Content-Security-Policy
    that allows that script only, the core data, and one packed part of details per
    backend (data blocks of a type the browser never executes)."""
    details = "".join(f'<script id="etsuite-details-{index}" type="{DATA_TYPE}">{pack(part)}'
                      f"</script>\n" for index, part in enumerate(data["details"]))
    script = page_script()
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" "
        f"content=\"{content_security_policy(script)}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_escape_html(data['core']['title'])}</title>\n"
        f"<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n"
        f"{_asset('page.html')}"
        f"<script id=\"etsuite-data\" type=\"{DATA_TYPE}\">{pack(data['core'])}</script>\n"
        f"{details}<script>{script}</script>\n</body>\n</html>\n")


def build(merged: Merged, changes: Changes | None = None,
          history: list[HistoryPoint] | None = None, title: str = DEFAULT_TITLE) -> str:
    return render(page_data(merged, changes, history, title))
