"""aten.threshold: threshold/value pairs, exact boundary, dtypes incl. int32, inf/nan."""

import pytest
import torch


class Threshold(torch.nn.Module):
    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def forward(self, x):
        return torch.nn.functional.threshold(x, self.threshold, self.value)


@pytest.mark.parametrize(
    "threshold, value",
    [(0.0, 0.0), (0.5, -1.0), (-1.0, 2.0), (1.0, 20.0)],
    ids=["relu_like", "t0.5_v-1", "t-1_v2", "value_above_threshold"],
)
def test_threshold_params(test_runner, threshold, value):
    model = Threshold(threshold, value)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 16) * 2,))


def test_threshold_exact_boundary(test_runner):
    x = torch.tensor([-1.0, -0.5, 0.0, 0.25, 0.5, 0.5001, 1.0, 0.5])
    test_runner.lower_and_run_model(Threshold(0.5, -3.0), (x,))


@pytest.mark.parametrize(
    "shape", [(25,), (2, 1, 3, 4, 5)], ids=["rank1", "rank5"])
def test_threshold_shapes(test_runner, shape):
    test_runner.lower_and_run_model(torch.nn.Threshold(0.1, 20.0), (torch.randn(*shape),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_threshold_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Threshold(0.5, -1.0), ((torch.randn(3, 4, 8) * 2).to(dtype),))


def test_threshold_int32(test_runner):
    x = torch.randint(-10, 10, (4, 8), dtype=torch.int32)
    test_runner.lower_and_run_model(Threshold(2, -5), (x,))


def test_threshold_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(Threshold(0.5, -1.0), (x,))


def test_threshold_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Threshold(0.5, -1.0), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
