"""Core ATen coverage: the gate on backends/suite/core_aten.toml against the installed
torch, how record op names map onto core overloads, the per-flow tally, the summary's
sections and the snapshot's regeneration."""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.tools.report import core_aten, loading, markdown, page, tally
from etsuite.tools.report.sections import core_aten_coverage
from etsuite.tools.report.size_limit import fit

REPO = Path(__file__).resolve().parent.parent
FIX = "edit backends/suite/core_aten.toml (docs/reference/core-aten.md)"


# ---------------------------------------------------------------- the gate

@pytest.fixture(scope="module")
def installed_core() -> frozenset:
    from etsuite.backends.harness.case.delegation import core_aten_overloads

    return frozenset(core_aten_overloads())


@pytest.fixture(scope="module")
def data_file() -> core_aten.CoreAtenFile:
    return core_aten.load()


def test_a_fresh_process_names_the_same_core_ops(installed_core):
    """The list must not depend on which ops the process touched before asking."""
    script = ("from etsuite.backends.harness.case.delegation import core_aten_overloads; "
              "print(len(core_aten_overloads()))")
    fresh = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout.split()[-1]
    assert int(fresh) == len(installed_core)


def test_every_core_op_is_covered_or_explained(installed_core, data_file):
    missing = sorted(installed_core - set(data_file.covered) - set(data_file.explained))
    assert not missing, (f"the installed torch tags these core ATen ops, which no operator "
                         f"test covers (snapshot) and no reason explains: {missing}; {FIX}")


def test_every_reason_is_written(data_file):
    blank = sorted(op for op, why in data_file.explained.items() if not why.strip())
    assert not blank, f"core ATen ops left uncovered without a reason: {blank}; {FIX}"


def test_no_entry_names_an_op_torch_no_longer_tags(installed_core, data_file):
    stale = sorted((set(data_file.explained) | set(data_file.covered)) - installed_core)
    assert not stale, (f"entries for ops the installed torch does not tag core ATen "
                       f"(stale): {stale}; {FIX}")


def test_no_covered_op_keeps_a_reason(data_file):
    both = sorted(set(data_file.explained) & set(data_file.covered))
    assert not both, f"covered by operator tests, yet explained as uncovered: {both}; {FIX}"


def test_the_snapshot_names_existing_test_modules(data_file):
    modules = {case.split("::")[0] for cases in data_file.covered.values() for case in cases}
    absent = sorted(m for m in modules if not (REPO / "backends/suite/operators" / m).exists())
    assert not absent, f"the snapshot names modules that are gone: {absent}; run make core-aten"


def test_the_file_is_what_dump_writes(data_file):
    assert core_aten.dump(data_file) == core_aten.DATA_FILE.read_text(encoding="utf-8")


# ---------------------------------------------------------------- naming

CORE = frozenset({"aten.add.Tensor", "aten.permute.default", "aten.convolution.default",
                  "aten._to_copy.default", "aten.squeeze.dims", "aten.clone.default",
                  "aten.slice.Tensor", "aten.sym_size.int"})


@pytest.mark.parametrize("name, core", [
    ("aten.add.Tensor", "aten.add.Tensor"),
    ("aten::add.Tensor", "aten.add.Tensor"),
    ("aten::convolution", "aten.convolution.default"),
    ("aten.permute_copy.default", "aten.permute.default"),
    ("aten.squeeze_copy.dims", "aten.squeeze.dims"),
    ("aten.slice_copy.Tensor", "aten.slice.Tensor"),
    ("dim_order_ops._to_dim_order_copy.default", "aten._to_copy.default"),
    ("dim_order_ops._clone_dim_order.default", "aten.clone.default"),
    ("aten._to_copy.default", "aten._to_copy.default"),
    ("sym_size.int", "aten.sym_size.int"),
    ("add.Tensor", "aten.add.Tensor"),
    ("aten.linear.default", None),
    ("quantized_decomposed.quantize_per_tensor.default", None),
    ("getitem", None),
])
def test_record_names_map_onto_core_overloads(name, core):
    assert core_aten.core_overload(name, CORE) == core


# ---------------------------------------------------------------- tally and sections

def _report(path: Path, core, tests) -> Path:
    facts = SessionFacts(seed=1, versions={"torch": "2.13.0"}, flows={},
                         core_aten_ops=None if core is None else sorted(core)).to_dict()
    entries = []
    for nodeid, suite, flow, delegated, undelegated in tests:
        case = nodeid.split("[")[0]
        record = {"test_id": nodeid, "test_case": case, "subtest": 0, "suite": suite,
                  "backend": flow.split("_")[0], "flow": flow, "status": "pass",
                  "delegated_nodes": sum(delegated.values()),
                  "undelegated_nodes": sum(undelegated.values()),
                  "delegated_ops": delegated, "undelegated_ops": undelegated}
        entries.append({"nodeid": nodeid, "outcome": "passed",
                        "call": {"outcome": "passed", "duration": 0.1},
                        "metadata": {"subtests": [record]}})
    path.write_text(json.dumps({"created": 1.0, "duration": 1.0, "exitcode": 0,
                                "etsuite": facts, "tests": entries,
                                "summary": {"total": len(entries)}}))
    return path


