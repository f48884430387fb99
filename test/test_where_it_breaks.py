"""Where it breaks, aggregated: localized failures grouped per flow by the op they start at,
in the markdown summary and on the page from one grouping (`where.places`), and a model
or example failure whose op also fails as an operator test of its flow names that test.
The reports are a real fixture with failures written in as `--localize` writes them
(`verdict_reports.where_it_breaks`)."""

import json
from pathlib import Path

import pytest

import verdict_reports as vr
from etsuite.tools.report import loading, markdown, page, tally
from etsuite.tools.report.sections import coverage, running_cost, stateful, where
from etsuite.tools.report.size_limit import fit

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "test" / "data" / "reports"
OPERATOR_TEST = "test_add_same_shape[xnnpack]"
UNPLACED_OPERATOR_TEST = "test_add_broadcast[xnnpack_static_int8_per_channel]"
MODEL = vr.MODELS + "test_residual_block[{}]"
EXAMPLE = vr.EXAMPLES + "test_example_model[xnnpack-resnet18]"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


def load(*paths) -> loading.Merged:
    return loading.load_all(loading.expand_inputs([str(p) for p in paths]))


@pytest.fixture
def report(tmp_path) -> Path:
    return vr.where_it_breaks(tmp_path)


def summary_of(merged: loading.Merged) -> str:
    text, _ = fit(markdown.build(merged), 10**9, None)
    return text


def block_of(text: str, nodeid: str) -> list[str]:
    """The lines of one failure's block in the summary's failures."""
    start = text.index(f". `{nodeid}`**")
    end = text.find("\n**", start)
    return text[start:end if end >= 0 else len(text)].splitlines()


def breaks_lines(text: str, nodeid: str) -> list[str]:
    return [line for line in block_of(text, nodeid) if "breaks at" in line]


# ---------------------------------------------------------------- the markdown

def test_a_model_failure_names_the_operator_test_its_op_also_fails(report):
    text = summary_of(load(report))
    also = "; also fails as an operator test: `{}`"
    model_at = "fail_mismatch at compare, breaks at `aten.add.Tensor " \
        "(backends/suite/models/test_small_models.py:41)`"
    # Flow xnnpack: the operator test was localized to the same op.
    assert breaks_lines(text, MODEL.format("xnnpack")) == [
        f"subtest {n}: {model_at}{also.format(OPERATOR_TEST)}" for n in (0, 1)]
    assert breaks_lines(text, EXAMPLE)[0].endswith(also.format(OPERATOR_TEST))
    # The operator test itself points at nothing: it is the operator test.
    assert breaks_lines(text, vr.ADD + OPERATOR_TEST) == [
        "subtest 0: fail_mismatch at compare, breaks at "
        "`aten.add.Tensor (backends/suite/operators/test_add.py:20)`"]
    # Per channel: the operator test could not be localized, but its graph is the add.
    assert breaks_lines(text, MODEL.format("xnnpack_static_int8_per_channel")) == [
        f"subtest {n}: {model_at}{also.format(UNPLACED_OPERATOR_TEST)}" for n in (0, 1)]
    # Per tensor: the flow's operator tests pass, so the model failure says nothing more.
    assert breaks_lines(text, MODEL.format("xnnpack_static_int8_per_tensor")) == [
        f"subtest {n}: {model_at}" for n in (0, 1)]


