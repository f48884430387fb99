"""aten.cumsum and aten.cumprod: dim (first, middle, last, negative), dtype argument,
float and integer dtypes, inf/nan, dynamic batch."""

import pytest
import torch

OPS = {"cumsum": torch.cumsum, "cumprod": torch.cumprod}


class Cumulative(torch.nn.Module):
    def __init__(self, name, dim, dtype=None):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.dtype = dtype

    def forward(self, x):
        return self.op(x, self.dim, dtype=self.dtype)


def _input(name, shape, dtype=torch.float32):
    if not dtype.is_floating_point:
        low, high = (-2, 3) if name == "cumprod" else (-50, 50)
        return torch.randint(low, high, shape, dtype=dtype)
    if name == "cumprod":
        sign = torch.where(torch.rand(shape) > 0.5, 1.0, -1.0)
        return ((torch.rand(shape) * 0.5 + 0.75) * sign).to(dtype)
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize("dim", [0, -2], ids=["dim0", "dim_neg2"])
@pytest.mark.parametrize("op", list(OPS))
def test_cumulative_dim(test_runner, op, dim):
    test_runner.lower_and_run_model(Cumulative(op, dim), (_input(op, (4, 5, 6)),))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
@pytest.mark.parametrize("op", list(OPS))
def test_cumulative_dtype(test_runner, op, dtype):
    # int32 inputs are promoted to int64 outputs
    test_runner.lower_and_run_model(Cumulative(op, -1), (_input(op, (3, 10), dtype),))


@pytest.mark.parametrize("op", list(OPS))
def test_cumulative_dtype_argument(test_runner, op):
    test_runner.lower_and_run_model(Cumulative(op, 1, dtype=torch.float32),
                                    (_input(op, (3, 7), torch.int32),))


def test_cumsum_long_rank1(test_runner):
    test_runner.lower_and_run_model(Cumulative("cumsum", -1), (torch.rand(4000),))


@pytest.mark.parametrize("op", list(OPS))
def test_cumulative_special_values(test_runner, op):
    x = torch.tensor([[1.0, float("inf"), 2.0, float("-inf")], [0.0, float("nan"), 1.0, 2.0],
                      [2.0, 0.0, float("inf"), 1.0]])
    test_runner.lower_and_run_model(Cumulative(op, 1), (x,))


def test_cumulative_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Cumulative("cumsum", -1), (torch.randn(4, 8),),
                                    dynamic_shapes=({0: batch},))
