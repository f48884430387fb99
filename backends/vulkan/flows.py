"""Vulkan flows: fp32 and int8 weight-only, from ExecuTorch's public Vulkan partitioner
and quantizer.

The ExecuTorch runtime in the PyPI wheel has no Vulkan backend, so on a stock host every
delegated subtest ends `lowered_not_run` after serialization: lowering coverage is still
measured. With a runtime that registers "VulkanBackend", the same flows run and compare.
"""

from backends.harness.flow import Flow, delegating_flow
from backends.portable.flows import PORTABLE_KERNEL_GAPS

RUNTIME_NAME = "VulkanBackend"
REQUIRES = ("torch", "executorch", "executorch.backends.vulkan.partitioner")


def _partitioners() -> list:
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner

    return [VulkanPartitioner()]


def _int8_weight_only_quantizer():
    from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
        VulkanQuantizer,
        get_symmetric_quantization_config,
    )

    return VulkanQuantizer().set_global(get_symmetric_quantization_config(is_dynamic=False))


def _vulkan_flow(name: str, description: str, quantizer=None) -> Flow:
    return delegating_flow(
        name, "vulkan", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES, expected_failures=PORTABLE_KERNEL_GAPS,
    )


VULKAN = _vulkan_flow("vulkan", "fp32")
VULKAN_INT8_WEIGHT_ONLY = _vulkan_flow(
    "vulkan_int8_weight_only", "int8 weights, fp32 activations", _int8_weight_only_quantizer)

FLOWS = [VULKAN, VULKAN_INT8_WEIGHT_ONLY]
