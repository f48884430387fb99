"""The generated tier (backends/suite/generated/): its case ids are stable from one
collection to the next, a case id and a seed regenerate the same inputs, the per-OpInfo
cap holds, and the case list is what the installed torch's OpInfo database gives."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from etsuite.backends.harness.case.seeds import derive_seed
from etsuite.backends.harness.fixture import seed_everything
from etsuite.backends.suite.generated import opinfo_cases
from etsuite.backends.suite.generated.opinfo_cases import CaseId, build_case, load_case_ids

# Imported here, at collection, in the pytest process: the plugin forks each test, and a
# child that imported OpInfo's database itself would pay its seconds once per test.
opinfo_cases.warm()

ROOT = Path(__file__).resolve().parent.parent
SUITE = "backends/suite/generated"
TEST_CASE = f"{SUITE}/test_opinfo.py::test_opinfo"


def collected_ids() -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--collect-only", "-q", "--backend", "portable", SUITE],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if line.startswith(TEST_CASE)]


def test_case_ids_are_the_same_in_two_collections():
    first, second = collected_ids(), collected_ids()
    assert first == second
    assert first == [f"{TEST_CASE}[portable-{case}]" for case in load_case_ids()]


def inputs_at(session_seed: int, case: str) -> tuple:
    """What the test runner fixture hands the case's body: torch seeded from (session
    seed, case id without the flow), then the case built."""
    seed_everything(derive_seed(session_seed, f"{TEST_CASE}[{case}]"))
    return build_case(case)[1]


@pytest.mark.parametrize("case", ["add-float32-10", "index_put-int32-0", "cat-float32-8"])
def test_a_case_id_and_a_seed_regenerate_the_same_inputs(case):
    first, again = inputs_at(11, case), inputs_at(11, case)
    assert len(first) == len(again) > 0
    assert all(a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(first, again, strict=True))
    other = inputs_at(12, case)
    assert any(not torch.equal(a, b) for a, b in zip(first, other, strict=True)), "the seed decides values"


def test_the_built_module_computes_the_op_on_the_sample():
    model, inputs = build_case("add-float32-10")  # x + alpha * y, alpha held by the module
    x, y = inputs
    assert torch.allclose(model(x, y), torch.add(x, y, alpha=-3.125))


def test_a_none_argument_stays_an_argument():
    """native_layer_norm's sample passes weight=None and bias=None: constants, not inputs."""
    model, inputs = build_case("native_layer_norm-float32-19")
    assert len(inputs) == 1
    assert all(isinstance(out, torch.Tensor) for out in model(*inputs))


def test_a_sample_that_changed_under_the_case_id_is_refused(monkeypatch):
    monkeypatch.setattr(opinfo_cases, "_descriptions",
                        lambda: {"add-float32-10": "float32[5,5], float32[7], alpha=-3.125"})
    with pytest.raises(LookupError, match="regenerate"):
        build_case("add-float32-10")


def test_the_cap_per_opinfo_and_dtype_holds():
    per_opinfo_and_dtype = Counter((c.opinfo, c.dtype) for c in map(CaseId.parse, load_case_ids()))
    assert max(per_opinfo_and_dtype.values()) <= opinfo_cases.SAMPLES_PER_DTYPE
    assert {dtype for _, dtype in per_opinfo_and_dtype} <= set(opinfo_cases.DTYPES)


@pytest.mark.parametrize("count, cap, picked", [(0, 2, []), (1, 2, [0]), (2, 2, [0, 1]),
                                                (10, 2, [0, 9]), (10, 3, [0, 4, 9]),
                                                (5, 1, [0])])
def test_spread_picks_at_most_the_cap_evenly(count, cap, picked):
    assert opinfo_cases.spread(count, cap) == picked


def test_the_case_list_is_what_the_installed_opinfo_database_gives():
    """Fails after a torch upgrade that changed OpInfo: regenerate with
    `make generated-cases`."""
    cases, left_out = opinfo_cases.select_cases()
    assert opinfo_cases.render(cases, left_out) == opinfo_cases.DATA_FILE.read_text(), \
        "backends/suite/generated/opinfo_cases.toml is stale: run make generated-cases"


def test_every_case_builds_at_a_seed_other_than_the_lists():
    """A seed changes values, never which sample a case id names (build_case refuses a
    sample whose tensors differ from the case file's line, written at SELECTION_SEED)."""
    for case in load_case_ids():
        torch.manual_seed(opinfo_cases.SELECTION_SEED + 12)
        model, inputs = build_case(case)
        assert inputs, case
