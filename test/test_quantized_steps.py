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


def _decode(monkeypatch=None, zero_point_steps: float = 0.0):
    torch.manual_seed(5)
    steps = [(torch.randn(4, 16),) for _ in range(4)]
    if zero_point_steps:
        from executorch.runtime import Method

        real_execute = Method.execute

        def execute_with_zero_point_off(self, inputs):
            return planted_outputs(list(real_execute(self, inputs)), "zero_point",
                                   zero_point_steps)

        monkeypatch.setattr(Method, "execute", execute_with_zero_point_off)
    return run_steps_pipeline(Running(), steps, XNNPACK_STATIC_INT8_PER_TENSOR)


def test_a_healthy_program_matches_its_quantized_program_at_every_step():
    outcome = _decode()
    assert outcome.reference == QUANTIZED_REFERENCE
    assert outcome.status in (Status.PASS, Status.FAIL_RECIPE_ACCURACY), outcome.error
    assert outcome.fidelity and all(o["passed"] for o in outcome.fidelity if o)
    assert outcome.steps == 4 and outcome.failed_step is None


def test_a_zero_point_off_by_one_fails_the_first_step(monkeypatch):
    outcome = _decode(monkeypatch, zero_point_steps=1.0)
    assert outcome.status is Status.FAIL_MISMATCH, outcome.error
    assert outcome.failed_step == 0
    assert outcome.error.startswith("diverges at step 0 of 4: backend fidelity"), outcome.error
