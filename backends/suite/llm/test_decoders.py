"""Tiny LLM decoders with their KV cache in mutable buffers (decoders.py): a prefill, then
decode steps, every step on one loaded method so the runtime carries the cache, judged
step by step against the eager module ("diverges at step k" when one fails).

ExecuTorch's own Llama (GQA and MHA, static and dynamic prefill, without a cache), two of
ExecuTorch's Llama-family configs (Qwen3's q/k norm, Phi-4-mini's partial RoPE), and
Hugging Face decoders behind transformers' ExecuTorch static-cache wrappers (Qwen3,
Gemma 2 and 3 with sliding windows, Phi-3, and the T5 and Whisper decoders with
cross-attention). Random seeded weights, nothing downloaded.
"""

import importlib.util

import pytest

from . import decoders

# name -> (builder, keyword arguments): each builds a fresh module and its steps. A dynamic
# prefill starts at 2 tokens: an example of length 1 makes export specialize the length.
CASES = {
    "llama_gqa_static": (decoders.llama_kv_static, dict(n_kv_heads=2, prefill_len=3)),
    "llama_mha_static": (decoders.llama_kv_static, dict(n_kv_heads=4, prefill_len=3)),
    "llama_gqa_dynamic_prefill2": (decoders.llama_kv_dynamic, dict(n_kv_heads=2, prefill_len=2)),
    "llama_gqa_dynamic_prefill4": (decoders.llama_kv_dynamic, dict(n_kv_heads=2, prefill_len=4)),
    "llama_gqa_dynamic_prefill7": (decoders.llama_kv_dynamic, dict(n_kv_heads=2, prefill_len=7)),
    "llama_mha_positions": (decoders.llama_kv_positions, dict(n_kv_heads=4, prefill_len=4)),
    "llama_gqa_no_cache": (decoders.llama_no_kv, dict(n_kv_heads=2, prefill_len=4)),
    "llama_qwen3_static": (decoders.llama_kv_static, dict(prefill_len=3, family="qwen3")),
    "llama_phi_4_mini_static": (decoders.llama_kv_static,
                                dict(prefill_len=3, family="phi_4_mini")),
    "hf_qwen3_static": (decoders.qwen3, dict(prefill_len=3)),
    "hf_qwen3_dynamic": (decoders.qwen3, dict(prefill_len=4, dynamic=True)),
    "hf_gemma2_static": (decoders.gemma2, dict(prefill_len=3)),
    "hf_gemma3_static": (decoders.gemma3, dict(prefill_len=3)),
    "hf_phi3_static": (decoders.phi3, dict(prefill_len=3)),
    "hf_t5_decoder_static": (decoders.t5_decoder, dict(prefill_len=2)),
    "hf_whisper_decoder_static": (decoders.whisper_decoder, dict(prefill_len=2)),
}

NEEDS_TRANSFORMERS = {name for name in CASES if name.startswith("hf_")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_decoder(test_runner, case):
    if case in NEEDS_TRANSFORMERS and importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    builder, arguments = CASES[case]
    decoder = builder(**arguments)
    test_runner.lower_and_run_steps(decoder.module, decoder.steps,
                                    dynamic_shapes=decoder.dynamic_shapes,
                                    next_token_logits=0)
