"""aten.repeat (also tile, repeat_interleave): per-dim repeats, added leading dims, repeats of 1, dtypes."""

import pytest
import torch


class Repeat(torch.nn.Module):
    def __init__(self, repeats):
        super().__init__()
        self.repeats = repeats

    def forward(self, x):
        return x.repeat(*self.repeats)


class Tile(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.tile(x, self.dims)


class RepeatInterleave(torch.nn.Module):
    def __init__(self, repeats, dim):
        super().__init__()
        self.repeats = repeats
        self.dim = dim

    def forward(self, x):
        return torch.repeat_interleave(x, self.repeats, dim=self.dim)


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, repeats",
    [((5,), (3,)), ((2, 3), (2, 1, 3)), ((1, 3, 1, 4), (2, 1, 3, 1)), ((2, 1, 3), (1, 1, 1, 2, 2))],
    ids=["1d", "new_leading_dim", "4d_size1_dims", "5d_from_3d"],
)
def test_repeat(test_runner, shape, repeats):
    test_runner.lower_and_run_model(Repeat(repeats), (torch.randn(shape),))


@pytest.mark.parametrize(
    "dims", [(2,), (2, 3, 1, 1)], ids=["fewer_dims_than_input", "more_dims_than_input"],
)
def test_tile(test_runner, dims):
    test_runner.lower_and_run_model(Tile(dims), (torch.randn(3, 4),))


def test_repeat_interleave(test_runner):
    test_runner.lower_and_run_model(RepeatInterleave(3, -1), (torch.randn(2, 3, 4),))


def test_repeat_large(test_runner):
    test_runner.lower_and_run_model(Repeat((2, 1, 4, 3)), (torch.randn(2, 16, 12, 16),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_repeat_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Repeat((2, 3)), (_tensor((3, 4), dtype),))


def test_repeat_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Repeat((1, 2, 3)), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
