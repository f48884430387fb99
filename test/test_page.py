"""The HTML page's data and markup, without a browser: it follows the contract, embeds its
data safely, needs no network, and the summary CLI writes it (`--page`, `--history`)."""

import json
import re
import shutil
import statistics
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.costs import delegated_share, time_per_call
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import RECORD_FIELDS, OutputStatistics, SubtestRecord
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, Status
from etsuite.tools.report import loading, page, summary, tally
from etsuite.tools.report.baseline_diff import compare
from etsuite.tools.report.sections import baseline

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def load(*paths) -> loading.Merged:
    return loading.load_all(loading.expand_inputs([str(p) for p in paths]))


def embedded(html: str) -> dict:
    """The page's core data (read_page raises unless it is embedded exactly once)."""
    return page.read_page(html)["core"]


def records_of(data: dict) -> list[list]:
    """Every result's details (page_data's columns, unpacked) in the grid's order, each
    [nodeid, outcome, phase, duration, run, longrepr, repro, records as field rows]."""
    core, parts = data["core"], data["details"]
    unpacked = []
    for part in parts:
        results = {k: page.unpack_column(c) for k, c in part["results"].items()}
        fields = [page.unpack_column(part["records"][name]) for name in core["fields"]]
        rows, k = [], 0
        for i in range(len(results["nodeid"])):
            records = [[column[k + j] for column in fields] for j in range(results["records"][i])]
            k += results["records"][i]
            rows.append([results[name][i] for name in page._Details.RESULT[:-1]] + [records])
        unpacked.append(rows)
    seen = [0] * len(parts)
    ordered = []
    for flow in core["grid"]["flow"]:
        backend = core["flows"][flow]["backend_index"]
        ordered.append(unpacked[backend][seen[backend]])
        seen[backend] += 1
    assert seen == [len(rows) for rows in unpacked]  # every detail belongs to one cell
    return ordered


def test_every_status_has_a_look_and_the_page_lists_the_contract():
    assert set(page.STATUS_STYLE) == set(Status)
    data = page.page_data(load(DATA))["core"]
    assert [s["name"] for s in data["statuses"]] == [s.value for s in Status]
    assert data["fields"] == list(RECORD_FIELDS)
    kinds = {s["name"]: s["kind"] for s in data["statuses"]}
    assert {n for n, k in kinds.items() if k == "passing"} == {s.value for s in PASSING}
    assert {n for n, k in kinds.items() if k == "failing"} == {s.value for s in FAILING}
    # Delegated and undelegated passes never look alike.
    assert page.STATUS_STYLE[Status.PASS][:2] != page.STATUS_STYLE[Status.PASS_UNDELEGATED][:2]


def test_results_and_records_round_trip_through_the_page():
    merged = load(DATA)
    whole = page.page_data(merged)
    data, grid = whole["core"], whole["core"]["grid"]
    assert len(grid["status"]) == len(merged.results)
    details = records_of(whole)
    interned = [part["records"]["error"] for part in whole["details"]]
    assert any(isinstance(column, dict) for column in interned)  # repeated errors, once each
    for index, (result, detail) in enumerate(zip(merged.results, details, strict=True)):
        case, flow, status = grid["case"][index], grid["flow"][index], grid["status"][index]
        nodeid, outcome, _, _, _, longrepr, repro, records = detail
        assert (nodeid, outcome, longrepr) == (result.nodeid, result.outcome, result.longrepr)
        assert data["statuses"][status]["name"] == result.status.value
        flow_info = data["flows"][flow]
        assert (flow_info["backend"], flow_info["flow"]) == tally.flow_key(result)
        assert data["backends"][flow_info["backend_index"]]["name"] == result.backend
        assert data["cases"][case] == tally.display_case(case_id(result.nodeid, result.flow))
        assert repro == tally.repro(result)
        assert grid["subtests"][index] == len(result.records)
        rebuilt = [SubtestRecord.from_dict(dict(zip(data["fields"], r, strict=True))) for r in records]
        assert rebuilt == result.records


