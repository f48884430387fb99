"""Arm TOSA flows: TOSA-1.0+FP and TOSA-1.0+INT, run on the TOSA reference model.

Built from ExecuTorch's public Arm APIs (`TosaCompileSpec`, `TOSAPartitioner`,
`TOSAQuantizer` with Arm's symmetric int8 config: per-channel weights, affine int8
activations). The ExecuTorch runtime in the PyPI wheel has no TOSA backend, so a lowered
program's TOSA flatbuffer is executed by the TOSA reference model from PyPI's
`tosa-tools` (see `tosa_reference.py`), as Arm's own tests do. A program that is only
partly delegated cannot run there and ends `lowered_not_run`.

Needs `pip install -r backends/arm/requirements.txt` (tosa-tools pins numpy<2.2, so the
backend has an environment of its own: `tox -e arm`); without it both flows are
`unavailable`. Known failures live in expectations.toml beside this file.
"""

from etsuite.backends.harness.flow import FP32_TOLERANCE, INT8_TOLERANCE, Flow
from etsuite.backends.arm.tosa_reference import TosaReferenceRuntime

REQUIRES = (
    "torch",
    "executorch",
    "executorch.backends.arm.tosa.partitioner",
    "executorch.backends.arm.quantizer",
    "tosa_serializer",        # lowering writes the TOSA flatbuffer with it (tosa-tools)
    "tosa_reference_model",   # the runtime (tosa-tools)
)

FP_SPEC = "TOSA-1.0+FP"
INT_SPEC = "TOSA-1.0+INT"


def _partitioners(spec: str):
    def make_partitioners() -> list:
        from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
        from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

        return [TOSAPartitioner(TosaCompileSpec(spec))]

    return make_partitioners


def _edge_compile_config():
    """Arm's recipes lower without EXIR's IR validity check: its passes make
    `tosa.CONST_SHAPE` nodes the check does not know (e.g. for `x.mean()` to a 0-d
    tensor, which otherwise fails with StopIteration)."""
    from executorch.exir import EdgeCompileConfig

    return EdgeCompileConfig(_check_ir_validity=False)


def _symmetric_int8_quantizer():
    """Arm's TOSAQuantizer with its symmetric int8 config (Arm's test default:
    per-channel weights), set globally."""
    from executorch.backends.arm.quantizer import (
        TOSAQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec

    config = get_symmetric_quantization_config(is_per_channel=True)
    return TOSAQuantizer(TosaCompileSpec(INT_SPEC)).set_global(config)


ENABLE_HINT = ("pip install -r backends/arm/requirements.txt (tosa-tools, ml_dtypes; "
               "numpy<2.2), or use `tox -e arm` / `make test-arm`")

ARM_TOSA_FP = Flow(
    name="arm_tosa_fp",
    backend="arm",
    description=f"{FP_SPEC}: fp32, TOSA partitioner; TOSA reference model (pip install tosa-tools)",
    partitioners=_partitioners(FP_SPEC),
    edge_compile_config=_edge_compile_config,
    tolerance=FP32_TOLERANCE,
    runtime=TosaReferenceRuntime(),
    requires=REQUIRES,
    enable_hint=ENABLE_HINT,
)

ARM_TOSA_INT = Flow(
    name="arm_tosa_int",
    backend="arm",
    description=(f"{INT_SPEC}: int8 (TOSAQuantizer, symmetric per-channel weights), TOSA "
                 "partitioner; TOSA reference model (pip install tosa-tools)"),
    partitioners=_partitioners(INT_SPEC),
    edge_compile_config=_edge_compile_config,
    quantizer=_symmetric_int8_quantizer,
    tolerance=INT8_TOLERANCE,
    runtime=TosaReferenceRuntime(),
    requires=REQUIRES,
    enable_hint=ENABLE_HINT,
)

FLOWS = [ARM_TOSA_FP, ARM_TOSA_INT]
