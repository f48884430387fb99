"""Stateful programs: one loaded method called step after step, the runtime carrying the
state (mutable buffers such as an LLM's KV cache) from one call to the next.

A backend that drops a cache update, writes it twice or at the wrong position gives
right answers on the first call and wrong ones later, so a single forward cannot catch
it. Here the eager module runs the same sequence of steps with its own state, every step
is judged by the flow's rule, and the record keeps a small per-step error series and the
first step that fails ("diverges at step k").
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from etsuite.backends.harness.case.output_match import (
    Comparison,
    compare_outputs,
    flat_inputs,
    flatten_tensors,
)
from etsuite.backends.harness.flows.tolerance import RuleBook, Tolerance


@dataclass
class StepsJudged:
    """Every step's comparison, reduced to what a record keeps."""

    errors: list        # per step: the max abs error of each output (None: not comparable)
    sqnr_db: list       # per step: the SQNR of each output in dB (None: not comparable)
    failed_step: int | None
    deciding: Comparison  # the first failing step's, else the one nearest its bound
    deciding_step: int

    @property
    def matched(self) -> bool:
        return self.failed_step is None

    def as_comparison(self) -> Comparison:
        """The deciding step's comparison, its message and margin naming the step."""
        step = f"step {self.deciding_step} of {len(self.errors)}"
        message = f"diverges at {step}: {self.deciding.message}" if not self.matched else ""
        margin = f"{step}: {self.deciding.margin}" if self.deciding.margin else None
        return Comparison(self.matched, message, self.deciding.statistics,
                          rule=self.deciding.rule, margin=margin)


@dataclass
class NextToken:
    """A decoder's answer per step against eager's: what an LLM user reads."""

    top1: list          # per step: share of positions whose argmax token is eager's
    kl: list            # per step: mean KL(eager || program) over positions, in nats

    def misses(self, min_top1: float | None, max_kl: float | None
               ) -> tuple[int, str] | None:
        """The first step that misses the rule's floor or ceiling, and why (None: none)."""
        for step, (top1, kl) in enumerate(zip(self.top1, self.kl, strict=True)):
            if min_top1 is not None and (top1 is None or top1 < min_top1):
                return step, (f"step {step}: top-1 agreement with eager {_share(top1)}, "
                              f"needs {min_top1:g}")
            if max_kl is not None and (kl is None or kl > max_kl):
                return step, (f"step {step}: next-token KL from eager {_nats(kl)}, bound "
                              f"{max_kl:g} nats")
        return None


def _share(value: float | None) -> str:
    return "not comparable" if value is None else f"{value:.3g}"


def _nats(value: float | None) -> str:
    return "not comparable" if value is None else f"{value:.3g} nats"


def next_token(expected: list[list], actual: list[list], index: int) -> NextToken:
    """Each step's flat output `index` read as next-token logits (last dimension the
    vocabulary, any positions before it): the top-1 agreement with eager and the mean
    KL divergence of the program's softmax from eager's. None where the step's logits
    cannot be compared (missing, another shape, not finite)."""
    top1: list = []
    kl: list = []
    for want, got in zip(expected, actual, strict=True):
        a = want[index] if index < len(want) else None
        b = got[index] if index < len(got) else None
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) \
                or a.shape != b.shape or a.dim() == 0 \
                or not (torch.isfinite(a).all() and torch.isfinite(b).all()):
            top1.append(None)
            kl.append(None)
            continue
        eager = a.detach().to(torch.float64).reshape(-1, a.shape[-1])
        program = b.detach().to(torch.float64).reshape(-1, b.shape[-1])
        agree = (eager.argmax(-1) == program.argmax(-1)).to(torch.float64).mean()
        log_p, log_q = eager.log_softmax(-1), program.log_softmax(-1)
        divergence = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
        top1.append(round(float(agree), 4))
        kl.append(float(f"{max(float(divergence), 0.0):.4g}"))
    return NextToken(top1, kl)


def as_steps(steps: Sequence) -> list[tuple]:
    """Each step as a tuple of inputs; a clear error for an empty sequence (a test bug)."""
    steps = [tuple(step) if isinstance(step, (tuple, list)) else (step,) for step in steps]
    if not steps:
        raise ValueError("a stateful test needs at least one step")
    return steps


