"""The pipeline one subtest runs, and the place where a subtest gets its status.

eager reference -> export -> quantize (if the flow does) -> lower (partitioner) ->
to_executorch + serialize -> load -> run -> compare. Each stage is timed; the first stage
that raises decides the status (see `contract.STAGE_FAILURE`). A model whose eager run or
export raises is the test's fault, not the backend's: `skip_invalid`.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import torch

from etsuite.backends.harness.contract.record import CAUSE_SEPARATOR, ERROR_LIMIT, trim_error
from etsuite.backends.harness.contract.statuses import STAGE_FAILURE, Status
from etsuite.backends.harness.flow import Flow
from etsuite.backends.harness.output_match import compare_outputs, flatten_tensors
from etsuite.backends.harness.runtimes import LoweredProgram
from etsuite.backends.harness.tolerance import RuleBook
from etsuite.backends.harness import speedups

speedups.apply()


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


class _Timer:
    """Runs stages, records their wall time and reports progress before each one."""

    def __init__(self, timings: dict, on_stage: Callable[[str], None]):
        self.timings = timings
        self.on_stage = on_stage

    def run(self, stage: str, fn: Callable[[], Any]) -> Any:
        self.on_stage(stage)
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
    parts, seen = [], set()
    while error is not None and id(error) not in seen and len(parts) < 4:
        seen.add(id(error))
        parts.append("".join(traceback.format_exception_only(type(error), error)).strip())
        error = error.__cause__
    # Each wrapper keeps a short head (a pass manager's lists every pass run before);
    # the root cause gets the rest of the record's budget.
    wrappers = [trim_error(part, WRAPPER_LIMIT) for part in parts[:-1]]
    budget = ERROR_LIMIT - sum(len(w) + len(CAUSE_SEPARATOR) for w in wrappers)
    return trim_error(CAUSE_SEPARATOR.join([*wrappers, trim_error(parts[-1], budget)]))


WRAPPER_LIMIT = 300  # characters kept of each error that only wraps its cause


def count_delegation(exported_program) -> tuple[dict, dict]:
    """Histograms of ops inside delegate blobs and ops left to portable kernels."""
    delegated: dict[str, int] = {}
    undelegated: dict[str, int] = {}
    graph_module = exported_program.graph_module
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or _is_bookkeeping(node.target):
            continue
        if node.target is torch._higher_order_ops.executorch_call_delegate:
            lowered = getattr(graph_module, node.args[0].target)
            for inner in lowered.original_module.graph.nodes:
                if inner.op == "call_function" and not _is_bookkeeping(inner.target):
                    _bump(delegated, _op_name(inner.target))
        else:
            _bump(undelegated, _op_name(node.target))
    return delegated, undelegated


def delegated_precision(exported_program) -> str | None:
    """In a quantizing flow, how the delegated computation ran: "quantized" when every
    computing node inside a delegate has q/dq around it (a dequantized input, or an
    output that is quantized, as for a relu fused after a quantized conv), "float" when
    none does, "mixed" otherwise; None when no computing node was delegated.
    A quantizer that leaves an op in floating point (gelu, say) shows up here as "float"
    even though the flow quantizes."""
    graph_module = exported_program.graph_module
    quantized = computing = 0
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or \
                node.target is not torch._higher_order_ops.executorch_call_delegate:
            continue
        for inner in getattr(graph_module, node.args[0].target).original_module.graph.nodes:
            if inner.op != "call_function" or _is_bookkeeping(inner.target) \
                    or _is_quantize_bookkeeping(_op_name(inner.target)):
                continue
            computing += 1
            quantized += any(
                arg.op == "call_function" and "dequantize" in _op_name(arg.target)
                for arg in inner.all_input_nodes) or any(
                user.op == "call_function" and _is_quantize(_op_name(user.target))
                for user in inner.users)
    if not computing:
        return None
    return "quantized" if quantized == computing else "float" if not quantized else "mixed"


def _is_quantize(op_name: str) -> bool:
    return "quantize_per" in op_name and "dequantize" not in op_name


def _is_bookkeeping(target) -> bool:
    import operator

    return target is operator.getitem


def _op_name(target) -> str:
    name = getattr(target, "__name__", None) or str(target)
    return name.replace("aten::", "aten.")


def _bump(histogram: dict, key: str) -> None:
    histogram[key] = histogram.get(key, 0) + 1


def _quantize(exported, inputs: tuple, flow: Flow, dynamic_shapes, forward=None):
    """PT2E on the already exported graph (no second export of the eager model)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    # check_guards=False: no `_guards_fn` call_module node, which quantizers' annotation
    # passes do not expect.
    quantizer = flow.quantizer()
    speedups.after_backend_imports()  # the quantizer's own modules are imported by now
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    prepared(*inputs)  # calibrate on the test's own inputs
    converted = convert_pt2e(prepared, fold_quantize=flow.fold_quantize)
    return torch.export.export(converted, inputs,
                               dynamic_shapes=_spread_varargs(forward, dynamic_shapes))


