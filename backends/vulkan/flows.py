"""Vulkan (GPU): fp32 and per-channel int8 weights, lowered with ExecuTorch's Vulkan
partitioner and quantizer.

The names are ExecuTorch's. Its `vulkan_static_int8_per_channel` uses the Vulkan
quantizer's default config, which quantizes weights only (per channel, int8) and leaves
activations in fp32; the description says so.

The ExecuTorch runtime in the PyPI wheel has no Vulkan backend, so on a stock host every
delegated subtest ends `lowered_not_run` after serialization: lowering coverage is still
measured. With a runtime that registers "VulkanBackend", the same flows run and compare.
"""

from etsuite.backends.harness.flows.flow import Flow, delegating_flow

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
        runtime_backend=RUNTIME_NAME, requires=REQUIRES,
    )


VULKAN = _vulkan_flow("vulkan", "fp32")
VULKAN_STATIC_INT8_PER_CHANNEL = _vulkan_flow(
    "vulkan_static_int8_per_channel", "per-channel int8 weights, fp32 activations",
    _int8_weight_only_quantizer)

FLOWS = [VULKAN, VULKAN_STATIC_INT8_PER_CHANNEL]
