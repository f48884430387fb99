"""The support matrix as one self-contained HTML page (`summary --page reports/index.html`).

At a thousand cases by twenty flows nobody reads the markdown summary; people want to look
and click. This module turns merged results (and, when given, earlier runs) into plain data,
embeds it once, packed (gzip+base64: a core to draw from, and per backend the details a
click or a text filter unpacks), in a page whose CSS and JavaScript (`page.css` beside this
file; the script's parts in `page_script/`, one per view, then `page.js`) are inlined, so the file
opens from disk or from a CI artifact with no network. The browser renders the matrix
lazily (only the rows in view); with the packing, a `make test-all` merge of 40,000 tests
stays a light page (`page_scale.py` measures it).

Every number comes from `tally` and the sections (`sections/`: each module builds its own
part of the data, `page_data` calls them), every status and record field from the
contract: the page holds no list of its own. Only the look of each status is decided here.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import operator
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

from etsuite.backends.harness.contract.facts import FlowFacts
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import RECORD_FIELDS
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, SKIPPING, STAGES, Status
from etsuite.tools.report import tally
from etsuite.tools.report.backend_notes import BackendNote, backend_notes
from etsuite.tools.report.baseline_diff import Changes
from etsuite.tools.report.loading import Merged, Run, TestResult, seed_policy_text
from etsuite.tools.report.sections import (
    baseline,
    borderline,
    case_costs,
    core_aten_coverage,
    non_strict,
    results,
    where,
)
from etsuite.tools.report.sections.baseline import HistoryPoint
from etsuite.tools.report.sections.common import AS_JSON, plain, when

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
        "summary": results.page(rows, status_index),
        "cases": [tally.display_case(case) for case in cases],
        "grid": grid,
        "runs": [_run_info(run) for run in merged.runs],
        # the sections' parts, each built by its module of sections/
        "history": baseline.page(merged, changes, history or []),
        "borderline": borderline.page(merged, order, flow_index),
        "non_strict": non_strict.page(merged, order),
        "where": where.page(merged, order, flow_index),
        "core_aten": core_aten_coverage.page(merged, order, flow_index),
        "costs": case_costs.page(merged, order, flow_index),
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
        self.record_rows: list[tuple] = []

    def add(self, result: TestResult, run: int) -> None:
        for name, value in zip(self.RESULT, (
                result.nodeid, result.outcome, result.phase, round(result.duration, 4), run,
                result.longrepr, tally.repro(result), len(result.records)), strict=True):
            self.results[name].append(value)
        # One tuple per record, its fields read in one call; turned into columns once, in
        # `data` (record.to_dict's dataclasses.asdict deep-copies every record: it was
        # most of the page's time at 40,000 tests).
        self.record_rows.extend(map(_RECORD_VALUES, result.records))

    def data(self) -> dict:
        columns = zip(*self.record_rows, strict=True) if self.record_rows \
            else ([] for _ in RECORD_FIELDS)
        return {"results": {k: _column(v) for k, v in self.results.items()},
                "records": {name: _column(_plain_column(column))
                            for name, column in zip(RECORD_FIELDS, columns, strict=True)}}


_RECORD_VALUES = operator.attrgetter(*RECORD_FIELDS)


def _plain_column(column: Sequence[Any]) -> list:
    """A column's values as JSON; a column of text, integers and nulls (most of them) is
    taken as it is, without a call per value."""
    if set(map(type, column)) <= AS_JSON:
        return list(column)
    return list(map(plain, column))


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


def _run_info(run: Run) -> dict:
    return {"path": run.path, "kind": run.kind, "seed": run.seed,
            "seed_policy": seed_policy_text(run.seed_policy), "finished": run.finished,
            "exitcode": run.exitcode, "started": when(run.started), "tests": run.tests,
            "torch": run.version("torch"), "executorch": run.version("executorch")}


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
