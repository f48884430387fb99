"""Quantized verdicts judge the backend against its own quantized program
(case/fidelity.py): real XNNPACK int8 lowering and execution, with integer-kernel bugs
planted in ExecuTorch itself by test/planted_faults.py (a pass inside
`to_edge_transform_and_lower` that edits a copy of the program, or the runtime's
`Method.execute`), never through a hook of the harness."""

import pytest

from etsuite.tools.report import loading, markdown
from etsuite.tools.report.size_limit import fit

pytestmark = pytest.mark.slow

FLOW = "xnnpack_static_int8_per_tensor"

CASES = """
import torch


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 32)
        self.second = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


class Classify(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.linear(x).argmax(-1)


def test_mlp(test_runner):
    test_runner.lower_and_run_model(Mlp(), (torch.randn(16, 16),))


def test_classify(test_runner):
    test_runner.lower_and_run_model(Classify(), (torch.randn(16, 16),))


def test_bf16_norm(test_runner):
    # bfloat16 inputs: the quantizer leaves the norm in float, so the output is a float
    # tail computed in bf16 by the runtime's kernel and by PyTorch.
    model = torch.nn.InstanceNorm2d(4).to(torch.bfloat16)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 5, 5, dtype=torch.bfloat16),))


def test_calibrated_on_small_inputs(test_runner):
    # Calibrated on inputs a hundred times smaller than those it runs on: the int8
    # program saturates, in the backend and in its quantized reference alike.
    test_runner.lower_and_run_model(Mlp(), (torch.randn(16, 16) * 0.01,),
                                    generate_random_test_inputs=True)
"""


@pytest.fixture
def run_planted(pytester, run_suite, monkeypatch):
    """run_planted(plant, *args): the cases above on the static int8 flow, with
    ETSUITE_PLANT set (see test/planted_faults.py; "" plants nothing)."""
    pytester.makepyfile(test_cases=CASES)

    def run(plant: str, *args):
        monkeypatch.setenv("ETSUITE_PLANT", plant)
        return run_suite("-p", "planted_faults", "--backend", "xnnpack", "--flow", FLOW,
                         "--seed", "7", *args)

    return run


def _only(run, test: str) -> dict:
    records = run.records(test)
    assert len(records) == 1, records
    return records[0]


def test_a_bf16_float_tail_is_judged_with_the_bf16_rule(run_planted):
    """An output the quantizer left in bf16 differs from PyTorch's bf16 by bf16 rounding:
    its floor is the bf16 rule, not fp32's (an int8 Vulkan flow failed on exactly this)."""
    run = run_planted("", "-k", "bf16_norm", "--localize", "off")
    norm = _only(run, "test_bf16_norm")
    assert norm["status"].startswith("pass"), norm["error"]
    (output,) = norm["fidelity"]
    assert output["passed"] and output["unit"].startswith("x the reference")


def test_a_healthy_program_passes_against_its_quantized_reference(run_planted):
    run = run_planted("", "-k", "mlp or classify", "--localize", "off")
    mlp = _only(run, "test_mlp")
    assert mlp["status"] == "pass", mlp["error"]
    assert mlp["reference"].startswith("quantized program")
    (output,) = mlp["fidelity"]
    assert output["unit"] == "steps" and output["passed"]
    assert output["max"] <= 1.0 and abs(output["bias"]) < 0.1
    # An integer output has no quantization of its own: equal or wrong.
    classify = _only(run, "test_classify")
    assert classify["status"] == "pass", classify["error"]
    assert [o["unit"] for o in classify["fidelity"]] == ["exact"]


def test_a_zero_point_one_step_off_in_one_op_fails_on_fidelity(run_planted):
    run = run_planted("graph:zero_point:1", "-k", "mlp", "--localize", "off")
    mlp = _only(run, "test_mlp")
    assert mlp["status"] == "fail_mismatch", mlp
    assert "backend fidelity" in mlp["error"] and "bias" in mlp["error"]
    (output,) = mlp["fidelity"]
    assert 0.75 <= output["bias"] <= 1.25, output
    # Against fp32 eager alone it would pass: the error is small.
    assert mlp["outputs"][0]["error_ratio"] < 1


def test_a_multiplier_two_percent_off_fails_on_gain(run_planted):
    run = run_planted("graph:multiplier:1.02", "-k", "mlp", "--localize", "off")
    mlp = _only(run, "test_mlp")
    assert mlp["status"] == "fail_mismatch", mlp
    assert "gain" in mlp["error"], mlp["error"]


def test_a_saturation_one_code_narrower_fails(run_planted):
    # The program saturates (calibrated on smaller inputs): many elements on each end.
    run = run_planted("runtime:saturation", "-k", "calibrated", "--localize", "off")
    record = _only(run, "test_calibrated_on_small_inputs")
    assert record["status"] == "fail_mismatch", record
    assert "saturates early" in record["error"], record["error"]


def test_a_faithful_backend_under_a_lossy_recipe_has_its_own_status(run_planted):
    run = run_planted("", "-k", "calibrated", "--localize", "off")
    record = _only(run, "test_calibrated_on_small_inputs")
    assert record["status"] == "fail_recipe_accuracy", record
    assert record["fidelity"][0]["passed"]
    assert "recipe accuracy" in record["error"]
    merged = loading.load_all([str(run.report_path)])
    text, _ = fit(markdown.build(merged), 10**9, None)
    assert "recipe accuracy" in text
