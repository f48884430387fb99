"""Tiny decoder LLMs that keep a KV cache in mutable buffers, and the step sequences that
drive them: a prefill, then single-token decode steps at the following positions.

Every builder returns a `Decoder`: the module (eval mode, parameters without gradients),
its steps (a list of input tuples, plain tensors) and the dynamic shapes to export it with
(None for a static program). A `Decoder` unpacks as `module, steps, dynamic_shapes`.
The program is meant to be exported from a copy of the module in its initial state with
`steps[0]` as the example inputs, loaded once, and each step executed on that one method,
so the runtime carries the cache from step to step as the eager module does.

Exporting them (checked with torch 2.13, executorch 1.5.1, transformers 5.24):
- under `torch.no_grad()`: with gradients on, `to_edge` fails on the `copy_` into the cache;
- non-strict `torch.export.export` works for every builder here (strict too);
- a dynamic Dim whose example (steps[0]) has size 1 is specialised by export ("marked
  seq as dynamic but your code specialized it to be a constant (1)"); under
  `torch.fx.experimental._config.patch(backed_size_oblivious=True)` the Llama exports but
  to_edge's verifier then fails, and Qwen3 does not export. So the dynamic builders take
  prefill_len >= 2 (ValueError otherwise) and a one-token prompt is a static builder's;
- lower a fresh export for each flow: lowering deepcopies of one export, portable and
  then XNNPACK, failed on XNNPACK for `llama_kv_dynamic` (`PendingUnbackedSymbolNotFound`
  for its `.item()` symbols), while XNNPACK on a fresh export works.

Weights are the libraries' random initialisation and tokens come from `torch.randint`:
both deterministic under `torch.manual_seed`. Nothing is downloaded; every config is
explicit and tiny (hidden size 64, 2 layers, 4 heads, vocabulary 128, context 64).

Families:
- ExecuTorch's own Llama (`executorch.examples.models.llama`): GQA or MHA, RoPE, SwiGLU,
  with its KV cache in three export styles (`llama_kv_static`, `llama_kv_dynamic`,
  `llama_kv_positions`) and without a cache (`llama_no_kv`, stateless, growing prefix);
  `family="qwen3"` or `"phi_4_mini"` gives the features of ExecuTorch's examples of those
  names, which are the same Transformer with other `ModelArgs`.
- Hugging Face `transformers` decoders behind its ExecuTorch static-cache wrappers
  (`transformers.integrations.executorch`): Qwen3 (q/k RMSNorm, GQA), Gemma 2 (sliding
  window, attention and final logit softcapping, tied embeddings), Gemma 3 (sliding window
  with its own RoPE base, q/k norm, tied embeddings), Phi-3 (fused qkv and gate-up
  projections); and the decoders of T5 and Whisper (cross-attention over given encoder
  states).
"""

import dataclasses
import re
from typing import Any

import torch

VOCAB = 128
MAX_SEQ_LEN = 64  # the cache's length, and the longest sequence a dynamic Dim allows
N_DECODE = 8

Step = tuple[torch.Tensor, ...]


@dataclasses.dataclass
class Decoder:
    """A stateful module and the steps to drive it.

    `stateful`: whether outputs depend on earlier steps (False for `llama_no_kv`, whose
    every step carries the whole prefix). `cache_buffers`: the names of the module's
    buffers that a step mutates (the KV cache, and transformers' cache lengths)."""

    name: str
    module: torch.nn.Module
    steps: list[Step]
    dynamic_shapes: Any = None
    stateful: bool = True
    cache_buffers: tuple[str, ...] = ()

    def __iter__(self):
        return iter((self.module, self.steps, self.dynamic_shapes))


