"""aten.elu: default alpha, custom alpha, several ranks, the nn.ELU module."""

import torch


class Elu(torch.nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.nn.functional.elu(x, alpha=self.alpha)


class EluModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.elu = torch.nn.ELU()

    def forward(self, x):
        return self.elu(x)


def test_elu_default_alpha(test_runner):
    test_runner.lower_and_run_model(Elu(), (torch.randn(30),))
    test_runner.lower_and_run_model(Elu(), (torch.randn(2, 3, 4, 5) * 2,))


def test_elu_custom_alpha(test_runner):
    test_runner.lower_and_run_model(Elu(0.5), (torch.randn(4, 10),))
    test_runner.lower_and_run_model(Elu(2.0), (torch.randn(3, 5, 4),))


def test_elu_module(test_runner):
    test_runner.lower_and_run_model(EluModule(), (torch.randn(6, 7),))
