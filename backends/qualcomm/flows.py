"""Qualcomm AI Engine Direct (QNN, HTP) flows: fp16 and five PT2E quantized recipes.

Built from ExecuTorch's public Qualcomm APIs: `QnnPartitioner` with the compile specs of
`generate_qnn_executorch_compiler_spec` (SoC SM8650, HTP backend options from
`generate_htp_compiler_spec`), and `QnnQuantizer.set_default_quant_config` with the flow's
`QuantDtype` (per-channel conv weights, per-tensor linear weights, moving-average
activation observers), as ExecuTorch's own suite does. The flow names are ExecuTorch's.

Where each flow gets on a host without the QNN SDK (Linux x86_64, PyPI packages only):
quantizing works (QnnQuantizer tries to set the SDK up for its op-info constraint checks,
logs the failed download and falls back to none), lowering does not. QnnPartitioner starts a
QNN backend to ask which ops it supports, and the native adaptor in the wheel dlopens the
SDK's libQnnHtp.so by name. With QNN_SDK_ROOT unset, executorch first tries to download
the SDK from Qualcomm and fails offline ("RuntimeError: Failed to set up QNN SDK."); with
QNN_SDK_ROOT set but the libraries not on the loader path, it fails with "RuntimeError:
Failed to initialize QNN backend for kHtpBackend" ("Cannot Open QNN library libQnnHtp.so").
No PyPI package ships the SDK (ai-edge-litert-sdk-qualcomm and qairt-dev are shells that
expect it to be installed). So the probe checks for the SDK first and every flow is
`unavailable` without it.

With the SDK, lowering still needs QNN's to-edge transform passes (AnnotateQuantAttrs,
FoldQDQ, LayoutTransform, I64toI32, ...; ExecuTorch's `to_edge_transform_and_lower_to_qnn`
runs them), which this suite's pipeline cannot apply: it calls plain
`to_edge_transform_and_lower` with the partitioners. Until the harness has a lowering hook,
the probe says so instead of producing failures that are the suite's, not QNN's; `lower()`
below is the recipe such a hook would call. The ExecuTorch runtime in the PyPI wheel
registers "QnnBackend", so lowered programs should then run here on the SDK's x86_64
libraries (not verified without the SDK). The output rules (`RULES`) are guesses from
each recipe's precision, not measured: fp16 with 1e-2 terms, and an SQNR floor per
quantized recipe that falls with the weights' bits.

`qnn_16a4w_block` quantizes as its name says (QuantDtype.use_16a4w_block: 16-bit
activations, 4-bit weights, block-wise for conv2d weights whose input channels split into
blocks of 32, per-channel otherwise; QNN's block quantization covers conv2d only).
ExecuTorch 1.5.1's own suite builds this flow with QuantDtype.use_8a8w instead.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from etsuite.backends.harness.flows.flow import Flow, delegating_flow
from etsuite.backends.harness.flows.tolerance import Tolerance, quantized_rule

BACKEND = "qualcomm"
RUNTIME_NAME = "QnnBackend"
SOC_MODEL = "SM8650"
QNN_LIBRARY = "libQnnHtp.so"
QNN_LIBRARY_DIR = ("lib", "x86_64-linux-clang")
BLOCK_SIZE = 32  # input channels per block in qnn_16a4w_block

REQUIRES = (
    "torch",
    "executorch",
    "torchao",
    "executorch.backends.qualcomm.partition.qnn_partitioner",
    "executorch.backends.qualcomm.quantizer.quantizer",
    "executorch.backends.qualcomm.python.PyQnnManagerAdaptor",  # the native adaptor
)
ENABLE_HINT = (
    "install the Qualcomm AI Engine Direct (QNN) SDK (executorch 1.5.1 is built against "
    "QNN 2.37) and export QNN_SDK_ROOT=<sdk folder> "
    "LD_LIBRARY_PATH=$QNN_SDK_ROOT/lib/x86_64-linux-clang:$LD_LIBRARY_PATH; the flows also "
    "need a lowering hook in the suite's pipeline to apply QNN's to-edge passes "
    "(backends/qualcomm/flows.py)"
)
NO_LOWERING_HOOK = (
    "QNN SDK found, but this suite's pipeline cannot apply QNN's to-edge transform passes "
    "(AnnotateQuantAttrs, FoldQDQ, LayoutTransform, ...) that QnnPartitioner relies on: it "
    "lowers with plain to_edge_transform_and_lower; needs a lowering hook (see lower() in "
    "backends/qualcomm/flows.py)"
)


def qnn_sdk_problem(environ=os.environ) -> str | None:
    """Why the QNN SDK cannot be used from this process, or None. Looks at paths only."""
    root = environ.get("QNN_SDK_ROOT")
    if not root:
        return ("QNN_SDK_ROOT is not set: QnnPartitioner needs the QNN SDK's libQnnHtp.so "
                "to lower (without it executorch tries to download the SDK at lowering time "
                "and fails offline: 'RuntimeError: Failed to set up QNN SDK.')")
    if not Path(root).is_dir():
        return f"QNN_SDK_ROOT={root} is not a folder"
    if not Path(root, *QNN_LIBRARY_DIR, QNN_LIBRARY).is_file():
        return f"QNN_SDK_ROOT={root} has no {'/'.join(QNN_LIBRARY_DIR)}/{QNN_LIBRARY}"
    loader_path = [d for d in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    if not any(Path(d, QNN_LIBRARY).is_file() for d in loader_path):
        return (f"{QNN_LIBRARY} is not in any LD_LIBRARY_PATH folder: executorch's QNN "
                f"adaptor dlopens it by name ('Failed to initialize QNN backend for "
                f"kHtpBackend')")
    return None


def _probe() -> str | None:
    return qnn_sdk_problem() or NO_LOWERING_HOOK


def compiler_specs(use_fp16: bool) -> list:
    from executorch.backends.qualcomm.utils.utils import (
        generate_htp_compiler_spec,
        generate_qnn_executorch_compiler_spec,
        get_soc_to_chipset_map,
    )

    return generate_qnn_executorch_compiler_spec(
        soc_model=get_soc_to_chipset_map()[SOC_MODEL],
        backend_options=generate_htp_compiler_spec(use_fp16=use_fp16),
    )


def _partitioners(use_fp16: bool):
    def make_partitioners() -> list:
        from executorch.backends.qualcomm.partition.qnn_partitioner import QnnPartitioner

        return [QnnPartitioner(compiler_specs(use_fp16))]

    return make_partitioners


def lower(exported_program, inputs: tuple, use_fp16: bool):
    """The whole QNN lowering, as ExecuTorch's `to_edge_transform_and_lower_to_qnn` does it
    (export passes, to-edge transform passes, QnnPartitioner). Not called by this suite's
    pipeline yet (it has no lowering hook); kept here as the recipe one would call."""
    from executorch.backends.qualcomm.utils.utils import to_edge_transform_and_lower_to_qnn

    return to_edge_transform_and_lower_to_qnn(
        exported_program.module(), inputs, compiler_specs(use_fp16))


def _quantizer(dtype_name: str, block_wise: bool = False):
    """A factory of QnnQuantizer with one default config, as ExecuTorch's suite sets it."""

    def make_quantizer():
        from executorch.backends.qualcomm.quantizer.quantizer import QnnQuantizer, QuantDtype
        from torchao.quantization.pt2e import MovingAverageMinMaxObserver

        quantizer = _block_wise_conv_quantizer() if block_wise else QnnQuantizer()
        quantizer.set_default_quant_config(
            getattr(QuantDtype, dtype_name),
            is_conv_per_channel=True,
            is_linear_per_channel=False,
            act_observer=MovingAverageMinMaxObserver,
        )
        return quantizer

    return make_quantizer


