"""aten.median (whole tensor) and aten.median.dim (values and indices): dim, keepdim,
even lengths (lower median), float and integer dtypes, nan, dynamic batch."""

import pytest
import torch


class Median(torch.nn.Module):
    def forward(self, x):
        return torch.median(x)


class MedianDim(torch.nn.Module):
    def __init__(self, dim, keepdim=False):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        values, indices = torch.median(x, dim=self.dim, keepdim=self.keepdim)
        return values, indices


def _distinct(shape, dtype=torch.float32):
    # distinct values, so the index of the median is unambiguous
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float32", "float16", "bfloat16", "int32", "int64"],
)
def test_median_whole_tensor(test_runner, dtype):
    test_runner.lower_and_run_model(Median(), (_distinct((3, 5, 7), dtype),))


@pytest.mark.parametrize(
    "dim,keepdim", [(0, False), (-1, False), (1, True)], ids=["dim0", "dim_neg1", "dim1_keepdim"]
)
def test_median_dim(test_runner, dim, keepdim):
    test_runner.lower_and_run_model(MedianDim(dim, keepdim), (torch.randn(5, 7, 9),))


def test_median_even_length(test_runner):
    # even count: torch returns the lower of the two middle values
    test_runner.lower_and_run_model(Median(), (torch.randn(4, 6),))
    test_runner.lower_and_run_model(MedianDim(-1), (torch.randn(3, 8),))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_median_dim_integer(test_runner, dtype):
    test_runner.lower_and_run_model(MedianDim(1), (_distinct((4, 11), dtype),))


def test_median_nan(test_runner):
    # a nan anywhere in the reduced slice makes the median nan
    x = torch.tensor([[1.0, float("nan"), 3.0], [2.0, -1.0, 0.5]])
    test_runner.lower_and_run_model(Median(), (x,))
    test_runner.lower_and_run_model(MedianDim(1), (x,))


def test_median_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(MedianDim(-1), (torch.randn(4, 9),), dynamic_shapes=({0: batch},))
