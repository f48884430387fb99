"""Where a stage failure starts: the first node of the exported graph whose program fails
the same way, found by bisecting over prefixes of the graph.

A lowering exception, a program that does not serialize or load, or a run that raises
names no node. The exported program (after quantization, so a prefix is quantized as the
whole was) is cut after its k-th computing node: the cut program returns every value a
later node would have read, so it holds exactly the first k nodes. Each prefix is
exported again and taken through the flow's stages up to the one that failed, in a forked
process (an attempt that crashes is an answer, not the end of the search). The smallest
prefix that ends with the case's status names its last node: the failure needs that node
and nothing after it. Binary search over k: about log2(nodes) + 1 attempts.

When the whole graph, exported again (with its inputs' symbolic dimensions dynamic
again), does not fail the same way, there is nothing to bisect ("not localized: ..."):
the failure needs what re-exporting loses (the original output structure, the ranges of
dynamic dimensions).
"""

from __future__ import annotations

import dataclasses
import operator
import time
from typing import TYPE_CHECKING, Any, Callable

import torch

from etsuite.backends.harness.case import localize
from etsuite.backends.harness.contract.record import is_quantize_bookkeeping

if TYPE_CHECKING:
    from etsuite.backends.harness.flows.flow import Flow

METHOD = "bisection over graph prefixes"
# The stages whose failure is bisected, in pipeline order, with the status each one ends.
CRASHED, MISMATCH = "fail_crash", "fail_mismatch"
STAGES = {"lower": "fail_lower", "serialize": "fail_serialize", "load": "fail_load",
          "run": "fail_run"}
BISECTED = frozenset({*STAGES.values(), CRASHED})  # the statuses localized here
PIPELINE_ORDER = ("lower", "serialize", "load", "run", "compare")


class _PastTheStage(Exception):
    """Raised from the pipeline's progress callback when an attempt enters the stage after
    the one being bisected: the attempt got through it."""


def computing_nodes(graph: torch.fx.Graph) -> list:
    """The nodes a prefix is counted in: call_function nodes except a getitem, which goes
    with the node it reads, and a quantize or dequantize, which goes with the node whose
    value it converts (`_units`): a cut never falls between an op and the quantization of
    its output, and a quantize is never the node blamed."""
    return [n for n in graph.nodes if n.op == "call_function"
            and n.target is not operator.getitem and not _is_bookkeeping(n)]


