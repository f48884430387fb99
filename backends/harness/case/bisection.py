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
from typing import Any, Callable

import torch

from etsuite.backends.harness.case import localize

METHOD = "bisection over graph prefixes"
# The stages whose failure is bisected, in pipeline order, with the status each one ends.
CRASHED = "fail_crash"
STAGES = {"lower": "fail_lower", "serialize": "fail_serialize", "load": "fail_load",
          "run": "fail_run"}
BISECTED = frozenset({*STAGES.values(), CRASHED})  # the statuses localized here
PIPELINE_ORDER = ("lower", "serialize", "load", "run", "compare")


class _PastTheStage(Exception):
    """Raised from the pipeline's progress callback when an attempt enters the stage after
    the one being bisected: the attempt got through it."""


def computing_nodes(graph) -> list:
    """The nodes a prefix is counted in: call_function nodes except a getitem, which goes
    with the node it reads."""
    return [n for n in graph.nodes
            if n.op == "call_function" and n.target is not operator.getitem]


def prefix_module(exported, count: int) -> tuple[torch.fx.GraphModule, list]:
    """The exported program's first `count` computing nodes as a module of the flat user
    inputs, returning every tensor of the prefix that a later node (or the program's
    output) reads, and the last node's. Also returns the prefix's computing nodes."""
    module = exported.module()
    graph = module.graph
    nodes = computing_nodes(graph)
    kept = set(nodes[:count])
    kept |= {n for n in graph.nodes if n.op == "call_function" and n.target is operator.getitem
             and n.args[0] in kept}
    prefix = torch.fx.Graph()
    copied: dict = {}
    for node in graph.nodes:
        if node.op in ("placeholder", "get_attr") or node in kept:
            copied[node] = prefix.node_copy(node, lambda n: copied[n])
    last = nodes[count - 1]
    returned = [n for n in graph.nodes if n in kept and _is_tensor(n)
                and (n is last or any(u not in kept for u in n.users))]
    prefix.output(tuple(copied[n] for n in returned))
    cut = torch.fx.GraphModule(module, prefix)
    cut.graph.eliminate_dead_code()
    cut.recompile()
    return cut, nodes[:count]


def dynamic_shapes_of(module) -> tuple | None:
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


def _is_tensor(node) -> bool:
    return isinstance(node.meta.get("val"), torch.Tensor)


def attempt(exported, count: int, inputs: tuple, flow, stage: str,
            run_pipeline: Callable) -> dict:
    """The status of the first `count` nodes taken through `flow` up to `stage`: the
    failing status if the prefix fails there, "pass" once it is past it. Quantization is
    not done again: the prefix comes from the quantized graph."""
    module, _ = prefix_module(exported, count)
    unquantized = dataclasses.replace(flow, quantizer=None, source_transform=None)
    dynamic = dynamic_shapes_of(module)
    after = PIPELINE_ORDER[PIPELINE_ORDER.index(stage) + 1]

    def stop_past(entered: str) -> None:
        if entered == after:
            raise _PastTheStage(entered)

    try:
        outcome = run_pipeline(module, inputs, unquantized, on_stage=stop_past,
                               dynamic_shapes=dynamic)
    except _PastTheStage:
        return {"status": "pass"}
    status = outcome.status.value if outcome.status is not None else "unknown"
    return {"status": status, "error": (outcome.error or "").splitlines()[0][:300]
            if outcome.error else None}


def localize_stage(exported, inputs: tuple, flow, status: str, budget: float,
                   run_pipeline: Callable, repro: Callable[[Any, dict], dict] | None = None,
                   stage: str | None = None) -> dict:
    """The record's `localization` for a stage failure `status` (keys in
    contract/record.py), within `budget` seconds; each attempt forked (`contained`).
    A fail_crash names its `stage` (the one its process died in): an attempt that dies
    there is one that fails the same way."""
    started = time.monotonic()
    attempts = 0
    try:
        stage = _stage_of(status, stage)
        nodes = computing_nodes(exported.module().graph)
        if not nodes:
            raise localize.NotLocalized("the exported graph has no computing node")

        def fails(count: int) -> bool:
            nonlocal attempts
            left = budget - (time.monotonic() - started)
            if left <= 0:
                raise localize.NotLocalized(f"budget of {budget:g} s spent "
                                            f"(after {attempts} attempts)")
            attempts += 1
            answer = localize.contained(
                lambda: attempt(exported, count, inputs, flow, stage, run_pipeline), left)
            if "status" not in answer:  # the attempt crashed, or ran out of time
                reason = answer.get("reason", "")
                if "budget" in reason:
                    raise localize.NotLocalized(f"budget of {budget:g} s spent "
                                                f"(after {attempts} attempts)")
                return status == CRASHED
            return answer["status"] == status

        if not fails(len(nodes)):
            raise localize.NotLocalized(f"the whole graph exported again does not end "
                                        f"{status}: nothing to bisect")
        low, high = 1, len(nodes)
        while low < high:  # the smallest prefix that fails is in [low, high]
            middle = (low + high) // 2
            if fails(middle):
                high = middle
            else:
                low = middle + 1
        node = _exported_node(exported, nodes[low - 1])
        found = {**localize.describe(node), "method": METHOD, "localized": True,
                 "attempts": attempts, "prefix": low, "of": len(nodes)}
        if repro is not None:
            found["repro"] = _repro(repro, node, exported, inputs)
        found["seconds"] = round(time.monotonic() - started, 3)
        return found
    except localize.NotLocalized as why:
        return _not_localized(str(why), started, attempts)
    except Exception as error:  # noqa: BLE001 - localizing must never change a verdict
        return _not_localized(f"{type(error).__name__}: {error}".splitlines()[0][:300],
                              started, attempts)


def _stage_of(status: str, stage: str | None) -> str:
    if status == CRASHED:
        if stage in PIPELINE_ORDER[:-1]:
            return stage
        raise localize.NotLocalized(f"a crash at {stage or 'an unknown stage'} is not "
                                    f"bisected (only at lower, serialize, load or run)")
    for known, ends in STAGES.items():
        if ends == status:
            return known
    raise localize.NotLocalized(f"{status} is not a stage failure that bisection localizes")


def _exported_node(exported, unlifted):
    """The exported program's node of the same name as the unlifted module's (its stack
    trace and module path are the ones the record names); the unlifted one otherwise."""
    return next((n for n in exported.graph.nodes if n.name == unlifted.name), unlifted)


def _repro(repro: Callable[[Any, dict], dict], node, exported, inputs: tuple) -> dict:
    """The op alone on the values its inputs had eagerly (repro.py; it runs the op in a
    forked process, so an op that crashes alone says so)."""
    try:
        return repro(node, localize.eager_intermediates(exported, list(inputs)))
    except Exception as error:  # noqa: BLE001 - the localization stands without it
        return {"op": str(node.target), "reproduces": None,
                "error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}


def _not_localized(why: str, started: float, attempts: int) -> dict:
    found = localize.not_localized(why, started)
    found.update(method=METHOD, attempts=attempts)
    found.pop("compared", None)
    return found
