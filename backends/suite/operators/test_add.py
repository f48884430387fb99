"""aten.add: same shapes, broadcasting, alpha, scalar."""

import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class AddAlpha(torch.nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return torch.add(x, y, alpha=self.alpha)


class AddScalar(torch.nn.Module):
    def forward(self, x):
        return x + 2.5


def test_add_same_shape(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(2, 10), torch.randn(2, 10)))


def test_add_broadcast(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4, 1, 8), torch.randn(3, 1)))
    test_runner.lower_and_run_model(Add(), (torch.randn(5), torch.randn(2, 3, 5)))


def test_add_alpha(test_runner):
    test_runner.lower_and_run_model(AddAlpha(2.0), (torch.randn(1, 25), torch.randn(1, 25)))


def test_add_scalar(test_runner):
    test_runner.lower_and_run_model(AddScalar(), (torch.randn(3, 4),))
