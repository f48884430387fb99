"""aten.clamp_min / clamp_max (scalar and tensor bounds) and aten.clamp with tensor
bounds: float and integer dtypes, broadcasting, min > max, nan, dynamic batch."""

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
DTYPE_IDS = ["float32", "float16", "bfloat16", "int32", "int64"]


class ClampMin(torch.nn.Module):
    def __init__(self, bound):
        super().__init__()
        self.bound = bound

    def forward(self, x):
        return torch.clamp_min(x, self.bound)


class ClampMax(torch.nn.Module):
    def __init__(self, bound):
        super().__init__()
        self.bound = bound

    def forward(self, x):
        return torch.clamp_max(x, self.bound)


class ClampMinTensor(torch.nn.Module):
    def forward(self, x, bound):
        return torch.clamp_min(x, bound)


class ClampMaxTensor(torch.nn.Module):
    def forward(self, x, bound):
        return torch.clamp_max(x, bound)


class ClampTensorBounds(torch.nn.Module):
    def forward(self, x, low, high):
        return torch.clamp(x, min=low, max=high)


SCALAR_OPS = {"clamp_min": ClampMin, "clamp_max": ClampMax}
TENSOR_OPS = {"clamp_min": ClampMinTensor, "clamp_max": ClampMaxTensor}


def _input(shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape) * 4).to(dtype)
    return torch.randint(-20, 20, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", list(SCALAR_OPS))
def test_clamp_scalar_bound(test_runner, op, dtype):
    bound = 1.5 if dtype.is_floating_point else -3
    test_runner.lower_and_run_model(SCALAR_OPS[op](bound), (_input((3, 4, 6), dtype),))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=["float32", "int32"])
@pytest.mark.parametrize("op", list(TENSOR_OPS))
def test_clamp_tensor_bound_broadcast(test_runner, op, dtype):
    test_runner.lower_and_run_model(TENSOR_OPS[op](), (_input((2, 3, 6), dtype), _input((6,), dtype)))
    test_runner.lower_and_run_model(TENSOR_OPS[op](), (_input((5, 1), dtype), _input((1, 4), dtype)))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_clamp_tensor_bounds_integer(test_runner, dtype):
    low = torch.randint(-10, 0, (1, 8), dtype=dtype)
    high = torch.randint(0, 10, (4, 1), dtype=dtype)
    test_runner.lower_and_run_model(ClampTensorBounds(), (_input((4, 8), dtype), low, high))


def test_clamp_min_above_max(test_runner):
    # where min > max, clamp returns max
    low = torch.full((3, 5), 1.0)
    high = torch.full((3, 5), -1.0)
    test_runner.lower_and_run_model(ClampTensorBounds(), (torch.randn(3, 5), low, high))


def test_clamp_nan(test_runner):
    # nan in the input propagates; a nan bound makes the result nan
    x = torch.tensor([float("nan"), -5.0, 0.0, 5.0, float("inf"), float("-inf")])
    test_runner.lower_and_run_model(ClampMin(-1.0), (x,))
    bound = torch.tensor([0.0, float("nan"), 0.0, 0.0, 0.0, 0.0])
    test_runner.lower_and_run_model(ClampMaxTensor(), (x, bound))


def test_clamp_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(ClampMax(0.25), (torch.randn(4, 9),), dynamic_shapes=({0: batch},))
