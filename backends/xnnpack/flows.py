"""XNNPACK flows: fp32 and three int8 recipes, built from ExecuTorch's public quantizer
and partitioner APIs.

Known gaps are data: expectations.toml beside this file (strict known failures with the
status they fail with, skips, cases that must be delegated).
"""

from dataclasses import replace

from etsuite.backends.harness.flows.flow import Flow, delegating_flow
from etsuite.backends.harness.flows.llm_recipes import LlmRecipe
from etsuite.backends.harness.flows.tolerance import FP32, Tolerance, quantized_rule

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


# Output rules by recipe (tolerance.py). int8: SQNR against eager plus a per-element
# bound of 32 steps (range/255), which a healthy int8 Linear(1, 512) needs (about 18 steps
# at SQNR 38 dB) and a flipped sign or a wrong scale exceeds.
STATIC_INT8 = quantized_rule("int8 static", min_sqnr_db=20.0)
# Backend fidelity is not judged on the dynamic flow yet (case/fidelity.py): XNNPACK
# quantizes a dynamic linear's activations per row, the PT2E program per tensor, so the
# program run eagerly is not what the backend computes (its outputs sit within a few times
# the reference's own quantization error, docs/measurements.md); fp32 eager judges alone.
DYNAMIC_INT8 = quantized_rule("int8 dynamic", min_sqnr_db=20.0, fidelity_steps=None)


def _xnnpack_flow(name: str, description: str, quantizer=None,
                  tolerance: Tolerance = FP32) -> Flow:
    return delegating_flow(
        name, "xnnpack", description, partitioners=_partitioners, quantizer=quantizer,
        runtime_backend=RUNTIME_NAME, requires=REQUIRES, tolerance=tolerance,
    )


XNNPACK = _xnnpack_flow("xnnpack", "fp32")
XNNPACK_DYNAMIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_dynamic_int8_per_channel",
    "dynamic int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=True), DYNAMIC_INT8,
)
XNNPACK_STATIC_INT8_PER_CHANNEL = _xnnpack_flow(
    "xnnpack_static_int8_per_channel",
    "static int8 activations, per-channel int8 weights",
    _symmetric_int8(per_channel=True, dynamic=False), STATIC_INT8,
)
XNNPACK_STATIC_INT8_PER_TENSOR = _xnnpack_flow(
    "xnnpack_static_int8_per_tensor",
    "static int8 activations and weights, per-tensor",
    _symmetric_int8(per_channel=False, dynamic=False), STATIC_INT8,
)


def _llm_flow(name: str, description: str, recipe: LlmRecipe, tolerance: Tolerance) -> Flow:
    """One of ExecuTorch's LLM recipes (llm_recipes.py): its source transformations and
    export_llama's XNNPACK partitioners for it, over the LLM suite only."""
    flow = _xnnpack_flow(name, f"{description} (ExecuTorch recipe {recipe.describe()})",
                         tolerance=tolerance)
    return replace(flow, partitioners=recipe.xnnpack_partitioners, source_transform=recipe,
                   suites=("llm",))


# The LLM recipes' rules: every step's SQNR against the untransformed eager model must
# reach the floor, and every logit be within `steps` steps of range/255. Measured healthy
# (2026-12-02, seed 748064 and the next run's, Llama GQA static and MHA one-step prefill,
# plus the dynamic-prefill Llamas for g32, every Llama case for the KV cache): the lowest
# step SQNR and the worst error in steps; a floor is about 6 dB under the lowest, a bound
# about 3x the worst. A lost or misplaced cache write gives SQNR near 0 dB at its step.
RECIPE_8DA4W_G32 = quantized_rule("8da4w g32 recipe", min_sqnr_db=15.0, steps=32)      # 21.8 dB, 9.7 steps
RECIPE_8DA4W_G128 = quantized_rule("8da4w g128 recipe", min_sqnr_db=30.0, steps=8)     # 37.0 dB, 1.7 steps
RECIPE_8DA4W_QE4 = quantized_rule("8da4w + 4-bit embeddings recipe", min_sqnr_db=12.0,
                                  steps=32)                                            # 17.6 dB, 11.3 steps