def test_the_summary_table_matches_the_tally():
    merged = load(DATA)
    data = page.page_data(merged)["core"]
    rows = tally.flow_rows(merged, tally.flow_order(merged))
    assert [(r["backend"], r["flow"], r["total"], r["passing"], r["failing"])
            for r in data["summary"]["rows"]] == [
        (r.backend, r.flow, r.total, r.passing, r.failing) for r in rows]
    rows_data = data["summary"]["rows"]
    assert data["summary"]["total"]["delegated"] == sum(r["delegated"] for r in rows_data) > 0
    # portable kernels never count as delegated, though its passes are `pass`
    (portable,) = [r for r in rows_data if r["flow"] == "portable"]
    assert portable["passing"] > 0 and portable["delegated"] == 0
    assert data["summary"]["total"]["delegated"] < sum(
        1 for r in merged.results if r.status is Status.PASS)


def test_hostile_text_cannot_close_the_data_script():
    merged = load(DATA / "portable.json")
    record = merged.results[0].records[0]
    record.error = "</script><script>alert(1)</script> <!-- \u2028 & nan"
    record.outputs = [OutputStatistics(max_abs_error=float("nan"), sqnr_db=float("-inf"))]
    html = page.build(merged)
    whole = page.read_page(html)
    # The core, one part of details per backend and the page's own script, nothing else.
    assert html.count("<script") == 2 + len(whole["details"])
    assert "alert(1)" not in html  # packed, so never as text a parser could run
    data = whole["core"]
    row = records_of(whole)[0][7][0]
    assert row[data["fields"].index("error")] == record.error
    assert row[data["fields"].index("outputs")] == [{
        "max_abs_error": "nan", "mean_abs_error": None, "sqnr_db": "-inf", "error_ratio": None,
        "rule": None}]


def test_the_page_needs_no_network():
    html = page.build(load(DATA))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I)
    assert not re.search(r"<link\b|<script[^>]+src=|@import|url\(\s*['\"]?https?:", html, re.I)
    for asset in ("page.css", "page.js", "page.html"):
        text = (REPO / "tools" / "report" / asset).read_text(encoding="utf-8")
        assert text.strip()[:200] in html  # inlined, not referenced


# ---------------------------------------------------------------- the CLI