def test_the_section_groups_per_flow_and_op_with_the_operator_tests(report):
    text = summary_of(load(report))
    section = text[text.index("## Where it breaks"):text.index("## Failures\n")]
    assert "2 failures could not be localized (the record's `localization` says why)." in section
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert "also fails as an operator test" in lines[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [row[:5] for row in rows] == [
        ["`xnnpack`", "`aten.add.Tensor`", "5", "1 examples, 1 models, 1 operators",
         f"`{OPERATOR_TEST}`"],
        ["`xnnpack_static_int8_per_channel`", "`aten.add.Tensor`", "2", "1 models",
         f"`{UNPLACED_OPERATOR_TEST}`"],
        ["`xnnpack_static_int8_per_tensor`", "`aten.add.Tensor`", "2", "1 models", "–"]]


def test_an_operator_test_localized_to_another_op_is_not_named(report, tmp_path):
    data = json.loads(report.read_text(encoding="utf-8"))
    operator = next(t for t in data["tests"] if t["nodeid"] == vr.ADD + OPERATOR_TEST)
    vr.fail_with(operator, vr.localized_at("aten.mul.Tensor", "backends/suite/operators/x.py:3"))
    merged = load(vr.write(data, tmp_path / "elsewhere.json"))
    # Its graph holds the add, but the failure starts at the mul: not the add's failure.
    assert not any("also fails" in line for line in breaks_lines(
        summary_of(merged), MODEL.format("xnnpack")))
    places = where.places([f for _, found in tally.failing_tests(merged, tally.flow_order(merged))
                           for f in found])
    assert [r.nodeid for r in places.operator_tests[("xnnpack", "aten.mul.Tensor")]] == [
        vr.ADD + OPERATOR_TEST]
    assert ("xnnpack", "aten.add.Tensor") not in places.operator_tests


def test_without_localization_there_is_no_section():
    merged = load(DATA)
    assert "## Where it breaks" not in summary_of(merged)
    assert page.page_data(merged)["core"]["where"] is None


# ---------------------------------------------------------------- the page

def test_the_page_groups_per_flow_and_op_and_links_every_case(report):
    merged = load(report)
    whole = page.page_data(merged)
    where, core = whole["core"]["where"], whole["core"]
    nodeid = [r.nodeid for r in merged.results]  # the grid's order: a result's index
    flow = [core["flows"][g["flow"]]["flow"] for g in where["groups"]]
    assert flow == ["xnnpack", "xnnpack_static_int8_per_channel", "xnnpack_static_int8_per_tensor"]
    assert [g["place"] for g in where["groups"]] == ["aten.add.Tensor"] * 3
    assert [g["breaks"] for g in where["groups"]] == [
        "1 example test, 1 model test and 1 operator test", "1 model test", "1 model test"]
    assert [g["failures"] for g in where["groups"]] == [5, 2, 2]
    xnnpack, per_channel, per_tensor = where["groups"]
    # One entry per test with its subtests; the model and example name the operator test.
    operator = nodeid.index(vr.ADD + OPERATOR_TEST)
    assert sorted((nodeid[ri], subtests, also) for ri, subtests, also in xnnpack["tests"]) == [
        (EXAMPLE, [0, 1], [[operator, OPERATOR_TEST]]),
        (MODEL.format("xnnpack"), [0, 1], [[operator, OPERATOR_TEST]]),
        (vr.ADD + OPERATOR_TEST, None, [])]
    unplaced = nodeid.index(vr.ADD + UNPLACED_OPERATOR_TEST)
    assert [(nodeid[ri], also) for ri, _, also in per_channel["tests"]] == [
        (MODEL.format("xnnpack_static_int8_per_channel"), [[unplaced, UNPLACED_OPERATOR_TEST]])]
    assert [also for _, _, also in per_tensor["tests"]] == [[]]
    # What could not be localized, with the record's reason.
    assert where["not_localized"] == [
        [unplaced, n, "not localized: the delegate call could not be split"] for n in (0, 1)]


def test_the_page_holds_what_the_summary_groups(report):
    """One grouping for both: the page's places are the summary's rows, in order."""
    merged = load(report)
    text = summary_of(merged)
    section = text[text.index("## Where it breaks"):text.index("## Failures\n")]
    rows = [[cell.strip(" `") for cell in line.split("|")[1:3]]
            for line in section.splitlines() if line.startswith("| `")]
    core = page.page_data(merged)["core"]
    assert [[core["flows"][g["flow"]]["flow"], g["place"]] for g in core["where"]["groups"]] \
        == rows and len(rows) == 3


@pytest.mark.parametrize(("suites", "words"), [
    ({"models": 3, "operators": 4}, "3 model tests and 4 operator tests"),
    ({"operators": 1}, "1 operator test"),
    ({"examples": 2, "models": 1, "xnnpack/test": 1},
     "2 example tests, 1 model test and 1 xnnpack/test test"),
])
def test_suite_words(suites, words):
    assert where.suite_words(suites) == words


def test_a_failure_whose_op_passes_alone_names_its_smallest_window():
    from etsuite.backends.harness.contract.record import SubtestRecord
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.tools.report.loading import Run, TestResult
    from etsuite.tools.report.sections.failures import repro_lines

    window = {"nodes": 2, "first": "relu", "last": "add", "attempts": 3, "seconds": 2.5,
              "folder": "reports/repros/t/subtest0"}
    record = SubtestRecord(test_id="t.py::t[f]", test_case="t.py::t", subtest=0,
                           suite="models", backend="b", flow="f", status=Status.FAIL_MISMATCH,
                           localization={"localized": True, "node": "add",
                                         "target": "aten.add.Tensor",
                                         "repro": {"op": "aten.add.Tensor", "status": "pass",
                                                   "reproduces": False,
                                                   "folder": "reports/repros/t/subtest0",
                                                   "subgraph": window}})
    result = TestResult("t.py::t[f]", "f", "b", "failed", "call", [record], None, 1.0,
                        Run("r.json", "report", None, True, 1, None, None),
                        Status.FAIL_MISMATCH)
    text = repro_lines(result)
    assert "`aten.add.Tensor` passes alone (pass): it fails only in its context" in text
    assert "smallest window of the graph that still fails: 2 nodes, `relu` to `add`" in text
    assert "reports/repros/t/subtest0/subgraph.py" in text
    del window["folder"]  # past the cap: nothing to point at
    assert "subgraph.py" not in repro_lines(result)


def test_a_run_in_process_has_no_cost_view_and_a_runner_without_times_no_crash():
    """No record with a `cost`: no section; a step sequence whose runner timed no call
    (None in `step_ms`) is counted without its time."""
    from etsuite.backends.harness.contract.record import SubtestRecord
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.tools.report.loading import Run, TestResult

    record = SubtestRecord(test_id="t.py::t[f]", test_case="t.py::t", subtest=0, suite="llm",
                           backend="b", flow="f", status=Status.PASS, steps=3,
                           step_errors=[[0.0]] * 3, step_ms=[None, 2.0, 4.0])
    result = TestResult("t.py::t[f]", "f", "b", "passed", "call", [record], None, 1.0,
                        Run("r.json", "report", None, True, 0, None, None), Status.PASS)
    assert running_cost.costs([result], [("b", "f")]) == []
    (row,) = stateful.stateful([result], [("b", "f")])
    assert (row.first_ms, row.later_ms) == ([], [3.0])


def test_the_delegation_share_per_subtest_and_where_the_delegate_is_not_primary():
    """Per subtest, the computing nodes' delegated share (quantize/dequantize left out):
    the coverage section gives its median per flow and names the subtests under half."""
    from etsuite.backends.harness.contract.record import SubtestRecord, delegation_share
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.tools.report.loading import Run, TestResult

    q = "quantized_decomposed.quantize_per_tensor.default"
    assert delegation_share({"aten.add.Tensor": 2, q: 4}, {q: 9}) == (1.0, 1.0)
    assert delegation_share({"aten.mm.default": 1}, {"aten.cumsum.default": 1,
                                                     "aten.mm.default": 1}) == (1 / 3, 0.5)
    assert delegation_share({q: 2}, {}) is None  # computes nothing

    run = Run("r.json", "report", None, True, 0, None, None)

    def result(name, inside, outside):
        record = SubtestRecord(test_id=f"t.py::{name}[x]", test_case=f"t.py::{name}", subtest=0,
                               suite="models", backend="b", flow="x", status=Status.PASS,
                               delegated_ops=inside, undelegated_ops=outside,
                               delegated_nodes=sum(inside.values()),
                               undelegated_nodes=sum(outside.values()))
        return TestResult(f"t.py::{name}[x]", "x", "b", "passed", "call", [record], None, 1.0,
                          run, Status.PASS)

    whole = result("whole", {"aten.linear.default": 3, q: 2}, {q: 1})
    little = result("little", {"aten.linear.default": 1}, {"aten.cumsum.default": 2})
    (row,) = coverage.coverage([whole, little], [("b", "x")])
    assert row.median_share() == (1.0 + 1 / 3) / 2
    assert row.minority() == [(little, 1 / 3)]

    from types import SimpleNamespace

    (section,) = coverage.markdown(SimpleNamespace(results=[whole, little]), [("b", "x")])
    text = str(section.render_items(section.items))  # (the table, its notes)
    assert "66.7 %" in text and "1: `little[x]` 33.3 %" in text, text


def test_an_op_the_lowering_added_is_named_as_such():
    """A failure localized to a runtime op no exported node made (`added`, e.g. a flip
    after a delegate call): named by its runtime op, after the value it follows, and
    grouped by that op, never as "inside delegate None"."""
    from etsuite.backends.harness.contract.record import where_it_breaks
    from etsuite.backends.harness.contract.statuses import Status

    found = {"localized": True, "node": None, "added": True, "target": "native_call_flip.out",
             "after": {"node": "softmax", "delegate": "XnnpackBackend"}}
    assert where_it_breaks(found) == "native_call_flip.out (added by the lowering, after softmax)"
    failure = tally.Failure(None, Status.FAIL_MISMATCH, "compare", 0, "off", found)  # type: ignore[arg-type]
    assert failure.place == "native_call_flip.out"
