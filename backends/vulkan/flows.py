"""Vulkan flows: fp32 and int8 weight-only, from ExecuTorch's public Vulkan partitioner
and quantizer.

The ExecuTorch runtime in the PyPI wheel has no Vulkan backend, so on a stock host every
delegated subtest ends `lowered_not_run` after serialization: lowering coverage is still
measured. With a runtime that registers "VulkanBackend", the same flows run and compare.
"""

from backends.harness.flow import FP32_TOLERANCE, INT8_TOLERANCE, Flow
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


VULKAN = Flow(
    name="vulkan",
    backend="vulkan",
    partitioners=_partitioners,
    tolerance=FP32_TOLERANCE,
    runtime_backend=RUNTIME_NAME,
    requires=REQUIRES,
    description="fp32",
    expected_failures=dict(PORTABLE_KERNEL_GAPS),
)

VULKAN_INT8_WEIGHT_ONLY = Flow(
    name="vulkan_int8_weight_only",
    backend="vulkan",
    partitioners=_partitioners,
    quantizer=_int8_weight_only_quantizer,
    tolerance=INT8_TOLERANCE,
    runtime_backend=RUNTIME_NAME,
    requires=REQUIRES,
    description="int8 weights, fp32 activations",
    expected_failures=dict(PORTABLE_KERNEL_GAPS),
)

FLOWS = [VULKAN, VULKAN_INT8_WEIGHT_ONLY]
