"""aten.hardtanh(0, 6) via F.relu6 / nn.ReLU6: ranks, values at 0 and 6, dtypes, inf/nan."""

import pytest
import torch


class Relu6(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.relu6(x)


@pytest.mark.parametrize(
    "shape", [(20,), (1, 3, 5, 5), (2, 1, 3, 4, 5)], ids=["rank1", "rank4", "rank5"])
def test_relu6_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Relu6(), (torch.randn(*shape) * 5 + 2,))


def test_relu6_boundaries(test_runner):
    x = torch.tensor([-100.0, -1e-4, -0.0, 0.0, 1e-4, 3.0, 5.9999, 6.0, 6.0001, 100.0])
    test_runner.lower_and_run_model(Relu6(), (x,))


def test_relu6_module_large(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU6(), (torch.randn(8, 32, 64) * 5 + 2,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_relu6_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Relu6(), ((torch.randn(3, 4, 8) * 5 + 2).to(dtype),))


def test_relu6_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 7.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(Relu6(), (x,))


def test_relu6_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Relu6(), (torch.randn(3, 4, 5) * 5 + 2,),
                                    dynamic_shapes=({0: batch},))
