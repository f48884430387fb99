"""aten.abs and aten.neg: float and integer dtypes, ranks 1 to 5, signed zeros, inf and nan, dynamic batch."""

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
DTYPE_IDS = ["float32", "float16", "bfloat16", "int32", "int64"]


class Abs(torch.nn.Module):
    def forward(self, x):
        return torch.abs(x)


class Neg(torch.nn.Module):
    def forward(self, x):
        return torch.neg(x)


OPS = {"abs": Abs, "neg": Neg}


def _input(shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape) * 3).to(dtype)
    return torch.randint(-100, 100, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", list(OPS))
def test_abs_neg_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(OPS[op](), (_input((3, 4, 7), dtype),))


@pytest.mark.parametrize("shape", [(17,), (2, 1, 3, 1, 4), (8, 32, 64)], ids=["rank1", "rank5", "larger"])
def test_abs_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Abs(), (torch.randn(shape),))


@pytest.mark.parametrize("op", list(OPS))
def test_abs_neg_special_values(test_runner, op):
    x = torch.tensor([0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), float("nan"), -3.4e38])
    test_runner.lower_and_run_model(OPS[op](), (x,))


def test_neg_int_extremes(test_runner):
    # int32 min is left out: its negation overflows.
    x = torch.tensor([0, 1, -1, 2**31 - 1, -(2**31 - 1), 12345], dtype=torch.int32)
    test_runner.lower_and_run_model(Neg(), (x,))


def test_abs_neg_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Abs(), (torch.randn(4, 3, 5),), dynamic_shapes=({0: batch},))
