"""aten.pixel_shuffle and aten.pixel_unshuffle: factors 2 and 3, unbatched and 5-D
inputs, round trip, dtypes."""

import pytest
import torch


class PixelShuffle(torch.nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return torch.nn.functional.pixel_shuffle(x, self.factor)


class PixelUnshuffle(torch.nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return torch.nn.functional.pixel_unshuffle(x, self.factor)


class ShuffleRoundTrip(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.pixel_shuffle(torch.nn.functional.pixel_unshuffle(x, 2) * 2.0, 2)


def _tensor(shape, dtype):
    if dtype == torch.int32:
        return torch.randint(-50, 50, shape, dtype=dtype)
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, factor", [((2, 18, 2, 3), 3), ((8, 3, 3), 2), ((2, 2, 4, 2, 3), 2)],
    ids=["r3", "unbatched", "5d"],
)
def test_pixel_shuffle(test_runner, shape, factor):
    test_runner.lower_and_run_model(PixelShuffle(factor), (torch.randn(shape),))


@pytest.mark.parametrize(
    "shape, factor", [((1, 2, 4, 6), 2), ((2, 1, 6, 9), 3)], ids=["r2", "r3"],
)
def test_pixel_unshuffle(test_runner, shape, factor):
    test_runner.lower_and_run_model(PixelUnshuffle(factor), (torch.randn(shape),))


def test_pixel_shuffle_round_trip(test_runner):
    test_runner.lower_and_run_model(ShuffleRoundTrip(), (torch.randn(1, 3, 8, 6),))


def test_pixel_shuffle_large(test_runner):
    test_runner.lower_and_run_model(PixelShuffle(2), (torch.randn(2, 64, 16, 24),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.int32], ids=["bfloat16", "int32"],
)
def test_pixel_shuffle_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(PixelShuffle(2), (_tensor((1, 8, 3, 3), dtype),))


def test_pixel_shuffle_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(PixelShuffle(2), (torch.randn(3, 8, 4, 4),),
                                    dynamic_shapes=({0: batch},))
