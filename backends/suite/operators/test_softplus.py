"""aten.softplus: beta and threshold (both sides of the linear cut-over), dtypes, inf/nan."""

import pytest
import torch


class Softplus(torch.nn.Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return torch.nn.functional.softplus(x, beta=self.beta, threshold=self.threshold)


@pytest.mark.parametrize(
    "beta, threshold",
    [(1.0, 20.0), (2.0, 20.0), (0.5, 1.0), (3.0, 0.5)],
    ids=["default", "beta2", "beta0.5_t1", "beta3_t0.5"],
)
def test_softplus_beta_threshold(test_runner, beta, threshold):
    model = Softplus(beta, threshold)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 16) * 4,))


def test_softplus_large_magnitudes(test_runner):
    x = torch.tensor([-200.0, -50.0, -20.0, -1e-3, 0.0, 1e-3, 19.9, 20.0, 20.1, 50.0, 200.0])
    test_runner.lower_and_run_model(Softplus(), (x,))


@pytest.mark.parametrize(
    "shape", [(25,), (2, 1, 3, 4, 5)], ids=["rank1", "rank5"])
def test_softplus_shapes(test_runner, shape):
    test_runner.lower_and_run_model(torch.nn.Softplus(), (torch.randn(*shape) * 3,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_softplus_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Softplus(2.0, 5.0), ((torch.randn(3, 4, 8) * 3).to(dtype),))


def test_softplus_inf_nan(test_runner):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(Softplus(), (x,))


def test_softplus_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Softplus(), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
