"""Fuzzing the report reader: a report or results stream from elsewhere, malformed in any
way hypothesis finds (a value of another type anywhere, a key removed, text cut short,
bytes that are not text), read and summarized by the real command, markdown, page and a
baseline comparison included. It either works or stops with the loader's one error
(exit code 2, one line naming the file); any traceback fails the target.

The base is a real report (pipeline.json: every pipeline status) whose records also
carry the nested fields no fixture run fills (a runner's cost, a localization with its
repro, steps, budget breaches), shaped as their writers write them, so that mutations
reach every nested reader."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from etsuite.backends.harness.contract.report import records_of_test
from etsuite.tools.report import summary
from fuzzing import counted, fuzz_settings

DATA = Path(__file__).resolve().parent / "data" / "reports"


COST = {"calls": [{"method": "forward", "iterations": 5, "median": 0.001, "p90": 0.0012,
                   "min": 0.0009}], "peak_rss_bytes": 1 << 20, "planned_memory": {"forward": [64]}}
LOCALIZATION = {
    "method": "intermediates", "localized": True, "compared": 3, "node": "add",
    "target": "aten.add.Tensor", "source": "model.py:3", "module": "m", "delegate": None,
    "boundary": {"first": "add", "last": "add", "nodes": 1}, "reason": None,
    "repro": {"op": "aten.add.Tensor", "status": "fail_mismatch", "reproduces": False,
              "folder": "reports/repros/a", "subgraph": {"nodes": 2, "first": "add",
                                                         "last": "mul", "folder": "reports/repros/b"}}}
STEPS = {"steps": 2, "step_errors": [[0.0], [0.1]], "step_sqnr_db": [[40.0], [None]],
         "failed_step": 1, "step_ms": [1.5, 0.5], "state": "portable",
         "step_methods": ["forward", "forward"]}
BREACHES = [{"limit": "max_pte_bytes", "measured": 2048, "value": 1024, "source": "b.toml:1"}]


def _base() -> dict:
    """pipeline.json with the nested fields filled on one record of each kind."""
    data = json.loads((DATA / "pipeline.json").read_text())
    records = [r for test in data["tests"] for r in records_of_test(test)]
    failing = next(r for r in records if r["status"] == "fail_mismatch")
    failing.update(localization=LOCALIZATION, **STEPS)
    passing = next(r for r in records if r["status"] == "pass")
    passing.update(cost=COST, budget_breaches=BREACHES, runtime="native")
    return data


BASE = _base()
BASE_TEXT = json.dumps(BASE)
STREAM_LINES = (DATA / "killed.partial.jsonl").read_text().splitlines()

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats()
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=6)


@st.composite
def mutated(draw, value):
    """`value` (a copy) with 1 to 4 places changed: a walk from the top picks a place,
    which gets another value or loses a key."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, 4))):
        parent, key = None, None
        node = value
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 4)):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            parent, key = node, draw(st.sampled_from(keys))
            node = node[key]
        if parent is None:
            continue
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(JSON_VALUES)
    return value


def summarize(path: Path, tmp: Path) -> None:
    """The whole summary command over one input against the unchanged base: no exception
    may escape it (bad input is exit code 2)."""
    baseline = tmp / "baseline.json"
    if not baseline.exists():
        baseline.write_text(BASE_TEXT)
    code = summary.main([str(path), "--baseline", str(baseline), "--output",
                         str(tmp / "summary.md"), "--page", str(tmp / "index.html")])
    assert code in (0, 1, 2)


@fuzz_settings(examples_per_second=10)
@given(report=mutated(BASE))
@counted
def test_a_mutated_report_is_summarized_or_refused_in_one_line(report, tmp_path):
    tmp = tmp_path
    path = tmp / "mutated.json"
    path.write_text(json.dumps(report))
    summarize(path, tmp)


@fuzz_settings(examples_per_second=10)
@given(lines=st.lists(st.sampled_from(range(len(STREAM_LINES))), min_size=1, max_size=12),
       data=st.data())
@counted
def test_a_mutated_stream_is_summarized_or_refused_in_one_line(lines, data, tmp_path):
    tmp = tmp_path
    entries = [json.loads(STREAM_LINES[0])] + [json.loads(STREAM_LINES[i]) for i in lines]
    entries = data.draw(mutated(entries))
    path = tmp / "mutated.partial.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries))
    summarize(path, tmp)


@fuzz_settings(examples_per_second=30)
@given(cut=st.integers(0, len(BASE_TEXT)), noise=st.binary(max_size=16),
       suffix=st.sampled_from([".json", ".partial.jsonl"]))
@counted
def test_a_cut_or_garbled_file_is_refused_in_one_line(cut, noise, suffix, tmp_path):
    tmp = tmp_path
    path = tmp / f"garbled{suffix}"
    text = BASE_TEXT if suffix == ".json" else "\n".join(STREAM_LINES)
    path.write_bytes(text.encode()[:cut] + noise)
    summarize(path, tmp)

