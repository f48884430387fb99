"""A quantizing flow's step sequence is judged against its own quantized program run
through the same steps (case/pipeline.py `StepCalls`, case/fidelity.py): a small model
whose state (a mutable buffer, as a KV cache is) carries from step to step, XNNPACK's
static int8 flow, and a zero point planted in ExecuTorch's runtime itself
(test/planted_faults.py's `executorch.runtime.Method.execute` fault)."""

import pytest
import torch

from etsuite.backends.harness.case.fidelity import QUANTIZED_REFERENCE
from etsuite.backends.harness.case.pipeline import run_steps_pipeline
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR
from planted_faults import planted_outputs

pytestmark = pytest.mark.slow


class Running(torch.nn.Module):
    """Each step's features, and their running sum kept in a buffer (the state)."""

    def __init__(self):
        super().__init__()
        self.project = torch.nn.Linear(16, 8)
        self.register_buffer("total", torch.zeros(4, 8))

    def forward(self, x):
        features = torch.relu(self.project(x))
        self.total.add_(features)
        return self.total + features


def _decode(monkeypatch=None, zero_point_steps: float = 0.0, multiplier: float = 1.0):
    torch.manual_seed(5)
    steps = [(torch.randn(4, 16),) for _ in range(4)]
    if zero_point_steps or multiplier != 1.0:
        from executorch.runtime import Method

        real_execute = Method.execute
        kind, amount = ("zero_point", zero_point_steps) if zero_point_steps \
            else ("multiplier", multiplier)

        def execute_with_fault(self, inputs):
            return planted_outputs(list(real_execute(self, inputs)), kind, amount)

        monkeypatch.setattr(Method, "execute", execute_with_fault)
    return run_steps_pipeline(Running(), steps, XNNPACK_STATIC_INT8_PER_TENSOR)


def test_a_healthy_program_matches_its_quantized_program_at_every_step():
    outcome = _decode()
    assert outcome.reference == QUANTIZED_REFERENCE
    assert outcome.status in (Status.PASS, Status.FAIL_RECIPE_ACCURACY), outcome.error
    assert outcome.fidelity and all(o["passed"] for o in outcome.fidelity if o)
    assert outcome.steps == 4 and outcome.failed_step is None


def test_a_zero_point_off_by_one_fails_the_first_step(monkeypatch):
    """(Its outputs at the lowest code come back one short: saturated early.)"""
    outcome = _decode(monkeypatch, zero_point_steps=1.0)
    assert outcome.status is Status.FAIL_MISMATCH, outcome.error
    assert outcome.failed_step == 0
    assert outcome.error.startswith("diverges at step 0 of 4: backend fidelity"), outcome.error


def test_a_small_multiplier_error_fails_over_the_steps_pooled():
    """1.2 % on outputs spanning +-100 codes moves no element of a step beyond the
    per-element bound (and a step alone leaves bias and gain to the steps pooled); the four
    steps' elements pooled show it."""
    from etsuite.backends.harness.case.fidelity import (
        OutputQuantization,
        QuantizedReference,
        judge,
        judge_trends,
    )
    from etsuite.backends.harness.flows.tolerance import INT8

    scale = 0.05
    generator = torch.Generator().manual_seed(3)
    codes = [torch.randint(-100, 101, (32,), generator=generator).float() for _ in range(4)]
    reference = [[c * scale] for c in codes]
    actual = [[torch.round(c * 1.012) * scale] for c in codes]
    quantization = [OutputQuantization(scale, 0, -128, 127)]
    for want, got in zip(reference, actual, strict=True):
        step = judge(want, got, INT8, QuantizedReference(want, quantization), trends=False)
        assert step.status is Status.PASS, step.message
    pooled = judge_trends(reference, actual, INT8, QuantizedReference(reference, quantization))
    assert pooled is not None and not pooled.passed
    assert "gain 1.01" in pooled.text, pooled.text
    healthy = judge_trends(reference, reference, INT8, QuantizedReference(reference, quantization))
    assert healthy is not None and healthy.passed


def test_an_element_exactly_on_the_bound_is_within_it():
    """float32 outputs two whole steps apart at a magnitude of 1.5 differ by 2.000004
    steps: on the bound, not beyond it; three steps are beyond."""
    from etsuite.backends.harness.case.fidelity import (
        OutputQuantization,
        QuantizedReference,
        judge,
    )
    from etsuite.backends.harness.flows.tolerance import INT8

    scale, zero_point = 0.014630351215600967, 13
    codes = torch.arange(-120, 101, dtype=torch.float32)
    reference = (codes - zero_point) * scale
    quantization = [OutputQuantization(scale, zero_point, -128, 127)]
    for off, passes in ((2, True), (3, False)):
        actual = reference.clone()
        actual[-1] = (codes[-1] + off - zero_point) * scale
        verdict = judge([reference], [actual], INT8, QuantizedReference([reference], quantization),
                        trends=False)
        assert (verdict.status is Status.PASS) is passes, (off, verdict.message)
