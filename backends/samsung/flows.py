"""Samsung Exynos (ENN) flow: fp32, ENN partitioner for the Exynos 2500 (E9955) NPU.

Built from ExecuTorch's public Samsung APIs: `EnnPartitioner` with the compile spec of
`gen_samsung_backend_compile_spec("E9955")`, as ExecuTorch's Samsung operator tests do for
fp32. ExecuTorch's own suite has no Samsung flow, so the flow carries the backend's name.

Where it gets on a Linux x86_64 host with PyPI packages only: nowhere. The partitioner
and ENN's preprocess import the native adaptor
`executorch.backends.samsung.python.PyEnnWrapperAdaptor`, which the PyPI wheel does not
ship ("ModuleNotFoundError: No module named 'executorch.backends.samsung.python'"): it is
built from ExecuTorch source against Samsung's Exynos AI LiteCore SDK (not on PyPI), and
it loads that SDK's libraries when it compiles. So the flow requires the adaptor and, by
its probe, an SDK named by EXYNOS_AI_LITECORE_ROOT; it is `unavailable` here. (The
quantizer, EnnQuantizer, does import.) With both, the ExecuTorch runtime in the PyPI
wheel has no "EnnBackend" (programs run on Exynos devices), so lowered subtests would end
`lowered_not_run`. Samsung's own lowering helper also passes an edge compile config
(`_skip_dim_order=True`, a non-core-op exception list) that this suite's pipeline does not
pass; cases that differ only by that would fail here and not there.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from etsuite.backends.harness.flows.flow import delegating_flow

BACKEND = "samsung"
CHIPSET = "E9955"
RUNTIME_NAME = "EnnBackend"
REQUIRES = ("torch", "executorch", "executorch.backends.samsung.partition.enn_partitioner",
            "executorch.backends.samsung.python.PyEnnWrapperAdaptor")  # native, source build
ENABLE_HINT = (
    "download Samsung's Exynos AI LiteCore SDK, export EXYNOS_AI_LITECORE_ROOT=<sdk> "
    "LD_LIBRARY_PATH=$EXYNOS_AI_LITECORE_ROOT/lib/x86_64-linux:$LD_LIBRARY_PATH, and build "
    "ExecuTorch from source with the Samsung backend (backends/samsung/build.sh --sdk "
    "$EXYNOS_AI_LITECORE_ROOT), which adds executorch.backends.samsung.python"
    ".PyEnnWrapperAdaptor"
)


def _probe() -> str | None:
    root = os.environ.get("EXYNOS_AI_LITECORE_ROOT")
    if not root:
        return "EXYNOS_AI_LITECORE_ROOT is not set (the Exynos AI LiteCore SDK ENN compiles with)"
    if not Path(root).is_dir():
        return f"EXYNOS_AI_LITECORE_ROOT={root} is not a folder"
    return None


def _partitioners() -> list:
    from executorch.backends.samsung.partition.enn_partitioner import EnnPartitioner
    from executorch.backends.samsung.serialization.compile_options import (
        gen_samsung_backend_compile_spec,
    )

    return [EnnPartitioner([gen_samsung_backend_compile_spec(CHIPSET)])]


SAMSUNG = replace(
    delegating_flow(
        "samsung", BACKEND, f"fp32, ENN partitioner, Exynos {CHIPSET}",
        partitioners=_partitioners, runtime_backend=RUNTIME_NAME, requires=REQUIRES,
        enable_hint=ENABLE_HINT,
    ),
    probe=_probe,
)

FLOWS = [SAMSUNG]
