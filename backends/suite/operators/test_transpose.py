"""aten.transpose / aten.permute via transpose and mT: dim pairs on 2-D to 5-D, size-1 dims, dtypes."""

import pytest
import torch


class Transpose(torch.nn.Module):
    def __init__(self, dim0, dim1):
        super().__init__()
        self.dim0 = dim0
        self.dim1 = dim1

    def forward(self, x):
        return torch.transpose(x, self.dim0, self.dim1)


class MatrixTransposeBatched(torch.nn.Module):
    def forward(self, x):
        return x.mT


class TransposeAdd(torch.nn.Module):
    def forward(self, x, y):
        return x.transpose(0, 1) + y


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dim0, dim1",
    [((3, 1), 0, 1), ((1, 5, 1, 7), 0, 3), ((2, 3, 4, 5, 6), 1, 3), ((2, 3, 4, 5, 6), 0, -1)],
    ids=["2d_size1", "4d_size1_dims", "5d_inner", "5d_first_last"],
)
def test_transpose_dims(test_runner, shape, dim0, dim1):
    test_runner.lower_and_run_model(Transpose(dim0, dim1), (torch.randn(shape),))


def test_transpose_mT(test_runner):
    test_runner.lower_and_run_model(MatrixTransposeBatched(), (torch.randn(2, 3, 4, 5),))


def test_transpose_then_add(test_runner):
    test_runner.lower_and_run_model(TransposeAdd(), (torch.randn(4, 6, 3), torch.randn(6, 4, 3)))


def test_transpose_large(test_runner):
    test_runner.lower_and_run_model(Transpose(1, 2), (torch.randn(4, 96, 128),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_transpose_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Transpose(0, 2), (_tensor((2, 3, 5), dtype),))


def test_transpose_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Transpose(0, 1), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
