"""aten.sub: same shapes, broadcasting, alpha, scalar on either side."""

import torch


class Sub(torch.nn.Module):
    def forward(self, x, y):
        return x - y


class SubAlpha(torch.nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return torch.sub(x, y, alpha=self.alpha)


class SubScalar(torch.nn.Module):
    def forward(self, x):
        return x - 1.5


class ScalarMinusTensor(torch.nn.Module):
    def forward(self, x):
        return 1.5 - x


def test_sub_same_shape(test_runner):
    test_runner.lower_and_run_model(Sub(), (torch.randn(3, 8), torch.randn(3, 8)))


def test_sub_broadcast(test_runner):
    test_runner.lower_and_run_model(Sub(), (torch.randn(2, 3, 1, 6), torch.randn(4, 1)))
    test_runner.lower_and_run_model(Sub(), (torch.randn(7), torch.randn(3, 7)))


def test_sub_alpha(test_runner):
    test_runner.lower_and_run_model(SubAlpha(2.5), (torch.randn(1, 20), torch.randn(1, 20)))


def test_sub_scalar(test_runner):
    test_runner.lower_and_run_model(SubScalar(), (torch.randn(4, 5),))
    test_runner.lower_and_run_model(ScalarMinusTensor(), (torch.randn(4, 5),))