def decode_steps(prefill_len: int, n_decode: int = N_DECODE, vocab: int = VOCAB, *,
                 positions: str | None = "each", prefill: str = "chunk",
                 prefix: bool = False, start: int = 0,
                 generator: torch.Generator | None = None) -> list[Step]:
    """A prompt of `prefill_len` random tokens, then `n_decode` single-token steps.

    prefill: "chunk" gives the prompt as one step of shape [1, prefill_len];
        "tokenwise" as `prefill_len` steps of one token (for a program with static shapes).
    positions: what each step carries besides its tokens [1, L]:
        "each"  - the positions of its tokens, arange(p, p + L) (ExecuTorch's static-shape
                  Llama `input_pos`, transformers' `cache_position`);
        "start" - the position of its first token, tensor([p]) (ExecuTorch's Llama with
                  `enable_dynamic_shape`);
        None    - nothing (a step is `(tokens,)`).
    prefix: each step's tokens are the whole sequence so far, [1, p + L] (a model without
        a cache); use with positions=None.
    Decode tokens are drawn in advance, not sampled from the model, so the sequence does not
    depend on the outputs being compared. `start` offsets every position."""
    if prefill_len < 1 or n_decode < 0:
        raise ValueError(f"prefill_len must be >= 1 and n_decode >= 0, got {prefill_len}, {n_decode}")
    if prefill not in ("chunk", "tokenwise"):
        raise ValueError(f"prefill must be 'chunk' or 'tokenwise', got {prefill!r}")
    if positions not in ("each", "start", None):
        raise ValueError(f"positions must be 'each', 'start' or None, got {positions!r}")
    tokens = torch.randint(0, vocab, (1, prefill_len + n_decode), generator=generator)
    lengths = [prefill_len] if prefill == "chunk" else [1] * prefill_len
    lengths += [1] * n_decode
    steps = []
    p = 0
    for length in lengths:
        chunk = tokens[:, :p + length] if prefix else tokens[:, p:p + length]
        step: tuple[torch.Tensor, ...] = (chunk.clone(),)
        if positions == "each":
            step += (torch.arange(start + p, start + p + length),)
        elif positions == "start":
            step += (torch.tensor([start + p]),)
        steps.append(step)
        p += length
    return steps


def _dynamic_prefill(prefill_len):
    """A dynamic program is exported from its first step: a prompt of one token would be
    an example of size 1, which export specialises (see the module's notes)."""
    if prefill_len < 2:
        raise ValueError(f"a dynamic prefill needs prefill_len >= 2 (got {prefill_len}): export "
                         "specialises a dynamic dim whose example has size 1; use the "
                         "static builder for a one-token prompt")
    return prefill_len


def _frozen(module: torch.nn.Module) -> torch.nn.Module:
    module.eval()
    for parameter in module.parameters():
        parameter.requires_grad_(False)
    return module


def _seq_dim(name="seq", min=1, max=MAX_SEQ_LEN - 1):
    # max is one below the cache: ExecuTorch's own export does the same (a Dim reaching
    # max_seq_len trips a guard on the narrowed cache).
    return torch.export.Dim(name, min=min, max=max)


_CACHE_BUFFER = re.compile(r"k_cache|v_cache|(key_cache|value_cache|cumulative_length)_\d+")


def _cache_buffers(module: torch.nn.Module) -> tuple[str, ...]:
    """The names of the buffers a step writes: ExecuTorch's KVCache (k_cache, v_cache) and
    transformers' ExecuTorch wrappers (key_cache_<i>, value_cache_<i>, cumulative_length_<i>)."""
    return tuple(n for n, _ in module.named_buffers()
                 if _CACHE_BUFFER.fullmatch(n.rsplit(".", 1)[-1]))


# --- ExecuTorch's Llama --------------------------------------------------------------

class LlamaWithCache(torch.nn.Module):
    """ExecuTorch's `Transformer` with plain tensor inputs: `forward(tokens, input_pos)` ->
    logits of the last token, [1, vocab]."""

    def __init__(self, transformer):
        super().__init__()
        self.model = transformer

    def forward(self, tokens, input_pos):
        return self.model(tokens, {"input_pos": input_pos})


class LlamaWithoutCache(torch.nn.Module):
    """ExecuTorch's `Transformer` built with use_kv_cache=False: `forward(tokens)` ->
    logits of the last token."""

    def __init__(self, transformer):
        super().__init__()
        self.model = transformer

    def forward(self, tokens):
        return self.model(tokens)


# ExecuTorch's other decoder examples (examples/models/qwen3, phi_4_mini, ...) are this
# same Transformer with other ModelArgs: the features that set them apart, at tiny dims.
LLAMA_FAMILIES = {
    "llama": {},
    # Qwen3: RMSNorm on q and k per head before RoPE, Hugging Face RoPE layout
    "qwen3": {"use_qk_norm": True, "qk_norm_before_rope": True, "use_hf_rope": True},
    # Phi-4-mini: RoPE on 3/4 of each head, Hugging Face RoPE layout
    "phi_4_mini": {"partial_rotary_factor": 0.75, "use_hf_rope": True},
}


