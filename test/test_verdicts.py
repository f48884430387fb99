"""Verdicts a backend author can trust, end to end through real export, lowering and the
ExecuTorch runtime on tiny models: the rule by recipe (an fp32 flow with 1e-3 noise fails,
an int8 flow with one flipped sign fails, a healthy int8 Linear(1, 512) passes), the rule
and margin in each record, and per-case overrides from expectations data."""

import pytest

from conftest import TEST_FLOWS_CONFTEST

VERDICT_CONFTEST = TEST_FLOWS_CONFTEST + '''
from etsuite.backends.harness.flows.expectations import Expectation, Expectations
from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

_test_flows = pytest_etsuite_flows


def pytest_etsuite_flows(config):
    loosened = Expectations((Expectation(
        "tolerance", ("xnnpack_noisy",), "*::test_linear_loosened", "noise on purpose",
        rule=(("range_fraction", 0.01),), source="conftest"),))
    int8 = XNNPACK_STATIC_INT8_PER_TENSOR
    return _test_flows(config) + [
        dataclasses.replace(XNNPACK, name="xnnpack_noisy", expectations=loosened,
                            runtime=FaultyRuntime(XNNPACK.runtime, "noise")),
        dataclasses.replace(int8, name="xnnpack_int8_flipped",
                            runtime=FaultyRuntime(int8.runtime, "flip")),
        dataclasses.replace(XNNPACK, name="xnnpack_flaky",
                            runtime=FaultyRuntime(XNNPACK.runtime, "first_call")),
    ]
'''

CASES = """
import torch


def test_linear(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(16, 8), (torch.randn(4, 16),))


def test_linear_loosened(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(16, 8), (torch.randn(4, 16),))


def test_linear_feature_sizes(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(1, 512), (torch.randn(1024, 1),))


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 3.0


def test_conv_relu(test_runner):
    conv_relu = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU())
    test_runner.lower_and_run_model(conv_relu, (torch.randn(1, 3, 8, 8),))


def test_gelu(test_runner):
    test_runner.lower_and_run_model(torch.nn.GELU(), (torch.randn(4, 16),))


def test_bfloat16(test_runner):
    test_runner.lower_and_run_model(Scale(), (torch.randn(8, 8).to(torch.bfloat16),))
"""


ARTIFACT_CAP_MB = 0.012  # room for about one failing subtest's files


