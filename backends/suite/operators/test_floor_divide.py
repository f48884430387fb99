"""aten.floor_divide: integer and float dtypes, mixed signs (rounds toward -inf),
broadcasting, scalar divisor, dynamic batch."""

import pytest
import torch


class FloorDivide(torch.nn.Module):
    def forward(self, x, y):
        return torch.floor_divide(x, y)


class FloorDivideScalar(torch.nn.Module):
    def __init__(self, divisor):
        super().__init__()
        self.divisor = divisor

    def forward(self, x):
        return x // self.divisor


def _divisor(shape, dtype):
    magnitude = torch.randint(1, 8, shape)
    sign = torch.where(torch.rand(shape) > 0.5, 1, -1)
    return (magnitude * sign).to(dtype)


def _dividend(shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape) * 20).to(dtype)
    return torch.randint(-100, 100, shape, dtype=dtype)


@pytest.mark.parametrize(
    "dtype",
    [torch.int32, torch.int64, torch.float32, torch.float16, torch.bfloat16],
    ids=["int32", "int64", "float32", "float16", "bfloat16"],
)
def test_floor_divide_dtype(test_runner, dtype):
    shape = (3, 4, 6)
    test_runner.lower_and_run_model(FloorDivide(), (_dividend(shape, dtype), _divisor(shape, dtype)))


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32], ids=["int64", "float32"])
def test_floor_divide_broadcast(test_runner, dtype):
    test_runner.lower_and_run_model(FloorDivide(), (_dividend((2, 3, 5), dtype), _divisor((5,), dtype)))
    test_runner.lower_and_run_model(FloorDivide(), (_dividend((4, 1), dtype), _divisor((1, 6), dtype)))


@pytest.mark.parametrize("divisor", [3, -4, 2.5], ids=["int3", "int_neg4", "float2_5"])
def test_floor_divide_scalar(test_runner, divisor):
    x = torch.randint(-50, 50, (4, 8)) if isinstance(divisor, int) else torch.randn(4, 8) * 10
    test_runner.lower_and_run_model(FloorDivideScalar(divisor), (x,))


def test_floor_divide_float_special_values(test_runner):
    x = torch.tensor([7.0, -7.0, 0.0, -0.0, 1.0, -1.0, float("inf"), float("nan"), 6.0])
    y = torch.tensor([2.0, 2.0, 3.0, 3.0, 0.0, 0.0, 2.0, 1.0, -3.0])
    test_runner.lower_and_run_model(FloorDivide(), (x, y))


def test_floor_divide_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _dividend((4, 6), torch.int64), _divisor((4, 6), torch.int64)
    test_runner.lower_and_run_model(FloorDivide(), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
