"""aten.gelu: the exact (erf) and tanh approximations, over several ranks and the nn.GELU module."""

import pytest
import torch


class Gelu(torch.nn.Module):
    def __init__(self, approximate):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate=self.approximate)


class GeluModule(torch.nn.Module):
    def __init__(self, approximate):
        super().__init__()
        self.gelu = torch.nn.GELU(approximate=approximate)

    def forward(self, x):
        return self.gelu(x)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(test_runner, approximate):
    test_runner.lower_and_run_model(Gelu(approximate), (torch.randn(40),))
    test_runner.lower_and_run_model(Gelu(approximate), (torch.randn(2, 3, 4, 6) * 3,))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_module(test_runner, approximate):
    test_runner.lower_and_run_model(GeluModule(approximate), (torch.randn(4, 10),))
