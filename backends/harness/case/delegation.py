"""What a lowering handed to the backend: per-op histograms of the nodes inside delegate
blobs and of those left to portable kernels, how the delegated computation ran in a
quantizing flow, and which nodes count as computing (not q/dq or tuple bookkeeping).
The pipeline puts these into each record; a backend's own tests read them back. The
installed torch's core ATen overloads, named as these histograms name ops, are the
denominator of the report's core ATen coverage (the session facts carry them)."""

from __future__ import annotations

import functools
import operator
from typing import Any

import torch

from etsuite.backends.harness.contract.record import (  # noqa: F401 - computing_ops is
    computing_ops,  # imported from here by the pipeline and the Arm tests
)
from etsuite.backends.harness.contract.record import (
    is_quantize_bookkeeping as _is_quantize_bookkeeping,
)


def count_delegation(exported_program: Any) -> tuple[dict, dict]:
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


def delegated_precision(exported_program: Any) -> str | None:
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


def _is_bookkeeping(target: Any) -> bool:
    return target is operator.getitem


@functools.cache
def core_aten_overloads() -> tuple[str, ...]:
    """Every aten overload the installed torch tags `torch.Tag.core`, spelled as `str` of
    the overload ("aten.add.Tensor"), sorted. Asked of the installed torch rather than
    listed, so that a torch upgrade that tags or untags an op shows in the next report."""
    # Every registered op, not `iter(torch.ops.aten)`: that lists only the op packets
    # this process has touched so far, so its count grew with what the process imported
    # (189 in a fresh process, 193 after a test session, on torch 2.13).
    found = set()
    for name in torch._C._dispatch_get_all_op_names():
        namespace, _, rest = name.partition("::")
        if namespace != "aten":
            continue
        op, _, overload = rest.partition(".")
        target = getattr(getattr(torch.ops.aten, op), overload or "default")
        if torch.Tag.core in target.tags:
            found.add(str(target))
    return tuple(sorted(found))


def _op_name(target: Any) -> str:
    name = getattr(target, "__name__", None) or str(target)
    return name.replace("aten::", "aten.")


def _bump(histogram: dict, key: str) -> None:
    histogram[key] = histogram.get(key, 0) + 1
