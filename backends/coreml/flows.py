"""Core ML flows (Apple): fp32 and static int8 with Core ML's own PT2E quantizer.

Built from ExecuTorch's public Core ML APIs (`executorch.backends.apple.coreml`), the same
recipes as ExecuTorch's own `coreml` and `coreml_static_int8` test flows:

- `coreml`: `CoreMLPartitioner` with `CoreMLBackend.generate_compile_specs(
  minimum_deployment_target=iOS15)`, i.e. the backend's default compile specs (compute
  units ALL, model type MODEL, compute precision FLOAT16: Core ML's own default; the
  exported graph is fp32).
- `coreml_static_int8`: `CoreMLQuantizer` with a coremltools `LinearQuantizerConfig`
  (symmetric, quint8 activations, qint8 per-channel weights), then the partitioner with
  minimum deployment target iOS17 (as ExecuTorch's own int8 test flow and PT2E recipe set).

Both need the `coremltools` package (9.0 verified with torch 2.13 / executorch 1.5.1; it
installs on Linux and lowers there). The ExecuTorch runtime in the PyPI wheel registers no
"CoreMLBackend" on Linux (the delegate is Objective-C++ and is built only for Apple
platforms), so on a Linux host every delegated subtest ends `lowered_not_run` after
serialization; lowering coverage is still measured. With a runtime that registers
"CoreMLBackend" (macOS), the same flows run and compare.

Cost: `CoreMLQuantizer.annotate` builds its pattern graphs anew on every call: 405 strict
`torch.export`s of small conv/linear/batch-norm/binary-op x activation patterns, 99% of the
quantize stage (its time before and after: docs/measurements.md). No public
option skips them (every registered annotator runs for every config). The quantizer factory
here therefore builds the quantizer once per process, and the harness memoizes the
pattern graphs through the module-level hook `_coreml_quantizer_utils._get_aten_graph_module`
(private to ExecuTorch; see backends/harness/case/speedups.py): the graphs depend only on the
pattern, and the annotations, converted graph and quantized weights were checked
byte-identical. The
harness's warm-up quantizes once in the parent, so forked test children inherit the
graphs and quantize without rebuilding them. Known gaps are data: expectations.toml beside this file.
"""

from dataclasses import replace

from etsuite.backends.harness.flows.flow import Flow, delegating_flow
from etsuite.backends.harness.flows.llm_recipes import LlmRecipe

# ETCoreMLStrings.delegateIdentifier in the Core ML runtime delegate, and
# CoreMLBackend.__name__ (the partitioner's backend_id).
RUNTIME_NAME = "CoreMLBackend"
REQUIRES = ("torch", "executorch", "executorch.backends.apple.coreml.partition",
            "executorch.backends.apple.coreml.compiler", "coremltools")
QUANTIZER_REQUIRES = REQUIRES + ("executorch.backends.apple.coreml.quantizer",
                                 "coremltools.optimize.torch")
ENABLE_HINT = "pip install -r backends/coreml/requirements.txt (coremltools==9.0)"


def _partitioners_for(target_name: str):
    """A factory of the Core ML partitioner with the backend's default compile specs for
    the minimum deployment target `target_name` (a coremltools `ct.target` member)."""

    def make_partitioners() -> list:
        import coremltools as ct
        from executorch.backends.apple.coreml.compiler import CoreMLBackend
        from executorch.backends.apple.coreml.partition import CoreMLPartitioner

        specs = CoreMLBackend.generate_compile_specs(
            minimum_deployment_target=getattr(ct.target, target_name))
        return [CoreMLPartitioner(compile_specs=specs)]

    return make_partitioners


_QUANTIZER = None


def _static_int8_quantizer():
    """Core ML's PT2E quantizer with a static int8 linear config (symmetric, quint8
    activations, qint8 per-channel weights), built once per process."""
    global _QUANTIZER
    if _QUANTIZER is None:
        import coremltools as ct
        import torch
        from executorch.backends.apple.coreml.quantizer import CoreMLQuantizer

        config = ct.optimize.torch.quantization.LinearQuantizerConfig(
            global_config=ct.optimize.torch.quantization.ModuleLinearQuantizerConfig(
                quantization_scheme="symmetric",
                activation_dtype=torch.quint8,
                weight_dtype=torch.qint8,
                weight_per_channel=True,
            )
        )
        _QUANTIZER = CoreMLQuantizer(config)
    return _QUANTIZER


def _coreml_flow(name: str, description: str, target_name: str, quantizer=None,
                 requires=REQUIRES) -> Flow:
    return delegating_flow(
        name, "coreml", description, partitioners=_partitioners_for(target_name),
        quantizer=quantizer, runtime_backend=RUNTIME_NAME, requires=requires,
        enable_hint=ENABLE_HINT,
    )


COREML = _coreml_flow("coreml", "fp32 graph, default compile specs (iOS15)", "iOS15")
COREML_STATIC_INT8 = _coreml_flow(
    "coreml_static_int8",
    "static int8: quint8 activations, qint8 per-channel weights (CoreMLQuantizer, iOS17)",
    "iOS17", quantizer=_static_int8_quantizer, requires=QUANTIZER_REQUIRES,
)

# ExecuTorch's Core ML LLM recipe (lfm2/config/lfm2_coreml_fp32.yaml): Core ML's own SDPA
# and static KV-cache source transformations (iOS 18), export_llama's Core ML partitioner
# for it; over the LLM suite only (lowered_not_run on a host without CoreMLBackend).
_LLM_RECIPE = LlmRecipe("lfm2/config/lfm2_coreml_fp32.yaml")
COREML_LLM_STATIC_CACHE = replace(
    _coreml_flow("coreml_llm_static_cache", "fp32, Core ML SDPA and static KV cache, iOS18 "
                 f"(ExecuTorch recipe {_LLM_RECIPE.describe()})", "iOS18"),
    partitioners=_LLM_RECIPE.coreml_partitioners, source_transform=_LLM_RECIPE,
    suites=("llm",))

FLOWS = [COREML, COREML_STATIC_INT8, COREML_LLM_STATIC_CACHE]
