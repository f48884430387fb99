"""The pipeline one subtest runs, and the place where a subtest gets its status.

eager reference -> export -> quantize (if the flow does) -> lower (partitioner) ->
to_executorch + serialize -> load -> run -> compare. Each stage is timed; the first stage
that raises decides the status (see `contract.STAGE_FAILURE`). A model whose eager run or
export raises is the test's fault, not the backend's: `skip_invalid`.

Importing this module leaves torch as it is: whoever runs the pipeline applies
`speedups` first (the plugin does at configure time).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import logging
import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

import torch
import torch.utils._pytree as pytree

from etsuite.backends.harness.case import bisection, fidelity, localize, repro, speedups
from etsuite.backends.harness.case.delegation import (
    computing_ops,
    count_delegation,
    delegated_precision,
)
from etsuite.backends.harness.case.output_match import flat_inputs, flatten_tensors
from etsuite.backends.harness.case.steps import (
    as_steps,
    calibrate_steps,
    combined_placement,
    eager_calls,
    execute_calls,
    judge_steps,
    next_token,
    prepare_stateful,
    state_placement,
)
from etsuite.backends.harness.contract.record import (
    CAUSE_SEPARATOR,
    ERROR_LIMIT,
    FINDINGS_FIELDS,
    Findings,
    trim_error,
)
from etsuite.backends.harness.contract.statuses import STAGE_FAILURE, Status
from etsuite.backends.harness.flows.flow import Flow, SourceTransform
from etsuite.backends.harness.flows.runtimes import (
    ExecuTorchRuntime,
    LoweredProgram,
    Runtime,
    RuntimeStatus,
)
from etsuite.backends.harness.flows.tolerance import RuleBook, Tolerance, base_rule

# torch's structured-trace logger emits DEBUG records on every export, which flood
# pytest's captured-log sections and the JSON report. Keep it when TORCH_TRACE asks for it.
if not os.environ.get("TORCH_TRACE"):
    logging.getLogger("torch.__trace").disabled = True


class StageError(Exception):
    """A stage raised; carries the stage name so the status can be derived from it."""

    def __init__(self, stage: str, error: BaseException):
        super().__init__(stage)
        self.stage = stage
        self.error = error


class CrashAhead(Exception):
    """The stage about to run is the one this subtest's process died in (`crashed_at`):
    it is not run again; the crash is bisected instead (case/bisection.py)."""

    def __init__(self, stage: str):
        super().__init__(stage)
        self.stage = stage


class _Timer:
    """Runs stages, records their wall time and reports progress before each one."""

    def __init__(self, timings: dict, on_stage: Callable[[str], None],
                 crashed_at: str | None = None):
        self.timings = timings
        self.on_stage = on_stage
        self.crashed_at = crashed_at

    def run(self, stage: str, fn: Callable[[], Any]) -> Any:
        self.on_stage(stage)
        if stage == self.crashed_at:
            raise CrashAhead(stage)
        start = time.perf_counter()
        try:
            return fn()
        except Exception as error:  # noqa: BLE001 - any failure of a stage is a result
            raise StageError(stage, error) from error
        finally:
            self.timings[stage] = round(time.perf_counter() - start, 4)


def _error_text(error: BaseException) -> str:
    """The error and the errors it was raised from (`raise ... from`): pass managers wrap
    the real failure in "An error occurred when running the X pass", which names no
    cause. The root cause comes last, where trimming keeps it."""
    parts: list[str] = []
    seen: set[int] = set()
    cause: BaseException | None = error
    root = error
    while cause is not None and id(cause) not in seen and len(parts) < 4:
        seen.add(id(cause))
        parts.append("".join(traceback.format_exception_only(type(cause), cause)).strip())
        root, cause = cause, cause.__cause__
    where = raised_at(root)
    if where:  # an IndexError alone does not say in which library, let alone where
        parts[-1] += f"\n(raised at {where})"
    # Each wrapper keeps a short head (a pass manager's lists every pass run before);
    # the root cause gets the rest of the error's room.
    wrappers = [trim_error(part, WRAPPER_LIMIT) for part in parts[:-1]]
    room = ERROR_LIMIT - sum(len(w) + len(CAUSE_SEPARATOR) for w in wrappers)
    return trim_error(CAUSE_SEPARATOR.join([*wrappers, trim_error(parts[-1], room)]))


WRAPPER_LIMIT = 300  # characters kept of each error that only wraps its cause


def raised_at(error: BaseException) -> str | None:
    """Where an exception was raised: the innermost frame of its traceback as
    `package/module.py:line in function` (the path from its installed package or this
    checkout on), or None without a traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    frame = frames[-1]
    path = frame.filename.replace(os.sep, "/")
    for marker in ("/site-packages/", "/dist-packages/", f"{_CHECKOUT}/"):
        if marker in path:
            path = path.rsplit(marker, 1)[1]
            break
    return f"{path}:{frame.lineno} in {frame.name}"


_CHECKOUT = str(Path(__file__).resolve().parents[3]).replace(os.sep, "/")


