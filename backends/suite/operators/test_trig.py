"""aten.sin, cos, tan, asin, acos, atan, sinh, cosh: per-op float32, float16/bfloat16,
out-of-domain and inf/nan, rank 5, dynamic batch."""

import math

import pytest
import torch

OPS = {
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
}


class Trig(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


class AllTrig(torch.nn.Module):
    """All eight functions of one input; output i is the i-th op of OPS (sin, cos, tan,
    asin, acos, atan, sinh, cosh)."""

    def forward(self, x):
        return tuple(op(x) for op in OPS.values())


def _input(name, shape):
    if name in ("asin", "acos"):
        return torch.rand(shape) * 1.98 - 0.99  # inside (-1, 1)
    if name == "tan":
        return torch.rand(shape) * 2.8 - 1.4  # away from the poles at +-pi/2
    if name in ("sin", "cos", "atan"):
        return torch.randn(shape) * 4
    return torch.randn(shape) * 2  # sinh, cosh


@pytest.mark.parametrize("op", list(OPS))
def test_trig_float32(test_runner, op):
    test_runner.lower_and_run_model(Trig(op), (_input(op, (3, 4, 8)),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_trig_dtype(test_runner, dtype):
    # inside every function's domain and away from tan's poles
    x = torch.rand(4, 16) * 1.98 - 0.99
    test_runner.lower_and_run_model(AllTrig(), (x.to(dtype),))


def test_trig_special_values(test_runner):
    # exact points, out-of-domain values for asin/acos (nan), large arguments, inf and nan
    x = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, math.pi / 4, 1.5, -2.0, 20.0,
                      float("inf"), float("-inf"), float("nan")])
    test_runner.lower_and_run_model(AllTrig(), (x,))


def test_trig_rank5(test_runner):
    test_runner.lower_and_run_model(Trig("sin"), (torch.randn(2, 1, 3, 2, 5),))


def test_trig_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Trig("cos"), (torch.randn(4, 9),), dynamic_shapes=({0: batch},))
