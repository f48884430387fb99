"""The smallest program that still fails: the one op a mismatch was localized to
(case/localize.py), with the inputs it had in the failing run, lowered alone with the
same flow. The harness runs it once and records whether it reproduces, and writes a
folder a backend author can run on its own:

    inputs.pt   the op's name, its arguments with their captured values
    repro.py    lowers and runs the op alone with the flow; exits 1 when it still fails

An op that passes alone fails only in its context (its neighbours, the partitioning, a
quantizer's calibration over the whole model): the record says so.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Callable

import torch
import torch.utils._pytree as pytree

from etsuite.backends.harness.case.bisection import dynamic_shapes_of
from etsuite.backends.harness.case.localize import contained, resolve, source_location

if TYPE_CHECKING:
    from etsuite.backends.harness.flows.flow import Flow

PASSING = ("pass", "pass_undelegated")
# The repro folders of a run, together, stay under this many bytes; past it, none is written.
CAP_BYTES = 64 * 2**20
INPUTS = "inputs.pt"
SCRIPT = "repro.py"

SCRIPT_TEXT = '''"""Lowers {target} alone with flow {flow} on the inputs it had when
{test_id} failed ({where}). Run it with the flow's environment, e.g.
    .tox/{tox_env}/bin/python {script}
It prints the status and exits 1 while the failure reproduces."""

import dataclasses
import os
import sys

import torch

from etsuite.backends.harness.case.pipeline import run_pipeline
from etsuite.backends.harness.case.repro import OneOp
from etsuite.backends.harness.flows.registry import builtin_flows

saved = torch.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "{inputs}"))
flows = {{flow.name: flow for flow in builtin_flows()}}
if "{flow}" not in flows:
    sys.exit("flow {flow} is not one of this repository's flows (a conftest's?)")
module, tensors = OneOp.from_saved(saved)
# the op comes from the program after the flow's source transformation (an LLM recipe's)
flow = dataclasses.replace(flows["{flow}"], source_transform=None)
outcome = run_pipeline(module, tensors, flow)
print(outcome.status.value, outcome.error or outcome.margin or "")
sys.exit(1 if outcome.status.value == "{status}" else 0)
'''


class OneOp(torch.nn.Module):
    """A module that calls one op: its weights (arguments that were parameters, buffers or
    constants of the model, passed as `nn.Parameter`) stay the module's own, so a backend
    sees them as it saw them in the model; its other tensor arguments are the module's
    inputs; the rest (sizes, dims, flags, a None bias) stay as they were in the graph."""

    INPUT, WEIGHT, CONSTANT = "input", "weight", "constant"

    def __init__(self, target: str, args: tuple, kwargs: dict):
        super().__init__()
        self.target = target
        leaves, self.spec = pytree.tree_flatten((args, kwargs))
        self.slots: list[tuple[str, Any]] = []
        for value in leaves:
            if isinstance(value, torch.nn.Parameter):
                name = f"weight{len(self.slots)}"
                self.register_parameter(name, torch.nn.Parameter(value.detach().clone(),
                                                                 requires_grad=False))
                self.slots.append((self.WEIGHT, name))
            elif isinstance(value, torch.Tensor):
                self.slots.append((self.INPUT, None))
            else:
                self.slots.append((self.CONSTANT, value))

    @classmethod
    def from_saved(cls, saved: dict) -> tuple["OneOp", tuple]:
        module = cls(saved["target"], saved["args"], saved["kwargs"])
        leaves, _ = pytree.tree_flatten((saved["args"], saved["kwargs"]))
        return module, tuple(v for v in leaves if isinstance(v, torch.Tensor)
                             and not isinstance(v, torch.nn.Parameter))

    def forward(self, *tensors: Any) -> Any:
        given = iter(tensors)
        leaves = [next(given) if kind == self.INPUT else getattr(self, value)
                  if kind == self.WEIGHT else value for kind, value in self.slots]
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return resolve(self.target)(*args, **kwargs)


def functional(target: str) -> str:
    """The out-of-place variant of an in-place op (`aten.index_put_.default` ->
    `aten.index_put.default`), which computes the same value without mutating an input
    the op alone would have to carry as state; any other op as it is."""
    namespace, name, overload = (target.split(".") + ["", ""])[:3]
    if not name.endswith("_") or name.startswith("_"):
        return target
    candidate = f"{namespace}.{name[:-1]}.{overload}"
    try:
        resolve(candidate)
    except AttributeError:
        return target
    return candidate


def op_call(node: Any, values: dict) -> tuple[tuple, dict]:
    """The node's arguments with each input node replaced by its value in the run."""
    def value_of(arg: Any) -> Any:
        if isinstance(arg, torch.fx.Node):
            if arg.name not in values:
                raise KeyError(f"no captured value for {arg.name}")
            return values[arg.name]
        return arg

    return pytree.tree_map(value_of, tuple(node.args)), pytree.tree_map(value_of, dict(node.kwargs))


# The op alone gets this long, in its own forked process (it may crash as its model did).
ALONE_SECONDS = 300.0