def test_page_only_writes_the_page_and_no_markdown(tmp_path, capsys):
    output = tmp_path / "site" / "index.html"
    assert summary.main(["test/data/reports", "--page", str(output)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"summary: 83 tests, 24 failing, 7 runs -> {output}\n"
    assert sorted(p.name for p in output.parent.iterdir()) == ["index.html"]
    assert len(embedded(output.read_text(encoding="utf-8"))["grid"]["status"]) == 83


def test_page_and_markdown_together(tmp_path):
    html, md = tmp_path / "index.html", tmp_path / "summary.md"
    assert summary.main(["test/data/reports/portable.json", "--page", str(html),
                         "--output", str(md)]) == 0
    assert md.read_text(encoding="utf-8") == (DATA / "expected" / "portable.md").read_text(
        encoding="utf-8")
    assert embedded(html.read_text(encoding="utf-8"))["history"] is None


def test_lost_delegation_is_on_the_page(tmp_path):
    """A baseline where an undelegated pass was a delegated one: the page lists it apart."""
    report = json.loads((DATA / "pipeline.json").read_text(encoding="utf-8"))
    lost = "test/data/reports/src/pipeline_cases.py::test_cumsum[xnnpack]"
    test = next(t for t in report["tests"] if t["nodeid"] == lost)
    for record in test["metadata"]["subtests"]:
        record.update(status="pass", delegated_ops=record["undelegated_ops"], undelegated_ops={})
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(report), encoding="utf-8")
    html = tmp_path / "index.html"
    assert summary.main([str(DATA / "pipeline.json"), "--baseline", str(baseline),
                         "--page", str(html)]) == 0
    changes = embedded(html.read_text(encoding="utf-8"))["history"]["changes"]
    assert [c["nodeid"] for c in changes["lost_delegation"]] == [lost]
    assert lost not in [c["nodeid"] for c in changes["other"]]


def test_the_baseline_gives_the_changes(tmp_path):
    html = tmp_path / "index.html"
    assert summary.main(["test/data/reports/outcomes.json", "--baseline",
                         "test/data/reports/baseline/outcomes.json", "--page", str(html)]) == 0
    history = embedded(html.read_text(encoding="utf-8"))["history"]
    expected = compare(load(DATA / "outcomes.json"), load(DATA / "baseline" / "outcomes.json"))
    assert [c["nodeid"] for c in history["changes"]["regressions"]] == [
        c.nodeid for c in expected.regressions]
    assert [c["nodeid"] for c in history["changes"]["fixes"]] == [c.nodeid for c in expected.fixes]
    assert [p["label"] for p in history["points"]] == ["baseline", "this run"]
    assert history["points"][0]["versions"] == [{"torch": "2.13.0+cpu", "executorch": "1.5.1"}]


def test_a_history_folder_is_one_point_per_run(tmp_path):
    """Entries are ordered by when their runs started, not by name; the changes are
    those since the newest."""
    folder = tmp_path / "history"
    (folder / "b-older").mkdir(parents=True)
    shutil.copy(DATA / "portable.json", folder / "b-older" / "portable.json")
    shutil.copy(DATA / "baseline" / "outcomes.json", folder / "a-newer.json")
    older, newer = load(folder / "b-older"), load(folder / "a-newer.json")
    assert baseline.started(older) < baseline.started(newer)
    html = tmp_path / "index.html"
    assert summary.main(["test/data/reports/outcomes.json", "--history", str(folder),
                         "--page", str(html)]) == 0
    history = embedded(html.read_text(encoding="utf-8"))["history"]
    assert [p["label"] for p in history["points"]] == ["b-older", "a-newer.json", "this run"]
    assert history["points"][0]["flows"]["portable"]["total"] == len(
        [r for r in older.results if r.flow == "portable"])
    expected = compare(load(DATA / "outcomes.json"), newer)
    assert len(history["changes"]["regressions"]) == len(expected.regressions) > 0


def test_history_errors(tmp_path, capsys):
    assert summary.main(["test/data/reports/portable.json", "--history", str(tmp_path),
                         "--page", str(tmp_path / "i.html")]) == 2
    assert "no earlier runs in this folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        summary.main(["test/data/reports/portable.json", "--history", str(tmp_path)])
    assert exit_.value.code == 2
    assert "--history is shown on the page: it needs --page" in capsys.readouterr().err


# ---------------------------------------------------------------- what each case costs

def test_the_share_chart_holds_every_lowered_case_lowest_first():
    merged = load(DATA)
    costs = page.page_data(merged)["core"]["costs"]
    flows = page.page_data(merged)["core"]["flows"]
    charted = {flows[f]["flow"]: rows for f, rows in costs["shares"]}
    assert "portable" not in charted  # portable kernels delegate nothing: no chart
    for flow, rows in charted.items():
        shares = [share for _, share in rows]
        assert shares == sorted(shares)
        assert {merged.results[ri].flow for ri, _ in rows} == {flow}
        for ri, share in rows:
            found = [delegated_share(x) for x in merged.results[ri].records]
            assert share == round(min(s for s in found if s is not None), 4)
        lowered = {r.nodeid for r in merged.results if r.flow == flow
                   and any(delegated_share(x) is not None for x in r.records)}
        assert {merged.results[ri].nodeid for ri, _ in rows} == lowered
    # add with alpha runs on portable kernels in XNNPACK's flow: it leads, at 0.
    first, share = charted["xnnpack_static_int8_per_tensor"][0]
    assert tally.test_name(merged.results[first]).startswith("test_add_alpha") and share == 0


def portable_seconds(merged: loading.Merged) -> dict:
    return {(case_id(r.nodeid, r.flow), x.subtest): time_per_call(x) for r in merged.results
            if r.flow == "portable" for x in r.records if time_per_call(x) is not None}


def test_the_runtime_chart_is_each_case_over_its_portable_run():
    merged = load(DATA)
    data = page.page_data(merged)["core"]
    costs, flows = data["costs"], data["flows"]
    assert costs["portable"] is True
    reference = portable_seconds(merged)
    charted = {flows[f]["flow"]: (rows, unmatched) for f, rows, unmatched in costs["runtime"]}
    assert "portable" not in charted and "xnnpack" in charted
    for flow, (rows, unmatched) in charted.items():
        assert [row[1] for row in rows] == sorted((row[1] for row in rows), reverse=True)
        for ri, ratio, seconds, portable, basis in rows:
            result = merged.results[ri]
            assert result.flow == flow
            pairs = [(time_per_call(x).seconds, reference[(case_id(result.nodeid, flow), x.subtest)].seconds)
                     for x in result.records if time_per_call(x) is not None]
            assert seconds == pytest.approx(sum(p[0] for p in pairs))
            assert portable == pytest.approx(sum(p[1] for p in pairs))
            assert ratio == pytest.approx(seconds / portable, rel=1e-3) and basis == "one call"
        assert unmatched == []  # every timed case of these fixtures also ran on portable


def test_a_case_without_a_portable_run_is_named_not_plotted():
    merged = load(DATA)
    cumsum = "test/data/reports/src/pipeline_cases.py::test_cumsum"
    merged.results = [r for r in merged.results
                      if not (r.flow == "portable" and r.nodeid.startswith(cumsum))]
    data = page.page_data(merged)["core"]
    costs, flows = data["costs"], data["flows"]
    (rows, unmatched), = [(rows, unmatched) for f, rows, unmatched in costs["runtime"]
                          if flows[f]["flow"] == "xnnpack"]
    assert [merged.results[ri].nodeid for ri in unmatched] == [f"{cumsum}[xnnpack]"]
    assert f"{cumsum}[xnnpack]" not in [merged.results[row[0]].nodeid for row in rows]


def test_without_a_portable_run_the_page_says_so_instead_of_a_chart():
    costs = page.page_data(load(DATA / "xnnpack-shard1.json", DATA / "xnnpack-shard2.json"))["core"]["costs"]
    assert costs["portable"] is False and costs["runtime"] == []
    assert len(costs["timed_flows"]) == 4 and len(costs["shares"]) == 4


def test_a_history_point_has_the_pass_rate_and_median_runtime_per_flow():
    merged = load(DATA)
    point = baseline._point("this run", merged)["flows"]
    rows = {r.flow: r for r in tally.flow_rows(merged, tally.flow_order(merged))}
    for flow in ("portable", "xnnpack", "faulty_lower"):
        seconds = [time_per_call(x).seconds for r in merged.results if r.flow == flow
                   for x in r.records if time_per_call(x) is not None]
        assert point[flow]["pass_rate"] == rows[flow].pass_rate
        assert point[flow]["median_runtime"] == (statistics.median(seconds) if seconds else None)
    assert point["portable"]["pass_rate"] == 11 / 16 and point["faulty_lower"]["median_runtime"] is None


def test_the_review_list_puts_regressions_and_bigger_drift_first(tmp_path):
    """pipeline.json against a baseline where one test passed that fails now, and two
    programs that are now 2.5x and 1.5x their baseline's 4000 bytes: the regression, then
    the larger drift, then the smaller."""
    def variant(name: str, sizes: dict, passed: str | None = None) -> Path:
        report = json.loads((DATA / "pipeline.json").read_text(encoding="utf-8"))
        tests = {t["nodeid"]: t for t in report["tests"]}
        for nodeid, size in sizes.items():
            for record in tests[nodeid]["metadata"]["subtests"]:
                record["pte_size"] = size
        if passed:
            tests[passed]["outcome"] = "passed"
            for record in tests[passed]["metadata"]["subtests"]:
                record["status"] = "pass"
        path = tmp_path / name
        path.write_text(json.dumps(report), encoding="utf-8")
        return path

    regressed = "test/data/reports/src/pipeline_cases.py::test_add[faulty_mismatch]"
    bigger = {"test/data/reports/src/pipeline_cases.py::test_add[xnnpack]": 10000,
              "test/data/reports/src/pipeline_cases.py::test_known_gap[xnnpack]": 6000}
    baseline = variant("baseline.json", dict.fromkeys(bigger, 4000), passed=regressed)
    current = load(variant("current.json", bigger))
    review = page.page_data(current, compare(current, load(baseline)))["core"]["history"]["changes"]["review"]
    assert [(row["kind"], row["nodeid"], row["metric"]) for row in review] == [
        ("regression", regressed, "status"),
        ("≥2x worse", next(iter(bigger)), "size"),
        ("≥1.25x worse", list(bigger)[1], "size")]
    assert review[1]["factor"] == pytest.approx(2.5, rel=0.01)
    assert [row["worse"] for row in review] == [True, True, True]
    for row in review:  # each row opens its case
        assert current.results[row["result"]].nodeid == row["nodeid"]
