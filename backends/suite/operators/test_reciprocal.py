"""aten.reciprocal: float16/bfloat16, negatives, integer inputs (promoted to float),
zero/inf/nan, dynamic batch."""

import pytest
import torch


class Reciprocal(torch.nn.Module):
    def forward(self, x):
        return torch.reciprocal(x)


def _nonzero(shape):
    x = torch.rand(shape) * 4 + 0.2
    sign = torch.where(torch.rand(shape) > 0.5, 1.0, -1.0)
    return x * sign


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=["float32", "float16", "bfloat16"])
def test_reciprocal_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Reciprocal(), (_nonzero((4, 5, 6)).to(dtype),))


@pytest.mark.parametrize("shape", [(29,), (2, 1, 3, 4, 1)], ids=["rank1", "rank5"])
def test_reciprocal_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Reciprocal(), (_nonzero(shape),))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_reciprocal_integer_input(test_runner, dtype):
    x = torch.randint(1, 50, (3, 8), dtype=dtype) * torch.where(torch.rand(3, 8) > 0.5, 1, -1).to(dtype)
    test_runner.lower_and_run_model(Reciprocal(), (x,))


def test_reciprocal_special_values(test_runner):
    x = torch.tensor([0.0, -0.0, 1e-30, -1e30, float("inf"), float("-inf"), float("nan"), 3.0])
    test_runner.lower_and_run_model(Reciprocal(), (x,))


def test_reciprocal_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Reciprocal(), (_nonzero((4, 9)),), dynamic_shapes=({0: batch},))
