"""The markdown: exact output of small real cases line by line, section order, the
numbers in the tables, error signatures, repro commands and the size limit."""

import re
from collections import Counter
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report import classify, formatting, loading, markdown, signature, tally
from etsuite.tools.report.baseline_diff import compare
from etsuite.tools.report.sections import by_signature, coverage, matrix, quality, quantized, results
from etsuite.tools.report.size_limit import Section, assemble, fit, parse_size, size

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"
EXPECTED = DATA / "expected"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


def merged_from(*inputs) -> loading.Merged:
    return loading.load_all(loading.expand_inputs(list(inputs)))


def render(merged, changes=None, limit=10**9) -> str:
    text, _ = fit(markdown.build(merged, changes), limit, None)
    return text


def assert_same_lines(actual: str, expected_path: Path):
    expected = expected_path.read_text(encoding="utf-8").splitlines()
    lines = actual.splitlines()
    # Not strict: the first differing line says more than a length error; the count is checked after.
    for number, (got, want) in enumerate(zip(lines, expected, strict=False), 1):
        assert got == want, f"{expected_path.name} line {number}"
    assert len(lines) == len(expected), f"{expected_path.name}: line count"


# ---------------------------------------------------------------- exact markdown

def test_exact_markdown_of_one_backend():
    assert_same_lines(render(merged_from("test/data/reports/portable.json")),
                      EXPECTED / "portable.md")


def test_exact_markdown_of_every_outcome_against_a_baseline():
    current = merged_from("test/data/reports/outcomes.json")
    baseline = merged_from("test/data/reports/baseline/outcomes.json")
    assert_same_lines(render(current, compare(current, baseline)),
                      EXPECTED / "outcomes-vs-baseline.md")


def test_sections_come_in_reading_order():
    current = merged_from("test/data/reports")
    text = render(current, compare(current, merged_from("test/data/reports/baseline")))
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# ExecuTorch backend test report",
        "## Results by backend and flow",
        "## Changes since the baseline",
        "### Regressions (passed in the baseline, fail now)",
        "### Fixes (failed in the baseline, pass now)",
        "### New tests",
        "### Removed tests",
        "## Metric drift",
        "## Quantized or not",
        "## Support matrix",
        "## Failures by stage",
        "## Failures by error signature",
        "## Failures",
        "## Borderline passes",
        "## Slowest tests",
        "## Delegation coverage",
        "## Numerical quality",
        "## Duplicates",
    ]


# ---------------------------------------------------------------- header and flow table

def test_the_header_names_incomplete_runs_seeds_and_versions():
    text = render(merged_from("test/data/reports"))
    assert "- **Runs merged:** 7, **1 incomplete** (`test/data/reports/killed.partial.jsonl`" in text
    assert "- **Seeds:** 1234, seed policy not recorded\n" in text  # older reports
    assert "- **Versions:** torch 2.13.0+cpu, executorch 1.5.1\n" in text
    assert "- **Duplicates:** 4 tests seen in more than one run" in text


