"""aten.masked_fill (scalar and 0-d tensor value): mask input or computed, broadcast
masks, -inf fill, dtypes."""

import pytest
import torch


class MaskedFill(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x, mask):
        return x.masked_fill(mask, self.value)


class MaskedFillComputed(torch.nn.Module):
    def forward(self, x):
        return x.masked_fill(x < 0, 0.0)


class MaskedFillTensorValue(torch.nn.Module):
    def forward(self, x, mask, value):
        return x.masked_fill(mask, value)


class AttentionMaskFill(torch.nn.Module):
    def forward(self, scores, mask):
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, mask_shape",
    [((2, 3, 4, 5), (1, 3, 1, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4, 2), (2, 1, 3, 4, 2))],
    ids=["4d_broadcast_mask", "3d_trailing_mask", "5d"],
)
def test_masked_fill(test_runner, shape, mask_shape):
    mask = torch.rand(mask_shape) > 0.5
    test_runner.lower_and_run_model(MaskedFill(1.5), (torch.randn(shape), mask))


def test_masked_fill_computed_mask(test_runner):
    test_runner.lower_and_run_model(MaskedFillComputed(), (torch.randn(4, 8),))


def test_masked_fill_tensor_value(test_runner):
    inputs = (torch.randn(3, 5), torch.rand(3, 5) > 0.5, torch.tensor(-7.0))
    test_runner.lower_and_run_model(MaskedFillTensorValue(), inputs)


def test_masked_fill_neg_inf_softmax(test_runner):
    mask = torch.rand(2, 4, 6, 6) > 0.3
    mask[..., 0] = True  # every row keeps one score, so no row is all -inf
    test_runner.lower_and_run_model(AttentionMaskFill(), (torch.randn(2, 4, 6, 6), mask))


def test_masked_fill_large(test_runner):
    inputs = (torch.randn(4, 8, 32, 64), torch.rand(4, 1, 32, 64) > 0.5)
    test_runner.lower_and_run_model(MaskedFill(-1.0), inputs)


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_masked_fill_dtype(test_runner, dtype):
    value = True if dtype == torch.bool else 3.0
    inputs = (_tensor((3, 4, 5), dtype), torch.rand(3, 4, 5) > 0.5)
    test_runner.lower_and_run_model(MaskedFill(value), inputs)


def test_masked_fill_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    inputs = (torch.randn(3, 4, 5), torch.rand(3, 4, 5) > 0.5)
    test_runner.lower_and_run_model(MaskedFill(0.0), inputs,
                                    dynamic_shapes=({0: batch}, {0: batch}))