def llama_args(n_kv_heads=2, family="llama", **overrides):
    """A tiny `ModelArgs` (dim 64, 2 layers, 4 heads, FFN 128, vocab 128, context 64),
    with the features of one of `LLAMA_FAMILIES`."""
    from executorch.examples.models.llama.model_args import ModelArgs

    fields = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": n_kv_heads,
              "vocab_size": VOCAB, "hidden_dim": 128, "max_seq_len": MAX_SEQ_LEN,
              "max_context_len": MAX_SEQ_LEN, "max_batch_size": 1}
    fields.update(LLAMA_FAMILIES[family])
    fields.update(overrides)
    return ModelArgs(**fields)


def _llama(args, wrapper):
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    return _frozen(wrapper(construct_transformer(args)))


def _llama_name(kind, n_kv_heads, prefill_len, args):
    family = args.get("family", "llama")
    prefix = "llama" if family == "llama" else f"llama_{family}"
    return f"{prefix}_{kind}_kv{n_kv_heads}_p{prefill_len}"


def llama_kv_static(n_kv_heads=2, prefill_len=4, n_decode=N_DECODE, **args) -> Decoder:
    """ExecuTorch's default Llama program: KV cache, static shapes (tokens [1, 1],
    input_pos [1]); the prompt is fed one token per step. n_kv_heads 2 is GQA, 4 MHA;
    `family` and other keywords go to `llama_args`."""
    module = _llama(llama_args(n_kv_heads, use_kv_cache=True, **args), LlamaWithCache)
    steps = decode_steps(prefill_len, n_decode, prefill="tokenwise", positions="each")
    return Decoder(_llama_name("kv_static", n_kv_heads, prefill_len, args), module, steps, None,
                   cache_buffers=_cache_buffers(module))


def llama_kv_dynamic(n_kv_heads=2, prefill_len=4, n_decode=N_DECODE, **args) -> Decoder:
    """Llama with `enable_dynamic_shape`: the prompt in one step, tokens [1, L] with L
    dynamic, input_pos = [start] (the cache is written with index_copy_ at start..start+L
    and the mask and RoPE tables narrowed there, through `.item()`). prefill_len >= 2."""
    _dynamic_prefill(prefill_len)
    module = _llama(llama_args(n_kv_heads, use_kv_cache=True, enable_dynamic_shape=True,
                               **args), LlamaWithCache)
    steps = decode_steps(prefill_len, n_decode, prefill="chunk", positions="start")
    return Decoder(_llama_name("kv_dynamic", n_kv_heads, prefill_len, args), module, steps,
                   ({1: _seq_dim()}, None), cache_buffers=_cache_buffers(module))


def llama_kv_positions(n_kv_heads=2, prefill_len=4, n_decode=N_DECODE, **args) -> Decoder:
    """Llama's static-shape cache code (index_put at a position vector, mask and RoPE rows
    gathered by it) exported with one Dim shared by the tokens and `input_pos`, so the
    prompt goes in one step without `.item()`. prefill_len >= 2."""
    _dynamic_prefill(prefill_len)
    module = _llama(llama_args(n_kv_heads, use_kv_cache=True, **args), LlamaWithCache)
    steps = decode_steps(prefill_len, n_decode, prefill="chunk", positions="each")
    seq = _seq_dim()
    return Decoder(_llama_name("kv_positions", n_kv_heads, prefill_len, args), module, steps,
                   ({1: seq}, {0: seq}), cache_buffers=_cache_buffers(module))


def llama_no_kv(n_kv_heads=2, prefill_len=4, n_decode=N_DECODE, **args) -> Decoder:
    """Llama without a cache: every step runs the whole sequence so far, [1, p + L]
    (stateless; the length grows by one per decode step, dynamic). prefill_len >= 2."""
    _dynamic_prefill(prefill_len)
    module = _llama(llama_args(n_kv_heads, use_kv_cache=False, **args), LlamaWithoutCache)
    steps = decode_steps(prefill_len, n_decode, positions=None, prefix=True)
    return Decoder(_llama_name("no_kv", n_kv_heads, prefill_len, args), module, steps,
                   ({1: _seq_dim()},), stateful=False)


# --- transformers decoders with its ExecuTorch static cache ---------------------------