def _spread_varargs(forward, dynamic_shapes):
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
    dynamic_shapes=None,
    tolerance: RuleBook | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
    run_inputs: tuple | None = None,
) -> dict:
    """Run one subtest; return the record fields the pipeline knows (status, stage,
    error, timings, delegation, pte size, output statistics). Never raises for a
    failure of the model or the backend: that is what the record is for.
    `run_inputs` (default: `inputs`) are what the program and eager run on for the
    comparison; `inputs` trace the export and calibrate quantization."""
    result: dict[str, Any] = {
        "status": None, "stage": None, "error": None, "timings": {},
        "delegated_nodes": None, "undelegated_nodes": None,
        "delegated_ops": {}, "undelegated_ops": {}, "pte_size": None, "outputs": [],
    }
    timer = _Timer(result["timings"], on_stage)
    inputs = tuple(inputs)
    run_inputs = inputs if run_inputs is None else tuple(run_inputs)
    model = model.eval()
    try:
        with torch.no_grad():
            expected = timer.run("eager", lambda: model(*run_inputs))
        exported = timer.run(
            "export", lambda: torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
        )
        if flow.quantizes:
            exported = timer.run(
                "quantize",
                lambda: _quantize(exported, inputs, flow, dynamic_shapes, model.forward))
        _lower_run_compare(exported, run_inputs, expected, flow, tolerance, timer, result)
    except StageError as failure:
        result["stage"] = failure.stage
        result["error"] = _error_text(failure.error)
        result["status"] = STAGE_FAILURE[failure.stage]
    return result


def _is_quantize_bookkeeping(op_name: str) -> bool:
    return op_name.startswith("quantized_decomposed.") or "quantize_per_" in op_name


def computing_ops(histogram: dict) -> int:
    """Nodes that compute, leaving out quantize/dequantize: a delegate holding only q/dq
    nodes has not taken the operator under test."""
    return sum(n for op, n in histogram.items() if not _is_quantize_bookkeeping(op))


def lower(exported, flow: Flow):
    """The flow's lowering: its partitioners (none for portable) and compile config. The
    one place both the pipeline and the warm-up lower, so they lower alike."""
    from executorch.exir import to_edge_transform_and_lower

    partitioners = flow.partitioners() if flow.delegates else None
    speedups.after_backend_imports()  # the partitioners' modules are imported by now
    compile_config = flow.edge_compile_config() if flow.edge_compile_config else None
    return to_edge_transform_and_lower(exported, partitioner=partitioners,
                                       compile_config=compile_config)


