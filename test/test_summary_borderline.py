"""What a gate that holds needs to see, in the markdown summary and in the page's data:
passes close to their bound (borderline), cases declared by non-strict expectations apart
from the rest, and the seed policy of every run. The inputs are real fixture reports
edited as the harness writes these fields (`verdict_reports.py`)."""

import re
from pathlib import Path

import pytest

import verdict_reports as vr
from etsuite.backends.harness.contract.facts import SEED_POLICIES
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.report import records_of_test
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, Status
from etsuite.tools.report import loading, markdown, page, tally
from etsuite.tools.report.sections import borderline, non_strict, quality
from etsuite.tools.report.size_limit import fit

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


@pytest.fixture
def merged(tmp_path) -> loading.Merged:
    return loading.load_all([str(p) for p in vr.scenario(tmp_path)])


def render(merged) -> str:
    text, _ = fit(markdown.build(merged), 10**9, None)
    return text


def section(text: str, heading: str) -> str:
    """The body of one `## ` section, up to the next."""
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(body: str) -> list[list[str]]:
    """A markdown table's cells, escaped pipes (`\\|`) read back as text."""
    lines = [line for line in body.splitlines() if line.startswith("|")]
    return [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line[1:-1])]
            for line in lines[2:]]


def result(merged, nodeid: str) -> loading.TestResult:
    return next(r for r in merged.results if r.nodeid == nodeid)


def case(nodeid: str) -> str:
    return "`" + tally.display_case(case_id(nodeid, nodeid[nodeid.index("[") + 1:-1])) + "`"


# ---------------------------------------------------------------- borderline passes

def test_a_pass_at_0_9_is_listed_and_one_at_0_5_is_not(merged):
    rows = table_rows(section(render(merged), "Borderline passes"))
    listed = {(row[0], row[1]): row for row in rows}
    at_09, at_05 = (nodeid for nodeid, _ in list(vr.RATIOS)[:2])
    row = listed[(case(at_09), "xnnpack_static_int8_per_tensor")]
    record = result(merged, at_09).records[0]
    assert row[2:] == ["0.90x", record.margin, record.verdict_rule, f"`{record.repro}`"]
    assert "max error 28.8 steps, bound 32" in record.margin
    assert (case(at_05), "xnnpack_static_int8_per_channel") not in listed
    # A failure beyond its bound is a failure, not a borderline pass.
    assert not any("1.50x" in row for row in rows)


def test_borderline_passes_are_sorted_from_the_closest_and_name_their_subtest(merged):
    found = borderline.borderline(merged.results)
    expected = sorted(((ratio, key) for key, ratio in vr.RATIOS.items() if ratio >= 0.7),
                      reverse=True)
    assert [(b.ratio, (b.result.nodeid, b.record.subtest)) for b in found] == expected
    assert tally.BORDERLINE_RATIO == 0.7  # 0.7 itself is borderline: "at least"
    rows = table_rows(section(render(merged), "Borderline passes"))
    assert [row[2] for row in rows] == ["0.90x", "0.80x", "0.70x"]
    assert rows[1][0] == case(vr.ADD + "test_add_broadcast[xnnpack_static_int8_per_tensor]")[:-1] \
        + " (subtest 1)`"
    assert "3 passing subtests whose worst output's max error reached 0.7x" in render(merged)


def test_outputs_without_a_ratio_are_not_a_ratio(merged):
    record = result(merged, vr.ADD + "test_add_same_shape[xnnpack]").records[0]
    assert tally.worst_ratio(record) is None and not tally.is_borderline(record)
    rows = {row.flow: row for row in quality.quality(merged.results, tally.flow_order(merged))}
    compared = [r for res in merged.results if res.flow == "xnnpack"
                and res.run.path.endswith("xnnpack-shard1.json") for r in res.records]
    assert len(rows["xnnpack"].ratios) == len(compared) - 1  # that one has none