class _HFCacheModule(torch.nn.Module):
    """Holds one of transformers' ExecuTorch wrappers (`self.exportable`), which registers
    its static cache layers' tensors as buffers `key_cache_<i>`, `value_cache_<i>` and
    `cumulative_length_<i>` (reset to cache_position[0] on every call)."""

    def _bind_cache(self, layers):
        # The cache layers are plain objects holding the same tensors as those buffers.
        # Non-strict export sees a tensor reached through them as a constant that aliases
        # a buffer, and run_decompositions (so to_edge) then fails with "expected
        # compiled_fn to be GraphModule" (strict export is fine). Pointing the layers at
        # the buffers, read as module attributes, on every call makes export trace the
        # buffers themselves; eager runs are unchanged.
        for i, layer in enumerate(layers):
            layer.keys = getattr(self.exportable, f"key_cache_{i}")
            layer.values = getattr(self.exportable, f"value_cache_{i}")
            layer.cumulative_length = getattr(self.exportable, f"cumulative_length_{i}")


class HFWithCache(_HFCacheModule):
    """A transformers causal LM behind its ExecuTorch wrapper (`TorchExportableModuleWith
    StaticCache`, or `...WithHybridCache` for sliding-window configs): `forward(tokens,
    cache_position)` -> logits [1, L, vocab]."""

    def __init__(self, model, hybrid=False, max_cache_len=MAX_SEQ_LEN):
        super().__init__()
        from transformers.integrations import executorch as hf_et

        model.generation_config.use_cache = True
        model.generation_config.cache_implementation = "static"
        wrapper = (hf_et.TorchExportableModuleWithHybridCache if hybrid
                   else hf_et.TorchExportableModuleWithStaticCache)
        self.exportable = wrapper(model, batch_size=1, max_cache_len=max_cache_len,
                                  device=torch.device("cpu"))
        self._cache = self.exportable.cache if hybrid else self.exportable.static_cache

    def forward(self, tokens, cache_position):
        self._bind_cache(self._cache.layers)
        return self.exportable(input_ids=tokens, cache_position=cache_position)


def _hf_steps(prefill_len, n_decode, dynamic):
    if dynamic:
        _dynamic_prefill(prefill_len)
    steps = decode_steps(prefill_len, n_decode, prefill="chunk" if dynamic else "tokenwise",
                         positions="each")
    seq = _seq_dim()
    return steps, (({1: seq}, {0: seq}) if dynamic else None)


def _hf_decoder(name, config_class, model_class, prefill_len, n_decode, dynamic,
                hybrid=False, **config):
    import transformers

    fields = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "head_dim": 16, "max_position_embeddings": MAX_SEQ_LEN, "use_cache": True,
              "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
              "attn_implementation": "sdpa"}
    fields.update(config)
    model = getattr(transformers, model_class)(getattr(transformers, config_class)(**fields))
    module = _frozen(HFWithCache(model.eval(), hybrid=hybrid))
    steps, shapes = _hf_steps(prefill_len, n_decode, dynamic)
    kind = "dynamic" if dynamic else "static"
    return Decoder(f"{name}_{kind}_p{prefill_len}", module, steps, shapes,
                   cache_buffers=_cache_buffers(module))


def qwen3(prefill_len=4, n_decode=N_DECODE, dynamic=False) -> Decoder:
    """Qwen3: RMSNorm on q and k per head, GQA (4 query heads, 2 KV heads), SwiGLU,
    untied embeddings. Static: the prompt token by token; dynamic: in one step."""
    return _hf_decoder("qwen3", "Qwen3Config", "Qwen3ForCausalLM", prefill_len, n_decode,
                       dynamic, tie_word_embeddings=False)


def gemma2(prefill_len=4, n_decode=N_DECODE, dynamic=False, sliding_window=4) -> Decoder:
    """Gemma 2: alternating sliding-window (window 4, shorter than the sequence) and
    global layers, attention logit softcapping (hence eager attention: SDPA has no
    softcap), final logit softcapping, tied embeddings, GeGLU, pre/post norms."""
    return _hf_decoder("gemma2", "Gemma2Config", "Gemma2ForCausalLM", prefill_len, n_decode,
                       dynamic, hybrid=True, sliding_window=sliding_window,
                       layer_types=["sliding_attention", "full_attention"],
                       query_pre_attn_scalar=16, attn_logit_softcapping=50.0,
                       final_logit_softcapping=30.0, tie_word_embeddings=True,
                       attn_implementation="eager")