def _row(text: str, flow: str) -> dict:
    lines = text.splitlines()
    start = lines.index("## Results by backend and flow")
    header = [c.strip() for c in lines[start + 2].strip("|").split("|")]
    for line in lines[start + 4:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == len(header) and cells[1] == flow:
            return dict(zip(header, cells, strict=True))
    raise AssertionError(f"no row for {flow}")


def _header(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("## Results by backend and flow")
    return [c.strip() for c in lines[start + 2].strip("|").split("|")]


def test_the_flow_table_has_a_column_for_each_status_that_occurs():
    text = render(merged_from("test/data/reports/xnnpack-shard1.json",
                              "test/data/reports/xnnpack-shard2.json"))
    statuses = [c for c in _header(text) if c in {s.value for s in Status}]
    assert statuses == ["pass", "pass_undelegated"]  # the only two in these reports
    row = _row(text, "xnnpack")
    assert (row["pass"], row["pass_undelegated"]) == ("3", "1")


def test_the_flow_table_folds_the_failures_when_statuses_are_many():
    text = render(merged_from("test/data/reports/pipeline.json",
                              "test/data/reports/outcomes.json"))
    header = _header(text)
    assert len(header) <= results.MAX_RESULT_COLUMNS
    assert header[6:-1] == ["failing", "xfail", "skip", "lowered_not_run", "unavailable"]
    faulty = _row(text, "faulty_mismatch")
    assert (faulty["tests"], faulty["failing"], faulty["xfail"], faulty["skip"]) == (
        "6", "3 (mismatch 3)", "1", "2")
    assert _row(text, "portable")["failing"] == "5 (crash 1, timeout 1, test 1, error 2)"
    plain = _row(text, "(no flow)")
    assert (plain["failing"], plain["xfail"], plain["skip"]) == (
        "5 (crash 1, test 1, error 1, xpass 2)", "1", "1")
    assert _row(text, "faulty_lowered_only")["lowered_not_run"] == "3"
    assert _row(text, "missing_sdk")["unavailable"] == "6"
    assert ("- **missing** did not run here (1 flow, 6 tests unavailable): python module "
            "'no_such_vendor_sdk' is not installed\n") in text


def test_six_backends_fit_twelve_columns_and_each_says_once_why_it_did_not_run():
    text = render(merged_from("test/data/reports/six/six-backends.json"))
    header = _header(text)
    assert len(header) <= results.MAX_RESULT_COLUMNS
    assert header[6:-1] == ["pass", "pass_undelegated", "lowered_not_run", "unavailable"]
    # One row per flow, the backend named on its first row only.
    lines = text.splitlines()
    start = lines.index("## Results by backend and flow") + 4
    backends = [line.strip("|").split("|")[0].strip() for line in lines[start:start + 19]]
    assert [b for b in backends if b] == ["portable", "arm", "coreml", "openvino", "qualcomm",
                                          "vulkan"]
    # The QNN reason, 200 characters, once for six flows, with how to enable it.
    reason = "QNN_SDK_ROOT is not set: QnnPartitioner needs the QNN SDK's libQnnHtp.so"
    assert text.count(reason) == 1
    (qnn,) = [line for line in lines if line.startswith("- **qualcomm**")]
    assert qnn.startswith("- **qualcomm** did not run here (6 flows, 24 tests unavailable): ")
    assert "; to enable it: install the Qualcomm AI Engine Direct (QNN) SDK" in qnn
    assert "\\$QNN_SDK_ROOT" in qnn and "&lt;sdk folder>" in qnn  # no math, no tag on GitHub
    (arm,) = [line for line in lines if line.startswith("- **arm**")]
    assert "arm_vgf_fp, arm_vgf_int: on a host with glibc >= 2.38" in arm  # its own hint
    (coreml,) = [line for line in lines if line.startswith("- **coreml**")]
    assert coreml == ("- **coreml** 7 of its 8 tests lowered but did not run here "
                      "(lowered_not_run): this host's ExecuTorch runtime has no 'CoreMLBackend'")
    # Each share with its denominator.
    assert _row(text, "coreml")["correct"] == "1 of 1 (100.0 %)"
    assert ("- **Correct:** 100.0 % (5 of 5 tests with a verdict, 1 of them undelegated; "
            "71 without one: 15 not run, 56 unavailable)") in text


def test_only_skips_give_no_pass_rate_instead_of_dividing_by_zero():
    full = merged_from("test/data/reports/pipeline.json")
    skipped = loading.Merged(full.runs, [r for r in full.results if r.flow == "missing_sdk"], [])
    text = render(skipped)
    assert "- **Correct:** n/a (no test reached a verdict; 6 without one: 6 unavailable)" in text
    assert _row(text, "missing_sdk")["correct"] == "0 of 0 (n/a)"


def test_the_headline_keeps_correct_and_delegated_apart():
    text = render(merged_from("test/data/reports/pipeline.json",
                              "test/data/reports/xnnpack-shard1.json"))
    merged = merged_from("test/data/reports/pipeline.json", "test/data/reports/xnnpack-shard1.json")
    rows = {name: _row(text, name) for name in ("xnnpack", "portable", "faulty_lowered_only")}
    for name in ("xnnpack", "faulty_lowered_only"):  # pass_undelegated is correct, not delegated
        statuses = Counter(r.status for r in merged.results if r.flow == name)
        passed, undelegated = statuses[Status.PASS], statuses[Status.PASS_UNDELEGATED]
        decided = sum(n for s, n in statuses.items() if s in classify.PASSING | classify.FAILING)
        assert undelegated > 0
        assert rows[name]["correct"].startswith(f"{passed + undelegated} of {decided} (")
        assert rows[name]["correct, delegated"].startswith(f"{passed} of {decided} (")
    assert rows["portable"]["correct, delegated"] == "– (no delegate)"
    assert rows["xnnpack"]["delegated nodes"].endswith("%")
    delegated = sum(int(_row(text, name)["correct, delegated"].split()[0])
                    for name in ("xnnpack", "xnnpack_dynamic_int8_per_channel",
                                 "xnnpack_static_int8_per_channel",
                                 "xnnpack_static_int8_per_tensor"))
    assert "- **Correct and delegated:** " in text
    decided = sum(1 for r in merged.results if r.status in classify.PASSING | classify.FAILING)
    assert f"({delegated} of {decided} tests with a verdict: outputs match and a backend took" in text


def test_quantized_or_not_is_shown_apart():
    merged = merged_from("test/data/reports/xnnpack-shard1.json",
                         "test/data/reports/xnnpack-shard2.json")
    text = render(merged)
    rows = dict(quantized.computations(merged.results, tally.flow_order(merged)))
    static = rows[("xnnpack", "xnnpack_static_int8_per_tensor")]
    dynamic = rows[("xnnpack", "xnnpack_dynamic_int8_per_channel")]
    # dynamic int8 quantizes linear only: its adds are delegated in floating point
    assert static["delegated, quantized"] > 0 and static["delegated, float"] == 0
    assert dynamic["delegated, float"] > 0 and dynamic["delegated, quantized"] == 0
    assert ("xnnpack", "xnnpack") not in rows  # an fp32 flow has nothing to say
    passed = [r for r in merged.results if r.status is Status.PASS
              and r.flow == "xnnpack_static_int8_per_tensor"]
    assert sum(static.values()) == len(passed) + static["not delegated"]
    assert "## Quantized or not" in text and "✅ int" in text and "✅ float" in text
    assert matrix.matrix_cell(Counter({(Status.PASS, "delegated, float"): 2})) == "✅ float ×2"


def test_flaky_cases_are_listed_apart_and_still_fail():
    merged = merged_from("test/data/reports/verdicts/flaky.json")
    text = render(merged)
    flaky = {r.nodeid for r in merged.results if tally.is_flaky(r)}
    broken = {r.nodeid for r in merged.results if r.status in classify.FAILING} - flaky
    assert flaky and broken  # faulty_flaky's first run fails; faulty_mismatch always does
    assert all("faulty_flaky" in nodeid for nodeid in flaky)
    section = text.split("## Flaky", 1)[1].split("\n## ", 1)[0]
    assert all(nodeid in section for nodeid in flaky)
    assert not any(nodeid in section for nodeid in broken)
    assert f"{len(flaky) + len(broken)} failing ({len(flaky)} of them flaky)" in text
    assert text.count("· **flaky** (passed when run again)") == len(flaky)


def test_failures_link_their_artifacts_relative_to_the_summary(tmp_path):
    merged = merged_from("test/data/reports/verdicts/flaky.json")
    out = tmp_path / "site"
    out.mkdir()
    text, _ = fit(markdown.build(merged, None, markdown.Options(link_from=str(out))), 10**9, None)
    links = re.findall(r"\[subtest \d+\]\(([^)]+)\)", text)
    with_artifacts = [r for result in merged.results for r in result.records if r.artifacts]
    assert links and len(links) == len(with_artifacts)
    for link in links:
        assert not Path(link).is_absolute()
        assert (out / link / "manifest.json").is_file(), link


def test_numerical_quality_per_flow():
    merged = merged_from("test/data/reports/xnnpack-shard1.json",
                         "test/data/reports/xnnpack-shard2.json",
                         "test/data/reports/verdicts/flaky.json")
    rows = {row.flow: row for row in quality.quality(merged.results, tally.flow_order(merged))}
    records = {flow: [r for result in merged.results if result.flow == flow
                      for r in result.records if r.outputs] for flow in rows}
    int8 = rows["xnnpack_static_int8_per_tensor"]
    assert len(int8.ratios) == len(records["xnnpack_static_int8_per_tensor"])
    assert int8.sqnr and min(int8.sqnr) == min(o.sqnr_db for r in records[
        "xnnpack_static_int8_per_tensor"] for o in r.outputs)
    assert sum(int8.buckets()) == len(int8.ratios) and int8.buckets()[-1] == 0
    mismatches = [r for r in records["faulty_mismatch"] if r.status is Status.FAIL_MISMATCH]
    assert rows["faulty_mismatch"].buckets()[-1] == len(mismatches) > 0  # over the bound
    assert quality.percentile([3, 1, 2], 0.5) == 2 and quality.percentile([], 0.5) is None
    text = render(merged)
    assert "## Numerical quality" in text and "error/bound p95" in text


def test_a_selected_flow_without_tests_is_still_listed():
    full = merged_from("test/data/reports/pipeline.json")
    text = render(loading.Merged(full.runs, [], []))
    assert _row(text, "missing_sdk")["tests"] == "0"
    assert ("- **missing** did not run here (1 flow, 0 tests unavailable): python module "
            "'no_such_vendor_sdk'") in text


# ---------------------------------------------------------------- matrix, failures

def test_matrix_cells_are_compact():
    assert matrix.matrix_cell(Counter({Status.PASS: 1})) == "✅"
    assert matrix.matrix_cell(Counter({Status.FAIL_LOWER: 2, Status.PASS: 3})) == "✅ ×3, ❌ lower ×2"
    assert matrix.matrix_cell(None) == ""
    assert set(matrix.CELL) == set(Status)


def test_the_matrix_has_one_row_per_case_and_one_column_per_flow():
    text = render(merged_from("test/data/reports/pipeline.json"))
    row = next(line for line in text.splitlines() if "pipeline_cases.py::test_add`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    assert cells == ["✅", "✅", "❌ mismatch", "❌ quantize", "❌ lower", "📦", "❗ xpass", "🚫"]


def test_similar_errors_share_a_signature():
    text = render(merged_from("test/data/reports/pipeline.json"))
    assert "| `RuntimeError: cannot partition graph at <address>: N nodes, N supported` |" \
        in re.sub(r" +\|", " |", text)
    groups = by_signature.by_signature([f for _, found in tally.failing_tests(
        merged_from("test/data/reports/pipeline.json"), []) for f in found])
    assert groups[0].count == 6 and groups[0].tests == 5  # one test has two failing subtests


@pytest.mark.parametrize("error, expected", [
    ("RuntimeError: node at 0x7f3a2b10 failed", "RuntimeError: node at <address> failed"),
    ("OSError: cannot open /tmp/pytest-3/x.pte: 13", "OSError: cannot open <path>: N"),
    ("ValueError: shape [2, 10] vs [3, 1]", "ValueError: shape [N, N] vs [N, N]"),
    ("exceeded its time limit of 300s", "exceeded its time limit of Ns"),
    ("int8 conv2d has no kernel for float16", "int8 conv2d has no kernel for float16"),
    ("x.py:3: in f\n>   g()\nE   KeyError: 'aten.add'\nE   more", "KeyError: 'aten.add'"),
    ("", signature.NO_TEXT),
    (None, signature.NO_TEXT),
])
def test_signature_normalization(error, expected):
    assert signature.signature(error) == expected


def test_each_failure_has_its_repro_command():
    merged = merged_from("test/data/reports/outcomes.json")
    text = render(merged)
    failing = [r for r in merged.results if r.status in classify.FAILING]
    assert text.count("Repro:\n```sh\n") == len(failing) == 10
    by_id = {r.nodeid: r for r in merged.results}
    crash = by_id["test/data/reports/src/outcome_cases.py::test_crash_in_runner[portable]"]
    assert tally.repro(crash) == crash.records[1].repro
    # No records: built from the node id and the run's seed, the harness's way.
    setup_error = by_id["test/data/reports/src/outcome_cases.py::test_setup_error[portable]"]
    assert tally.repro(setup_error) == (
        "tox -e portable -- 'test/data/reports/src/outcome_cases.py::test_setup_error[portable]'"
        " --seed 1234 -n 0 --json-report-file=reports/repro-command/last.json")
    plain = by_id["test/data/reports/src/outcome_cases.py::test_plain_failure"]
    assert tally.repro(plain) == (
        "pytest test/data/reports/src/outcome_cases.py::test_plain_failure --seed 1234 -p no:xdist")


def test_a_repro_without_a_known_seed_has_no_seed():
    merged = merged_from("test/data/reports/outcomes.json")
    plain = next(r for r in merged.results if r.nodeid.endswith("test_plain_failure"))
    plain.run.facts = None
    assert tally.repro(plain) == (
        "pytest test/data/reports/src/outcome_cases.py::test_plain_failure -p no:xdist")


def test_duplicates_list_their_conflicts():
    text = render(merged_from("test/data/reports/outcomes.json",
                              "test/data/reports/baseline/outcomes.json"))
    section = text[text.index("## Duplicates"):]
    assert "14 tests appear in more than one run" in section and "2 of them disagree:" in section
    assert section.count("outcome_cases.py::test_") == 2


def test_delegation_coverage_per_flow():
    merged = merged_from("test/data/reports/pipeline.json")
    rows = {row.flow: row for row in coverage.coverage(merged.results, tally.flow_order(merged))}
    assert (rows["xnnpack"].delegated, rows["xnnpack"].nodes) == (4, 6)
    assert rows["xnnpack"].undelegated_ops == Counter({"aten.cumsum.default": 2})
    assert rows["portable"].share == 0.0 and "missing_sdk" not in rows


def test_table_cells_and_fences_survive_odd_text():
    assert formatting.cell("a|b\nc") == "a\\|b c"
    assert formatting.fenced("x\n```\ny") == "````\nx\n```\ny\n````\n"
    assert formatting.code("a`b") == "``a`b``"


# ---------------------------------------------------------------- size limit

@pytest.mark.parametrize("limit", [3000, 8000, 20000, 30000])
def test_the_size_limit_is_kept(limit):
    sections = markdown.build(merged_from("test/data/reports"))
    full = assemble(sections)
    text, cut = fit(sections, limit, "summary.full.md")
    assert cut and size(full) > limit >= size(text)
    assert "This summary was cut to fit" in text


def test_cutting_keeps_whole_rows_and_says_what_was_cut():
    sections = markdown.build(merged_from("test/data/reports"))
    text, _ = fit(sections, 20000, "summary.full.md")
    notes = re.findall(r"_Cut to fit the size budget: (\d+) of (\d+) ([a-z ]+) shown; all of "
                       r"them are in `summary.full.md`._", text)
    assert notes and all(int(shown) < int(total) for shown, total, _ in notes)
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")  # no row is cut in the middle
    assert "[cut:" not in text  # the fixed parts fit; nothing was cut blindly


def test_a_larger_size_limit_keeps_more():
    sections = markdown.build(merged_from("test/data/reports"))
    sizes = [size(fit(sections, limit, None)[0]) for limit in (15000, 25000, 35000)]
    assert sizes == sorted(sizes)


def test_a_size_limit_smaller_than_the_fixed_parts_still_holds():
    sections = markdown.build(merged_from("test/data/reports"))
    text, cut = fit(sections, 1500, None)
    assert cut and size(text) <= 1500 and text.endswith("fixed parts]_\n")


def test_sections_render_within_the_pieces_they_measured():
    """The cut plans with the full rendering's row sizes: fewer rows may not be wider."""
    for section in markdown.build(merged_from("test/data/reports")):
        if section.items:
            pieces = section.piece_sizes()
            for keep in {1, len(section.items) // 2 or 1}:
                head, shown = section.render_items(section.items[:keep])
                assert size(head) + sum(size(p) for p in shown) + 2 <= sum(pieces[:keep])


def test_an_empty_section_says_so():
    section = Section(heading="## X\n", items=[], render_items=None, empty="Nothing.\n")
    assert section.text() == "## X\n\nNothing.\n"


@pytest.mark.parametrize("text, expected", [
    ("900KiB", 900 * 1024), ("1 MiB", 1024 ** 2), ("2000", 2000), ("50kb", 50000),
])
def test_sizes_parse(text, expected):
    assert parse_size(text) == expected


def test_a_bad_size_is_refused():
    with pytest.raises(ValueError):
        parse_size("big")


# ---------------------------------------------------------------- budget breaches

BREACHED_BUDGETS = """
[[budget]]
flows = ["xnnpack"]
case = "*::test_add_broadcast"
max_pte_bytes = {half}
reason = "half the program: every subtest breaks it twice over"

[[budget]]
flows = ["xnnpack_static_int8_per_tensor"]
case = "*::test_add_same_shape"
max_pte_bytes = {most}
reason = "a little under the program"

[[budget]]
flows = ["xnnpack_static_int8_per_tensor"]
case = "*::test_add_alpha"
min_delegation_share = 0.5
reason = "half of the graph delegated"
"""


def breached_report(tmp_path) -> Path:
    """xnnpack-shard{1,2}.json's records judged by real budgets (flows/budgets.py `check`,
    what the harness runs on every passing subtest), written back as a report."""
    import json

    from etsuite.backends.harness.contract.nodeids import case_id
    from etsuite.backends.harness.contract.record import SubtestRecord
    from etsuite.backends.harness.flows import budgets

    reports = [json.loads((DATA / name).read_text(encoding="utf-8"))
               for name in ("xnnpack-shard1.json", "xnnpack-shard2.json")]
    sizes = {(t["nodeid"], r["subtest"]): r["pte_size"] for report in reports
             for t in report["tests"] for r in t["metadata"]["subtests"]}
    broadcast = sizes[("backends/suite/operators/test_add.py::test_add_broadcast[xnnpack]", 0)]
    same = sizes[("backends/suite/operators/test_add.py::"
                  "test_add_same_shape[xnnpack_static_int8_per_tensor]", 0)]
    file = tmp_path / "budgets.toml"
    file.write_text(BREACHED_BUDGETS.format(half=broadcast // 2, most=same - 100),
                    encoding="utf-8")
    limits = budgets.load(file, "budgets.toml")
    report = reports[0]
    report["tests"] += reports[1]["tests"]
    for test in report["tests"]:
        records = [SubtestRecord.from_dict(r) for r in test["metadata"]["subtests"]]
        for record in records:
            budgets.check(limits, record.flow, case_id(record.test_id, record.flow), [record], None)
        test["metadata"]["subtests"] = [r.to_dict() for r in records]
    path = tmp_path / "breached.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def section_of(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0].strip()


def table_rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")][2:]


def test_budget_breaches_have_a_table_per_flow_worst_first(tmp_path):
    merged = merged_from(str(breached_report(tmp_path)))
    breached = [(r.nodeid, x.subtest) for r in merged.results for x in r.records
                if x.status is Status.FAIL_BUDGET]
    assert len(breached) == 4  # broadcast's two subtests, same_shape, alpha (undelegated)
    text = render(merged)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings.index("## Budget breaches") < headings.index("## Failures")
    section = section_of(text, "## Budget breaches")
    assert section.startswith("4 breaches of the limits in `budgets.toml`")
    tables = re.split(r"^### ", section, flags=re.M)[1:]
    assert [t.splitlines()[0] for t in tables] == [
        "xnnpack (xnnpack)", "xnnpack_static_int8_per_tensor (xnnpack)"]
    xnnpack, int8 = (table_rows(t) for t in tables)
    assert [(row[0], row[1], row[2], row[6]) for row in xnnpack] == [
        ("`backends/suite/operators/test_add.py::test_add_broadcast[xnnpack]`", subtest,
         "`max_pte_bytes`", "`budgets.toml:2`") for subtest in ("0", "1")]
    for row in xnnpack:
        measured, limit = (int(cell.removesuffix(" bytes")) for cell in row[3:5])
        assert row[5] == f"{measured / limit:.2f}x" and measured / limit >= 2
    # The undelegated alpha (share 0 under a floor of 0.5: infinitely under) before the
    # same_shape program a little over its limit.
    assert [(row[0].split("::")[1], row[2], row[3], row[4], row[5], row[6]) for row in int8] == [
        ("test_add_alpha[xnnpack_static_int8_per_tensor]`", "`min_delegation_share`", "0.000",
         "0.500", "∞", "`budgets.toml:14`"),
        ("test_add_same_shape[xnnpack_static_int8_per_tensor]`", "`max_pte_bytes`",
         int8[1][3], int8[1][4], int8[1][5], "`budgets.toml:8`")]
    measured, limit = (int(cell.removesuffix(" bytes")) for cell in int8[1][3:5])
    assert measured - limit == 100 and int8[1][5] == f"{measured / limit:.2f}x"


def test_budget_breaches_are_cut_to_the_size_limit_like_any_section(tmp_path):
    sections = markdown.build(merged_from(str(breached_report(tmp_path))))
    breaches = [s for s in sections if s.unit == "breaches"]
    assert [len(s.items) for s in breaches] == [2, 2] and all(s.cuttable for s in breaches)
    text, cut = fit(sections, size(assemble(sections)) - 200, "summary.full.md")
    assert cut and "_Cut to fit the size budget:" in text


def test_no_breach_no_section():
    assert "## Budget breaches" not in render(merged_from("test/data/reports"))


def test_a_cut_section_shows_the_first_rows_of_its_full_table_formatted_once():
    """Cutting plans from the full rendering's piece sizes: the cut text is that
    rendering's head and first pieces (the same widths), and a table of 100,000s of
    cells is formatted once, not again for the cut."""
    calls = []

    def render_rows(items):
        calls.append(len(items))
        return formatting.table(["case", "note"], [[f"test_{i}", "x" * (i % 7)] for i in items])

    rows = Section(heading="## Rows\n", items=list(range(400)), render_items=render_rows)
    other = Section(heading="## Other\n", intro="kept whole", cuttable=False)
    whole = assemble([rows, other])
    text, cut = fit([rows, other], size(whole) // 3, "full.md")
    assert cut and size(text) <= size(whole) // 3
    shown = [line for line in text.splitlines() if line.startswith("| test_")]
    full = [line for line in whole.splitlines() if line.startswith("| test_")]
    assert 0 < len(shown) < len(full) and shown == full[:len(shown)]
    assert f"_Cut to fit the size budget: {len(shown)} of 400 rows shown" in text
    assert calls == [400], calls
