"""A decoder's next-token answer (case/steps.py `next_token`): each step's top-1 agreement
with eager and the KL divergence of its next-token distribution, recorded and judged by
the rule's floor, with a real Llama lowered and run step by step, and a fault planted in
ExecuTorch's runtime itself (`executorch.runtime.Method.execute`), never in the harness."""

import dataclasses

import pytest
import torch

from etsuite.backends.harness.case.pipeline import run_steps_pipeline
from etsuite.backends.harness.case.steps import NextToken, next_token
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.tolerance import FP32
from etsuite.backends.portable.flows import PORTABLE
from etsuite.backends.suite.llm import decoders

# Only the task-level answer judges: an element bound no logit can miss, and a floor of
# full agreement with eager's next token at every position of every step.
TASK_ONLY = dataclasses.replace(FP32, name="task only", atol=1e3, min_top1_agreement=1.0,
                                max_next_token_kl=1e-3)


def _decode(monkeypatch=None, swap_from_step: int | None = None):
    torch.manual_seed(5)
    decoder = decoders.llama_kv_static(prefill_len=2, n_decode=3)
    if swap_from_step is not None:
        from executorch.runtime import Method

        real_execute = Method.execute
        calls = {"n": 0}

        def execute_swapping_two_tokens(self, inputs):
            # From one step on, the runtime returns the logits of the two most likely
            # tokens of each position swapped (a delegate writing its output misordered).
            outputs = list(real_execute(self, inputs))
            calls["n"] += 1
            if calls["n"] - 1 >= swap_from_step:
                logits = outputs[0].clone()
                top2 = logits.topk(2, dim=-1).indices
                first, second = logits.gather(-1, top2[..., :1]), logits.gather(-1, top2[..., 1:])
                logits.scatter_(-1, top2[..., :1], second)
                logits.scatter_(-1, top2[..., 1:], first)
                outputs[0] = logits
            return outputs

        monkeypatch.setattr(Method, "execute", execute_swapping_two_tokens)
    flow = dataclasses.replace(PORTABLE, name="portable_task_only", tolerance=TASK_ONLY)
    return run_steps_pipeline(decoder.module, decoder.steps, flow,
                              dynamic_shapes=decoder.dynamic_shapes, next_token_logits=0)


@pytest.mark.slow
def test_a_faithful_decoder_agrees_with_eager_at_every_step():
    outcome = _decode()
    assert outcome.status is Status.PASS, outcome.error
    assert len(outcome.step_top1) == len(outcome.step_kl) == outcome.steps == 5
    assert outcome.step_top1 == [1.0] * 5
    assert max(outcome.step_kl) < 1e-6


@pytest.mark.slow
def test_swapped_next_tokens_fail_the_step_they_start_at(monkeypatch):
    """The swap leaves every logit's value in range (the loose element bound passes) but
    changes the answer: the step it starts at fails, named, and the series shows it."""
    outcome = _decode(monkeypatch, swap_from_step=2)
    assert outcome.status is Status.FAIL_MISMATCH
    assert outcome.failed_step == 2
    assert "next-token answer, step 2: top-1 agreement with eager 0, needs 1" in outcome.error
    assert outcome.step_top1 == [1.0, 1.0, 0.0, 0.0, 0.0]
    # (random weights give near-flat distributions: the swap moves the KL a little, but
    # far above the faithful steps')
    assert min(outcome.step_kl[2:]) > 100 * max(outcome.step_kl[:2])


def test_the_answer_per_step_from_logits():
    eager = [[torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]])], [torch.tensor([1.0, 0.0])]]
    same = next_token(eager, eager, 0)
    assert same.top1 == [1.0, 1.0] and same.kl == [0.0, 0.0]
    other = [[torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])],
             [torch.tensor([float("nan"), 0.0])]]
    judged = next_token(eager, other, 0)
    assert judged.top1 == [0.5, None] and judged.kl[0] > 0 and judged.kl[1] is None
    assert judged.misses(0.9, None) == (0, "step 0: top-1 agreement with eager 0.5, needs 0.9")
    assert judged.misses(None, 1.0) == (1, "step 1: next-token KL from eager not comparable, "
                                           "bound 1 nats")
    assert NextToken([1.0], [0.0]).misses(1.0, 0.0) is None
