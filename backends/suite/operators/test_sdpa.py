"""F.scaled_dot_product_attention: no mask, bool/float masks, is_causal, head dims, cross
attention, GQA, scale."""

import pytest
import torch


class Sdpa(torch.nn.Module):
    def __init__(self, is_causal=False, scale=None, enable_gqa=False):
        super().__init__()
        self.is_causal = is_causal
        self.scale = scale
        self.enable_gqa = enable_gqa

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=self.is_causal, scale=self.scale, enable_gqa=self.enable_gqa)


class SdpaMask(torch.nn.Module):
    def forward(self, q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _qkv(batch, heads, q_len, kv_len, head_dim, v_dim=None, kv_heads=None):
    kv_heads = kv_heads or heads
    return (torch.randn(batch, heads, q_len, head_dim),
            torch.randn(batch, kv_heads, kv_len, head_dim),
            torch.randn(batch, kv_heads, kv_len, v_dim or head_dim))


@pytest.mark.parametrize("head_dim", [8, 64], ids=["head_dim8", "head_dim64"])
def test_sdpa_no_mask(test_runner, head_dim):
    test_runner.lower_and_run_model(Sdpa(), _qkv(2, 4, 7, 7, head_dim))


def test_sdpa_bool_mask(test_runner):
    mask = torch.rand(2, 1, 5, 9) > 0.3
    mask[..., 0] = True  # no fully masked row
    test_runner.lower_and_run_model(SdpaMask(), (*_qkv(2, 3, 5, 9, 16), mask))


def test_sdpa_float_mask(test_runner):
    test_runner.lower_and_run_model(SdpaMask(), (*_qkv(1, 2, 6, 6, 16), torch.randn(6, 6)))


def test_sdpa_causal(test_runner):
    test_runner.lower_and_run_model(Sdpa(is_causal=True), _qkv(2, 2, 8, 8, 16))


def test_sdpa_cross_attention_value_dim(test_runner):
    test_runner.lower_and_run_model(Sdpa(), _qkv(1, 2, 4, 10, 16, v_dim=24))


def test_sdpa_gqa(test_runner):
    test_runner.lower_and_run_model(Sdpa(enable_gqa=True), _qkv(1, 8, 6, 6, 16, kv_heads=2))


def test_sdpa_3d_scale(test_runner):
    inputs = (torch.randn(3, 5, 12), torch.randn(3, 7, 12), torch.randn(3, 7, 12))
    test_runner.lower_and_run_model(Sdpa(scale=0.5), inputs)


def test_sdpa_large(test_runner):
    test_runner.lower_and_run_model(Sdpa(is_causal=True), _qkv(1, 8, 64, 64, 64))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_sdpa_dtype(test_runner, dtype):
    inputs = tuple(t.to(dtype) for t in _qkv(1, 2, 6, 6, 16))
    test_runner.lower_and_run_model(Sdpa(), inputs)


def test_sdpa_dynamic_seq(test_runner):
    seq = torch.export.Dim("seq", min=2, max=32)
    shapes = ({2: seq}, {2: seq}, {2: seq})
    test_runner.lower_and_run_model(Sdpa(), _qkv(1, 2, 8, 8, 16), dynamic_shapes=shapes)
