"""XNNPACK flows: fp32 and three int8 recipes, built from ExecuTorch's public quantizer
and partitioner APIs.

Known gaps are data: expectations.toml beside this file (strict known failures with the
status they fail with, skips, cases that must be delegated).
"""

from etsuite.backends.harness.flow import Flow, delegating_flow
from etsuite.backends.harness.tolerance import FP32, Tolerance, quantized_rule

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


# Output rules by recipe (tolerance.py). int8: SQNR against eager plus a per-element
# bound of 32 steps (range/255), which a healthy int8 Linear(1, 512) needs (about 18 steps
# at SQNR 38 dB) and a flipped sign or a wrong scale exceeds.
STATIC_INT8 = quantized_rule("int8 static", min_sqnr_db=20.0)
DYNAMIC_INT8 = quantized_rule("int8 dynamic", min_sqnr_db=20.0)


def _xnnpack_flow(name: str, description: str, quantizer=None,
                  tolerance: Tolerance = FP32) -> Flow:
    return delegating_flow(
        name, "xnnpack", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES, tolerance=tolerance,
    )


XNNPACK = _xnnpack_flow("xnnpack", "fp32")
XNNPACK_DYNAMIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_dynamic_int8_per_channel",
    "dynamic int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=True), DYNAMIC_INT8,
)
XNNPACK_STATIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_static_int8_per_channel",
    "static int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=False), STATIC_INT8,
)
XNNPACK_STATIC_INT8_PER_TENSOR = _xnnpack_flow(
    "xnnpack_static_int8_per_tensor",
    "static int8 activations and weights, per-tensor",
    _symmetric_int8(per_channel=False, dynamic=False), STATIC_INT8,
)

FLOWS = [
    XNNPACK,
    XNNPACK_DYNAMIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_TENSOR,
]
