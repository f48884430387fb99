"""aten.maximum and aten.minimum: same shapes, broadcasting, ties between the operands."""

import torch


class Maximum(torch.nn.Module):
    def forward(self, x, y):
        return torch.maximum(x, y)


class Minimum(torch.nn.Module):
    def forward(self, x, y):
        return torch.minimum(x, y)


def test_maximum(test_runner):
    test_runner.lower_and_run_model(Maximum(), (torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)))


def test_maximum_broadcast(test_runner):
    test_runner.lower_and_run_model(Maximum(), (torch.randn(3, 1, 6), torch.randn(4, 1)))


def test_minimum(test_runner):
    test_runner.lower_and_run_model(Minimum(), (torch.randn(24), torch.randn(24)))


def test_minimum_broadcast(test_runner):
    test_runner.lower_and_run_model(Minimum(), (torch.randn(2, 4, 6), torch.randn(6)))


def test_ties(test_runner):
    x = torch.randn(4, 8)
    y = torch.where(torch.rand(4, 8) < 0.5, x, torch.randn(4, 8))
    test_runner.lower_and_run_model(Maximum(), (x, y))
    test_runner.lower_and_run_model(Minimum(), (x, y))
