"""Hugging Face `transformers` architectures with small random-weight configs (built from
explicit config classes, nothing downloaded): LLaMA, GPT-2, BERT, DistilBERT, ViT, the
Whisper encoder, Wav2Vec2 and the T5 encoder. Attention runs through SDPA (the library's
default, pinned here); LLaMA and GPT-2 are also tested with the eager (matmul + softmax)
attention.
Each model has a static case and a dynamic one (sequence length, or batch where the
input length is fixed by the architecture)."""

import importlib
import importlib.util

import pytest
import torch

if importlib.util.find_spec("transformers") is None:
    pytest.skip("transformers is not installed", allow_module_level=True)


class _ImportedWhenUsed:
    """`transformers` imported on first use, in a test: importing it costs about 1.4 s,
    which collection (listing the architectures) does not need."""

    def __getattr__(self, name):
        if name.startswith("_"):  # pytest looks for its own markers on module globals
            raise AttributeError(name)
        return getattr(importlib.import_module("transformers"), name)


transformers = _ImportedWhenUsed()

VOCAB = 128
def seq_dim():
    """Made when a test runs: torch.export costs 0.7 s to import during collection."""
    return torch.export.Dim("seq", min=2, max=32)
def batch_dim():
    """Made when a test runs: torch.export costs 0.7 s to import during collection."""
    return torch.export.Dim("batch", min=1, max=4)


class HiddenStates(torch.nn.Module):
    """Wraps a transformers model: tensors in, one tensor (`key` of the output) out."""

    def __init__(self, model, key="last_hidden_state", **kwargs):
        super().__init__()
        self.model = model
        self.key = key
        self.kwargs = kwargs

    def forward(self, x):
        return getattr(self.model(x, **self.kwargs), self.key)


class MaskedHiddenStates(HiddenStates):
    def forward(self, input_ids, attention_mask):
        return self.model(input_ids, attention_mask=attention_mask, **self.kwargs).last_hidden_state


def _tokens(batch=2, seq=8):
    return torch.randint(0, VOCAB, (batch, seq))


def _llama(attn="sdpa"):
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        use_cache=False, bos_token_id=1, eos_token_id=2, pad_token_id=0,
        attn_implementation=attn,
    )
    return HiddenStates(transformers.LlamaForCausalLM(config), "logits", use_cache=False)


def _gpt2(attn="sdpa"):
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=4, n_inner=128,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False,
        bos_token_id=1, eos_token_id=2, attn_implementation=attn,
    )
    return HiddenStates(transformers.GPT2LMHeadModel(config), "logits", use_cache=False)


def _bert():
    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pad_token_id=0, attn_implementation="sdpa",
    )
    return MaskedHiddenStates(transformers.BertModel(config, add_pooling_layer=False))


def _bert_inputs(batch=2, seq=8):
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[-1, seq // 2:] = 0  # the last sequence is padded
    return (_tokens(batch, seq), mask)


def _distilbert():
    config = transformers.DistilBertConfig(
        vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
        max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, pad_token_id=0,
        attn_implementation="sdpa",
    )
    return HiddenStates(transformers.DistilBertModel(config))


def _vit():
    config = transformers.ViTConfig(
        image_size=32, patch_size=8, num_channels=3, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, attn_implementation="sdpa",
    )
    return HiddenStates(transformers.ViTModel(config, add_pooling_layer=False))


def _whisper_encoder():
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = transformers.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=64, encoder_layers=2,
        encoder_attention_heads=4, encoder_ffn_dim=128, decoder_layers=1,
        decoder_attention_heads=4, decoder_ffn_dim=128, max_source_positions=32,
        max_target_positions=32, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
        attn_implementation="sdpa",
    )
    return HiddenStates(WhisperEncoder(config))