def core_aten_report(folder: Path, core=CORE) -> Path:
    """A report of three tests (add on portable and xnnpack, a model on xnnpack) whose
    facts name `core`; test_page_browser.py draws its page."""
    ops = "backends/suite/operators/test_add.py::test_add"
    tests = [
        (f"{ops}[portable]", "operators", "portable", {}, {"aten.add.Tensor": 2}),
        (f"{ops}[xnnpack]", "operators", "xnnpack", {"aten.add.Tensor": 1},
         {"aten.permute_copy.default": 1}),
        ("backends/suite/models/test_m.py::test_m[xnnpack]", "models", "xnnpack",
         {"aten.convolution.default": 3}, {"aten.add.Tensor": 1}),
    ]
    return _report(folder / "run.json", core, tests)


def _merged(tmp_path, core=CORE):
    return loading.load_all([str(core_aten_report(tmp_path, core))])


def test_the_tally_counts_cases_per_flow(tmp_path):
    merged = _merged(tmp_path)
    rows = {row.flow: row for row in core_aten_coverage.core_aten(merged, tally.flow_order(merged))}
    assert rows["portable"].covered == ["aten.add.Tensor"]
    assert rows["portable"].delegated == [] and rows["portable"].total == len(CORE)
    xnnpack = rows["xnnpack"]
    assert xnnpack.covered == ["aten.add.Tensor", "aten.permute.default"]
    assert xnnpack.delegated == ["aten.add.Tensor"]
    assert xnnpack.only_in_models == ["aten.convolution.default"]
    assert Counter(len(c) for c in xnnpack.operator_cases.values()) == Counter({1: 2})
    assert "aten.squeeze.dims" in xnnpack.uncovered and "aten.add.Tensor" not in xnnpack.uncovered


def test_a_generated_case_covers_its_op_as_an_operator_test_does(tmp_path):
    """The generated tier's OpInfo samples test one op each: an op only they hold is
    covered, not "only in model tests"."""
    tests = [("backends/suite/generated/test_opinfo.py::test_opinfo[portable-squeeze-float32-0]",
              "generated", "portable", {}, {"aten.squeeze.dims": 1}),
             ("backends/suite/models/test_m.py::test_m[portable]", "models", "portable", {},
              {"aten.convolution.default": 1})]
    merged = loading.load_all([str(_report(tmp_path / "run.json", CORE, tests))])
    (row,) = core_aten_coverage.core_aten(merged, tally.flow_order(merged))
    assert row.covered == ["aten.squeeze.dims"]
    assert row.only_in_models == ["aten.convolution.default"]


def test_the_summary_states_n_of_m_and_lists_the_uncovered(tmp_path):
    merged = _merged(tmp_path)
    text, _ = fit(markdown.build(merged), 10**9, None)
    section = text.split("## Core ATen coverage")[1]
    assert f"| 1 of {len(CORE)} " in section and f"| 2 of {len(CORE)} " in section
    listing = section.split("## Core ATen ops no operator test covers")[1].split("\n## ")[0]
    assert "`aten.squeeze.dims`" in listing and "every flow" in listing
    assert "`aten.add.Tensor`" not in listing
    conv = next(line for line in listing.splitlines() if "aten.convolution.default" in line)
    assert "| portable " in conv and conv.rstrip("| ").endswith("xnnpack")
    data = page.page_data(merged)["core"]["core_aten"]
    assert data["total"] == len(CORE)
    assert [f[1] for f in data["flows"]] == [[["aten.add.Tensor", 1, 0]],
                                             [["aten.add.Tensor", 1, 1], ["aten.permute.default", 1, 0]]]


def test_the_uncovered_list_is_cut_to_the_size_limit(tmp_path):
    many = CORE | {f"aten.op{i}.default" for i in range(300)}
    merged = _merged(tmp_path, many)
    full, _ = fit(markdown.build(merged), 10**9, None)
    cut, _ = fit(markdown.build(merged), len(full.encode()) - 4000, "full.md")
    assert "ops shown; all of them are in `full.md`" in cut


def test_reports_without_the_denominator_have_no_section(tmp_path):
    merged = _merged(tmp_path, None)
    assert core_aten_coverage.core_aten(merged, tally.flow_order(merged)) == []
    assert "Core ATen" not in fit(markdown.build(merged), 10**9, None)[0]
    assert page.page_data(merged)["core"]["core_aten"] is None


def test_regenerating_keeps_reasons_of_the_still_uncovered(tmp_path):
    merged = _merged(tmp_path)
    covered, core = core_aten.snapshot(merged)
    assert covered == {"aten.add.Tensor": ["test_add.py::test_add"],
                       "aten.permute.default": ["test_add.py::test_add"]}
    old = core_aten.CoreAtenFile(explained={"aten.add.Tensor": "was missing",
                                            "aten.squeeze.dims": "why"})
    new, dropped, blank = core_aten.regenerate(old, covered, core, {"torch": "2.13.0"})
    assert dropped == ["aten.add.Tensor"] and new.explained["aten.squeeze.dims"] == "why"
    assert "aten.convolution.default" in blank and new.explained["aten.convolution.default"] == ""
    target = tmp_path / "core_aten.toml"
    target.write_text(core_aten.dump(new))
    assert core_aten.load(target) == new
    assert core_aten.main([str(tmp_path / "run.json"), "--data", str(target)]) == 0
    assert core_aten.load(target).explained["aten.squeeze.dims"] == "why"
