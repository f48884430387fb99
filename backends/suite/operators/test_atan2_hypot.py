"""aten.atan2 and aten.hypot: float16/bfloat16, all four quadrants, broadcasting, signed
zeros and inf, integer inputs to atan2, dynamic batch."""

import pytest
import torch

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
FLOAT_IDS = ["float32", "float16", "bfloat16"]


class Atan2(torch.nn.Module):
    def forward(self, y, x):
        return torch.atan2(y, x)


class Hypot(torch.nn.Module):
    def forward(self, x, y):
        return torch.hypot(x, y)


OPS = {"atan2": Atan2, "hypot": Hypot}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("op", list(OPS))
def test_atan2_hypot_dtype(test_runner, op, dtype):
    shape = (3, 4, 7)
    test_runner.lower_and_run_model(OPS[op](), ((torch.randn(shape) * 3).to(dtype),
                                                (torch.randn(shape) * 3).to(dtype)))


@pytest.mark.parametrize("op", list(OPS))
def test_atan2_hypot_broadcast(test_runner, op):
    test_runner.lower_and_run_model(OPS[op](), (torch.randn(2, 3, 5), torch.randn(5)))
    test_runner.lower_and_run_model(OPS[op](), (torch.randn(4, 1), torch.randn(1, 2, 6)))


@pytest.mark.parametrize("op", list(OPS))
def test_atan2_hypot_special_values(test_runner, op):
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([0.0, 0.0, -0.0, -0.0, 1.0, -1.0, inf, inf, -inf, 1.0, nan, 1e30, 1e-30])
    b = torch.tensor([0.0, -0.0, 0.0, -0.0, inf, -inf, inf, 1.0, -inf, 0.0, 1.0, 1e30, 1e-30])
    test_runner.lower_and_run_model(OPS[op](), (a, b))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_atan2_integer_input(test_runner, dtype):
    # integer inputs are promoted to the default float dtype (hypot has no integer overload)
    y = torch.randint(-5, 6, (4, 6), dtype=dtype)
    x = torch.randint(-5, 6, (4, 6), dtype=dtype)
    test_runner.lower_and_run_model(Atan2(), (y, x))


def test_atan2_hypot_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Atan2(), (torch.randn(4, 8), torch.randn(4, 8)),
                                    dynamic_shapes=({0: batch}, {0: batch}))
