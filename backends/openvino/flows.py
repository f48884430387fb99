"""OpenVINO flows (Intel CPU): fp32, and int8 with OpenVINO's own NNCF-based PT2E quantizer.

Built from ExecuTorch's public OpenVINO APIs (`executorch.backends.openvino`): the
`OpenvinoPartitioner` with the compile spec `device=CPU`, and for `openvino_int8` the
`OpenVINOQuantizer` (NNCF MinMax, mode INT8_SYM) before it. Importing
`executorch.backends.openvino` imports both the `openvino` and the `nncf` Python packages,
so both flows need both. Versions that work together with torch 2.13 / executorch 1.5.1:
openvino 2025.4.1 and nncf 3.2.0 (requirements.txt). nncf 3.3+ needs openvino 2026
(`ov.Type.u2`), nncf 2.x imports the removed `torch.ao.quantization.pt2e`, and the
ExecuTorch 1.5.1 runtime asks for openvino >=2025.1,<2026.

The ExecuTorch runtime in the PyPI wheel registers "OpenvinoBackend" and dlopens
libopenvino_c from the pip `openvino` package by itself (or from OPENVINO_LIB_PATH), so
delegated programs really run and are compared on an x86 Linux host.

Known gaps are data: expectations.toml beside this file, and expectations.bf16-host.toml
for what depends on the host CPU: on CPUs with native bf16 (avx512_bf16 / AMX) OpenVINO's
CPU plugin defaults to INFERENCE_PRECISION_HINT=bf16, and the ExecuTorch runtime imports the
compiled blob with no properties (a compile-time f32 hint does not survive export/import
either), so the fp32 flow computes in bf16 there: SQNR about 48-57 dB, which the fp32 rule
fails (strict entries, loaded only on such hosts). On other CPUs these cases should pass.
"""

from dataclasses import replace
from pathlib import Path

from etsuite.backends.harness.flows.flow import Flow, delegating_flow
from etsuite.backends.harness.flows.tolerance import INT8

RUNTIME_NAME = "OpenvinoBackend"
# executorch/backends/openvino/__init__.py imports the quantizer, hence nncf for both flows.
REQUIRES = ("torch", "executorch", "executorch.backends.openvino.partitioner",
            "executorch.backends.openvino.quantizer", "openvino", "nncf")
ENABLE_HINT = ("pip install -r backends/openvino/requirements.txt "
               "(openvino==2025.4.1 nncf==3.2.0)")
DEVICE = b"CPU"
OPS = "backends/suite/operators"


def _partitioners() -> list:
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner
    from executorch.exir.backend.backend_details import CompileSpec

    return [OpenvinoPartitioner([CompileSpec("device", DEVICE)])]


def _int8_quantizer():
    from executorch.backends.openvino.quantizer import OpenVINOQuantizer, QuantizationMode

    return OpenVINOQuantizer(mode=QuantizationMode.INT8_SYM)


def cpu_has_native_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether OpenVINO's CPU plugin defaults to bf16 inference precision on this host
    (x86 with avx512_bf16 or AMX). Reads /proc/cpuinfo; imports nothing."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.startswith("flags"):
                    return bool(set(line.split(":", 1)[1].split()) & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


# Expectations that hold only on such hosts, as data (same format as expectations.toml):
# each fp32 case observed there with bf16-sized errors, with its statistics.
BF16_HOST_FILE = Path(__file__).with_name("expectations.bf16-host.toml")


def host_expectation_files() -> list[Path]:
    """The expectations files that hold on this host only, beside expectations.toml; the
    registry reads them each session, so a warm process sees an edit to them."""
    return [BF16_HOST_FILE] if cpu_has_native_bf16() and BF16_HOST_FILE.is_file() else []


def _openvino_flow(name: str, description: str, quantizer=None) -> Flow:
    return delegating_flow(
        name, "openvino", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES, enable_hint=ENABLE_HINT,
    )


OPENVINO = _openvino_flow("openvino", "fp32, OpenVINO CPU device (bf16 on native-bf16 CPUs)")
# fold_quantize=False: OpenVINO's converter rejects a folded int8 weight ("f32 vs i8"),
# and ExecuTorch's own OpenVINO tester converts without folding too.
# Backend fidelity is not judged yet (case/fidelity.py): OpenVINO's CPU plugin does not
# compute the PT2E program's integer arithmetic step for step (on healthy operator and
# model cases its outputs sit tens of steps from the quantized program while matching
# fp32 eager under the int8 rule: docs/measurements.md), so a bound must first be
# measured from its healthy runs; until then fp32 eager alone judges, and records say so.
OPENVINO_INT8 = replace(_openvino_flow(
    "openvino_int8",
    "int8: OpenVINOQuantizer (NNCF, INT8_SYM), then the OpenVINO partitioner, CPU device",
    _int8_quantizer,
), fold_quantize=False, tolerance=replace(INT8, fidelity_steps=None))

FLOWS = [OPENVINO, OPENVINO_INT8]
