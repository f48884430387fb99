"""NXP eIQ Neutron NPU flow (i.MX RT700): int8 PT2E, Neutron partitioner.

Built from ExecuTorch's public NXP APIs: `NeutronQuantizer(NeutronTargetSpec("imxrt700"))`
and `NeutronPartitioner` with the compile spec of `generate_neutron_compile_spec("imxrt700")`,
as ExecuTorch's own suite does (flow name `nxp_neutron_imxrt700_int8_ptq`, ExecuTorch's).

Where it gets on a Linux x86_64 host with PyPI packages only: nowhere. Every module of the
NXP backend imports the eIQ Neutron SDK (`eiq_neutron_sdk`, which holds the Neutron
converter), and importing the quantizer, the target spec or the partitioner without it
raises "RuntimeError: eIQ Neutron SDK not found. To install it, run
'examples/nxp/setup.sh'." The SDK is not on PyPI: it comes from NXP's own package index.
So the flow requires `eiq_neutron_sdk` and is `unavailable` without it.

With the SDK, two more gaps: NXP's lowering needs `NeutronEdgePassManager` as to-edge
transform passes, an edge compile config without IR validity checks, and
`RemoveAdditionalQDQClustersPass` afterwards, which this suite's pipeline cannot apply (it
calls plain `to_edge_transform_and_lower`; `lower()` below is the recipe a lowering hook
would call), so the probe keeps the flow unavailable; and the ExecuTorch runtime in the
PyPI wheel has no "NeutronBackend" (programs run on the i.MX RT700 or NXP's Neutron
simulator `eiq_nsys` with `nxp_executor_runner`), so lowered programs would end
`lowered_not_run`.
"""

from __future__ import annotations

from dataclasses import replace

from etsuite.backends.harness.flows.flow import delegating_flow

BACKEND = "nxp"
TARGET = "imxrt700"
RUNTIME_NAME = "NeutronBackend"

REQUIRES = (
    "torch",
    "executorch",
    "torchao",
    "executorch.backends.nxp.neutron_partitioner",
    "executorch.backends.nxp.quantizer.neutron_quantizer",
    "eiq_neutron_sdk",  # the Neutron converter; every NXP backend module imports it
)
ENABLE_HINT = (
    "pip install --index-url https://eiq.nxp.com/repository eiq-neutron-sdk eiq_nsys "
    "(NXP's package index, not PyPI); the flow also needs a lowering hook in the suite's "
    "pipeline (backends/nxp/flows.py) and, to run, the i.MX RT700 or the Neutron simulator "
    "with nxp_executor_runner"
)
NO_LOWERING_HOOK = (
    "eIQ Neutron SDK found, but this suite's pipeline cannot apply NXP's to-edge passes "
    "(NeutronEdgePassManager, no IR validity check, RemoveAdditionalQDQClustersPass): it "
    "lowers with plain to_edge_transform_and_lower; needs a lowering hook (see lower() in "
    "backends/nxp/flows.py)"
)


def _probe() -> str | None:
    return NO_LOWERING_HOOK


def _quantizer():
    from executorch.backends.nxp.backend.neutron_target_spec import NeutronTargetSpec
    from executorch.backends.nxp.quantizer.neutron_quantizer import NeutronQuantizer

    return NeutronQuantizer(NeutronTargetSpec(TARGET))


def _neutron_partitioner(post_quantization_state_dict=None):
    import torch
    from executorch.backends.nxp.backend.custom_delegation_options import (
        CustomDelegationOptions,
    )
    from executorch.backends.nxp.backend.neutron_target_spec import NeutronTargetSpec
    from executorch.backends.nxp.neutron_partitioner import NeutronPartitioner
    from executorch.backends.nxp.nxp_backend import generate_neutron_compile_spec

    return NeutronPartitioner(
        generate_neutron_compile_spec(TARGET, use_neutron_for_format_conversion=True),
        NeutronTargetSpec(TARGET),
        CustomDelegationOptions(),
        post_quantization_state_dict,
        preserve_ops=[torch.ops.aten.pad.default, torch.ops.aten.prelu.default,
                      torch.ops.aten.hardswish.default],
    )


def _partitioners() -> list:
    return [_neutron_partitioner()]


def lower(exported_program, inputs=None):
    """NXP's lowering of a quantized program (what ExecuTorch's Neutron tester does). Not
    called by this suite's pipeline yet (it has no lowering hook)."""
    from executorch.backends.nxp.edge_passes.neutron_edge_pass_manager import (
        NeutronEdgePassManager,
    )
    from executorch.backends.nxp.edge_passes.remove_additional_quantize_dequantize_nodes_pass import (  # noqa: E501
        RemoveAdditionalQDQClustersPass,
    )
    from executorch.backends.nxp.nxp_backend import core_aten_ops_exception_list
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(
        exported_program,
        transform_passes=NeutronEdgePassManager(),
        partitioner=[_neutron_partitioner(exported_program.state_dict)],
        compile_config=EdgeCompileConfig(
            _check_ir_validity=False,
            _core_aten_ops_exception_list=core_aten_ops_exception_list),
    )
    return edge.transform(NeutronEdgePassManager([RemoveAdditionalQDQClustersPass()]))


NXP_NEUTRON_IMXRT700_INT8_PTQ = replace(
    delegating_flow(
        "nxp_neutron_imxrt700_int8_ptq", BACKEND,
        f"int8 PTQ (NeutronQuantizer), Neutron NPU partitioner, target {TARGET}",
        partitioners=_partitioners, quantizer=_quantizer, runtime_backend=RUNTIME_NAME,
        requires=REQUIRES, enable_hint=ENABLE_HINT,
    ),
    probe=_probe,
)

FLOWS = [NXP_NEUTRON_IMXRT700_INT8_PTQ]
