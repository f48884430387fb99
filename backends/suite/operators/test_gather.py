"""aten.gather (also take_along_dim): dims, index smaller than input, repeated indices, 1-D to 4-D, dtypes."""

import pytest
import torch


class Gather(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, index):
        return torch.gather(x, self.dim, index)


class GatherConstantIndex(torch.nn.Module):
    def __init__(self, index):
        super().__init__()
        self.register_buffer("index", index)

    def forward(self, x):
        return torch.gather(x, 1, self.index)


class TakeAlongDim(torch.nn.Module):
    def forward(self, x, index):
        return torch.take_along_dim(x, index, dim=1)


def _tensor(shape, dtype):
    if dtype == torch.int32:
        return torch.randint(-50, 50, shape, dtype=dtype)
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dim, index_shape",
    [((8,), 0, (5,)), ((4, 6), 0, (7, 6)), ((2, 3, 5), -1, (2, 3, 9)), ((2, 4, 3, 5), 2, (1, 2, 3, 2))],
    ids=["1d", "2d_dim0_repeated", "3d_last_dim_more", "4d_smaller_index"],
)
def test_gather(test_runner, shape, dim, index_shape):
    index = torch.randint(0, shape[dim], index_shape)
    test_runner.lower_and_run_model(Gather(dim), (torch.randn(shape), index))


def test_gather_constant_index(test_runner):
    index = torch.tensor([[0, 0, 3], [2, 1, 0], [3, 3, 3]])
    test_runner.lower_and_run_model(GatherConstantIndex(index), (torch.randn(3, 4),))


def test_take_along_dim_broadcast(test_runner):
    index = torch.randint(0, 5, (1, 3, 4))  # broadcast over dim 0
    test_runner.lower_and_run_model(TakeAlongDim(), (torch.randn(2, 5, 4), index))


def test_gather_large(test_runner):
    index = torch.randint(0, 64, (8, 64, 48))
    test_runner.lower_and_run_model(Gather(1), (torch.randn(8, 64, 48), index))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.int32], ids=["bfloat16", "int32"],
)
def test_gather_dtype(test_runner, dtype):
    index = torch.randint(0, 5, (3, 4))
    test_runner.lower_and_run_model(Gather(1), (_tensor((3, 5), dtype), index))


def test_gather_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    index = torch.randint(0, 6, (3, 4))
    test_runner.lower_and_run_model(Gather(1), (torch.randn(3, 6), index),
                                    dynamic_shapes=({0: batch}, {0: batch}))