def test_numerical_quality_counts_borderline_passes_per_flow(merged):
    rows = table_rows(section(render(merged), "Numerical quality"))
    counts = {row[1]: row[-1] for row in rows}
    assert counts == {"xnnpack": "0", "xnnpack_dynamic_int8_per_channel": "1",
                      "xnnpack_static_int8_per_channel": "0",
                      "xnnpack_static_int8_per_tensor": "2"}
    head = section(render(merged), "Numerical quality")
    assert "| borderline passes (≥ 0.7) |" in " ".join(head.split())
    # The main results table gains no column.
    flows = next(line for line in section(render(merged), "Results by backend and flow")
                 .splitlines() if line.startswith("|"))
    assert "borderline" not in flows


def test_the_markdown_list_is_capped_and_says_how_many_more(tmp_path):
    path, ratios = vr.many_close_passes(tmp_path, copies=6)
    merged = loading.load_all([str(path)])
    text = render(merged)
    body = section(text, "Borderline passes")
    rows = table_rows(body)
    total = len(ratios)
    assert total > borderline.BORDERLINE_SHOWN == len(rows) == 50
    assert [row[2] for row in rows] == [f"{r:.2f}x" for r in sorted(ratios, reverse=True)[:50]]
    assert body.strip().startswith(f"{total} passing subtests whose worst output's")
    assert f"…and {total - 50} more, further from their bound" in body
    # The page lists every one of them, closest first.
    data = page.page_data(merged)["core"]
    assert [row[2] for row in data["borderline"]["rows"]] == sorted(ratios, reverse=True)


def test_no_borderline_pass_is_news_where_outputs_were_compared():
    shards = loading.load_all(["test/data/reports/xnnpack-shard1.json"])
    assert section(render(shards), "Borderline passes").strip() == (
        "No passing subtest reached 0.7x of its rule's bound.")
    older = render(loading.load_all(["test/data/reports/portable.json"]))
    assert "## Borderline passes" not in older  # no ratios recorded: nothing to say


# ---------------------------------------------------------------- non-strict declared cases

def test_non_strict_xfails_and_passes_are_listed_apart(merged):
    rows = table_rows(section(render(merged), non_strict.NON_STRICT_HEADING))
    assert rows == [
        [case(vr.NON_STRICT_PASS), "xnnpack", "passed", f"`{vr.ENTRIES[vr.NON_STRICT_PASS]}`"],
        [case(vr.NON_STRICT_XFAIL), "faulty_mismatch", "failed as declared (xfail; fail_mismatch)",
         f"`{vr.ENTRIES[vr.NON_STRICT_XFAIL]}`"],
    ]
    intro = section(render(merged), non_strict.NON_STRICT_HEADING)
    assert "2 tests of cases declared by a non-strict `[[fail]]` entry" in intro
    assert "1 failed as declared (xfail), 1 passed (counted as correct)." in intro
    assert vr.STRICT_XPASS.split("::")[1] not in intro  # a strict entry is not listed


def test_the_headline_says_how_many_correct_tests_are_non_strict(merged):
    text = render(merged)
    passing = sum(1 for r in merged.results if r.status in PASSING)
    without = sum(1 for r in merged.results if r.status not in PASSING | FAILING)
    assert result(merged, vr.NON_STRICT_PASS).status is Status.PASS
    assert (f" ({passing} of " in text and
            " of them undelegated, 1 of them from non-strict declared cases (see Declared "
            f"input-dependent (non-strict)); {without} without one: " in text)
    assert "1 expected failure (1 of them non-strict), " in text


def test_without_non_strict_cases_nothing_is_said():
    text = render(loading.load_all(["test/data/reports/pipeline.json"]))
    assert non_strict.NON_STRICT_HEADING not in text and "non-strict" not in text


def test_a_non_strict_case_failing_otherwise_is_a_failure(tmp_path):
    data = vr.read(vr.PIPELINE)
    for found in records_of_test(vr.entry_of(data, vr.CASES + "test_known_gap[faulty_quantize]")):
        vr.declare(found, "backends/faulty/expectations.toml:20", strict=False)
    merged = loading.load_all([str(vr.write(data, tmp_path / "pipeline.json"))])
    (row,) = table_rows(section(render(merged), non_strict.NON_STRICT_HEADING))
    assert row[2] == "failed: fail_quantize (not the declared failure)"
    assert "0 failed as declared (xfail), 0 passed (counted as correct), 1 neither." in render(merged)


