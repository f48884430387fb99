"""MediaTek NeuroPilot flow: int8 (A8W8) PT2E, Neuropilot partitioner for the mt6989 APU.

Built from ExecuTorch's public MediaTek APIs: `NeuropilotQuantizer` (its default
precision, Precision.A8W8, per-channel weights) and `NeuropilotPartitioner` with the
required compile spec `platform-config=mt6989`. ExecuTorch's own suite has no MediaTek
flow, so the flow carries the backend's name.

Where it gets on a Linux x86_64 host with PyPI packages only: nowhere. The package
`executorch.backends.mediatek` imports MediaTek's NeuroPilot Express SDK Python packages
(`mtk_converter`, `mtk_neuron`) at import time, so even the quantizer cannot be imported
without them ("ModuleNotFoundError: No module named 'mtk_converter'"), and they are not on
PyPI (MediaTek distributes the wheels through its NeuroPilot portal). So the flow requires
both modules and is `unavailable` without them. With them, lowering runs on the host
(mtk_converter and mtk_neuron are host-side tools; not verified here, for want of them);
the ExecuTorch runtime in the PyPI wheel has no "NeuropilotBackend" (programs run on
MediaTek Dimensity devices), so lowered subtests would end `lowered_not_run`.
"""

from etsuite.backends.harness.flows.flow import delegating_flow

BACKEND = "mediatek"
PLATFORM = "mt6989"
RUNTIME_NAME = "NeuropilotBackend"
REQUIRES = ("torch", "executorch", "torchao", "executorch.backends.mediatek.partitioner",
            "executorch.backends.mediatek.quantizer",
            "mtk_converter", "mtk_neuron")  # NeuroPilot Express SDK, imported by the package
ENABLE_HINT = ("install MediaTek's NeuroPilot Express SDK Python wheels (mtk_converter, "
               "mtk_neuron) from MediaTek's NeuroPilot portal; they are not on PyPI")


def _partitioners() -> list:
    from executorch.backends.mediatek import NeuropilotPartitioner
    from executorch.exir.backend.backend_details import CompileSpec

    return [NeuropilotPartitioner([CompileSpec("platform-config", PLATFORM.encode())])]


def _a8w8_quantizer():
    from executorch.backends.mediatek import NeuropilotQuantizer, Precision

    quantizer = NeuropilotQuantizer()
    quantizer.setup_precision(Precision.A8W8)
    return quantizer


MEDIATEK = delegating_flow(
    "mediatek", BACKEND, f"int8 A8W8 (NeuropilotQuantizer), Neuropilot partitioner, {PLATFORM}",
    partitioners=_partitioners, quantizer=_a8w8_quantizer, runtime_backend=RUNTIME_NAME,
    requires=REQUIRES, enable_hint=ENABLE_HINT,
)

FLOWS = [MEDIATEK]