RECIPE_8DA4W_QE8 = quantized_rule("8da4w + 8-bit embeddings recipe", min_sqnr_db=30.0,
                                  steps=8)                                             # 36.3 dB, 1.7 steps
RECIPE_QUANTIZED_KV = quantized_rule("int8 KV cache recipe", min_sqnr_db=45.0, steps=4)  # 51.9 dB, 0.5 steps

# ExecuTorch's XNNPACK LLM recipes (executorch/examples/models/*/config/*.yaml): one flow
# per distinct set of settings (llm_recipes.recipe_settings); names after export_llama's
# options and ExecuTorch's llama-runner CI jobs. `dq`: the recipe enables XNNPACK without
# extended_ops, so only the dynamically quantized linears are delegated. At the LLM
# suite's dim 64, a group size of 128 (the 8da4w default) quantizes only the Linear layers
# whose input is a multiple of 128 (the FFN down projections), as export_llama's filter does.
LLM_FLOWS = [
    _llm_flow("xnnpack_llm_custom", "custom SDPA and KV-cache update ops, fp32",
              LlmRecipe("lfm2/config/lfm2_xnnpack_fp32.yaml"), FP32),
    _llm_flow("xnnpack_llm_custom_quantize_kv", "custom ops, int8 quantized KV cache",
              LlmRecipe("lfm2/config/lfm2_xnnpack_fp32.yaml",
                        {"model.quantize_kv_cache": True}), RECIPE_QUANTIZED_KV),
    _llm_flow("xnnpack_llm_8da4w", "custom ops, int8 dynamic activations, int4 weights "
              "in groups of 32", LlmRecipe("qwen3/config/qwen3_multimethod.yaml"), RECIPE_8DA4W_G32),
    _llm_flow("xnnpack_llm_8da4w_g128", "custom ops, 8da4w in groups of 128",
              LlmRecipe("lfm2/config/lfm2_xnnpack_q8da4w.yaml"), RECIPE_8DA4W_G128),
    _llm_flow("xnnpack_llm_8da4w_qe4", "custom ops, 8da4w (groups of 128), 4-bit "
              "embeddings in groups of 32", LlmRecipe("llama/config/llama_xnnpack.yaml"),
              RECIPE_8DA4W_QE4),
    _llm_flow("xnnpack_llm_8da4w_qe8", "custom ops, 8da4w (groups of 128), 8-bit "
              "embeddings", LlmRecipe("qwen3/config/qwen3_xnnpack_q8da4w.yaml"), RECIPE_8DA4W_QE8),
    _llm_flow("xnnpack_llm_dq_custom", "custom ops, fp32, dynamically quantized ops only "
              "(none here)", LlmRecipe("phi_4_mini/config/phi_4_mini_xnnpack.yaml"), FP32),
    _llm_flow("xnnpack_llm_dq_8da4w_g128", "custom ops, 8da4w in groups of 128, "
              "dynamically quantized ops only",
              LlmRecipe("qwen2_5/config/qwen2_5_xnnpack_q8da4w.yaml"), RECIPE_8DA4W_G128),
    _llm_flow("xnnpack_llm_dq_fp16_8da4w_qe4", "fp16, custom ops, 8da4w (groups of 128), "
              "4-bit embeddings, dynamically quantized ops only",
              LlmRecipe("deepseek-r1-distill-llama-8B/config/deepseek_xnnpack_q8da4w.yaml"),
              RECIPE_8DA4W_QE4),
]

FLOWS = [
    XNNPACK,
    XNNPACK_DYNAMIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_CHANNEL,
    XNNPACK_STATIC_INT8_PER_TENSOR,
    *LLM_FLOWS,
]

# What the warm process (harness/warm/server.py) lowers before it serves runs, as groups
# of flow names lowered together (one floating-point and one quantizing flow per group):
# every operator flow of XNNPACK, so that a session of any of them finds its flow primed.
PRIMING = [["xnnpack", "xnnpack_static_int8_per_tensor"],
           ["xnnpack_dynamic_int8_per_channel"], ["xnnpack_static_int8_per_channel"]]