# ---------------------------------------------------------------- seed policy

def seeds_line(merged) -> str:
    return next(line for line in render(merged).splitlines() if line.startswith("- **Seeds:**"))


def test_the_header_names_the_seed_policy(merged):
    assert seeds_line(merged) == (
        "- **Seeds:** 1234, seed policy pinned: \\$ETSUITE_SEED, e.g. CI's .ci/seed")
    assert SEED_POLICIES["pinned"] == "$ETSUITE_SEED, e.g. CI's .ci/seed"
    assert {run.seed_policy for run in merged.runs} == {"pinned"}  # the key, as written


def test_each_run_says_its_own_seed_policy(tmp_path):
    pinned = vr.scenario(tmp_path / "a", "pinned")[0]
    older = vr.write(vr.read(vr.PIPELINE), tmp_path / "b" / "pipeline.json")
    newer = vr.read("test/data/reports/xnnpack-shard2.json")
    vr.pin_seed(newer, "lunar")
    merged = loading.load_all([str(pinned), str(older),
                               str(vr.write(newer, tmp_path / "c" / "shard2.json"))])
    assert seeds_line(merged) == (
        "- **Seeds:** 1 run: 1234, seed policy lunar (a policy this tool does not know); "
        "1 run: 1234, seed policy not recorded; "
        "1 run: 1234, seed policy pinned: \\$ETSUITE_SEED, e.g. CI's .ci/seed")
    assert [run["seed_policy"] for run in page.page_data(merged)["core"]["runs"]] == [
        "pinned: $ETSUITE_SEED, e.g. CI's .ci/seed", "not recorded",
        "lunar (a policy this tool does not know)"]


def test_older_reports_say_not_recorded():
    merged = loading.load_all(["test/data/reports/portable.json"])
    assert seeds_line(merged) == "- **Seeds:** 1234, seed policy not recorded"


# ---------------------------------------------------------------- the page's data

def test_the_page_holds_borderline_passes_and_non_strict_cases(merged):
    data = page.page_data(merged)["core"]
    border = data["borderline"]
    assert border["ratio"] == tally.BORDERLINE_RATIO
    # Each row points at its cell (the result's place in the grid) and carries what the
    # section shows, so the page needs no record details to draw it.
    found = [(merged.results[ri].nodeid, subtest, ratio, margin, rule, repro)
             for ri, subtest, ratio, margin, rule, repro in border["rows"]]
    assert found == [(b.result.nodeid, b.record.subtest if len(b.result.records) > 1 else None,
                      b.ratio, b.record.margin, b.record.verdict_rule, b.repro)
                     for b in borderline.borderline(merged.results)]
    assert all(b.repro == b.record.repro for b in borderline.borderline(merged.results))
    assert all(data["statuses"][data["grid"]["status"][ri]]["kind"] == "passing"
               for ri, *_ in border["rows"])
    per_flow = {data["flows"][f]["flow"]: n for f, n in border["flows"]}
    assert per_flow["xnnpack_static_int8_per_tensor"] == 2 and per_flow["xnnpack"] == 0
    declared = [(merged.results[ri].nodeid, entry, observed)
                for ri, entry, observed in data["non_strict"]]
    assert declared == [(vr.NON_STRICT_PASS, vr.ENTRIES[vr.NON_STRICT_PASS], None),
                        (vr.NON_STRICT_XFAIL, vr.ENTRIES[vr.NON_STRICT_XFAIL], "fail_mismatch")]


def test_a_page_without_compared_outputs_has_no_borderline_section():
    data = page.page_data(loading.load_all(["test/data/reports/portable.json"]))["core"]
    assert data["borderline"] is None and data["non_strict"] == []
    assert data["runs"][0]["seed_policy"] == loading.SEED_POLICY_NOT_RECORDED


def test_the_new_sections_come_where_they_are_read(merged):
    headings = [line for line in render(merged).splitlines() if line.startswith("## ")]
    assert headings.index("## Failures by error signature") < headings.index(
        f"## {non_strict.NON_STRICT_HEADING}") < headings.index("## Failures") < headings.index(
        "## Borderline passes") < headings.index("## Numerical quality")
