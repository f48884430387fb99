"""Arm Cortex-M (CMSIS-NN) flow: int8 PT2E, operators rewritten in place to cortex_m kernels.

Built from ExecuTorch's public Cortex-M APIs: `CortexMQuantizer` (int8), then
`to_edge` with `cortex_m_edge_compile_config()` and `CortexMPassManager` (target Cortex-M55),
which rewrites quantized patterns into `cortex_m::` operators (quantized_add,
quantized_linear, ...). Cortex-M delegates nothing: there is no partitioner, the program
calls CMSIS-NN kernels directly. The flow name is ExecuTorch's (`cortex_m`).

Where it gets on a Linux x86_64 host with PyPI packages only: quantizing and lowering work
(checked by hand on add and linear: the program holds cortex_m.quantized_add /
cortex_m.quantized_linear between cortex_m quantize/dequantize and serializes), but the
ExecuTorch runtime in the wheel has no cortex_m kernels ("Missing operator:
cortex_m::dequantize_per_tensor.out", load error 0x14): CMSIS-NN kernels run only on an
Arm Cortex-M or the Corstone-300 FVP, through ExecuTorch's semihosting runner built from
source (backends/cortex_m/test/build_test_runner.sh). ExecuTorch's own suite registers the
flow only when FVP_Corstone_SSE-300_Ethos-U55 is on PATH; so does this probe.

Two more things the suite cannot do yet, so the probe keeps the flow unavailable even with
the FVP: its pipeline lowers with plain `to_edge_transform_and_lower` (no Cortex-M compile
config, no CortexMPassManager: that would measure portable kernels, not Cortex-M; `lower()`
below is the recipe a lowering hook would call), and it has no FVP runtime
(`CortexMHostRuntime` below only says why a program cannot run here).

CortexMQuantizer imports Arm's quantizer, which imports `tosa_serializer` from
tosa-tools (requirements.txt).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.runtimes import LoweredProgram
from etsuite.backends.harness.flows.tolerance import INT8

BACKEND = "cortex_m"
FVP = "FVP_Corstone_SSE-300_Ethos-U55"
KERNEL_NAMESPACE = "cortex_m"

REQUIRES = (
    "torch",
    "executorch",
    "torchao",
    "executorch.backends.cortex_m.quantizer",
    "executorch.backends.cortex_m.passes.cortex_m_pass_manager",
    "tosa_serializer",  # imported by Arm's quantizer, which CortexMQuantizer builds on
)
ENABLE_HINT = (
    "pip install -r backends/cortex_m/requirements.txt; put Arm's Corstone-300 FVP "
    f"({FVP}) on PATH and build ExecuTorch's Cortex-M semihosting runner "
    "(backends/cortex_m/test/build_test_runner.sh); the suite also needs a lowering hook "
    "and an FVP runtime (backends/cortex_m/flows.py)"
)
NO_LOWERING_HOOK = (
    f"{FVP} found, but this suite cannot run Cortex-M yet: its pipeline lowers with plain "
    "to_edge_transform_and_lower (Cortex-M needs to_edge with cortex_m_edge_compile_config "
    "and CortexMPassManager; see lower() in backends/cortex_m/flows.py) and it has no FVP "
    "runtime"
)


def _probe() -> str | None:
    if shutil.which(FVP) is None:
        return (f"{FVP} (Arm Corstone-300 FVP) is not on PATH: cortex_m:: CMSIS-NN kernels "
                "run only on an Arm Cortex-M or its FVP, and this host's ExecuTorch runtime "
                "has none (lowering itself works here)")
    return NO_LOWERING_HOOK


def _strip_guards_fn(graph_module) -> None:
    """Drop the `_guards_fn` call_module node that `ExportedProgram.module()` adds under
    torch 2.13; Arm's annotation passes, which CortexMQuantizer runs, reject call_module
    nodes ("call_module is not supported")."""
    changed = False
    for node in list(graph_module.graph.nodes):
        if node.op == "call_module" and str(node.target) == "_guards_fn":
            graph_module.graph.erase_node(node)
            changed = True
    if changed:
        if hasattr(graph_module, "_guards_fn"):
            delattr(graph_module, "_guards_fn")
        graph_module.graph.eliminate_dead_code()
        graph_module.recompile()


def _quantizer():
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer

    class GuardFreeCortexMQuantizer(CortexMQuantizer):
        def transform_for_annotation(self, model):
            _strip_guards_fn(model)
            return super().transform_for_annotation(model)

    return GuardFreeCortexMQuantizer()


def lower(exported_program, inputs=None):
    """Cortex-M's lowering of a quantized program (what ExecuTorch's Cortex-M tester does):
    to_edge with the Cortex-M compile config, then CortexMPassManager for a Cortex-M55.
    Not called by this suite's pipeline yet (it has no lowering hook)."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.exir import EdgeProgramManager, to_edge

    config = cortex_m_edge_compile_config()
    edge = to_edge(exported_program, compile_config=config)
    rewritten = CortexMPassManager(edge.exported_program()).transform()
    return EdgeProgramManager({"forward": rewritten}, compile_config=config)


@dataclass(frozen=True)
class CortexMHostRuntime:
    """This host's ExecuTorch runtime, for Cortex-M programs: they cannot run unless it
    registers every cortex_m:: kernel the program calls (the PyPI wheel registers none)."""

    name: str = "executorch"

    def missing(self, program: LoweredProgram) -> str | None:
        import torch
        from executorch.extension.pybindings.portable_lib import _get_operator_names

        needed = set()
        for node in program.edge_program.exported_program().graph.nodes:
            op = node.target
            if not isinstance(op, torch._ops.OpOverload):  # edge ops wrap an OpOverload
                op = getattr(op, "_op", None)
            if node.op == "call_function" and isinstance(op, torch._ops.OpOverload) \
                    and op.namespace == KERNEL_NAMESPACE:
                needed.add(op.name())  # e.g. cortex_m::quantized_add.out
        registered = set(_get_operator_names())
        absent = sorted(needed - registered)
        if absent:
            return (f"this host's ExecuTorch runtime has no {KERNEL_NAMESPACE} kernels "
                    f"({', '.join(absent)}); they run on a Cortex-M or the Corstone-300 FVP")
        return None

    def load(self, program: LoweredProgram):
        from executorch.runtime import Runtime as ETRuntime

        return ETRuntime.get().load_program(program.pte).load_method("forward")

    def execute(self, loaded, inputs: list) -> list:
        return list(loaded.execute(inputs))


CORTEX_M = Flow(
    name="cortex_m",
    backend=BACKEND,
    description=("int8 (CortexMQuantizer), ops rewritten to cortex_m:: CMSIS-NN kernels "
                 "(CortexMPassManager, Cortex-M55); runs on a Cortex-M or the Corstone-300 FVP"),
    quantizer=_quantizer,
    tolerance=INT8,
    runtime=CortexMHostRuntime(),
    requires=REQUIRES,
    enable_hint=ENABLE_HINT,
    probe=_probe,
)

FLOWS = [CORTEX_M]
