"""aten.tanh: 1-D to 4-D inputs, a wide input range that saturates, the nn.Tanh module."""

import torch


class Tanh(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x)


class TanhModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tanh = torch.nn.Tanh()

    def forward(self, x):
        return self.tanh(x)


def test_tanh_ranks(test_runner):
    test_runner.lower_and_run_model(Tanh(), (torch.randn(24),))
    test_runner.lower_and_run_model(Tanh(), (torch.randn(2, 3, 4, 5),))


def test_tanh_saturating(test_runner):
    test_runner.lower_and_run_model(Tanh(), (torch.randn(4, 16) * 8,))


def test_tanh_module(test_runner):
    test_runner.lower_and_run_model(TanhModule(), (torch.randn(3, 7, 5),))