def gemma3(prefill_len=4, n_decode=N_DECODE, dynamic=False, sliding_window=4) -> Decoder:
    """Gemma 3 (text): a sliding-window layer (window 4, local RoPE base 10k) and a
    global one (base 1M), q/k RMSNorm, tied embeddings, GeGLU."""
    return _hf_decoder("gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM", prefill_len,
                       n_decode, dynamic, hybrid=True, sliding_window=sliding_window,
                       layer_types=["sliding_attention", "full_attention"],
                       query_pre_attn_scalar=16, tie_word_embeddings=True)


def phi3(prefill_len=4, n_decode=N_DECODE, dynamic=False) -> Decoder:
    """Phi-3: fused qkv and gate-up projections, GQA, untied embeddings."""
    return _hf_decoder("phi3", "Phi3Config", "Phi3ForCausalLM", prefill_len, n_decode,
                       dynamic, tie_word_embeddings=False,
                       original_max_position_embeddings=MAX_SEQ_LEN)


# --- an encoder-decoder's decoder, with a static self-attention cache -------------------

class HFSeq2SeqDecoderWithCache(_HFCacheModule):
    """The decoder and LM head of a transformers encoder-decoder behind its ExecuTorch
    wrapper (`Seq2SeqLMDecoderExportableModuleWithStaticCache`): `forward(tokens,
    encoder_hidden_states, cache_position)` -> logits [1, L, vocab]. The self-attention
    cache is static buffers; the cross-attention keys and values are computed from
    `encoder_hidden_states` on every call of the program (the wrapper's cross-attention
    cache is a DynamicCache, which the eager module fills once and then reuses: the same
    as long as every step passes the same encoder states)."""

    def __init__(self, model, max_cache_len=MAX_SEQ_LEN):
        super().__init__()
        from transformers.integrations import executorch as hf_et

        self.exportable = hf_et.Seq2SeqLMDecoderExportableModuleWithStaticCache(
            model, max_static_cache_length=max_cache_len, batch_size=1)

    def forward(self, tokens, encoder_hidden_states, cache_position):
        self._bind_cache(self.exportable.static_cache.layers)
        return self.exportable(tokens, encoder_hidden_states, cache_position)


def _seq2seq(name, model, d_model, prefill_len, n_decode, dynamic, encoder_len):
    if dynamic:
        _dynamic_prefill(prefill_len)
    module = _frozen(HFSeq2SeqDecoderWithCache(model.eval()))
    encoder_states = torch.randn(1, encoder_len, d_model)
    steps = [(tokens, encoder_states, pos) for tokens, pos in
             decode_steps(prefill_len, n_decode, prefill="chunk" if dynamic else "tokenwise")]
    seq = _seq_dim()
    shapes = ({1: seq}, None, {0: seq}) if dynamic else None
    kind = "dynamic" if dynamic else "static"
    return Decoder(f"{name}_{kind}_p{prefill_len}", module, steps, shapes,
                   cache_buffers=_cache_buffers(module))


def t5_decoder(prefill_len=4, n_decode=N_DECODE, dynamic=False, encoder_len=12) -> Decoder:
    """T5's decoder (relative position buckets, T5 RMS norm, ReLU FFN) with cross-attention
    over given encoder states [1, 12, 64] (the same in every step)."""
    import transformers

    config = transformers.T5Config(
        vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
        num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=32,
        dropout_rate=0.0, use_cache=True, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0, attn_implementation="sdpa")
    return _seq2seq("t5_decoder", transformers.T5ForConditionalGeneration(config), 64,
                    prefill_len, n_decode, dynamic, encoder_len)


def whisper_decoder(prefill_len=4, n_decode=N_DECODE, dynamic=False,
                    encoder_len=16) -> Decoder:
    """Whisper's decoder (learned positions, LayerNorm, GELU) with cross-attention over
    given encoder states [1, 16, 64] (the same in every step)."""
    import transformers

    config = transformers.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=64, encoder_layers=2,
        encoder_attention_heads=4, encoder_ffn_dim=128, decoder_layers=2,
        decoder_attention_heads=4, decoder_ffn_dim=128, max_source_positions=encoder_len,
        max_target_positions=MAX_SEQ_LEN, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, attn_implementation="sdpa")
    model = transformers.WhisperForConditionalGeneration(config)
    model.lm_head = model.proj_out  # the wrapper looks for `lm_head`; Whisper's is proj_out
    return _seq2seq("whisper_decoder", model, 64, prefill_len, n_decode, dynamic, encoder_len)