def quantize(exported: Any, inputs: tuple, flow: Flow, dynamic_shapes: Any,
             forward: Callable[..., Any] | None = None,
             calibrate: Callable[[torch.nn.Module], None] | None = None) -> Any:
    """PT2E on the already exported graph (no second export of the eager model).
    Calibrates on `inputs` unless `calibrate` runs the prepared module itself (a stateful
    test calibrates on all of its steps)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    # check_guards=False: no `_guards_fn` call_module node, which quantizers' annotation
    # passes do not expect.
    assert flow.quantizer is not None  # the pipeline quantizes only flows that quantize
    quantizer = flow.quantizer()
    speedups.after_backend_imports()  # the quantizer's own modules are imported by now
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    if calibrate is None:
        prepared(*inputs)  # calibrate on the test's own inputs
    else:
        calibrate(prepared)
    converted = convert_pt2e(prepared, fold_quantize=flow.fold_quantize)
    return torch.export.export(converted, inputs,
                               dynamic_shapes=_spread_varargs(forward, dynamic_shapes))


def _spread_varargs(forward: Callable[..., Any] | None, dynamic_shapes: Any) -> Any:
    """The converted module takes the model's inputs as positional parameters. For a
    `forward(self, *xs)` model the test gives one dynamic_shapes entry holding the specs
    of all of *xs (a tuple, or a dict keyed by the varargs' name): spread it over them."""
    import inspect

    if not dynamic_shapes or forward is None:
        return dynamic_shapes
    parameters = list(inspect.signature(forward).parameters.values())
    if len(parameters) != 1 or parameters[0].kind is not inspect.Parameter.VAR_POSITIONAL:
        return dynamic_shapes
    if isinstance(dynamic_shapes, dict) and set(dynamic_shapes) == {parameters[0].name}:
        return tuple(dynamic_shapes[parameters[0].name])
    if isinstance(dynamic_shapes, (tuple, list)) and len(dynamic_shapes) == 1 \
            and isinstance(dynamic_shapes[0], (tuple, list)):
        return tuple(dynamic_shapes[0])
    return dynamic_shapes


def run_pipeline(
    model: torch.nn.Module,
    inputs: tuple,
    flow: Flow,
    *,
    dynamic_shapes: Any = None,
    tolerance: RuleBook | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
    run_inputs: tuple | None = None,
    localize_seconds: float | None = None,
    repro_to: dict | None = None,
    crashed_at: str | None = None,
    after_export: Callable[[Any], Any] | None = None,
) -> PipelineOutcome:
    """Run one subtest; return what the pipeline found (see `PipelineOutcome`). Never
    raises for a failure of the model or the backend: that is what the record is for.
    `run_inputs` (default: `inputs`) are what the program and eager run on for the
    comparison; `inputs` trace the export and calibrate quantization. With
    `localize_seconds` (seconds), a fail_mismatch is localized (case/localize.py) and the
    op it starts at is tried alone (case/repro.py); `repro_to` ({folder, test_id, tox_env})
    says where that minimal repro is written. `crashed_at` (a stage): this subtest's
    process died there in an earlier run; the stage is not run again, and the crash is
    bisected (`localize_seconds` permitting). `after_export` is applied to the exported
    program (bisection gives a re-exported window its nodes' metadata back)."""
    inputs = tuple(inputs)
    calls = OneCall(inputs if run_inputs is None else tuple(run_inputs), repro_to)
    return _run(model.eval(), inputs, calls, flow, dynamic_shapes, tolerance, on_stage,
                localize_seconds, crashed_at, after_export)


def run_steps_pipeline(
    model: torch.nn.Module,
    steps: list,
    flow: Flow,
    *,
    dynamic_shapes: Any = None,
    tolerance: RuleBook | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
    localize_seconds: float | None = None,
    crashed_at: str | None = None,
    next_token_logits: int | None = None,
) -> PipelineOutcome:
    """A stateful subtest (see steps.py): the program is exported from the module's
    initial state with the first step's inputs, loaded once, and every step runs on that
    one loaded method; each step is judged against the eager module run through the
    same steps (and, for a decoder, its next-token answer: `next_token_logits`)."""
    calls = StepCalls(as_steps(steps), next_token_logits=next_token_logits)
    model = prepare_stateful(model)
    return _run(model, calls.steps[0], calls, flow, dynamic_shapes, tolerance, on_stage,
                localize_seconds, crashed_at)


def run_methods_pipeline(
    methods: dict,
    calls: list,
    flow: Flow,
    *,
    tolerance: RuleBook | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
    localize_seconds: float | None = None,
    crashed_at: str | None = None,
) -> PipelineOutcome:
    """A program of several methods (see `MethodCalls`): `methods` maps each name to
    (module, example inputs[, dynamic shapes]); `calls` is the sequence of (name, inputs)
    a deployment makes. Judged call by call, as a stateful subtest."""
    if not methods or not calls:
        raise ValueError("a multi-method test needs at least one method and one call")
    unknown = sorted({name for name, _ in calls} - set(methods))
    if unknown:
        raise ValueError(f"calls name methods the program does not have: {unknown}")
    modules, examples = {}, {}
    for name, (module, example, *shapes) in methods.items():
        modules[name] = prepare_stateful(module)
        examples[name] = (tuple(example), shapes[0] if shapes else None)
    steps = as_steps([step for _, step in calls])
    plan = MethodCalls(steps, methods=examples, order=[name for name, _ in calls])
    return _run(modules, (), plan, flow, None, tolerance, on_stage, localize_seconds,
                crashed_at)


def _run(model: Any, inputs: tuple, calls: Calls, flow: Flow, dynamic_shapes: Any,
         tolerance: RuleBook | None, on_stage: Callable[[str], None],
         localize_seconds: float | None = None, crashed_at: str | None = None,
         after_export: Callable[[Any], Any] | None = None) -> PipelineOutcome:
    outcome = PipelineOutcome()
    timer = _Timer(outcome.timings, on_stage, crashed_at)
    exported = None
    try:
        with torch.no_grad():
            expected = timer.run("eager", lambda: calls.reference(model))
        if flow.source_transform is not None:
            recipe = flow.source_transform
            model = timer.run("transform", lambda: calls.transform(model, recipe))
        strict = flow.source_transform is not None and flow.source_transform.strict_export
        exported = timer.run("export", lambda: calls.export(model, inputs, dynamic_shapes, strict))
        if after_export is not None:
            exported = after_export(exported)
        if flow.quantizes:
            def quantize_with_reference() -> Any:
                quantized = calls.quantize(exported, model, inputs, flow, dynamic_shapes)
                if flow.tolerance.fidelity_steps is not None:  # the flow judges fidelity
                    outcome.quantized_reference = calls.quantized_reference(quantized)
                return quantized

            exported = timer.run("quantize", quantize_with_reference)
        _lower_run_compare(exported, calls, expected, flow, tolerance, timer, outcome,
                           localize_seconds)
    except StageError as failure:
        outcome.stage = failure.stage
        outcome.error = _error_text(failure.error)
        outcome.status = STAGE_FAILURE[failure.stage]
    except CrashAhead as ahead:
        outcome.status, outcome.stage = Status.FAIL_CRASH, ahead.stage
        outcome.error = f"the test's process died at {ahead.stage} (not run again here)"
    if localize_seconds is not None and exported is not None and outcome.status is not None \
            and outcome.status.value in bisection.BISECTED:
        on_stage("localize")
        outcome.localization = calls.localize_stage(exported, flow, outcome.status.value,
                                                    localize_seconds, outcome.stage)
    return outcome


def _keep_weights(exported: Any) -> Callable[[], None]:
    """A lowering may take constants out of the exported program it lowers (OpenVINO's
    does), and localization lowers and runs that program again: `restore()` puts back
    what was taken (the tables' entries are kept by reference: no tensor is copied)."""
    weights, constants = dict(exported.state_dict), dict(exported.constants)

    def restore() -> None:  # into the tables the program has now (a lowering may swap them)
        exported.state_dict.update(weights)
        exported.constants.update(constants)

    return restore


def lower(exported: Any, flow: Flow) -> Any:
    """The flow's lowering: its partitioners (none for portable) and compile config. The
    one place both the pipeline and priming lower, so they lower alike."""
    from executorch.exir import to_edge_transform_and_lower

    # (flow.delegates, spelled out so that the type checker sees partitioners is set)
    partitioners = flow.partitioners() if flow.partitioners is not None else None
    speedups.after_backend_imports()  # the partitioners' modules are imported by now
    compile_config = flow.edge_compile_config() if flow.edge_compile_config else None
    passes = flow.transform_passes() if flow.transform_passes is not None else None
    restore = [_keep_weights(e) for e in (exported.values() if isinstance(exported, dict)
                                          else [exported])]
    try:
        return to_edge_transform_and_lower(exported, transform_passes=passes,
                                           partitioner=partitioners, compile_config=compile_config)
    finally:
        for put_back in restore:  # the exported program stays as it was, to be lowered again
            put_back()


def _lower_run_compare(exported: Any, calls: Calls, expected: Any, flow: Flow,
                       tolerance: RuleBook | None, timer: _Timer,
                       found: PipelineOutcome, localize_seconds: float | None) -> None:
    """Fills `found` as stages complete, so a late failure keeps the delegation counts
    and .pte size gathered before it."""
    edge = timer.run("lower", lambda: lower(exported, flow))
    programs = calls.programs_of(edge)
    delegated: dict[str, int] = {}
    undelegated: dict[str, int] = {}
    for exported_program in programs:
        inside, outside = count_delegation(exported_program)
        for histogram, counts in ((delegated, inside), (undelegated, outside)):
            for op, count in counts.items():
                histogram[op] = histogram.get(op, 0) + count
    found.delegated_ops, found.undelegated_ops = delegated, undelegated
    found.delegated_nodes = sum(delegated.values())
    found.undelegated_nodes = sum(undelegated.values())
    if flow.quantizes:
        precisions = {delegated_precision(p) for p in programs} - {None}
        found.delegated_precision = precisions.pop() if len(precisions) == 1 \
            else "mixed" if precisions else None
    calls.describe_program(programs, found)
    executorch_program = timer.run("serialize", lambda: calls.serialize(edge))
    found.pte_size = len(executorch_program.buffer)
    program = LoweredProgram(
        pte=executorch_program.buffer, edge_program=edge,
        delegated_nodes=found.delegated_nodes, undelegated_nodes=found.undelegated_nodes)

    runtime = flow.runtime
    missing = runtime.missing(program) or calls.missing(runtime)
    if missing:
        found.status, found.error = Status.LOWERED_NOT_RUN, missing
        return

    found.runtime = runtime.name
    rules = tolerance or flow.rule_book()
    found.reference = _reference_description(flow, found.quantized_reference)
    found.replay = calls.replay(program, runtime, rules, expected, found.quantized_reference)
    loaded = None
    try:
        loaded = timer.run("load", lambda: calls.load(runtime, program))
        actual = timer.run("run", lambda: calls.execute(runtime, loaded, found))
    except StageError as failure:
        if not isinstance(failure.error, RuntimeStatus):
            raise
        verdict = failure.error
        found.status, found.stage, found.error = verdict.status, verdict.stage, trim_error(str(verdict))
        found.rerun_worthwhile = verdict.rerun
        return
    finally:
        _take_execution(runtime, loaded, found)
    if found.replay is not None:
        found.replay.actual = actual

    verdict = timer.run("compare", lambda: calls.judge(expected, actual, rules, found))
    comparison = verdict.comparison
    found.outputs = comparison.statistics
    found.verdict_rule, found.margin = comparison.rule, comparison.margin
    if verdict.fidelity is not None:
        found.fidelity = verdict.fidelity.outputs
        if verdict.status is Status.FAIL_MISMATCH and comparison.matched:
            found.verdict_rule = f"backend fidelity: {_fidelity_rule(rules)}"
            found.margin = verdict.fidelity.text
    if verdict.status is Status.FAIL_RECIPE_ACCURACY:
        found.status, found.stage, found.error = verdict.status, "compare", verdict.message
    elif verdict.status is not Status.PASS:
        found.status, found.stage, found.error = \
            Status.FAIL_MISMATCH, "compare", verdict.message
        if localize_seconds is not None:
            timer.on_stage("localize")
            found.localization = calls.localize(exported, runtime, rules, localize_seconds,
                                                found, flow)
    elif flow.delegates and computing_ops(delegated) == 0:
        found.status = Status.PASS_UNDELEGATED
    else:
        found.status = Status.PASS


def _fidelity_rule(rules: RuleBook | Tolerance) -> str:
    base = base_rule(rules)
    return (f"every element within {base.fidelity_steps:g} steps of the quantized program, "
            f"|bias| <= {base.fidelity_bias_steps:g} steps, |gain - 1| <= "
            f"{base.fidelity_gain:g}")


def _reference_description(flow: Flow, reference: fidelity.QuantizedReference | None) -> str:
    """What the outputs were judged against, in the record's words."""
    if reference is not None:
        return reference.description
    if flow.quantizes and flow.tolerance.fidelity_steps is None:
        return (f"{fidelity.FP32_EAGER} (the flow's rule sets no fidelity bound: its "
                f"backend is not judged against its quantized program yet)")
    if flow.source_transform is not None and flow.tolerance.quantized:
        return (f"{fidelity.FP32_EAGER} (the recipe quantizes in its source "
                f"transformation: no quantized program to run without the backend)")
    return fidelity.FP32_EAGER


def _take_execution(runtime: Runtime, loaded: Any, found: PipelineOutcome) -> None:
    """A runtime that executes elsewhere names the device that ran the program and splits
    the `load` and `run` wall times (transfer apart from execution: runtimes.Execution)."""
    report = getattr(runtime, "execution", None)
    execution = report(loaded) if report is not None and loaded is not None else None
    if execution is not None:
        found.runtime = execution.runtime
        for stage in ("load", "run"):  # the host's wall times, split by the runner
            found.timings.pop(stage, None)
        found.timings.update(execution.timings)
        found.cost = execution.cost


class Calls(Protocol):
    """What a subtest's calls give the pipeline (`_run`, `_lower_run_compare`): the calls
    a program is made for, and everything that depends on them, from the eager reference
    to where a failure starts. `OneCall` (one call of `forward`), `StepCalls` (steps on
    one loaded method) and `MethodCalls` (calls of several methods) are the three kinds;
    mypy checks each against this where the pipeline is handed one."""

    def reference(self, model: Any) -> Any:
        """The eager outputs of the calls (the `eager` stage)."""

    def transform(self, model: Any, recipe: SourceTransform) -> Any:
        """The flow's source transformation applied to a copy (the `transform` stage)."""

    def export(self, model: Any, inputs: tuple, dynamic_shapes: Any,
               strict: bool = False) -> Any:
        """The exported program, or one per method (the `export` stage)."""

    def quantize(self, exported: Any, model: Any, inputs: tuple, flow: Flow,
                 dynamic_shapes: Any) -> Any:
        """The exported program quantized by the flow (the `quantize` stage)."""

    def quantized_reference(self, quantized: Any) -> fidelity.QuantizedReference:
        """The quantized program run eagerly on the calls (case/fidelity.py)."""

    def programs_of(self, edge: Any) -> list:
        """The lowered edge program's exported programs, one per method."""

    def describe_program(self, programs: list, found: PipelineOutcome) -> None:
        """What the record says of the lowered programs beyond the delegation counts."""

    def serialize(self, edge: Any) -> Any:
        """The ExecuTorch program (the `serialize` stage)."""

    def missing(self, runtime: Runtime) -> str | None:
        """Why `runtime` cannot make these calls (the subtest ends `lowered_not_run`),
        or None."""

    def replay(self, program: LoweredProgram, runtime: Runtime, rules: RuleBook,
               expected: Any, reference: fidelity.QuantizedReference | None
               ) -> Replay | None:
        """What a rerun and the artifacts need, or None where they are not written."""

    def load(self, runtime: Runtime, program: LoweredProgram) -> Any:
        """The loaded program (the `load` stage)."""

    def execute(self, runtime: Runtime, loaded: Any, found: PipelineOutcome) -> list:
        """The runtime's outputs of the calls (the `run` stage)."""

    def judge(self, expected: Any, actual: list, rules: RuleBook,
              found: PipelineOutcome) -> fidelity.OutputJudgement:
        """The outputs against the reference (the `compare` stage)."""

    def localize(self, exported: Any, runtime: Runtime, rules: RuleBook, time_limit: float,
                 found: PipelineOutcome, flow: Flow) -> dict:
        """Where a mismatch starts: the record's `localization`."""

    def localize_stage(self, exported: Any, flow: Flow, status: str, time_limit: float,
                       stage: str | None = None) -> dict:
        """Where a stage failure starts: the record's `localization`."""


class _SingleMethod:
    """What a program of one method (`forward`) does at export, quantize, serialize and
    load; `MethodCalls` replaces these for a program of several methods."""

    def export_mode(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    # Runs a PT2E-prepared module on calibration data; None: quantize calibrates on the
    # export inputs.
    calibrate: Callable[[torch.nn.Module], None] | None = None

    def transform(self, model: Any, recipe: SourceTransform) -> Any:
        """The recipe rewrites a copy: the test's model stays the eager reference (a
        rerun's eager run uses it again)."""
        return recipe.apply(copy.deepcopy(model))

    def export(self, model: Any, inputs: tuple, dynamic_shapes: Any, strict: bool = False) -> Any:
        with self.export_mode():
            return torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes,
                                       strict=strict)

    def quantize(self, exported: Any, model: Any, inputs: tuple, flow: Flow,
                 dynamic_shapes: Any) -> Any:
        return quantize(exported, inputs, flow, dynamic_shapes, model.forward,
                        calibrate=self.calibrate)

    def programs_of(self, edge: Any) -> list:
        return [edge.exported_program()]

    # The eager reference of this subtest's calls (each kind of calls defines it).
    reference: Callable[[Any], Any]

    def quantized_reference(self, quantized: Any) -> fidelity.QuantizedReference:
        """The quantized program run eagerly on this subtest's calls (case/fidelity.py)."""
        return fidelity.build_reference(quantized, self.reference)

    def serialize(self, edge: Any) -> Any:
        return edge.to_executorch()

    def missing(self, runtime: Runtime) -> str | None:
        return None

    def load(self, runtime: Runtime, program: LoweredProgram) -> Any:
        return runtime.load(program)


@dataclass
class OneCall(_SingleMethod):
    """A stateless subtest: the program is called once, on `inputs`."""

    inputs: tuple
    repro_to: dict | None = None

    def reference(self, model: Any) -> Any:
        return model(*self.inputs)

    def describe_program(self, programs: list, found: "PipelineOutcome") -> None:
        pass

    def replay(self, program: LoweredProgram, runtime: Runtime, rules: RuleBook, expected: Any,
               reference: fidelity.QuantizedReference | None) -> "Replay":
        return Replay(program, runtime, rules, flat_inputs(self.inputs), flatten_tensors(expected),
                      reference=reference)

    def execute(self, runtime: Runtime, loaded: Any, found: "PipelineOutcome") -> list:
        assert found.replay is not None  # replay() ran just before, and gives one
        return runtime.execute(loaded, found.replay.inputs)

    def judge(self, expected: Any, actual: list, rules: RuleBook,
              found: "PipelineOutcome") -> fidelity.OutputJudgement:
        return fidelity.judge(expected, actual, rules, found.quantized_reference)

    def localize(self, exported: Any, runtime: Runtime, rules: RuleBook, time_limit: float,
                 found: "PipelineOutcome", flow: Flow) -> dict:
        """Where the mismatch starts (case/localize.py), in a forked process. A program
        that ran elsewhere than on this host's ExecuTorch runtime (a runner, the TOSA
        reference model) has no ETDump here: its mismatch is bisected over prefixes of
        the graph instead, each prefix run where the program ran (case/bisection.py);
        unless nothing of it is delegated: portable kernels, which this host's runtime
        has too, ran it."""
        assert found.replay is not None
        if not isinstance(runtime, ExecuTorchRuntime):
            if found.delegated_nodes:
                return self.localize_stage(exported, flow, Status.FAIL_MISMATCH.value, time_limit,
                                           "compare")
            runtime = ExecuTorchRuntime()
        started = time.monotonic()
        alone = _alone(flow, Status.FAIL_MISMATCH.value, "compare", exported,
                       found.replay.inputs, self.repro_to)
        first = _localize_mismatch(exported, runtime, rules, time_limit, flow,
                                   found.replay.inputs, (), alone)
        left = time_limit - (time.monotonic() - started)
        if not str(first.get("reason", "")).startswith(localize.COULD_NOT_COMPARE) or left <= 0:
            return first
        # Intermediates that compared nothing, or not enough, decide nothing: the next
        # method, bisection over prefixes of the graph, within what is left of the time limit.
        then = self.localize_stage(exported, flow, Status.FAIL_MISMATCH.value, left, "compare")
        then["tried"] = [first]
        then["lowerings"] = first.get("lowerings", 0) + then.get("attempts", 0)
        then["seconds"] = round(time.monotonic() - started, 3)
        return then

    def localize_stage(self, exported: Any, flow: Flow, status: str, time_limit: float,
                       stage: str | None = None) -> dict:
        """Where a stage failure starts (case/bisection.py), in a forked process. `stage`:
        the stage it failed at (a crash's status does not say)."""
        inputs = tuple(pytree.tree_leaves(self.inputs))
        alone = _alone(flow, status, stage, exported, inputs, self.repro_to)
        return localize.contained(lambda: bisection.localize_stage(
            exported, inputs, flow, status, time_limit, run_pipeline, alone, stage), time_limit,
            method=bisection.METHOD)


def _localize_mismatch(exported: Any, runtime: Runtime, rules: RuleBook, time_limit: float,
                       flow: Flow, inputs: list, earlier: list | tuple,
                       alone: Callable[[Any, dict, float], dict]) -> dict:
    """Where a mismatch starts (case/localize.py), in a forked process: the program is
    lowered there again, so a subtest that passes pays nothing for it (serializing rewrites
    the edge graph in place, so its provenance must be read before). Inside a delegate,
    the same with the partitioner's choice one node per delegate call."""
    def lowered(recipe: Flow) -> localize.Target:
        edge = lower(exported, recipe)
        lineage = localize.Lineage.of(edge.exported_program(), exported)
        program = edge.to_executorch()
        return localize.Target(program.buffer, exported, edge.exported_program(),
                               lineage, localize.ProgramMaps.of(program))

    def split(only: set | None = None, groups: dict | None = None) -> localize.Target:
        """Lowered one node (or group) per delegate call, in the partitions holding
        `only`'s nodes (all when None)."""
        assert flow.partitioners is not None
        inner = flow.partitioners
        return lowered(dataclasses.replace(flow, partitioners=lambda: [
            localize.one_node_per_partition(p, only, exported, groups) for p in inner()]))

    return localize.contained(lambda: localize.localize_deep(
        lowered(flow), runtime, inputs, rules, time_limit, split if flow.delegates else None,
        alone, earlier), time_limit)


def _alone(flow: Flow, status: str, stage: str | None, exported: Any, inputs: Any,
           repro_to: dict | None) -> Callable[[Any, dict, float], dict]:
    """The op lowered by itself on its captured inputs (case/repro.py), its folder
    written where asked; when the op passes alone, the smallest window of the graph
    ending at it that still fails (bisection.minimize), before `deadline`."""
    where = repro_to or {}
    context = {key: where.get(key, "?") for key in ("test_id", "tox_env")}

    def alone(node: Any, values: dict, deadline: float) -> dict:
        found = repro.reproduce(node, values, flow, status, where.get("folder"), context,
                                run_pipeline)
        if found.get("reproduces") is False:
            window = bisection.minimize(exported, tuple(inputs), values, node.name, flow,
                                        status, bisection.stage_of(status, stage),
                                        deadline, run_pipeline)
            if "module" in window and where.get("folder"):
                window["folder"] = repro.write_subgraph(where["folder"], window, flow.name,
                                                        status, context)
            found["subgraph"] = {k: v for k, v in window.items()
                                 if k not in ("module", "inputs")}
        return found

    return alone


@dataclass
class StepCalls(_SingleMethod):
    """A stateful subtest: the program is called once per step on one loaded method
    (steps.py); the record gets the step series. No replay yet: a rerun or artifacts of
    a step sequence are not written."""

    steps: list
    # The flat output holding next-token logits (a decoder's), judged as a task too
    # (steps.next_token); None: the outputs are judged as values only.
    next_token_logits: int | None = None

    def _calls(self) -> list[tuple[str, tuple]]:
        """(method name, inputs) of every step."""
        return [("forward", step) for step in self.steps]

    def _by_method(self, value: Any) -> dict:
        """What exists once per method (modules, loaded methods), keyed by its name."""
        return {"forward": value}

    def reference(self, model: Any) -> list[list]:
        return eager_calls(self._by_method(model), self._calls())

    def export_mode(self) -> contextlib.AbstractContextManager[Any]:
        return torch.no_grad()  # a traced in-place update of a buffer needs it

    def calibrate(self, prepared: torch.nn.Module) -> None:
        calibrate_steps(prepared, self.steps)

    def describe_program(self, programs: list, found: "PipelineOutcome") -> None:
        found.steps = len(self.steps)
        found.state = combined_placement([state_placement(p) for p in programs])

    def replay(self, program: LoweredProgram, runtime: Runtime, rules: RuleBook, expected: Any,
               reference: fidelity.QuantizedReference | None) -> None:
        return None

    def quantized_reference(self, quantized: Any) -> fidelity.QuantizedReference:
        """The quantized program run eagerly through the same steps, its buffers carrying
        the state as the eager module's do (one reference output list per step)."""
        if isinstance(quantized, dict):
            return fidelity.QuantizedReference(None, [], why_not=(
                "a program of several methods is judged against fp32 eager: its quantized "
                "reference is not built yet"))
        return fidelity.build_reference(quantized, self.reference)

    def localize(self, exported: Any, runtime: Runtime, rules: RuleBook, time_limit: float,
                 found: "PipelineOutcome", flow: Flow) -> dict:
        """Where the first failing step's mismatch starts: the steps before it run first,
        on the runtime's one loaded method and eagerly with the buffers each step mutates
        (case/localize.py), in a forked process."""
        if isinstance(exported, dict):
            return localize.not_localized("a program of several methods is not localized "
                                          "yet", time.monotonic())
        if found.failed_step is None:
            return localize.not_localized("no step failed its rule", time.monotonic())
        steps = [flat_inputs(step) for step in self.steps[:found.failed_step + 1]]
        alone = _alone(flow, Status.FAIL_MISMATCH.value, "compare", exported, steps[-1], None)
        return _localize_mismatch(exported, runtime, rules, time_limit, flow, steps[-1],
                                  steps[:-1], alone)

    def localize_stage(self, exported: Any, flow: Flow, status: str, time_limit: float,
                       stage: str | None = None) -> dict:
        """A failure before the steps run (lower, serialize, load) needs one program and
        its first step's inputs: bisected as a one-call program's. A run failure of a
        step sequence is not bisected yet."""
        if stage == "run" or isinstance(exported, dict):
            why = "a step sequence's run failure" if stage == "run" \
                else "a program of several methods"
            return localize.not_localized(f"{why} is not bisected yet", time.monotonic())
        return OneCall(self.steps[0]).localize_stage(exported, flow, status, time_limit, stage)

    def missing(self, runtime: Runtime) -> str | None:
        if getattr(runtime, "carries_state", True) is False \
                and getattr(runtime, "execute_calls", None) is None:
            return (f"runtime {runtime.name} loads the program afresh for every call, so it "
                    f"cannot carry a stateful program's state from one step to the next")
        return None

    def execute(self, runtime: Runtime, loaded: Any, found: "PipelineOutcome") -> list:
        outputs, found.step_ms = execute_calls(runtime, self._by_method(loaded), self._calls())
        return outputs

    def judge(self, expected: Any, actual: list, rules: RuleBook,
              found: "PipelineOutcome") -> fidelity.OutputJudgement:
        judged = judge_steps(expected, actual, rules)
        found.step_errors, found.failed_step = judged.errors, judged.failed_step
        found.step_sqnr_db = judged.sqnr_db
        comparison = judged.as_comparison()
        message = comparison.message
        if self.next_token_logits is not None:
            answer = next_token(expected, actual, self.next_token_logits)
            found.step_top1, found.step_kl = answer.top1, answer.kl
            base = base_rule(rules)
            missed = answer.misses(base.min_top1_agreement, base.max_next_token_kl)
            if missed is not None:
                step, why = missed
                comparison = dataclasses.replace(comparison, matched=False)
                message = "; ".join(m for m in (message, f"next-token answer, {why}") if m)
                if found.failed_step is None:
                    found.failed_step = step
        accuracy = fidelity.OutputJudgement(Status.PASS if comparison.matched else Status.FAIL_MISMATCH,
                                    comparison, message)
        return self._with_fidelity(accuracy, expected, actual, rules, found)

    @staticmethod
    def _with_fidelity(accuracy: fidelity.OutputJudgement, expected: Any, actual: list,
                       rules: RuleBook,
                       found: "PipelineOutcome") -> fidelity.OutputJudgement:
        """A quantizing flow's steps judged against the quantized reference too, step by
        step (case/fidelity.py): the first step the backend leaves its quantized program
        at fails it (fail_mismatch), and so do a bias or gain over all steps pooled; a
        faithful backend whose steps miss the fp32-eager rule is the recipe's loss
        (fail_recipe_accuracy), as for a one-call subtest."""
        reference = found.quantized_reference
        base = base_rule(rules)
        if reference is None or reference.why_not is not None or base.fidelity_steps is None:
            return accuracy
        steps = []
        for want, ref, got in zip(expected, reference.outputs, actual, strict=True):
            one = fidelity.QuantizedReference(ref, reference.quantization)
            steps.append(fidelity.judge(want, got, rules, one, trends=False))
        count = len(steps)
        broken = next((k for k, v in enumerate(steps) if v.status is Status.FAIL_MISMATCH
                       and v.fidelity is not None and not v.fidelity.passed), None)
        if broken is not None:
            found.failed_step = broken
            verdict = steps[broken]
            return fidelity.OutputJudgement(Status.FAIL_MISMATCH, accuracy.comparison,
                                    f"diverges at step {broken} of {count}: {verdict.message}",
                                    verdict.fidelity)
        trends = fidelity.judge_trends(expected, actual, rules, reference)
        if trends is not None and not trends.passed:
            found.failed_step = 0  # a kernel's offset or scale acts from the first step
            return fidelity.OutputJudgement(
                Status.FAIL_MISMATCH, accuracy.comparison,
                f"over all {count} steps: backend fidelity (against its "
                f"{fidelity.QUANTIZED_REFERENCE}): {trends.text}", trends)
        worst = max(steps, key=_largest_steps)
        shown = trends if trends is not None else worst.fidelity  # the record's figures
        if accuracy.status is Status.PASS:
            return fidelity.OutputJudgement(Status.PASS, accuracy.comparison, "", shown)
        if all(v.status is not Status.FAIL_MISMATCH for v in steps):
            # every step's outputs differ from eager in float values only, the backend
            # matching its quantized program at each: the recipe's loss
            return fidelity.OutputJudgement(
                Status.FAIL_RECIPE_ACCURACY, accuracy.comparison,
                f"recipe accuracy: {accuracy.message}; the backend matches its quantized "
                f"program at every step: the loss is the recipe's quantization",
                shown)
        return fidelity.OutputJudgement(Status.FAIL_MISMATCH, accuracy.comparison, accuracy.message,
                                shown)


@dataclass
class MethodCalls(StepCalls):
    """A program of several methods lowered together (`prefill` and `decode`, `encode`
    and `decode`), each step a call of one of them on the one loaded program, in the
    order a deployment calls them. The methods share their mutable buffers (lowered with
    ExecuTorch's share_mutable_buffers: one KV cache for prefill and decode)."""

    methods: dict = field(default_factory=dict)   # name -> (example inputs, dynamic shapes)
    order: list = field(default_factory=list)     # the method of each step

    def _calls(self) -> list[tuple[str, tuple]]:
        return list(zip(self.order, self.steps, strict=True))

    def _by_method(self, value: dict) -> dict:
        return value  # already one per method

    def transform(self, modules: dict, recipe: SourceTransform) -> dict:
        copies = copy.deepcopy(modules)  # together, so buffers they share stay shared
        return {name: recipe.apply(module) for name, module in copies.items()}

    def export(self, modules: dict, inputs: tuple, dynamic_shapes: Any,
               strict: bool = False) -> dict:
        with torch.no_grad():
            return {name: torch.export.export(modules[name], example, dynamic_shapes=shapes,
                                              strict=strict)
                    for name, (example, shapes) in self.methods.items()}

    def quantize(self, exported: dict, modules: dict, inputs: tuple, flow: Flow,
                 dynamic_shapes: Any) -> dict:
        """Each method on its own, calibrated on its own calls."""
        quantized = {}
        for name, (example, shapes) in self.methods.items():
            own = [step for method, step in self._calls() if method == name]
            quantized[name] = quantize(exported[name], example, flow, shapes,
                                       modules[name].forward,
                                       calibrate=functools.partial(calibrate_steps, steps=own))
        return quantized

    def programs_of(self, edge: Any) -> list:
        return [edge.exported_program(name) for name in self.methods]

    def serialize(self, edge: Any) -> Any:
        from executorch.exir import ExecutorchBackendConfig
        from executorch.exir.passes import MemoryPlanningPass

        return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(
            alloc_mutable_buffers=True, share_mutable_buffers=True)))

    def missing(self, runtime: Runtime) -> str | None:
        if getattr(runtime, "load_methods", None) is None:
            return f"runtime {runtime.name} runs programs of one method only"
        return None

    def load(self, runtime: Any, program: LoweredProgram) -> dict:  # runtime: with load_methods
        return runtime.load_methods(program, list(self.methods))

    def describe_program(self, programs: list, found: "PipelineOutcome") -> None:
        super().describe_program(programs, found)
        found.step_methods = list(self.order)