@pytest.fixture
def run(pytester, run_suite):
    pytester.makeconftest(VERDICT_CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    found = run_suite("--flow", "xnnpack", "--flow", "xnnpack_noisy", "--flow",
                     "xnnpack_static_int8_per_tensor", "--flow", "xnnpack_int8_flipped",
                     "--flow", "xnnpack_flaky", "--artifacts", "artifacts",
                     "--artifacts-max-mb", str(ARTIFACT_CAP_MB),
                     "-k", "(linear and not feature) or (feature and int8_per_tensor) or "
                     "(bfloat16 and not noisy and not int8 and not flaky) or "
                     "((gelu or conv_relu) and int8_per_tensor)", "--seed", "1234", "-p", "no:xdist")
    found.path = pytester.path
    return found


def one(run, nodeid_part):
    records = run.records(nodeid_part)
    assert len(records) == 1, (nodeid_part, records, run.stdout[-3000:])
    return records[0]


def test_verdicts_of_a_real_run(run):
    """One real session (they are slow) checked for each part of a verdict."""
    assert run.report is not None, run.stdout + run.stderr
    check_rules_by_recipe(run)
    check_flaky_or_broken(run)
    check_artifacts(run)


def check_rules_by_recipe(run):
    clean = one(run, "test_linear[xnnpack]")
    assert clean["status"] == "pass", clean
    assert clean["verdict_rule"].startswith("fp32:") and "x its bound" in clean["margin"]
    assert clean["outputs"][0]["error_ratio"] <= 1

    noisy = one(run, "test_linear[xnnpack_noisy]")  # 1e-3 of the range: fails fp32
    assert noisy["status"] == "fail_mismatch" and noisy["stage"] == "compare", noisy
    assert noisy["outputs"][0]["error_ratio"] > 1 and "fp32:" in noisy["error"]

    loosened = one(run, "test_linear_loosened[xnnpack_noisy]")  # the override's 1 % holds it
    assert loosened["status"] == "pass", loosened
    assert "override conftest" in loosened["verdict_rule"]

    healthy = one(run, "test_linear[xnnpack_static_int8_per_tensor]")
    assert healthy["status"] == "pass" and healthy["verdict_rule"].startswith("int8 static:")
    assert healthy["margin"].startswith("SQNR ") and "needs 20" in healthy["margin"]

    flipped = one(run, "test_linear[xnnpack_int8_flipped]")
    assert flipped["status"] == "fail_mismatch", flipped
    assert flipped["outputs"][0]["error_ratio"] > 1

    # ExecuTorch's test_linear_feature_sizes: int8 outliers beyond 5 % of the range, at a
    # healthy SQNR; the old rule (5 % of the range per element) failed it.
    wide = one(run, "test_linear_feature_sizes[xnnpack_static_int8_per_tensor]")
    stats = wide["outputs"][0]
    print(f"Linear(1, 512) int8 per tensor: {wide['margin']}; max abs error "
          f"{stats['max_abs_error']:.3f}, SQNR {stats['sqnr_db']} dB")
    assert wide["status"] == "pass", wide
    assert stats["sqnr_db"] >= 20 and stats["error_ratio"] <= 1

    # Quantized or not: the int8 flow's Linear ran quantized, its GELU in floating point
    # (the quantizer has no GELU pattern); an fp32 flow does not say.
    assert healthy["delegated_precision"] == "quantized", healthy
    gelu = one(run, "test_gelu[xnnpack_static_int8_per_tensor]")
    assert gelu["status"] == "pass" and gelu["delegated_precision"] == "float", gelu
    assert clean["delegated_precision"] is None
    # A relu fused after a quantized conv takes the conv's output, not a dequantize, but
    # its own output is quantized: the whole delegate ran quantized.
    conv_relu = one(run, "test_conv_relu[xnnpack_static_int8_per_tensor]")
    assert conv_relu["status"] == "pass" and conv_relu["delegated_precision"] == "quantized", \
        conv_relu

    half = one(run, "test_bfloat16[xnnpack]")  # judged by the output dtype's epsilon
    assert half["verdict_rule"].startswith("bf16:"), half


def check_flaky_or_broken(run):
    # A runtime that fails on its first call only: the rerun on the same inputs passes.
    flaky = one(run, "test_linear[xnnpack_flaky]")
    assert flaky["status"] == "fail_run" and flaky["flaky"] is True, flaky
    assert flaky["rerun"]["same_inputs"] == "pass" and flaky["rerun"]["other_inputs"] == "pass"
    assert run.outcome("test_linear[xnnpack_flaky]") == "failed"  # never a silent pass
    assert "flaky" in run.tests["test_cases.py::test_linear[xnnpack_flaky]"]["call"]["longrepr"]
    # Noise on every run: broken with the same inputs and with others.
    broken = one(run, "test_linear[xnnpack_noisy]")
    assert broken["flaky"] is False, broken
    assert broken["rerun"]["same_inputs"] == broken["rerun"]["other_inputs"] == "fail_mismatch"
    assert one(run, "test_linear[xnnpack]")["rerun"] is None  # a pass is not rerun


def check_artifacts(run):
    """Failing subtests write their files until the cap; the session says so once."""
    import json

    import torch

    failing = [r for r in run.records() if r["status"] in ("fail_mismatch", "fail_run")]
    written = [r for r in failing if r["artifacts"]]
    assert written and len(written) < len(failing), [r["artifacts"] for r in failing]
    assert all(r["artifacts"] is None for r in run.records() if r["status"] == "pass")
    folder = run.path / written[0]["artifacts"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["test_id"] == written[0]["test_id"]
    assert (folder / manifest["program"]).read_bytes()[4:8] == b"ET12"  # a .pte
    first = manifest["inputs"][0]
    raw = (folder / first["file"]).read_bytes()
    inputs = torch.load(folder / "inputs.pt")
    assert first["dtype"] == "float32" and first["shape"] == list(inputs[0].shape)
    assert torch.equal(torch.frombuffer(bytearray(raw), dtype=torch.float32)
                       .reshape(first["shape"]), inputs[0])
    assert len(torch.load(folder / "expected.pt")) == 1
    total = sum(p.stat().st_size for p in (run.path / "artifacts").rglob("*")
                if p.is_file() and p.name != "CAP_REACHED")
    assert total <= ARTIFACT_CAP_MB * 2**20
    assert run.stdout.count("artifacts reached the cap") == 1


def test_integer_and_bool_outputs_are_judged_exactly():
    """An index off by one is a different answer in any flow, even under the int8 rule
    whose 32 steps of range/255 would let it through; a float output beside it keeps the
    flow's rule."""
    import torch

    from etsuite.backends.harness.case.output_match import compare_outputs
    from etsuite.backends.harness.flows.tolerance import INT8, RuleBook

    book = RuleBook(INT8)
    indices = torch.tensor([0, 3, 7, 2])
    values = torch.linspace(-1, 1, 16)
    same = compare_outputs((indices, values), [indices.clone(), values.clone()], book)
    assert same.matched, same.message

    off_by_one = indices.clone()
    off_by_one[1] += 1
    judged = compare_outputs((indices, values), [off_by_one, values.clone()], book)
    assert not judged.matched
    assert "exact: equal elements" in judged.message and "1 of 4 elements differ" in judged.message
    assert judged.statistics[0].error_ratio is None and judged.statistics[1].error_ratio == 0
    assert judged.margin.startswith("output 0:")  # the failing output decides

    # a nan where eager has a number is a difference the finite statistics cannot show
    with_nan = values.clone().index_fill(0, torch.tensor([3]), float("nan"))
    special = compare_outputs((values,), [with_nan], book)
    assert not special.matched and "1 nan/inf elements differ" in special.message

    mask = torch.tensor([True, False, True])
    assert not compare_outputs((mask,), [~mask], RuleBook()).matched
    assert book.for_dtype(torch.float32).name.startswith("int8")


def test_an_output_of_another_shape_or_dtype_has_no_rule_and_no_ratio():
    """Its statistics say nothing was measured; the JSON keeps the three keys it always had."""
    import torch

    from etsuite.backends.harness.case.output_match import compare_outputs
    from etsuite.backends.harness.flows.tolerance import FP32, RuleBook

    values = torch.ones(4)
    judged = compare_outputs((values, values), [torch.ones(5), values.clone()], RuleBook(FP32))
    assert not judged.matched and "output 0: shape (5,) != expected (4,)" in judged.message
    shape, same = (statistics.to_dict() for statistics in judged.statistics)
    assert shape == {"max_abs_error": None, "mean_abs_error": None, "sqnr_db": None}
    assert same["error_ratio"] == 0 and same["rule"] == FP32.name
    # The same values in another dtype (a runner that wrote int32 for int64 indices).
    indices = torch.arange(4)
    judged = compare_outputs((indices, values), [indices.to(torch.int32), values.clone()],
                             RuleBook(FP32))
    assert not judged.matched and judged.message == "output 0: dtype int32 != expected int64"
    assert judged.statistics[0].to_dict()["max_abs_error"] is None


def test_a_recipe_that_computes_in_bf16_is_judged_by_its_rule_not_by_dtype():
    """A bf16 (or fp16) LLM recipe returns its logits in that dtype by design: the values
    are judged against the float32 reference by the flow's rule. Any other dtype is still
    a wrong answer, and so is bf16 where the recipe does not compute in it."""
    import torch

    from etsuite.backends.harness.case.output_match import compare_outputs
    from etsuite.backends.harness.flows.tolerance import RuleBook, quantized_rule

    rule = quantized_rule("bf16 recipe", min_sqnr_db=38.0, steps=4)
    reference = torch.randn(2, 32, generator=torch.Generator().manual_seed(3))
    bf16 = RuleBook(rule, recipe_float_dtype="bfloat16")
    judged = compare_outputs((reference,), [reference.to(torch.bfloat16)], bf16)
    assert judged.matched, judged.message
    assert judged.rule == rule.describe() and judged.statistics[0].sqnr_db > 38
    noisy = reference.to(torch.bfloat16) + 0.5
    assert "SQNR" in compare_outputs((reference,), [noisy], bf16).message  # values judged
    fp16 = compare_outputs((reference,), [reference.to(torch.float16)], bf16)
    assert fp16.message == "output 0: dtype float16 != expected float32"
    plain = compare_outputs((reference,), [reference.to(torch.bfloat16)], RuleBook(rule))
    assert plain.message == "output 0: dtype bfloat16 != expected float32"
    indices = torch.arange(3)
    assert not compare_outputs((indices,), [indices.to(torch.bfloat16)], bf16).matched


def test_the_llm_recipes_say_which_compute_in_half_precision():
    from etsuite.backends.portable.flows import PORTABLE, PORTABLE_LLM_CUSTOM_BF16
    from etsuite.backends.xnnpack.flows import FLOWS

    flows = {flow.name: flow for flow in FLOWS}
    assert PORTABLE_LLM_CUSTOM_BF16.recipe_float_dtype == "bfloat16"
    assert flows["xnnpack_llm_dq_fp16_8da4w_qe4"].recipe_float_dtype == "float16"
    assert flows["xnnpack_llm_custom"].recipe_float_dtype is None
    assert PORTABLE.recipe_float_dtype is None
