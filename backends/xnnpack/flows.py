"""XNNPACK flows: fp32 and three int8 recipes, built from ExecuTorch's public quantizer
and partitioner APIs.

Known gaps go in `expected_failures` (strict: an unexpected pass fails the run) or
`skips` (not run at all), keyed by an fnmatch pattern on the test case id, e.g.
"backends/suite/operators/test_pow.py::*".
"""

from backends.harness.flow import Flow, delegating_flow
from backends.portable.flows import PORTABLE_KERNEL_GAPS

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


# Known gaps of XNNPACK itself; ops it leaves to portable kernels inherit theirs.
XNNPACK_GAPS = {
    "backends/suite/operators/test_prelu.py::TestPReLU::test_prelu_2d_input*":
        "lowering prelu on a 2-D input fails in XNNPACK's ChannelsLastTaggedReshapePass",
}


def _xnnpack_flow(name: str, description: str, quantizer=None) -> Flow:
    return delegating_flow(
        name, "xnnpack", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES,
        expected_failures={**PORTABLE_KERNEL_GAPS, **XNNPACK_GAPS},
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
