"""WebGPU flow: fp32, lowered through the Vulkan partitioning and serialization path.

Built from ExecuTorch's public `WebGPUPartitioner` (a front end over `VulkanPartitioner`)
with the options ExecuTorch 1.5.1's own suite gives its `webgpu` flow: `skip_bool_tensors`
and an operator allowlist (SUPPORTED_OPS below; without one the Vulkan partitioner would
also take operators only Vulkan runs). The flow name is ExecuTorch's. That allowlist is
narrower than the WebGPU runtime: it has no linear/addmm/mm, which WebGPU's own operator
tests do lower, so linear cases here delegate at most their view_copy nodes.

WebGPU programs are Vulkan-format delegates: the WebGPU runtime (built from ExecuTorch
source on Dawn or wgpu-native) registers itself as "VulkanBackend". The ExecuTorch runtime
in the PyPI wheel registers neither, so on a stock host delegated subtests lower, serialize
and end `lowered_not_run`; lowering coverage is still measured. Note that a runtime with
the real Vulkan backend would run these programs on Vulkan, not WebGPU.
"""

from etsuite.backends.harness.flows.flow import delegating_flow

BACKEND = "webgpu"
RUNTIME_NAME = "VulkanBackend"  # the name the WebGPU runtime registers under
REQUIRES = ("torch", "executorch", "executorch.backends.webgpu.partitioner",
            "executorch.backends.vulkan.partitioner")
ENABLE_HINT = ("build ExecuTorch from source with the WebGPU backend (Dawn or wgpu-native) "
               "so that the runtime registers 'VulkanBackend'")

# The operator allowlist of ExecuTorch 1.5.1's `webgpu` suite flow, as
# "<namespace>.<op>.<overload>" under exir_ops.edge; et_vk ops are registered by the
# Vulkan partitioner's import.
SUPPORTED_OPS = (
    "aten.add.Tensor", "et_vk.rms_norm.default", "aten.mul.Tensor", "aten.view_copy.default",
    "aten.select_copy.int", "aten.sigmoid.default", "aten.squeeze_copy.dims",
    "aten.unsqueeze_copy.default", "aten.slice_copy.Tensor", "aten.permute_copy.default",
    "aten.cat.default", "aten.amax.default", "aten.amin.default", "aten.argmax.default",
    "aten.argmin.default", "aten.native_group_norm.default", "aten.full.default",
    "aten.full_like.default", "aten.zeros.default", "aten.zeros_like.default",
    "aten.ones.default", "aten.ones_like.default", "aten.scalar_tensor.default",
    "aten._to_copy.default", "dim_order_ops._to_dim_order_copy.default", "aten.abs.default",
    "aten.exp.default", "aten.sqrt.default", "aten.rsqrt.default", "aten.sin.default",
    "aten.cos.default", "aten.tanh.default", "aten.round.default", "aten.neg.default",
    "aten.hardswish.default", "aten.clamp.default", "aten.hardtanh.default",
    "aten.pow.Tensor_Scalar", "aten.minimum.default", "aten.div.Tensor_mode",
    "aten.logical_and.default", "aten.bitwise_and.Tensor", "aten.bitwise_not.default",
    "aten.flip.default", "aten.repeat.default", "aten.index_select.default",
    "aten.avg_pool2d.default", "aten.pixel_shuffle.default", "aten.convolution.default",
    "et_vk.conv_with_clamp.default", "aten.grid_sampler_2d.default",
    "et_vk.grid_priors.default", "et_vk.linear_qcs4w.default",
    "et_vk.linear_q8ta_q8csw.default", "et_vk.q8ta_add.default", "et_vk.q8ta_relu.default",
    "et_vk.q8ta_pixel_shuffle.default", "et_vk.q8ta_linear.default",
    "et_vk.q8ta_linear_gemv.default", "et_vk.q8ta_conv2d.default",
    "et_vk.q8ta_conv2d_dw.default", "et_vk.q8ta_conv2d_pw.default",
    "et_vk.linear_dq8ca_q4gsw.default", "torchao.choose_qparams_affine.default",
)


def _edge_op(name: str):
    from executorch.exir.dialects._ops import ops as exir_ops

    op = exir_ops.edge
    for part in name.split("."):
        op = getattr(op, part)
    return op


def _partitioners() -> list:
    from executorch.backends.webgpu.partitioner import WebGPUPartitioner

    return [WebGPUPartitioner({"skip_bool_tensors": True},
                              operator_allowlist=[_edge_op(name) for name in SUPPORTED_OPS])]


WEBGPU = delegating_flow(
    "webgpu", BACKEND,
    "fp32, WebGPUPartitioner (Vulkan serialization), ExecuTorch's WebGPU op allowlist",
    partitioners=_partitioners, runtime_backend=RUNTIME_NAME, requires=REQUIRES,
    enable_hint=ENABLE_HINT,
)

FLOWS = [WEBGPU]
