"""aten.elu as used by F.selu and F.celu (custom alpha): ranks, large negatives, dtypes, inf/nan."""

import pytest
import torch


class Selu(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.selu(x)


class Celu(torch.nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.nn.functional.celu(x, alpha=self.alpha)


MODELS = {"selu": Selu, "celu": Celu}


@pytest.mark.parametrize(
    "shape", [(20,), (2, 1, 3, 4, 5)], ids=["rank1", "rank5"])
def test_selu_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Selu(), (torch.randn(*shape) * 3,))


@pytest.mark.parametrize("alpha", [0.5, 2.0], ids=["alpha0.5", "alpha2"])
def test_celu_alpha(test_runner, alpha):
    test_runner.lower_and_run_model(Celu(alpha), (torch.randn(2, 3, 16) * 3,))


@pytest.mark.parametrize("op", list(MODELS))
def test_selu_celu_large_negative(test_runner, op):
    x = torch.tensor([-200.0, -50.0, -10.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 10.0, 100.0])
    test_runner.lower_and_run_model(MODELS[op](), (x,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(MODELS))
def test_selu_celu_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(MODELS[op](), ((torch.randn(3, 4, 8) * 3).to(dtype),))


@pytest.mark.parametrize("op", list(MODELS))
def test_selu_celu_inf_nan(test_runner, op):
    x = torch.tensor([[float("-inf"), float("inf"), float("nan"), 0.0],
                      [-1.0, 1.0, float("nan"), float("inf")]])
    test_runner.lower_and_run_model(MODELS[op](), (x,))


def test_selu_celu_modules_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    for module in (torch.nn.SELU(), torch.nn.CELU(1.5)):
        test_runner.lower_and_run_model(module, (torch.randn(3, 4, 5) * 3,),
                                        dynamic_shapes=({0: batch},))
