"""aten.mean: one dimension, negative dimension, several dimensions, keepdim, all elements."""

import torch


class Mean(torch.nn.Module):
    def __init__(self, dim, keepdim=False):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.mean(x, dim=self.dim, keepdim=self.keepdim)


class MeanAll(torch.nn.Module):
    def forward(self, x):
        return x.mean()


def test_mean_dim(test_runner):
    test_runner.lower_and_run_model(Mean(-1), (torch.randn(3, 4, 10),))
    test_runner.lower_and_run_model(Mean(1, keepdim=True), (torch.randn(3, 4, 10),))


def test_mean_spatial_dims(test_runner):
    test_runner.lower_and_run_model(Mean((2, 3), keepdim=True), (torch.randn(1, 4, 6, 6),))
    test_runner.lower_and_run_model(Mean((-2, -1)), (torch.randn(2, 3, 5, 7),))


def test_mean_leading_dims(test_runner):
    test_runner.lower_and_run_model(Mean((0, 1)), (torch.randn(4, 5, 6),))


def test_mean_all(test_runner):
    test_runner.lower_and_run_model(MeanAll(), (torch.randn(4, 8, 3),))