def _lower_run_compare(exported, inputs, expected, flow: Flow, tolerance, timer: _Timer,
                       found: dict) -> None:
    """Fills `found` as stages complete, so a late failure keeps the delegation counts
    and .pte size gathered before it."""
    edge = timer.run("lower", lambda: lower(exported, flow))
    delegated, undelegated = count_delegation(edge.exported_program())
    found.update(
        delegated_ops=delegated,
        undelegated_ops=undelegated,
        delegated_nodes=sum(delegated.values()),
        undelegated_nodes=sum(undelegated.values()),
        delegated_precision=delegated_precision(edge.exported_program()) if flow.quantizes
        else None,
    )
    executorch_program = timer.run("serialize", edge.to_executorch)
    found["pte_size"] = len(executorch_program.buffer)
    program = LoweredProgram(
        pte=executorch_program.buffer, edge_program=edge,
        delegated_nodes=found["delegated_nodes"], undelegated_nodes=found["undelegated_nodes"])

    runtime = flow.runtime
    missing = runtime.missing(program)
    if missing:
        found.update(status=Status.LOWERED_NOT_RUN, error=missing)
        return

    found["runtime"] = runtime.name
    replay = found[REPLAY_KEY] = Replay(program, runtime, tolerance or flow.tolerance,
                                        flat_inputs(inputs), flatten_tensors(expected))
    loaded = timer.run("load", lambda: runtime.load(program))
    actual = timer.run("run", lambda: runtime.execute(loaded, replay.inputs))
    replay.actual = actual

    comparison = timer.run("compare", lambda: compare_outputs(expected, actual, replay.rules))
    found.update(outputs=comparison.statistics, verdict_rule=comparison.rule,
                 margin=comparison.margin)
    if not comparison.matched:
        found.update(status=Status.FAIL_MISMATCH, stage="compare", error=comparison.message)
    elif flow.delegates and computing_ops(delegated) == 0:
        found["status"] = Status.PASS_UNDELEGATED
    else:
        found["status"] = Status.PASS


REPLAY_KEY = "_replay"  # in run_pipeline's result; the runner pops it (not a record field)


def flat_inputs(inputs) -> list:
    return [t.contiguous() if isinstance(t, torch.Tensor) else t for t in flatten_tensors(inputs)]


@dataclass
class Replay:
    """What the pipeline leaves for the runner once a program could run: enough to run
    it again (to tell a flaky failure from a broken case) and to write it out as
    artifacts (.pte, inputs, eager and runtime outputs)."""

    program: LoweredProgram
    runtime: Any
    rules: Any
    inputs: list                 # flat program inputs
    expected: list               # flat eager outputs
    actual: list | None = None   # flat runtime outputs (None: the run raised)

    def status(self, model, inputs: tuple | None = None) -> Status:
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
        except Exception:  # noqa: BLE001 - a failing stage is the answer
            return Status.FAIL_LOAD
        try:
            actual = self.runtime.execute(loaded, flat)
        except Exception:  # noqa: BLE001
            return Status.FAIL_RUN
        return Status.PASS if compare_outputs(expected, actual, self.rules).matched \
            else Status.FAIL_MISMATCH


class _WarmUpModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3)
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.linear(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def warm_up(flows: list[Flow]) -> list[str]:
    """Pay the one-time costs (lazy imports, dispatcher and export caches, the speed-ups'
    memos: about 5 s) once in the parent, so forked test children inherit a warm process.

    Lowers (never executes) with one floating-point and one quantizing flow of each
    selected backend, since quantizers keep their pattern graphs per backend: a backend's
    runtime threads must not be started before fork. Runs the portable path end to end
    (it also warms the runtime's loader) only when a portable flow is selected, as it
    costs each worker seconds. A failure costs only speed, so it does not stop the
    session: returns one line per part that failed, saying why, for the caller to show."""
    model, inputs = _WarmUpModel().eval(), (torch.randn(1, 2, 6, 6),)
    logging.disable(logging.INFO)  # partitioners log INFO lines outside any test's capture
    try:
        return _warm_up(model, inputs, flows)
    finally:
        logging.disable(logging.NOTSET)


def _warm_up(model, inputs, flows: list[Flow]) -> list[str]:
    problems = []
    if not flows:
        return problems  # no test of this run uses a flow: nothing to warm
    picked: dict[tuple, Flow] = {}
    for flow in flows:
        if flow.delegates and flow.unavailable_reason() is None:
            picked.setdefault((flow.backend, flow.quantizes), flow)
    if any(not flow.delegates for flow in flows) or not picked:
        portable = run_pipeline(model, inputs, Flow(name="warm_up", backend="portable"))
        if portable["status"] is not Status.PASS:
            problems.append(f"portable path: {portable['status']} at {portable['stage']}: "
                            f"{(portable['error'] or '').splitlines()[0] if portable['error'] else ''}")
    for flow in picked.values():
        try:
            exported = torch.export.export(model, inputs)
            if flow.quantizes:
                exported = _quantize(exported, inputs, flow, None)
            lower(exported, flow).to_executorch()
        except Exception as error:  # noqa: BLE001 - reported to the caller, never raised
            problems.append(f"flow {flow.name}: {type(error).__name__}: {error}".splitlines()[0])
    return problems