def _wav2vec2():
    config = transformers.Wav2Vec2Config(
        vocab_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        feat_extract_norm="group", do_stable_layer_norm=False, hidden_dropout=0.0,
        attention_dropout=0.0, activation_dropout=0.0, feat_proj_dropout=0.0,
        final_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0, attn_implementation="sdpa",
    )
    return HiddenStates(transformers.Wav2Vec2Model(config))


def _t5_encoder():
    config = transformers.T5Config(
        vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
        relative_attention_num_buckets=8, relative_attention_max_distance=32,
        dropout_rate=0.0, use_cache=False, pad_token_id=0, eos_token_id=1,
        attn_implementation="sdpa",
    )
    return HiddenStates(transformers.T5EncoderModel(config))


# --- LLaMA-style decoder (RMSNorm, rotary embeddings, GQA, SwiGLU), causal LM logits ---

@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_llama(test_runner, attn):
    test_runner.lower_and_run_model(_llama(attn), (_tokens(),))


def test_llama_dynamic_seq(test_runner):
    test_runner.lower_and_run_model(_llama(), (_tokens(),), dynamic_shapes=({1: seq_dim()},))


# --- GPT-2 (learned positions, Conv1D projections, gelu_new), causal LM logits ---

@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_gpt2(test_runner, attn):
    test_runner.lower_and_run_model(_gpt2(attn), (_tokens(),))


def test_gpt2_dynamic_seq(test_runner):
    # eager attention: with SDPA the static case already fails in lowering
    test_runner.lower_and_run_model(_gpt2("eager"), (_tokens(),), dynamic_shapes=({1: seq_dim()},))


# --- BERT encoder with a padding attention mask ---

def test_bert(test_runner):
    test_runner.lower_and_run_model(_bert(), _bert_inputs())


def test_bert_dynamic_seq(test_runner):
    seq = seq_dim()  # one Dim shared by both inputs
    test_runner.lower_and_run_model(_bert(), _bert_inputs(), dynamic_shapes=({1: seq}, {1: seq}))


# --- DistilBERT encoder ---

def test_distilbert(test_runner):
    test_runner.lower_and_run_model(_distilbert(), (_tokens(),))


def test_distilbert_dynamic_seq(test_runner):
    test_runner.lower_and_run_model(_distilbert(), (_tokens(),), dynamic_shapes=({1: seq_dim()},))


# --- ViT (patch-embedding conv, CLS token, encoder) on 32x32 images ---

def test_vit(test_runner):
    test_runner.lower_and_run_model(_vit(), (torch.randn(2, 3, 32, 32),))


def test_vit_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_vit(), (torch.randn(2, 3, 32, 32),),
                                    dynamic_shapes=({0: batch_dim()},))


# --- Whisper encoder (conv1d stem + GELU, sinusoidal positions); its frame count is fixed ---

def test_whisper_encoder(test_runner):
    test_runner.lower_and_run_model(_whisper_encoder(), (torch.randn(2, 16, 64),))


def test_whisper_encoder_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(_whisper_encoder(), (torch.randn(2, 16, 64),),
                                    dynamic_shapes=({0: batch_dim()},))


# --- Wav2Vec2 (conv feature extractor with group norm, conv positional embedding) ---

def test_wav2vec2(test_runner):
    test_runner.lower_and_run_model(_wav2vec2(), (torch.randn(2, 1600),))


def test_wav2vec2_dynamic_samples(test_runner):
    # The feature extractor's strides make export require a multiple of 20 samples.
    samples = 20 * torch.export.Dim("frames20", min=40, max=160)
    test_runner.lower_and_run_model(_wav2vec2(), (torch.randn(2, 1600),),
                                    dynamic_shapes=({1: samples},))


# --- T5 encoder (relative position buckets, RMS-style T5LayerNorm, ReLU FFN) ---

def test_t5_encoder(test_runner):
    test_runner.lower_and_run_model(_t5_encoder(), (_tokens(),))


def test_t5_encoder_dynamic_seq(test_runner):
    test_runner.lower_and_run_model(_t5_encoder(), (_tokens(),), dynamic_shapes=({1: seq_dim()},))