def reproduce(node: Any, values: dict, flow: Flow, status: str, folder: str | None,
              context: dict, run_pipeline: Callable) -> dict:
    """Lower and run the op alone with `flow`; the record's `repro`: whether it still ends
    `status`, what it ended, and the folder written (None when not asked for or past the
    cap). `context`: test_id and tox_env, for the script's docstring. `run_pipeline` is
    the pipeline's own (passed in: the pipeline calls this module). The folder is written
    first and the op runs in a forked process: a crash alone is `fail_crash`."""
    target = functional(str(node.target))
    args, kwargs = op_call(node, values)
    found: dict[str, Any] = {"op": target, "folder": None}
    if folder is not None:
        where = source_location(node.meta.get("stack_trace")) or node.name
        found["folder"] = _write(folder, target, args, kwargs, flow.name, status,
                                 {**context, "where": where})

    def alone() -> dict:
        module, tensors = OneOp.from_saved({"target": target, "args": args, "kwargs": kwargs})
        # the op comes from the program after the flow's source transformation (an LLM
        # recipe's), which is not applied again to the op alone
        outcome = run_pipeline(module, tensors, dataclasses.replace(flow, source_transform=None))
        return {"status": outcome.status.value if outcome.status is not None else "unknown",
                "error": outcome.error}

    ran = contained(alone, ALONE_SECONDS)
    if "status" not in ran:  # the process running the op alone died or overran
        crashed = "killed by" in ran.get("reason", "")
        ran = {"status": "fail_crash" if crashed else "fail_timeout", "error": ran.get("reason")}
    ended = ran["status"]
    # True: it still fails so; False: it passes alone; None: the op alone ended otherwise
    # (its export or lowering failed), which says nothing either way.
    found["status"] = ended
    found["reproduces"] = True if ended == status else False if ended in PASSING else None
    if ran["error"] and found["reproduces"] is None:
        found["error"] = ran["error"].splitlines()[0][:300]
    return {key: found[key] for key in ("op", "status", "reproduces", "folder", "error")
            if key in found}


SUBGRAPH_SCRIPT_TEXT = '''"""The smallest window of the graph of {test_id} that still ends {status} with flow
{flow}: {nodes} nodes, {first} to {last} (the op alone passes). It is the program
as the flow quantized it, so it is lowered without quantizing again. Run it with the
flow's environment, e.g.
    .tox/{tox_env}/bin/python {script}
It prints the status and exits 1 while the failure reproduces."""

import dataclasses
import os
import sys

import torch

from etsuite.backends.harness.case.pipeline import run_pipeline
from etsuite.backends.harness.flows.registry import builtin_flows

here = os.path.dirname(os.path.abspath(__file__))
program = torch.export.load(os.path.join(here, "{program}"))
inputs = torch.load(os.path.join(here, "{inputs}"))
flows = {{flow.name: flow for flow in builtin_flows()}}
if "{flow}" not in flows:
    sys.exit("flow {flow} is not one of this repository's flows (a conftest's?)")
flow = dataclasses.replace(flows["{flow}"], quantizer=None, source_transform=None)
unlifted = program.module()  # a plain GraphModule of it (the unlifted one refuses eval())
outcome = run_pipeline(torch.fx.GraphModule(unlifted, unlifted.graph), tuple(inputs), flow)
print(outcome.status.value, outcome.error or outcome.margin or "")
sys.exit(1 if outcome.status.value == "{status}" else 0)
'''
SUBGRAPH_PROGRAM, SUBGRAPH_INPUTS, SUBGRAPH_SCRIPT = "subgraph.pt2", "subgraph_inputs.pt", "subgraph.py"


def write_subgraph(folder: str, found: dict, flow: str, status: str, context: dict) -> str | None:
    """The minimized window (bisection.minimize) beside the op's repro: the program
    exported, its inputs and a script that lowers it with the flow; None past the cap."""
    root = os.path.dirname(os.path.dirname(folder))
    if _size(root) > CAP_BYTES:
        return None
    os.makedirs(folder, exist_ok=True)
    inputs = tuple(found["inputs"])
    program = torch.export.export(found["module"], inputs,
                                  dynamic_shapes=dynamic_shapes_of(found["module"]))
    torch.export.save(program, os.path.join(folder, SUBGRAPH_PROGRAM))
    torch.save(list(inputs), os.path.join(folder, SUBGRAPH_INPUTS))
    script = os.path.join(folder, SUBGRAPH_SCRIPT)
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(SUBGRAPH_SCRIPT_TEXT.format(
            status=status, flow=flow, nodes=found["nodes"], first=found["first"],
            last=found["last"], program=SUBGRAPH_PROGRAM, inputs=SUBGRAPH_INPUTS,
            script=script, **context))
    return folder


def _write(folder: str, target: str, args: tuple, kwargs: dict, flow: str, status: str,
           context: dict) -> str | None:
    root = os.path.dirname(os.path.dirname(folder))
    if _size(root) > CAP_BYTES:
        return None
    os.makedirs(folder, exist_ok=True)
    torch.save({"target": target, "args": args, "kwargs": kwargs},
               os.path.join(folder, INPUTS))
    script = os.path.join(folder, SCRIPT)
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(SCRIPT_TEXT.format(target=target, flow=flow, status=status,
                                         inputs=INPUTS, script=script, **context))
    return folder


def _size(root: str) -> int:
    total = 0
    for base, _, names in os.walk(root):
        total += sum(os.path.getsize(os.path.join(base, name)) for name in names)
    return total
