"""Arm flows: TOSA (reference model), Ethos-U55/U85 (Vela, not run), VGF (model converter).

ExecuTorch's flow names: `arm_tosa_fp` and `arm_tosa_int` run on the TOSA reference model;
`arm_ethos_u55` and `arm_ethos_u85` (int8, compiled by Vela) are lowered but not run;
`arm_vgf_fp` and `arm_vgf_int` need Arm's model converter.

All are built from ExecuTorch's public Arm APIs: a compile spec (`TosaCompileSpec`,
`EthosUCompileSpec`, `VgfCompileSpec`), its partitioner (`TOSAPartitioner`,
`EthosUPartitioner`, `VgfPartitioner`) and, in the int8 flows, its quantizer
(`TOSAQuantizer`, `EthosUQuantizer`, `VgfQuantizer`) with Arm's symmetric int8 config
(`get_symmetric_quantization_config(is_per_channel=True)`: per-channel weights, affine
int8 activations), set globally. Every flow lowers without EXIR's IR validity check, as
Arm's recipes do.

How far each gets on a Linux x86_64 CPU host with packages from PyPI:

- `arm_tosa_fp`, `arm_tosa_int`: run. The ExecuTorch runtime in the PyPI wheel has no TOSA
  backend, so a lowered program's TOSA flatbuffer is executed by the TOSA reference model
  from PyPI's `tosa-tools` (see `tosa_reference.py`), as Arm's own tests do. A program that
  is only partly delegated cannot run there and ends `lowered_not_run`.
- `arm_ethos_u55`, `arm_ethos_u85`: lower (PyPI's `ethos-u-vela` compiles each TOSA
  partition into an Ethos-U command stream) and end `lowered_not_run`: the wheel's runtime
  has no "EthosUBackend", and Ethos-U programs run only on the NPU or on Arm's Corstone
  FVPs (Corstone-300 for U55, Corstone-320 for U85) with ExecuTorch's arm_executor_runner
  built from source; this suite has no FVP runtime. Targets and memory settings are those
  of ExecuTorch's own suite: ethos-u55-128 with Ethos_U55_High_End_Embedded / Shared_Sram,
  ethos-u85-128 with Ethos_U85_SYS_DRAM_Mid / Shared_Sram.
- `arm_vgf_fp`, `arm_vgf_int`: `unavailable` unless Arm's model converter (ML SDK for
  Vulkan) runs here: VGF lowering hands each TOSA partition to the `model-converter`
  executable, which ExecuTorch finds through MODEL_CONVERTER_PATH or on PATH. PyPI's
  `ai_ml_sdk_model_converter==0.10.0` (the pin of executorch's `vgf` extra) installs, but
  its binary needs glibc 2.38 (GLIBC_2.38, GLIBCXX_3.4.32), so it cannot start on an older
  host; 0.9.0 starts but is below ExecuTorch's minimum (0.10.0). The probe runs the
  converter's `--version` and says which. Where a converter runs, the flows lower and end
  `lowered_not_run` (the wheel's runtime has no "VgfBackend"): checked here by hand with
  0.9.0 and the probe bypassed, on a conv/relu/mean/linear model, in both flows. The
  converter is not in requirements.txt: on such a host it would install a binary that
  cannot start.

Vela prints its performance summary to stdout on every compilation (vela.main does so
unconditionally); pytest captures it in the tests, so it shows once, from the warm-up.

Needs `pip install -r backends/arm/requirements.txt` (tosa-tools pins numpy<2.2, so the
backend has an environment of its own: `tox -e arm`); without it every flow is
`unavailable`. Known failures live in expectations.toml beside this file.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from etsuite.backends.arm.tosa_reference import TosaReferenceRuntime
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime
from etsuite.backends.harness.flows.tolerance import FP32, INT8

BACKEND = "arm"

LOWERING_REQUIRES = (
    "torch",
    "executorch",
    "executorch.backends.arm.tosa.partitioner",
    "executorch.backends.arm.quantizer",
    "tosa_serializer",        # lowering writes the TOSA flatbuffer with it (tosa-tools)
)
TOSA_REQUIRES = LOWERING_REQUIRES + (
    "tosa_reference_model",   # the runtime (tosa-tools)
)
ETHOS_U_REQUIRES = LOWERING_REQUIRES + (
    "executorch.backends.arm.ethosu",
    "ethosu.vela",            # the Ethos-U compiler (ethos-u-vela)
)
VGF_REQUIRES = LOWERING_REQUIRES + ("executorch.backends.arm.vgf",)

FP_SPEC = "TOSA-1.0+FP"
INT_SPEC = "TOSA-1.0+INT"

REQUIREMENTS_HINT = ("pip install -r backends/arm/requirements.txt (tosa-tools, ml_dtypes, "
                     "ethos-u-vela; numpy<2.2), or use `tox -e arm` / `make test-arm`")


# What each flow lowers for: a function returning (compile spec, partitioner class,
# quantizer class), imported only when a pipeline runs.

def _tosa_target(profile: str):
    from executorch.backends.arm.quantizer import TOSAQuantizer
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    return TosaCompileSpec(profile), TOSAPartitioner, TOSAQuantizer


def _ethos_u_target(accelerator: str, system_config: str, memory_mode: str):
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.backends.arm.quantizer import EthosUQuantizer

    spec = EthosUCompileSpec(accelerator, system_config=system_config, memory_mode=memory_mode)
    return spec, EthosUPartitioner, EthosUQuantizer


def _vgf_target(profile: str):
    from executorch.backends.arm.quantizer import VgfQuantizer
    from executorch.backends.arm.vgf import VgfCompileSpec, VgfPartitioner

    return VgfCompileSpec(profile), VgfPartitioner, VgfQuantizer


def _partitioners(target):
    def make_partitioners() -> list:
        spec, partitioner, _ = target()
        return [partitioner(spec)]

    return make_partitioners


def _symmetric_int8_quantizer(target):
    """The target's Arm quantizer with Arm's symmetric int8 config (Arm's test default:
    per-channel weights), set globally."""

    def make_quantizer():
        from executorch.backends.arm.quantizer import get_symmetric_quantization_config

        spec, _, quantizer = target()
        return quantizer(spec).set_global(get_symmetric_quantization_config(is_per_channel=True))

    return make_quantizer


def _edge_compile_config():
    """Arm's recipes lower without EXIR's IR validity check: its passes make
    `tosa.CONST_SHAPE` nodes the check does not know (e.g. for `x.mean()` to a 0-d
    tensor, which otherwise fails with StopIteration)."""
    from executorch.exir import EdgeCompileConfig

    return EdgeCompileConfig(_check_ir_validity=False)


def _arm_flow(name: str, description: str, target, *, quantize: bool, runtime,
              requires, enable_hint: str = REQUIREMENTS_HINT, probe=None) -> Flow:
    return Flow(
        name=name,
        backend=BACKEND,
        description=description,
        partitioners=_partitioners(target),
        edge_compile_config=_edge_compile_config,
        quantizer=_symmetric_int8_quantizer(target) if quantize else None,
        tolerance=INT8 if quantize else FP32,
        runtime=runtime,
        requires=requires,
        enable_hint=enable_hint,
        probe=probe,
    )


# --- TOSA: run on the reference model ---------------------------------------------------

ARM_TOSA_FP = _arm_flow(
    "arm_tosa_fp",
    f"{FP_SPEC}: fp32, TOSA partitioner; TOSA reference model (pip install tosa-tools)",
    functools.partial(_tosa_target, FP_SPEC), quantize=False,
    runtime=TosaReferenceRuntime(), requires=TOSA_REQUIRES,
)
ARM_TOSA_INT = _arm_flow(
    "arm_tosa_int",
    (f"{INT_SPEC}: int8 (TOSAQuantizer, symmetric per-channel weights), TOSA "
     "partitioner; TOSA reference model (pip install tosa-tools)"),
    functools.partial(_tosa_target, INT_SPEC), quantize=True,
    runtime=TosaReferenceRuntime(), requires=TOSA_REQUIRES,
)


# --- Ethos-U: lowered with Vela, not run -------------------------------------------------

ETHOS_U_RUNTIME_NAME = "EthosUBackend"   # EthosUBackend.__name__, the delegate's id


def _ethos_u_flow(name: str, accelerator: str, system_config: str, fvp: str) -> Flow:
    where = (f"{accelerator} programs run only on the NPU or on Arm's {fvp} FVP, with "
             "ExecuTorch's arm_executor_runner built from source; this suite has no FVP "
             "runtime (lowering, including Vela's compilation, completed)")
    return _arm_flow(
        name,
        (f"int8 (EthosUQuantizer, symmetric per-channel weights), Ethos-U partitioner, "
         f"Vela for {accelerator} ({system_config}, Shared_Sram); lowered, not run: "
         f"needs the NPU or the {fvp} FVP"),
        functools.partial(_ethos_u_target, accelerator, system_config, "Shared_Sram"),
        quantize=True,
        runtime=ExecuTorchRuntime(ETHOS_U_RUNTIME_NAME, where=where),
        requires=ETHOS_U_REQUIRES,
    )


ARM_ETHOS_U55 = _ethos_u_flow("arm_ethos_u55", "ethos-u55-128", "Ethos_U55_High_End_Embedded",
                              "Corstone-300 (FVP_Corstone_SSE-300_Ethos-U55)")
ARM_ETHOS_U85 = _ethos_u_flow("arm_ethos_u85", "ethos-u85-128", "Ethos_U85_SYS_DRAM_Mid",
                              "Corstone-320 (FVP_Corstone_SSE-320)")


# --- VGF: needs Arm's model converter -----------------------------------------------------

VGF_RUNTIME_NAME = "VgfBackend"
MODEL_CONVERTER = "model-converter"
MODEL_CONVERTER_PACKAGE = "ai_ml_sdk_model_converter==0.10.0"
VGF_ENABLE_HINT = (
    f"on a host with glibc >= 2.38, pip install {MODEL_CONVERTER_PACKAGE} (the pin of "
    "executorch's `vgf` extra) and put its model-converter on PATH (activate the "
    "environment); or build the converter from Arm's ML SDK for Vulkan (ExecuTorch's "
    "examples/arm/setup.sh --enable-mlsdk-deps) and set MODEL_CONVERTER_PATH to it "
    "(MODEL_CONVERTER_LIB_DIR for its libstdc++). Lowered programs then end "
    "lowered_not_run: running them needs an ExecuTorch runtime built with "
    "EXECUTORCH_BUILD_VGF=ON and a Vulkan device with Arm's ML extensions (or the ML "
    "emulation layer for Vulkan)"
)


def _find_model_converter() -> tuple[str | None, bool]:
    """The converter's path, and whether ExecuTorch's VGF backend finds it there: it looks
    at MODEL_CONVERTER_PATH, then for model-converter / model_converter on PATH. One
    installed beside this interpreter (pip's script) but not on PATH is returned too."""
    configured = os.environ.get("MODEL_CONVERTER_PATH")
    if configured and os.path.isfile(configured) and os.access(configured, os.X_OK):
        return configured, True
    for name in (MODEL_CONVERTER, "model_converter"):
        found = shutil.which(name)
        if found:
            return found, True
    beside = Path(sys.executable).parent / MODEL_CONVERTER
    return (str(beside), False) if beside.is_file() else (None, False)


def _converter_version(converter: str) -> tuple[str | None, str]:
    """Run `converter --version` as ExecuTorch would (MODEL_CONVERTER_LIB_DIR before
    LD_LIBRARY_PATH): (its output, "") when it ran, else (None, why not)."""
    env = dict(os.environ)
    lib_dir = env.pop("MODEL_CONVERTER_LIB_DIR", None)
    if lib_dir:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, (lib_dir, env.get("LD_LIBRARY_PATH"))))
    try:
        result = subprocess.run([converter, "--version"], capture_output=True, text=True,
                                timeout=30, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{type(error).__name__}: {error}"
    if result.returncode != 0:
        text = result.stderr + result.stdout
        # The loader's "<binary>: /lib/.../libc.so.6: version `GLIBC_2.38' not found
        # (required by <binary>)", once per missing version: name library and version.
        missing = re.findall(r"([^/\s:]+): version `([^']+)' not found", text)
        if missing:
            return None, "its binary needs " + ", ".join(
                f"{version} (this host's {library} is older)" for library, version in missing)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return None, f"exit {result.returncode}: " + ("; ".join(lines[:3]) or "no output")
    return result.stdout + result.stderr, ""


def _vgf_probe() -> str | None:
    converter, found_by_executorch = _find_model_converter()
    if converter is None:
        return ("Arm's model converter (model-converter, ML SDK for Vulkan) is not on PATH "
                "and MODEL_CONVERTER_PATH is unset: VGF lowering runs it on every TOSA "
                "partition")
    output, failure = _converter_version(converter)
    if output is None:
        return f"Arm's model converter {converter} does not run on this host ({failure})"
    from executorch.backends.arm.vgf.model_converter import (
        MIN_MODEL_CONVERTER_VERSION,
        parse_model_converter_version,
    )

    version = parse_model_converter_version(output)  # ExecuTorch's reading, revisions too
    if version is not None and version < MIN_MODEL_CONVERTER_VERSION:
        return (f"Arm's model converter {converter} is version {version}, below the "
                f"{MIN_MODEL_CONVERTER_VERSION} that ExecuTorch's VGF backend needs")
    if not found_by_executorch:
        return (f"Arm's model converter {converter} runs, but ExecuTorch looks for it only in "
                "MODEL_CONVERTER_PATH and on PATH: activate this environment or set "
                f"MODEL_CONVERTER_PATH={converter}")
    return None


def _vgf_flow(name: str, profile: str, quantize: bool) -> Flow:
    recipe = ("int8 (VgfQuantizer, symmetric per-channel weights)" if quantize else "fp32")
    return _arm_flow(
        name,
        (f"{profile}: {recipe}, VGF partitioner, Arm's model converter; lowered, not run: "
         "needs a runtime with the VGF backend"),
        functools.partial(_vgf_target, profile), quantize=quantize,
        runtime=ExecuTorchRuntime(VGF_RUNTIME_NAME, where=(
            "VGF programs run on a Vulkan device with Arm's ML extensions or the ML "
            "emulation layer for Vulkan, in a runtime built with EXECUTORCH_BUILD_VGF=ON")),
        requires=VGF_REQUIRES, enable_hint=VGF_ENABLE_HINT, probe=_vgf_probe,
    )


ARM_VGF_FP = _vgf_flow("arm_vgf_fp", FP_SPEC, quantize=False)
ARM_VGF_INT = _vgf_flow("arm_vgf_int", INT_SPEC, quantize=True)

FLOWS = [ARM_TOSA_FP, ARM_TOSA_INT, ARM_ETHOS_U55, ARM_ETHOS_U85, ARM_VGF_FP, ARM_VGF_INT]
