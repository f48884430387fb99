"""aten.hardsigmoid: ranks 1-5, saturated regions and the +-3 corners, dtypes, inf/nan."""

import pytest
import torch


class Hardsigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardsigmoid(x)


@pytest.mark.parametrize(
    "shape", [(20,), (2, 3, 8), (2, 1, 3, 4, 5)], ids=["rank1", "rank3", "rank5"])
def test_hardsigmoid_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Hardsigmoid(), (torch.randn(*shape) * 4,))


def test_hardsigmoid_corners(test_runner):
    x = torch.tensor([-4.0, -3.0, -2.999, -1.0, 0.0, 1.0, 2.999, 3.0, 4.0, -100.0, 100.0, 0.5])
    test_runner.lower_and_run_model(Hardsigmoid(), (x,))


def test_hardsigmoid_module_large(test_runner):
    test_runner.lower_and_run_model(torch.nn.Hardsigmoid(), (torch.randn(8, 32, 64) * 4,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_hardsigmoid_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Hardsigmoid(), ((torch.randn(3, 4, 8) * 4).to(dtype),))


def test_hardsigmoid_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(Hardsigmoid(), (x,))


def test_hardsigmoid_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Hardsigmoid(), (torch.randn(3, 4, 5) * 4,),
                                    dynamic_shapes=({0: batch},))
