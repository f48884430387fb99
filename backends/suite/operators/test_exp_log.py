"""aten.exp, log, log2, log10, log1p, expm1: per-op float32 at ranks 1 and 5,
float16/bfloat16, domain edges (0, -1, inf, nan, negatives), small arguments, dynamic
batch."""

import math

import pytest
import torch

OPS = {
    "exp": torch.exp,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "expm1": torch.expm1,
}
LOG_OPS = {"log", "log2", "log10", "log1p"}


class Unary(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


class AllExpLog(torch.nn.Module):
    """All six functions of one input; output i is the i-th op of OPS (exp, log, log2,
    log10, log1p, expm1)."""

    def forward(self, x):
        return tuple(op(x) for op in OPS.values())


def _input(name, shape):
    if name in LOG_OPS:
        return torch.rand(shape) * 8 + 0.1  # strictly inside the domain
    return torch.randn(shape) * 2


@pytest.mark.parametrize("op", list(OPS))
def test_exp_log_float32(test_runner, op):
    test_runner.lower_and_run_model(Unary(op), (_input(op, (33,)),))
    test_runner.lower_and_run_model(Unary(op), (_input(op, (2, 1, 3, 4, 5)),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_exp_log_dtype(test_runner, dtype):
    # positive inputs, inside every function's domain; exp(8.1) is well within float16's range
    test_runner.lower_and_run_model(AllExpLog(), ((torch.rand(4, 16) * 8 + 0.1).to(dtype),))


def test_exp_log_special_values(test_runner):
    # 0 and 1 are exact points; -1 gives -inf for log1p; negatives give nan for the logs.
    x = torch.tensor([0.0, 1.0, -1.0, -0.5, math.e, 1e-6, 60.0, float("inf"), float("-inf"), float("nan")])
    test_runner.lower_and_run_model(AllExpLog(), (x,))


def test_exp_log_small_arguments(test_runner):
    # log1p and expm1 exist for accuracy near zero.
    x = (torch.rand(64) - 0.5) * 1e-4
    test_runner.lower_and_run_model(Unary("log1p"), (x,))
    test_runner.lower_and_run_model(Unary("expm1"), (x,))


def test_exp_log_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Unary("log"), (_input("log", (3, 4, 6)),), dynamic_shapes=({0: batch},))
