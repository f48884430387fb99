"""The undelegated baseline: no partitioner, every op on ExecuTorch's portable kernels.

Every backend is compared against it: a case that fails here fails for reasons no backend
can fix (export, edge dialect or portable kernel gaps). Its known failures are in
expectations.toml beside this file.
"""

from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.llm_recipes import LlmRecipe
from etsuite.backends.harness.flows.tolerance import quantized_rule

PORTABLE = Flow(
    name="portable",
    backend="portable",
    description="no delegation; portable kernels",
)

# ExecuTorch's bf16 LLM recipe (no backend: portable and its custom SDPA ops), over the LLM
# suite only; ExecuTorch's llama-runner CI job `bf16, custom`. Its rule: every step's SQNR
# against the fp32 eager model and a bound in steps of range/255, set from a healthy run
# (2026-12-02: lowest step SQNR 43.6 dB, worst 0.96 steps, over the static, dynamic,
# Qwen3- and Phi-4-mini-style Llamas), a floor about 6 dB under it.
RECIPE_BF16 = quantized_rule("bf16 recipe", min_sqnr_db=38.0, steps=4)
PORTABLE_LLM_CUSTOM_BF16 = Flow(
    name="portable_llm_custom_bf16",
    backend="portable",
    description="bf16, custom SDPA and KV-cache ops (ExecuTorch recipe llama/config/llama_bf16.yaml)",
    source_transform=LlmRecipe("llama/config/llama_bf16.yaml"),
    suites=("llm",),
    tolerance=RECIPE_BF16,
)

# ExecuTorch's 8da4w recipe without a backend (llama/config/llama_q8da4w.yaml: int4
# groupwise weights with dynamic int8 activations, 4-bit embeddings, no KV cache setting).
PORTABLE_LLM_8DA4W_QE4 = Flow(
    name="portable_llm_8da4w_qe4",
    backend="portable",
    description="8da4w (groups of 128), 4-bit embeddings, portable kernels (ExecuTorch "
                "recipe llama/config/llama_q8da4w.yaml)",
    source_transform=LlmRecipe("llama/config/llama_q8da4w.yaml"),
    suites=("llm",),
    tolerance=quantized_rule("8da4w + 4-bit embeddings recipe", min_sqnr_db=12.0, steps=32),
)

FLOWS = [PORTABLE, PORTABLE_LLM_CUSTOM_BF16, PORTABLE_LLM_8DA4W_QE4]

# The warm process primes with this flow (lowers and runs it end to end, which also loads
# the runtime) before it serves runs: see PRIMING in xnnpack/flows.py.
PRIMING = [["portable"]]