def _is_bookkeeping(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and is_quantize_bookkeeping(str(node.target))


def _units(graph: torch.fx.Graph, nodes: list) -> dict:
    """Each call_function node's computing node (one of `nodes`): itself, or for a
    getitem, quantize or dequantize the computing node its value comes from; a
    quantize/dequantize of an input or a weight goes with the first node that reads it."""
    unit: dict = {n: n for n in nodes}

    def first_reader(node: torch.fx.Node) -> torch.fx.Node | None:
        for user in node.users:
            if user in unit and unit[user] is user:
                return user
            if user.op == "call_function":
                found = first_reader(user)
                if found is not None:
                    return found
        return None

    def find(node: torch.fx.Node) -> torch.fx.Node | None:
        if node not in unit:
            source = node.args[0] if node.args else None
            unit[node] = find(source) if isinstance(source, torch.fx.Node) \
                and source.op == "call_function" else first_reader(node)
        return unit[node]

    for node in graph.nodes:
        if node.op == "call_function":
            find(node)
    return unit


def prefix_module(exported: Any, count: int) -> tuple[torch.fx.GraphModule, list]:
    """The exported program's first `count` computing nodes as a module of the flat user
    inputs, returning every tensor of the prefix that a later node (or the program's
    output) reads, and the last node's. Also returns the prefix's computing nodes."""
    module, nodes, _ = window_module(exported.module(), 0, count)
    return module, nodes


def window_module(unlifted: torch.fx.GraphModule, first: int, count: int
                  ) -> tuple[torch.fx.GraphModule, list, list]:
    """Computing nodes `first` to `count` (exclusive) of an exported program, given as its
    `unlifted` module (`exported.module()`, made once by the caller), as a module of their
    own: its inputs are the flat user inputs, then the values of the earlier nodes the
    window reads (their names are the third item returned); it returns every tensor of the
    window a later node (or the program's output) reads, and the last node's."""
    graph = unlifted.graph
    nodes = computing_nodes(graph)
    unit = _units(graph, nodes)

    def belonging_to(chosen: list) -> set:
        chosen_set = set(chosen)
        return {n for n in graph.nodes if n.op == "call_function" and unit[n] in chosen_set}

    kept = belonging_to(nodes[first:count])
    earlier = belonging_to(nodes[:first])
    window = torch.fx.Graph()
    copied: dict = {}
    for node in graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            copied[node] = window.node_copy(node, lambda n: copied[n])
    boundary = [n for n in graph.nodes if n in earlier and any(u in kept for u in n.users)]
    for node in boundary:
        copied[node] = window.placeholder(node.name)
        copied[node].meta = dict(node.meta)
    for node in graph.nodes:
        if node in kept:
            copied[node] = window.node_copy(node, lambda n: copied[n])
    # the last node's value as the program goes on with it: after its quantize-dequantize
    last = ([n for n in graph.nodes if unit.get(n) is nodes[count - 1] and _is_tensor(n)
             and n.target is not operator.getitem] or [nodes[count - 1]])[-1]
    returned = [n for n in graph.nodes if n in kept and _is_tensor(n)
                and (n is last or any(u not in kept for u in n.users))]
    window.output(tuple(copied[n] for n in returned))
    cut = torch.fx.GraphModule(unlifted, window)
    cut.graph.eliminate_dead_code()
    cut.recompile()
    return cut, nodes[first:count], [n.name for n in boundary]


def dynamic_shapes_of(module: torch.fx.GraphModule) -> tuple | None:
    """The dimensions of the prefix's inputs that were symbolic in the exported program,
    as `dynamic_shapes` for exporting it again (Dim.AUTO: the export decides their
    ranges); None when every input was static."""
    shapes = []
    for node in module.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("val")
        dims = {index: torch.export.Dim.AUTO for index, size in
                enumerate(getattr(value, "shape", ())) if not isinstance(size, int)}
        shapes.append(dims or None)
    return tuple(shapes) if any(shapes) else None


# Node metadata a backend reads that exporting a module again does not carry over: the
# quantizer's marks (Arm's partitioner reads its annotation in `custom`).
KEPT_META = ("custom", "quantization_annotation")


def keep_meta_of(module: torch.fx.GraphModule) -> Callable:
    """A function that gives the nodes of `module` exported again the metadata in
    KEPT_META that `module`'s nodes of the same name had."""
    by_name = {n.name: {k: n.meta[k] for k in KEPT_META if k in n.meta}
               for n in module.graph.nodes}

    def give_back(exported: Any) -> Any:
        for node in exported.graph.nodes:
            for key, value in by_name.get(node.name, {}).items():
                node.meta.setdefault(key, value)
        return exported

    return give_back


def _is_tensor(node: torch.fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.Tensor)


def attempt(unlifted: torch.fx.GraphModule, count: int, inputs: tuple, flow: Flow, stage: str,
            run_pipeline: Callable, first: int = 0, values: dict | None = None) -> dict:
    """The status of computing nodes `first` to `count` taken through `flow` up to
    `stage`: the failing status if the window fails there, "pass" once it is past it (a
    window after the first node reads the earlier nodes' eager `values`). Quantization is
    not done again: the window comes from the quantized graph."""
    module, _, boundary = window_module(unlifted, first, count)
    inputs = (*inputs, *((values or {})[name] for name in boundary))
    unquantized = dataclasses.replace(flow, quantizer=None, source_transform=None)
    dynamic = dynamic_shapes_of(module)
    after = PIPELINE_ORDER[PIPELINE_ORDER.index(stage) + 1] \
        if stage != PIPELINE_ORDER[-1] else None

    def stop_past(entered: str) -> None:
        if entered == after:
            raise _PastTheStage(entered)

    try:
        outcome = run_pipeline(module, inputs, unquantized, on_stage=stop_past,
                               dynamic_shapes=dynamic, after_export=keep_meta_of(module))
    except _PastTheStage:
        return {"status": "pass"}
    status = outcome.status.value if outcome.status is not None else "unknown"
    return {"status": status, "error": (outcome.error or "").splitlines()[0][:300]
            if outcome.error else None}


class _Attempts:
    """Windows of the graph tried one after another, each in a forked process, within a
    deadline: `fails(first, count)` says whether computing nodes `first` to `count` end
    `status` at `stage` (for a crash: die there)."""

    def __init__(self, unlifted: torch.fx.GraphModule, inputs: tuple, flow: Flow, status: str,
                 stage: str, run_pipeline: Callable, deadline: float,
                 values: dict | None = None):
        self.unlifted, self.inputs, self.flow = unlifted, inputs, flow
        self.status, self.stage, self.run_pipeline = status, stage, run_pipeline
        self.deadline, self.values = deadline, values
        self.count = 0
        self.last: dict = {}  # the last attempt's answer, for saying why it did not fail

    def ended(self) -> str:
        """What the last attempt ended, in a few words."""
        error = self.last.get("error") or self.last.get("reason")
        return f"{self.last.get('status', 'no answer')}" + (f" ({error})" if error else "")

    def fails(self, first: int, count: int) -> bool:
        # "budget spent" is the words a record's reason says, kept as they were (the
        # report's text; the time limit is --localize-seconds)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise localize.NotLocalized(f"budget spent (after {self.count} attempts)")
        self.count += 1
        answer = localize.contained(
            lambda: attempt(self.unlifted, count, self.inputs, self.flow, self.stage,
                            self.run_pipeline, first, self.values), left)
        self.last = answer
        if "status" not in answer:  # the attempt died, or ran out of time
            if "budget" in answer.get("reason", ""):
                raise localize.NotLocalized(f"budget spent (after {self.count} attempts)")
            return self.status == CRASHED
        return answer["status"] == self.status


def localize_stage(exported: Any, inputs: tuple, flow: Flow, status: str, time_limit: float,
                   run_pipeline: Callable, repro: Callable[..., dict] | None = None,
                   stage: str | None = None) -> dict:
    """The record's `localization` for a stage failure `status` (keys in
    contract/record.py), within `time_limit` seconds; each attempt forked (`contained`).
    A fail_crash names its `stage` (the one its process died in): an attempt that dies
    there is one that fails the same way."""
    started = time.monotonic()
    tries = None
    try:
        stage = stage_of(status, stage)
        unlifted = exported.module()  # once: every attempt cuts its window from it
        nodes = computing_nodes(unlifted.graph)
        if not nodes:
            raise localize.NotLocalized("the exported graph has no computing node")
        tries = _Attempts(unlifted, inputs, flow, status, stage, run_pipeline,
                          started + time_limit)
        if not tries.fails(0, len(nodes)):
            # (pass_undelegated says nothing of the backend: the partitioner took none
            # of the graph exported again)
            if status == MISMATCH and flow.quantizes and tries.last.get("status") == "pass":
                raise localize.NotLocalized(localize.QUANTIZATION_ERROR.format(
                    "the whole graph, lowered without quantizing again, ends pass"))
            raise localize.NotLocalized(f"the whole graph exported again ends "
                                        f"{tries.ended()}, not {status}: nothing to bisect")
        low, high = 1, len(nodes)
        while low < high:  # the smallest prefix that fails is in [low, high]
            middle = (low + high) // 2
            if tries.fails(0, middle):
                high = middle
            else:
                low = middle + 1
        node = _exported_node(exported, nodes[low - 1])
        found = {**localize.describe(node), "method": METHOD, "localized": True,
                 "attempts": tries.count, "prefix": low, "of": len(nodes)}
        if repro is not None:
            found["repro"] = _repro(repro, node, exported, inputs, started + time_limit)
        found["seconds"] = round(time.monotonic() - started, 3)
        return found
    except localize.NotLocalized as why:
        text = str(why).replace("budget spent", f"budget of {time_limit:g} s spent")
        return _not_localized(text, started, tries.count if tries else 0)
    except Exception as error:  # noqa: BLE001 - localizing must never change a verdict
        return _not_localized(f"{type(error).__name__}: {error}".splitlines()[0][:300],
                              started, tries.count if tries else 0)


def minimize(exported: Any, inputs: tuple, values: dict, node_name: str, flow: Flow, status: str,
             stage: str, deadline: float, run_pipeline: Callable) -> dict:
    """For a failure whose op passes alone: the smallest window of the graph that ends at
    that op and still fails the same way, fed the eager values of the nodes before it
    (fx_minifier's idea, along one axis: the window's start, by bisection). The record's
    `repro.subgraph`: {nodes, first, last, attempts, seconds} and the window itself for the
    caller to write (`module`, `inputs`), or {reason} when even the prefix up to the op
    does not fail."""
    started = time.monotonic()
    unlifted = exported.module()  # once: every attempt cuts its window from it
    names = [n.name for n in computing_nodes(unlifted.graph)]
    if node_name not in names:
        return {"reason": f"{node_name} is not a computing node of the program"}
    end = names.index(node_name) + 1
    tries = _Attempts(unlifted, inputs, flow, status, stage, run_pipeline, deadline, values)
    try:
        if not tries.fails(0, end):
            return {"reason": f"the graph up to {node_name}, exported again, ends "
                              f"{tries.ended()}, not {status}", "attempts": tries.count}
        low, high = 0, end - 1  # [low, end) fails; [high, end) is the op alone, which passed
        while high - low > 1:
            middle = (low + high) // 2
            if tries.fails(middle, end):
                low = middle
            else:
                high = middle
    except localize.NotLocalized as why:
        return {"reason": str(why), "attempts": tries.count}
    module, _, boundary = window_module(unlifted, low, end)
    return {"nodes": end - low, "first": names[low], "last": node_name,
            "attempts": tries.count, "seconds": round(time.monotonic() - started, 3),
            "module": module, "inputs": (*inputs, *(values[name] for name in boundary))}


def stage_of(status: str, stage: str | None = None) -> str:
    """The pipeline stage a failing status ends at (a crash: the `stage` it died in)."""
    if status == MISMATCH:
        return PIPELINE_ORDER[-1]
    if status == CRASHED:
        if stage in PIPELINE_ORDER[:-1]:
            return stage
        raise localize.NotLocalized(f"a crash at {stage or 'an unknown stage'} is not "
                                    f"bisected (only at lower, serialize, load or run)")
    for known, ends in STAGES.items():
        if ends == status:
            return known
    raise localize.NotLocalized(f"{status} is not a stage failure that bisection localizes")


def _exported_node(exported: Any, unlifted: torch.fx.Node) -> torch.fx.Node:
    """The exported program's node of the same name as the unlifted module's (its stack
    trace and module path are the ones the record names); the unlifted one otherwise."""
    return next((n for n in exported.graph.nodes if n.name == unlifted.name), unlifted)


def _repro(repro: Callable[..., dict], node: torch.fx.Node, exported: Any, inputs: tuple,
           deadline: float) -> dict:
    """The op alone on the values its inputs had eagerly (repro.py; it runs the op in a
    forked process, so an op that crashes alone says so)."""
    try:
        return repro(node, localize.eager_intermediates(exported, list(inputs)), deadline)
    except Exception as error:  # noqa: BLE001 - the localization stands without it
        return {"op": str(node.target), "reproduces": None,
                "error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}


def _not_localized(why: str, started: float, attempts: int) -> dict:
    found = localize.not_localized(why, started, method=METHOD)
    found.update(attempts=attempts)
    found.pop("compared", None)
    return found
