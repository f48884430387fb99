"""`TestRunner`: what the `test_runner` fixture hands a test. Each
`lower_and_run_model` call is one subtest and yields one record."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import RerunResult, SubtestRecord
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.tolerance import RuleBook

if TYPE_CHECKING:
    import pytest

    from etsuite.backends.harness.artifacts import ArtifactPolicy
    from etsuite.backends.harness.case.pipeline import Replay


@dataclass(frozen=True)
class TestContext:
    """Identity of the running test, shared by all of its subtests' records."""

    __test__ = False  # not a test class, despite the name

    test_id: str
    test_case: str
    suite: str
    params: dict
    seed: int
    repro: str


def new_record(flow: Flow | None, context: TestContext, subtest: int, **found: Any) -> SubtestRecord:
    """A record with the test's identity and what a stage (or a lost child) found.
    `flow` is None only for a test without one whose process was lost."""
    return SubtestRecord(
        test_id=context.test_id, test_case=context.test_case, subtest=subtest,
        suite=context.suite, backend=flow.backend if flow else None,
        flow=flow.name if flow else None,
        params=dict(context.params), seed=context.seed, repro=context.repro, **found,
    )


def random_like(inputs: Any) -> tuple:
    """Fresh inputs with the shapes and dtypes of `inputs` (drawn from the seeded torch
    generator): floats from a normal distribution, integers and booleans from the range
    the given ones span, so indices stay valid. Non-tensors are kept."""
    import torch

    def draw(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        if value.is_floating_point():
            return torch.randn(value.shape).to(value.dtype)
        if value.dtype is torch.bool:
            return torch.rand(value.shape) < 0.5
        if value.numel() == 0:
            return value.clone()
        low, high = int(value.min()), int(value.max())
        return torch.randint(low, high + 1, value.shape, dtype=value.dtype)

    return tuple(draw(v) for v in inputs)


LOCALIZE_MODES = ("off", "undeclared", "all")
# Where minimal repros of localized mismatches are written, relative to where pytest runs.
REPROS = os.path.join("reports", "repros")


@dataclass(frozen=True)
class LocalizePolicy:
    """Which failing subtests are localized (--localize) and the seconds a test's
    subtests may spend on it together (--localize-seconds): by default the failures no
    [[fail]] entry declares, since a declared one is known already and would pay the cost
    on every run."""

    mode: str = "undeclared"
    seconds: float = 60.0

    @classmethod
    def from_config(cls, config: pytest.Config) -> "LocalizePolicy":
        return cls(config.getoption("localize", "undeclared"),
                   config.getoption("localize_seconds", 60.0))

    def seconds_for(self, declared: bool) -> float | None:
        """A case's seconds for localizing, or None when it is not localized."""
        if self.mode == "off" or (self.mode == "undeclared" and declared):
            return None
        return self.seconds


# Failing statuses worth running again: the program ran (or tried to), so a second run
# can tell a flaky runtime from a broken kernel. Earlier stages are deterministic.
RERUN = frozenset({Status.FAIL_MISMATCH, Status.FAIL_RUN})


class CrashLocalized(Exception):
    """Ends a crash-localizing run of a test (isolation.localize_crash) once the crashed
    subtest is recorded: what follows it never ran in the first run either."""


class TestRunner:
    __test__ = False  # not a test class, despite the name

    def __init__(self, flow: Flow, context: TestContext,
                 on_progress: Callable[[dict], None] = lambda event: None,
                 artifacts: ArtifactPolicy | None = None,
                 localize: LocalizePolicy = LocalizePolicy(),
                 crash_target: tuple[int, str] | None = None):
        self.artifacts = artifacts  # an artifacts.ArtifactPolicy, or None: write none
        self.localize = localize
        # (subtest, stage) where this test's process died in its first run: this run (the
        # isolation layer's second, isolation.localize_crash) bisects that crash instead
        self.crash_target = crash_target
        self.flow = flow
        self.context = context
        self.records: list[SubtestRecord] = []
        self._on_progress = on_progress

    def rules(self, atol: float | None = None, rtol: float | None = None) -> RuleBook:
        """The flow's recipe rule with this case's overrides from its expectations.
        `atol`/`rtol` (ExecuTorch's suite's arguments) replace those terms of the rule."""
        base = self.flow.tolerance
        if atol is not None or rtol is not None:
            base = replace(base, name=f"{base.name}, atol/rtol from the test",
                           atol=base.atol if atol is None else atol,
                           rtol=base.rtol if rtol is None else rtol)
        return self.flow.rule_book(base, self.flow.expectations.tolerances(self.flow.name, self._case()))

    def _case(self) -> str:
        return case_id(self.context.test_id, self.flow.name)

    def _localize_seconds(self) -> float | None:
        """This case's localization time limit (None: not localized), by --localize and
        whether a [[fail]] entry declares the case. The test's subtests share one time limit,
        so localizing cannot push a test past its time limit by more than that."""
        if self.crash_target is not None and len(self.records) != self.crash_target[0]:
            return None  # a crash-localizing run localizes the crash, nothing before it
        limit = self.localize.seconds_for(self._declared())
        if limit is None:
            return None
        spent = sum((r.localization or {}).get("seconds", 0.0) for r in self.records)
        return max(limit - spent, 0.0)

    def _declared(self) -> bool:
        return self.flow.expectations.failure(self.flow.name, self._case()) is not None

    def _crashed_at(self, subtest: int) -> str | None:
        """The stage the process died in at this subtest, in a crash-localizing run; such
        a run ends once that subtest is recorded (`CrashLocalized`), or at once when the
        case is not localized."""
        if self.crash_target is None:
            return None
        if self.localize.seconds_for(self._declared()) is None:
            raise CrashLocalized("this case is not localized (--localize)")
        return self.crash_target[1] if subtest == self.crash_target[0] else None

    def _end_crash_run(self, subtest: int) -> None:
        if self.crash_target is not None and subtest == self.crash_target[0]:
            raise CrashLocalized(f"subtest {subtest}'s crash is localized")

    def _repro_to(self, subtest: int) -> dict:
        """Where a localized mismatch's minimal repro goes (case/repro.py), beside the
        reports: reports/repros/<test>/subtest<N>."""
        from etsuite.backends.harness.artifacts import safe_name

        folder = os.path.join(REPROS, safe_name(self.context.test_id), f"subtest{subtest}")
        return {"folder": folder, "test_id": self.context.test_id, "tox_env": self.flow.backend}

    def _rerun(self, replay: Replay, model: Any, inputs: tuple, subtest: int) -> dict:
        """Run a failing subtest's program again in this process: once on the same inputs
        and once on other inputs of the same shapes (a seed derived from the case and the
        subtest; the global generator is left as it was, so later subtests draw what they
        would have). Not reproducing with the same inputs makes it flaky: it keeps its
        failing status (see contract.record.SubtestRecord.flaky)."""
        import torch

        same = replay.status(model)
        seed = zlib.crc32(f"{self.context.seed}:{self.context.test_id}:{subtest}".encode())
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            other = replay.status(model, random_like(inputs))
        return {"rerun": RerunResult(same, other, seed), "flaky": not same.failing}

    def lower_and_run_model(self, model: Any, inputs: Any,
                            generate_random_test_inputs: bool = False, *,
                            dynamic_shapes: Any = None, atol: float | None = None,
                            rtol: float | None = None) -> SubtestRecord:
        """Run the flow's pipeline on `model(*inputs)` and record the result.

        `inputs` trace the export and calibrate quantization; with
        `generate_random_test_inputs` (ExecuTorch's suite's argument) the program is run and
        compared on fresh seeded inputs of the same shapes and dtypes instead.
        Never raises for a backend failure: the harness fails the test after the test
        body returns, so every subtest of a test is recorded. Returns the record.
        """
        from etsuite.backends.harness.case.pipeline import run_pipeline

        self._skip_unless_recipe_applies([model])
        subtest = len(self.records)
        run_inputs = random_like(inputs) if generate_random_test_inputs else None
        outcome = run_pipeline(
            model, inputs, self.flow, dynamic_shapes=dynamic_shapes,
            tolerance=self.rules(atol, rtol), run_inputs=run_inputs,
            localize_seconds=self._localize_seconds(), repro_to=self._repro_to(subtest),
            on_stage=lambda stage: self._on_progress(
                {"event": "stage", "subtest": subtest, "stage": stage}),
            crashed_at=self._crashed_at(subtest),
        )
        found, replay = outcome.record_fields(), outcome.replay
        if found["status"] in RERUN and replay is not None and outcome.rerun_worthwhile:
            found.update(self._rerun(replay, model, run_inputs or tuple(inputs), subtest))
        if self.artifacts is not None and replay is not None \
                and self.artifacts.wants(found["status"]):
            found["artifacts"] = self.artifacts.write(
                self.context.test_id, subtest, replay, found["status"], self.context.seed)
        record = self._record(subtest, found)
        self._end_crash_run(subtest)
        return record

    def lower_and_run_steps(self, model: Any, steps: list, *, dynamic_shapes: Any = None,
                            atol: float | None = None,
                            rtol: float | None = None,
                            next_token_logits: int | None = None) -> SubtestRecord:
        """Run a stateful program: `steps` is a sequence of input tuples (e.g. a prefill,
        then one token per decode step). The program is exported from `model` in its
        initial state with the first step's inputs (and `dynamic_shapes`), loaded once,
        and called once per step on that one method, so the runtime carries the state
        (mutable buffers, such as a KV cache); the eager module runs the same steps with
        its own state, and every step is judged by the flow's rule. The record holds each
        step's error (`step_errors`), the first step that fails (`failed_step`), the
        runtime's time per step (`step_ms`) and where the state is updated (`state`).
        A mutated buffer starts as zeros in the program (ExecuTorch keeps only its shape
        and dtype), so the model's buffers should start as zeros too.
        `next_token_logits`: for a decoder, which flat output holds its next-token logits;
        each step's top-1 agreement and KL divergence from eager are then recorded
        (`step_top1`, `step_kl`) and judged where the rule sets a floor.
        """
        from etsuite.backends.harness.case.pipeline import run_steps_pipeline

        self._skip_unless_recipe_applies([model])
        subtest = len(self.records)
        outcome = run_steps_pipeline(
            model, steps, self.flow, dynamic_shapes=dynamic_shapes,
            tolerance=self.rules(atol, rtol), localize_seconds=self._localize_seconds(),
            on_stage=lambda stage: self._on_progress(
                {"event": "stage", "subtest": subtest, "stage": stage}),
            crashed_at=self._crashed_at(subtest),
            next_token_logits=next_token_logits,
        )
        record = self._record(subtest, outcome.record_fields())
        self._end_crash_run(subtest)
        return record

    def lower_and_run_methods(self, methods: dict, calls: list, *, atol: float | None = None,
                              rtol: float | None = None) -> SubtestRecord:
        """Run a program of several methods lowered together: `methods` maps each method
        name to (module, example inputs[, dynamic shapes]); `calls` lists (method name,
        inputs) in the order a deployment calls them (e.g. a `prefill`, then `decode`
        calls). The methods share their mutable buffers (one KV cache), as modules that
        share buffers do in eager. Every call is judged, as in
        `lower_and_run_steps`; the record names each step's method (`step_methods`)."""
        from etsuite.backends.harness.case.pipeline import run_methods_pipeline

        self._skip_unless_recipe_applies([module for module, *_ in methods.values()])
        subtest = len(self.records)
        outcome = run_methods_pipeline(
            methods, calls, self.flow, tolerance=self.rules(atol, rtol),
            localize_seconds=self._localize_seconds(),
            on_stage=lambda stage: self._on_progress(
                {"event": "stage", "subtest": subtest, "stage": stage}),
            crashed_at=self._crashed_at(subtest),
        )
        record = self._record(subtest, outcome.record_fields())
        self._end_crash_run(subtest)
        return record

    def _skip_unless_recipe_applies(self, models: list) -> None:
        """A flow's source transformation (an LLM recipe) that does not apply to this
        model ends the test skip_unsupported with the recipe's reason."""
        recipe = self.flow.source_transform
        if recipe is None:
            return
        for model in models:
            reason = recipe.unsupported(model)
            if reason:
                self.skip_unsupported(reason)

    def skip_unsupported(self, reason: str) -> None:
        """End the test as `skip_unsupported` with `reason`, recorded like a flow's own
        [[skip]] entry: for a case the test itself cannot build or run here (an example
        model that downloads its weights, a missing package), so it stays in the report
        with its reason instead of vanishing."""
        import pytest

        self._record(len(self.records), {"status": Status.SKIP_UNSUPPORTED, "error": reason})
        pytest.skip(f"{Status.SKIP_UNSUPPORTED}: {reason}")

    def _record(self, subtest: int, found: dict) -> SubtestRecord:
        record = new_record(self.flow, self.context, subtest, **found)
        self.records.append(record)
        self._on_progress({"event": "record", "record": record.to_dict()})
        return record
