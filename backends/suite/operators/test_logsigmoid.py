"""aten.log_sigmoid_forward: ranks, large magnitudes (stability), dtypes, inf/nan."""

import pytest
import torch


class LogSigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.logsigmoid(x)


@pytest.mark.parametrize(
    "shape", [(20,), (1, 3, 5, 5), (2, 1, 3, 4, 5)], ids=["rank1", "rank4", "rank5"])
def test_logsigmoid_shapes(test_runner, shape):
    test_runner.lower_and_run_model(LogSigmoid(), (torch.randn(*shape) * 3,))


def test_logsigmoid_large_magnitudes(test_runner):
    x = torch.tensor([-200.0, -90.0, -40.0, -20.0, -1e-3, 0.0, 1e-3, 20.0, 40.0, 90.0, 200.0])
    test_runner.lower_and_run_model(LogSigmoid(), (x,))


def test_logsigmoid_module_large(test_runner):
    test_runner.lower_and_run_model(torch.nn.LogSigmoid(), (torch.randn(8, 32, 64) * 4,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_logsigmoid_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(LogSigmoid(), ((torch.randn(3, 4, 8) * 3).to(dtype),))


def test_logsigmoid_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(LogSigmoid(), (x,))


def test_logsigmoid_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(LogSigmoid(), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
