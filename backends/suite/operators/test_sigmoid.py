"""aten.sigmoid: 1-D to 4-D inputs, a wide input range that saturates, the nn.Sigmoid module."""

import torch


class Sigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


class SigmoidModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sigmoid = torch.nn.Sigmoid()

    def forward(self, x):
        return self.sigmoid(x)


def test_sigmoid_ranks(test_runner):
    test_runner.lower_and_run_model(Sigmoid(), (torch.randn(24),))
    test_runner.lower_and_run_model(Sigmoid(), (torch.randn(2, 3, 4, 5),))


def test_sigmoid_saturating(test_runner):
    test_runner.lower_and_run_model(Sigmoid(), (torch.randn(4, 16) * 10,))


def test_sigmoid_module(test_runner):
    test_runner.lower_and_run_model(SigmoidModule(), (torch.randn(3, 7, 5),))
