"""torch.square (aten.pow.Tensor_Scalar with exponent 2 after export): float and integer
dtypes, shapes, inf/nan, dynamic batch."""

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
DTYPE_IDS = ["float32", "float16", "bfloat16", "int32", "int64"]


class Square(torch.nn.Module):
    def forward(self, x):
        return torch.square(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_square_dtype(test_runner, dtype):
    if dtype.is_floating_point:
        x = (torch.randn(3, 4, 6) * 4).to(dtype)
    else:
        x = torch.randint(-1000, 1000, (3, 4, 6), dtype=dtype)
    test_runner.lower_and_run_model(Square(), (x,))


@pytest.mark.parametrize("shape", [(23,), (1, 3, 1, 1, 7), (16, 64, 32)], ids=["rank1", "rank5", "larger"])
def test_square_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Square(), (torch.randn(shape),))


def test_square_special_values(test_runner):
    x = torch.tensor([0.0, -0.0, -3.0, 1e20, 1e-20, float("inf"), float("-inf"), float("nan")])
    test_runner.lower_and_run_model(Square(), (x,))


def test_square_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Square(), (torch.randn(3, 10),), dynamic_shapes=({0: batch},))
