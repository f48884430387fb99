"""aten.select: integer indexing of one dim, rank 1 to 5, negative dims and indices,
chained selects, dtypes."""

import pytest
import torch


class Select(torch.nn.Module):
    def __init__(self, dim, index):
        super().__init__()
        self.dim = dim
        self.index = index

    def forward(self, x):
        return torch.select(x, self.dim, self.index)


class SelectChained(torch.nn.Module):
    def forward(self, x):
        return x[1, :, -2]


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dim, index",
    [((7,), 0, 3), ((3, 4), 1, -1), ((2, 3, 4, 5), 2, 0), ((2, 3, 1, 4, 5), -3, 0)],
    ids=["1d_to_0d", "2d_negative_index", "4d_dim2", "5d_size1_negative_dim"],
)
def test_select(test_runner, shape, dim, index):
    test_runner.lower_and_run_model(Select(dim, index), (torch.randn(shape),))


def test_select_chained(test_runner):
    test_runner.lower_and_run_model(SelectChained(), (torch.randn(3, 4, 5),))


def test_select_large(test_runner):
    test_runner.lower_and_run_model(Select(1, 7), (torch.randn(8, 16, 64, 48),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_select_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Select(1, 2), (_tensor((2, 4, 5), dtype),))


def test_select_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Select(1, 1), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
