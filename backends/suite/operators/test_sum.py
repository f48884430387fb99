"""aten.sum: one dimension, several dimensions, keepdim, all elements, integer input."""

import torch


class Sum(torch.nn.Module):
    def __init__(self, dim, keepdim=False):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=self.keepdim)


class SumAll(torch.nn.Module):
    def forward(self, x):
        return x.sum()


def test_sum_dim(test_runner):
    test_runner.lower_and_run_model(Sum(-1), (torch.randn(3, 4, 10),))
    test_runner.lower_and_run_model(Sum(0, keepdim=True), (torch.randn(5, 6),))


def test_sum_multiple_dims(test_runner):
    test_runner.lower_and_run_model(Sum((2, 3), keepdim=True), (torch.randn(1, 4, 6, 6),))
    test_runner.lower_and_run_model(Sum((0, 2)), (torch.randn(3, 4, 5),))


def test_sum_all(test_runner):
    test_runner.lower_and_run_model(SumAll(), (torch.randn(4, 8, 3),))


def test_sum_int(test_runner):
    x = torch.randint(-50, 50, (4, 6), dtype=torch.int32)
    test_runner.lower_and_run_model(Sum(1), (x,))
