"""Apple MLX flow: fp32, MLX partitioner; MLX programs run on macOS with Apple silicon.

Built from ExecuTorch's public `MLXPartitioner` with default compile specs, as ExecuTorch's
own suite does (flow name `mlx`, ExecuTorch's).

Where it gets on a Linux x86_64 host with PyPI packages only: nowhere. The Linux
executorch 1.5.1 wheel ships the MLX delegate's Python code without the files its build
generates from schema.fbs (executorch/backends/mlx/serialization/mlx_graph_schema.py and
the flatbuffer bindings), so importing `MLXPartitioner` raises "ImportError: MLX delegate
generated files not found. Run 'python install_executorch.py' first." The probe looks for
that file, so the flow is `unavailable` here. (Lowering itself is not tied to macOS:
with those files generated, as a source install does, MLXPartitioner lowers add and
linear on Linux; the ExecuTorch runtime here has no "MLXBackend", so such programs would
end `lowered_not_run`. The `mlx` package from PyPI is not what is missing: the
partitioner does not import it.)
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

from etsuite.backends.harness.flows.flow import delegating_flow
from etsuite.backends.harness.flows.llm_recipes import LlmRecipe

BACKEND = "mlx"
RUNTIME_NAME = "MLXBackend"
GENERATED_SCHEMA = ("backends", "mlx", "serialization", "mlx_graph_schema.py")
REQUIRES = ("torch", "executorch", "executorch.backends.mlx.partitioner")
ENABLE_HINT = (
    "use an executorch built with the MLX delegate (install_executorch.py from source "
    "generates backends/mlx/serialization/mlx_graph_schema.py); programs run on macOS "
    "with Apple silicon, where the runtime registers 'MLXBackend'"
)


def generated_schema_problem() -> str | None:
    """Why MLXPartitioner cannot be imported here, or None. Looks at paths only."""
    spec = importlib.util.find_spec("executorch")
    roots = list(spec.submodule_search_locations or []) if spec else []
    if any(Path(root, *GENERATED_SCHEMA).is_file() for root in roots):
        return None
    return ("this executorch ships the MLX delegate without its generated serialization "
            "schema (executorch/backends/mlx/serialization/mlx_graph_schema.py): importing "
            "MLXPartitioner raises 'ImportError: MLX delegate generated files not found'")


def _partitioners() -> list:
    from executorch.backends.mlx.partitioner import MLXPartitioner

    return [MLXPartitioner()]


MLX = replace(
    delegating_flow(
        "mlx", BACKEND, "fp32, MLXPartitioner; runs on macOS with Apple silicon",
        partitioners=_partitioners, runtime_backend=RUNTIME_NAME, requires=REQUIRES,
        enable_hint=ENABLE_HINT,
    ),
    probe=generated_schema_problem,
)

# ExecuTorch's MLX LLM recipe (lfm2/config/lfm2_mlx_4w.yaml: bf16, int4 weight-only in
# groups of 64, MLX's attention and KV-cache transformations), over the LLM suite only.
MLX_LLM_4W = replace(
    MLX, name="mlx_llm_4w",
    description="bf16, 4-bit weights in groups of 64, MLX attention and KV cache "
                "(ExecuTorch recipe lfm2/config/lfm2_mlx_4w.yaml)",
    source_transform=LlmRecipe("lfm2/config/lfm2_mlx_4w.yaml"), suites=("llm",))

FLOWS = [MLX, MLX_LLM_4W]