@dataclass
class Replay:
    """What the pipeline leaves for the runner once a program could run: enough to run
    it again (to tell a flaky failure from a broken case) and to write it out as
    artifacts (.pte, inputs, eager and runtime outputs)."""

    program: LoweredProgram
    runtime: Runtime
    rules: RuleBook | Tolerance
    inputs: list                 # flat program inputs
    expected: list               # flat eager outputs
    actual: list | None = None   # flat runtime outputs (None: the run raised)
    # A quantizing flow's quantized reference (case/fidelity.py), None otherwise
    reference: fidelity.QuantizedReference | None = None

    def status(self, model: Any, inputs: tuple | None = None) -> Status:
        """The status of loading and running the program again, on `inputs` (default:
        the same inputs) against `model`'s eager outputs on them."""
        flat = self.inputs if inputs is None else flat_inputs(inputs)
        try:
            with torch.no_grad():
                expected = self.expected if inputs is None else model(*inputs)
        except Exception:  # noqa: BLE001 - other inputs the model rejects say nothing
            return Status.SKIP_INVALID
        try:
            loaded = self.runtime.load(self.program)
        except RuntimeStatus as verdict:  # decided by the runtime (a lost device: fail_infra)
            return verdict.status
        except Exception:  # noqa: BLE001 - a failing stage is the answer
            return Status.FAIL_LOAD
        try:
            actual = self.runtime.execute(loaded, flat)
        except RuntimeStatus as verdict:
            return verdict.status
        except Exception:  # noqa: BLE001
            return Status.FAIL_RUN
        reference = self.reference
        if reference is not None and reference.module is not None and inputs is not None:
            reference = fidelity.rerun_reference(reference, inputs)
        return fidelity.judge(expected, actual, self.rules, reference).status


@dataclass
class PipelineOutcome(Findings):
    """What one run of the pipeline found: the record's `Findings`, the status (None only
    until a stage decides it) and, once a program could run, its `replay`, which is for
    the test runner and never part of the record."""

    status: Status | None = None
    replay: Replay | None = None
    # A quantizing flow's program run eagerly (case/fidelity.py): for the judge, never
    # part of the record (the record's `reference` names it).
    quantized_reference: fidelity.QuantizedReference | None = None
    # False when a failing run is not worth running again (the runner's device was lost)
    rerun_worthwhile: bool = True

    def record_fields(self) -> dict[str, Any]:
        """The record's fields, as keywords of `contract.SubtestRecord`."""
        return {"status": self.status, **{name: getattr(self, name) for name in FINDINGS_FIELDS}}


def _largest_steps(step: fidelity.OutputJudgement) -> float:
    """The largest per-element error, in steps, of one step's outputs (0 if unjudged)."""
    if step.fidelity is None:
        return 0.0
    return max((output.get("max", 0.0) for output in step.fidelity.outputs if output),
               default=0.0)
