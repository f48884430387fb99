"""aten.erf: float16/bfloat16, ranks 1 to 5, tails and inf/nan, integer input (promoted
to float), dynamic batch."""

import pytest
import torch


class Erf(torch.nn.Module):
    def forward(self, x):
        return torch.erf(x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=["float32", "float16", "bfloat16"])
def test_erf_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Erf(), ((torch.randn(4, 5, 6) * 1.5).to(dtype),))


@pytest.mark.parametrize("shape", [(37,), (2, 3, 1, 4, 2), (32, 40, 32)], ids=["rank1", "rank5", "larger"])
def test_erf_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Erf(), (torch.randn(shape),))


def test_erf_special_values(test_runner):
    x = torch.tensor([0.0, -0.0, 1e-8, -1e-8, 3.0, -3.0, 6.0, -10.0,
                      float("inf"), float("-inf"), float("nan")])
    test_runner.lower_and_run_model(Erf(), (x,))


def test_erf_integer_input(test_runner):
    test_runner.lower_and_run_model(Erf(), (torch.randint(-3, 4, (5, 6), dtype=torch.int32),))


def test_erf_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Erf(), (torch.randn(3, 11),), dynamic_shapes=({0: batch},))