def _block_wise_conv_quantizer():
    """QnnQuantizer that maps every conv2d whose input channels split into several blocks
    of BLOCK_SIZE to block-wise weights (QnnQuantizer.set_block_size_map takes node names,
    which only the graph being annotated has)."""
    import torch
    from executorch.backends.qualcomm.quantizer.quantizer import QnnQuantizer

    class BlockWiseConvQuantizer(QnnQuantizer):
        def annotate(self, model):
            blocks = {}
            for node in model.graph.nodes:
                if node.op != "call_function" or node.target != torch.ops.aten.conv2d.default:
                    continue
                weight = node.args[1].meta.get("val") if len(node.args) > 1 else None
                if weight is not None and weight.dim() == 4:
                    in_channels = weight.shape[1]
                    if in_channels > BLOCK_SIZE and in_channels % BLOCK_SIZE == 0:
                        blocks[node.name] = (1, BLOCK_SIZE, 1, 1)
            self.set_block_size_map(blocks)
            return super().annotate(model)

    return BlockWiseConvQuantizer()


RULES = {
    "qnn": Tolerance("fp16 HTP", atol=1e-2, rtol=1e-2, range_fraction=1e-3),
    "qnn_16a16w": quantized_rule("16a16w", min_sqnr_db=35.0),
    "qnn_16a8w": quantized_rule("16a8w", min_sqnr_db=25.0),
    "qnn_16a4w": quantized_rule("16a4w", min_sqnr_db=12.0, steps=64),
    "qnn_16a4w_block": quantized_rule("16a4w block", min_sqnr_db=12.0, steps=64),
    "qnn_8a8w": quantized_rule("8a8w", min_sqnr_db=20.0),
}


def _qnn_flow(name: str, description: str, quantizer=None) -> Flow:
    flow = delegating_flow(
        name, BACKEND, description, partitioners=_partitioners(use_fp16=quantizer is None),
        quantizer=quantizer, runtime_backend=RUNTIME_NAME, requires=REQUIRES,
        enable_hint=ENABLE_HINT, tolerance=RULES[name],
    )
    return replace(flow, probe=_probe)


QNN = _qnn_flow("qnn", "fp16 on the HTP (SM8650), no quantization")
QNN_16A16W = _qnn_flow("qnn_16a16w", "16-bit activations, 16-bit weights",
                       _quantizer("use_16a16w"))
QNN_16A8W = _qnn_flow("qnn_16a8w", "16-bit activations, 8-bit weights",
                      _quantizer("use_16a8w"))
QNN_16A4W = _qnn_flow("qnn_16a4w", "16-bit activations, 4-bit weights",
                      _quantizer("use_16a4w"))
QNN_16A4W_BLOCK = _qnn_flow(
    "qnn_16a4w_block",
    f"16-bit activations, 4-bit weights, block-wise ({BLOCK_SIZE} input channels) for conv2d",
    _quantizer("use_16a4w_block", block_wise=True))
QNN_8A8W = _qnn_flow("qnn_8a8w", "8-bit activations, 8-bit weights", _quantizer("use_8a8w"))

FLOWS = [QNN, QNN_16A16W, QNN_16A8W, QNN_16A4W, QNN_16A4W_BLOCK, QNN_8A8W]
