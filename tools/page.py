"""The support matrix as one self-contained HTML page (`summary --page reports/index.html`).

At a thousand cases by twenty flows nobody reads the markdown summary; people want to look
and click. This module turns merged results (and, when given, earlier runs) into one plain
data object, embeds it once as JSON in a page whose CSS and JavaScript (`page.css`,
`page.js` beside this file) are inlined, so the file opens from disk or from a CI artifact
with no network. The browser renders the matrix lazily (only the rows in view), which is
what keeps a 10,000-record page responsive.

Every number comes from `tally` and `baseline_diff`, every status and record field from the
contract: the page holds no list of its own. Only the look of each status is decided here.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from importlib import resources

from etsuite.backends.harness.contract.facts import FlowFacts
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import RECORD_FIELDS
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, SKIPPING, STAGES, Status
from etsuite.tools import tally
from etsuite.tools.baseline_diff import Change, Changes
from etsuite.tools.reports import Merged, TestResult, seed_policy_text

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
    Status.FAIL_CRASH: ("#6e0c0c", "#ffffff", "crash"),
    Status.FAIL_TIMEOUT: ("#7a2e0e", "#ffffff", "timeout"),
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
    """Everything the page shows, as JSON-ready data. Results are rows of the matrix
    (case x flow); their records are lists in the contract's field order (`fields`)."""
    order = tally.flow_order(merged)
    flow_index = {key: index for index, key in enumerate(order)}
    statuses = list(Status)
    status_index = {status: index for index, status in enumerate(statuses)}
    cases: dict[str, int] = {}
    runs = {id(run): index for index, run in enumerate(merged.runs)}
    results = []
    for result in merged.results:
        case = case_id(result.nodeid, result.flow)
        results.append([
            cases.setdefault(case, len(cases)), flow_index[tally.flow_key(result)],
            status_index[result.status], result.nodeid, result.outcome, result.phase,
            round(result.duration, 4), runs[id(result.run)], result.longrepr,
            tally.repro(result), [_record_row(r) for r in result.records],
        ])
    return {
        "title": title,
        "statuses": [{"name": s.value, "color": STATUS_STYLE[s][0], "text": STATUS_STYLE[s][1],
                      "label": STATUS_STYLE[s][2], "kind": status_kind(s)} for s in statuses],
        "fields": list(RECORD_FIELDS),
        "stages": list(STAGES),
        "flows": [_flow_info(merged, key) for key in order],
        "summary": _summary(merged, order, status_index),
        "cases": [tally.display_case(case) for case in cases],
        "results": results,
        "runs": [_run_info(run) for run in merged.runs],
        "history": _history(merged, changes, history or []),
        "borderline": _borderline(merged, order, flow_index),
        "non_strict": _non_strict(merged, order),
    }


def _record_row(record) -> list:
    data = record.to_dict()
    return [_finite(data[name]) for name in RECORD_FIELDS]


def _finite(value):
    """JSON has no NaN or infinity (a NaN output's error is one): they travel as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _result_index(merged: Merged) -> dict[int, int]:
    """Position of each result in `results` (by identity): how a section points at a cell."""
    return {id(result): index for index, result in enumerate(merged.results)}


def _borderline(merged: Merged, order, flow_index) -> dict | None:
    """The borderline passes, all of them, closest to their bound first: [result, record
    position, worst ratio, repro] each, and the count per flow whose outputs were
    compared. None when no outputs were compared (the section is not shown)."""
    rows = tally.quality(merged.results, order)
    if not rows:
        return None
    index = _result_index(merged)
    return {"ratio": tally.BORDERLINE_RATIO,
            "rows": [[index[id(b.result)], _position(b.result.records, b.record),
                      _finite(b.ratio), b.repro] for b in tally.borderline(merged.results)],
            "flows": [[flow_index[(row.backend, row.flow)], row.borderline] for row in rows]}


def _position(records: list, record) -> int:
    return next(k for k, candidate in enumerate(records) if candidate is record)


def _non_strict(merged: Merged, order) -> list:
    """The tests of non-strict declared cases: [result, entry, observed status] each."""
    index = _result_index(merged)
    return [[index[id(d.result)], d.entry, d.observed]
            for d in tally.non_strict(merged.results, order)]


def _flow_info(merged: Merged, key) -> dict:
    backend, flow = key
    facts = next((run.flows()[flow] for run in merged.runs if flow in run.flows()), FlowFacts())
    # A flow that delegates nothing (portable) has no delegated share to show.
    return {"backend": backend, "flow": flow, "description": facts.description,
            "delegates": True if facts.delegates is None else facts.delegates}


def _summary(merged: Merged, order, status_index) -> dict:
    rows = tally.flow_rows(merged, order)

    def row_data(row) -> dict:
        return {"backend": row.backend, "flow": row.flow, "total": row.total,
                "counts": {status_index[s]: n for s, n in row.counts.items() if n},
                "passing": row.passing, "delegated": row.delegated_passing,
                "failing": row.failing, "duration": round(row.duration, 3),
                "unavailable": row.unavailable}

    return {"rows": [row_data(row) for row in rows],
            "total": row_data(tally.total_row(rows))}


def _run_info(run) -> dict:
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
    for row in tally.flow_rows(merged, order):
        flows[row.flow or ""] = {"backend": row.backend, "total": row.total,
                                 "passing": row.passing, "delegated": row.delegated_passing,
                                 "failing": row.failing}
    versions = sorted({(run.version("torch"), run.version("executorch")) for run in merged.runs},
                      key=str)
    return {"label": label, "started": _when(started(merged)),
            "versions": [{"torch": t, "executorch": e} for t, e in versions],
            "runs": [run.path for run in merged.runs], "flows": flows}


def _change(change: Change) -> dict:
    def side(result: TestResult | None):
        if result is None:
            return None
        found = tally.failures_of(result)
        return {"status": result.status.value, "error": found[0].error if found else None}

    return {"nodeid": change.nodeid, "flow": change.flow, "was": side(change.was),
            "now": side(change.now)}


def _history(merged: Merged, changes: Changes | None, history: list[HistoryPoint]) -> dict | None:
    if not history and changes is None:
        return None
    points = [_point(p.label, p.merged) for p in history] + [_point("this run", merged)]
    diff = None
    if changes is not None:
        diff = {"against": [run.path for run in changes.baseline.runs],
                **{name: [_change(c) for c in getattr(changes, name)]
                   for name in ("regressions", "fixes", "other", "new", "removed")}}
    return {"points": points, "changes": diff}


# ---------------------------------------------------------------- the page

def embed_json(data) -> str:
    """JSON safe inside a <script> element: no "<" (so no "</script>" or "<!--"), and
    the two line separators that old parsers choke on, escaped."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return resources.files("etsuite.tools").joinpath(name).read_text(encoding="utf-8")


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(data: dict) -> str:
    """The whole page: markup, inlined CSS and JavaScript, the data once as JSON."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_escape_html(data['title'])}</title>\n"
        f"<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n"
        f"{_asset('page.html')}"
        f"<script id=\"etsuite-data\" type=\"application/json\">{embed_json(data)}</script>\n"
        f"<script>\n{_asset('page.js')}</script>\n</body>\n</html>\n")


def build(merged: Merged, changes: Changes | None = None,
          history: list[HistoryPoint] | None = None, title: str = DEFAULT_TITLE) -> str:
    return render(page_data(merged, changes, history, title))
