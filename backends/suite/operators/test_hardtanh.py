"""aten.hardtanh: default and custom min_val/max_val (incl. min == max), dtypes, inf/nan."""

import pytest
import torch


class Hardtanh(torch.nn.Module):
    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return torch.nn.functional.hardtanh(x, self.min_val, self.max_val)


@pytest.mark.parametrize(
    "min_val, max_val",
    [(-1.0, 1.0), (0.0, 6.0), (-2.0, 0.5), (1.0, 1.0)],
    ids=["default", "min0_max6", "min-2_max0.5", "min_eq_max"],
)
def test_hardtanh_min_max(test_runner, min_val, max_val):
    model = Hardtanh(min_val, max_val)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 16) * 3,))


@pytest.mark.parametrize(
    "shape", [(25,), (2, 1, 3, 4, 5)], ids=["rank1", "rank5"])
def test_hardtanh_shapes(test_runner, shape):
    test_runner.lower_and_run_model(torch.nn.Hardtanh(-2.0, 2.0), (torch.randn(*shape) * 3,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_hardtanh_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Hardtanh(-0.5, 2.0), ((torch.randn(3, 4, 8) * 3).to(dtype),))


def test_hardtanh_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.5, 1.5, float("nan"), -float("inf")]])
    test_runner.lower_and_run_model(Hardtanh(), (x,))


def test_hardtanh_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Hardtanh(-2.0, 2.0), (torch.randn(3, 4, 5) * 3,),
                                    dynamic_shapes=({0: batch},))