def prepare_stateful(model: torch.nn.Module) -> torch.nn.Module:
    """Parameters that do not require grad: an in-place cache update (`copy_`,
    `index_put_`) of a traced program fails on a leaf that requires grad."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model.eval()


def calibrate_steps(prepared: torch.nn.Module, steps: list[tuple]) -> None:
    """Calibrates a PT2E-prepared module on every step, then puts the model's own buffers
    (its state: the KV cache) back, since their values when it is exported again are the
    program's initial state. The observers' buffers keep what they saw."""
    observers = {name for name, module in prepared.named_modules()
                 if hasattr(module, "calculate_qparams")}
    state = {name: buffer.clone() for name, buffer in prepared.named_buffers()
             if name.rpartition(".")[0] not in observers}
    with torch.no_grad():
        for step in steps:
            prepared(*step)
        for name, buffer in prepared.named_buffers():
            if name in state:
                buffer.copy_(state[name])


def _worst_ratio(comparison: Comparison) -> float:
    ratios = [s.error_ratio for s in comparison.statistics if s.judged]
    return max((float("inf") if r is None else r for r in ratios), default=0.0)


def judge_steps(expected: list[list], actual: list[list], rules: RuleBook | Tolerance) -> StepsJudged:
    """Judges every step (a later step is judged even after one failed, so the series
    shows whether the error grows); the deciding step is the first that fails."""
    errors, sqnr, comparisons = [], [], []
    for want, got in zip(expected, actual, strict=True):
        comparison = compare_outputs(want, got, rules)
        comparisons.append(comparison)
        errors.append([s.max_abs_error for s in comparison.statistics])
        sqnr.append([s.sqnr_db for s in comparison.statistics])
    failed = next((k for k, c in enumerate(comparisons) if not c.matched), None)
    deciding = failed if failed is not None else max(
        range(len(comparisons)), key=lambda k: _worst_ratio(comparisons[k]))
    return StepsJudged(errors, sqnr, failed, comparisons[deciding], deciding)


def eager_calls(modules: dict, calls: list[tuple[str, tuple]]) -> list[list]:
    """The reference: a copy of the modules in their initial state, taken together (so
    the state they share stays shared), runs the calls (method name, inputs) in order
    with its own state; the test's modules stay as they were for export."""
    reference = copy.deepcopy(modules)
    with torch.no_grad():
        return [flatten_tensors(reference[name](*step)) for name, step in calls]


def execute_calls(runtime: Any, loaded: dict, calls: list[tuple[str, tuple]]
                  ) -> tuple[list[list], list]:
    """Runs every call on its method of the one loaded program (`loaded`: name -> what
    the runtime loaded); returns each call's flat outputs and its wall time in
    milliseconds (the runtime's time per call: per token for a decode step). A runtime
    with `execute_calls` takes all the calls at once (a runner sends them as one job)
    and gives each call's time itself."""
    at_once = getattr(runtime, "execute_calls", None)
    if at_once is not None:
        return at_once(loaded, [(name, flat_inputs(step)) for name, step in calls])
    outputs, milliseconds = [], []
    for name, step in calls:
        start = time.perf_counter()
        outputs.append(list(runtime.execute(loaded[name], flat_inputs(step))))
        milliseconds.append(round((time.perf_counter() - start) * 1000, 3))
    return outputs, milliseconds


def combined_placement(placements: list) -> str | None:
    """The state's placement over several methods' programs (see `state_placement`)."""
    known = set(placements) - {None}
    return known.pop() if len(known) == 1 else "mixed" if known else None


def state_placement(exported_program: Any) -> str | None:
    """Where the program's buffer mutations are computed: "delegate" when every mutated
    buffer's new value comes out of a delegate, "portable" when none does, "mixed"
    otherwise; None for a program without mutable state."""
    mutated = exported_program.graph_signature.buffers_to_mutate
    if not mutated:
        return None
    output = next(n for n in exported_program.graph_module.graph.nodes if n.op == "output")
    producers = [node for node in flatten_tensors(output.args[0])
                 if isinstance(node, torch.fx.Node) and node.name in mutated]
    inside = sum(_from_delegate(node) for node in producers)
    if inside == len(producers):
        return "delegate"
    return "portable" if inside == 0 else "mixed"


def _from_delegate(node: torch.fx.Node) -> bool:
    import operator

    if node.op == "call_function" and node.target is operator.getitem:
        node = node.args[0]
    return node.op == "call_function" and \
        node.target is torch._higher_order_ops.executorch_call_delegate
