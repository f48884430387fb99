"""XNNPACK flows: fp32 and three int8 recipes, built from ExecuTorch's public quantizer
and partitioner APIs.

Known gaps are data: expectations.toml beside this file (strict known failures with the
status they fail with, skips, cases that must be delegated).
"""

from etsuite.backends.harness.flow import Flow, delegating_flow

RUNTIME_NAME = "XnnpackBackend"
REQUIRES = ("torch", "executorch", "executorch.backends.xnnpack")


def _partitioners() -> list:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return [XnnpackPartitioner()]


def _symmetric_int8(per_channel: bool, dynamic: bool):
    """A factory of the XNNPACK PT2E quantizer with one global symmetric int8 config."""

    def make_quantizer():
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )

        config = get_symmetric_quantization_config(is_per_channel=per_channel, is_dynamic=dynamic)
        return XNNPACKQuantizer().set_global(config)

    return make_quantizer


def _xnnpack_flow(name: str, description: str, quantizer=None) -> Flow:
    return delegating_flow(
        name, "xnnpack", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES,
    )


XNNPACK = _xnnpack_flow("xnnpack", "fp32")
XNNPACK_DYNAMIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_dynamic_int8_per_channel",
    "dynamic int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=True),
)
XNNPACK_STATIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_static_int8_per_channel",
    "static int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=False),
)
XNNPACK_STATIC_INT8_PER_TENSOR = _xnnpack_flow(
    "xnnpack_static_int8_per_tensor",
    "static int8 activations and weights, per-tensor",
    _symmetric_int8(per_channel=False, dynamic=False),
)

FLOWS = [
    XNNPACK,
    XNNPACK_DYNAMIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_TENSOR,
]
