"""Cadence Xtensa DSP (HiFi/Fusion) flow: int8 PT2E, operators rewritten to cadence kernels.

Built from ExecuTorch's public Cadence AOT API: `CadenceDefaultQuantizer` (int8), then
what `quantize_and_export_to_cadence` does (quantized-pattern fusion, `to_edge`, Cadence's
edge passes, which replace quantized patterns by `cadence::` operators) and Cadence's
memory planning in `to_executorch`. Like Cortex-M, Cadence delegates nothing: the program
calls Cadence kernels directly. ExecuTorch's own suite has no Cadence flow, so the flow
carries the backend's name.

Where it gets on a Linux x86_64 host with PyPI packages only: the quantizer imports, but
the Cadence compiler does not on Python 3.11: executorch/backends/cadence/aot/fuse_ops.py
imports `typing.override` (Python 3.12+), so importing
`executorch.backends.cadence.aot.compiler` raises "ImportError: cannot import name
'override' from 'typing'". The probe checks the interpreter version first. Beyond that,
this suite cannot express Cadence's lowering (its pipeline lowers with plain
`to_edge_transform_and_lower` and the default `to_executorch`; Cadence needs its own
passes and memory planning, i.e. a lowering hook), and the ExecuTorch runtime in the PyPI
wheel has no cadence kernels: programs run on an Xtensa DSP or simulator, or on the
host through `cadence_runner` built from ExecuTorch source
(backends/cadence/build_cadence_runner.sh). So the flow is `unavailable` either way.
"""

from __future__ import annotations

import sys

from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.tolerance import INT8

BACKEND = "cadence"
REQUIRES = ("torch", "executorch", "torchao", "executorch.backends.cadence.aot.compiler",
            "executorch.backends.cadence.aot.quantizer.quantizer")
ENABLE_HINT = (
    "use Python 3.12+; the flow also needs a lowering hook in the suite's pipeline "
    "(quantize_and_export_to_cadence's passes and Cadence memory planning) and a runtime "
    "with cadence kernels (cadence_runner from backends/cadence/build_cadence_runner.sh, "
    "or an Xtensa DSP / simulator)"
)
NO_LOWERING_HOOK = (
    "this suite cannot lower or run Cadence programs yet: its pipeline lowers with plain "
    "to_edge_transform_and_lower (Cadence rewrites ops with its own edge passes and memory "
    "planning) and the ExecuTorch runtime here has no cadence kernels (cadence_runner is "
    "built from source)"
)


def _probe(version=sys.version_info) -> str | None:
    if tuple(version[:2]) < (3, 12):
        return (f"executorch.backends.cadence.aot needs Python 3.12+ (fuse_ops.py imports "
                f"typing.override); this is Python {version[0]}.{version[1]}: 'ImportError: "
                f"cannot import name 'override' from 'typing''")
    return NO_LOWERING_HOOK


def _quantizer():
    from executorch.backends.cadence.aot.quantizer.quantizer import CadenceDefaultQuantizer

    return CadenceDefaultQuantizer()


CADENCE = Flow(
    name="cadence",
    backend=BACKEND,
    description=("int8 (CadenceDefaultQuantizer), ops rewritten to cadence:: kernels; runs on "
                 "an Xtensa DSP or cadence_runner"),
    quantizer=_quantizer,
    tolerance=INT8,
    requires=REQUIRES,
    enable_hint=ENABLE_HINT,
    probe=_probe,
)

FLOWS = [CADENCE]
