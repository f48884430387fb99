"""aten.mish: ranks 1-5, large magnitudes, nn.Mish module, dtypes, inf/nan, dynamic batch."""

import pytest
import torch


class Mish(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.mish(x)


@pytest.mark.parametrize(
    "shape", [(20,), (1, 3, 5, 5), (2, 1, 3, 4, 5)], ids=["rank1", "rank4", "rank5"])
def test_mish_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Mish(), (torch.randn(*shape) * 3,))


def test_mish_large_magnitudes(test_runner):
    x = torch.tensor([-200.0, -50.0, -20.0, -5.0, -1e-3, 0.0, 1e-3, 5.0, 20.0, 50.0, 200.0])
    test_runner.lower_and_run_model(Mish(), (x,))


def test_mish_module_large(test_runner):
    test_runner.lower_and_run_model(torch.nn.Mish(), (torch.randn(8, 32, 64) * 3,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_mish_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Mish(), ((torch.randn(3, 4, 8) * 3).to(dtype),))


def test_mish_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(Mish(), (x,))


def test_mish_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Mish(), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
