"""aten.cat: leading, channel and last dimension, unequal sizes, a repeated input, many inputs."""

import torch


class Cat(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, *tensors):
        return torch.cat(tensors, dim=self.dim)


class CatWithItself(torch.nn.Module):
    def forward(self, x):
        return torch.cat((x, x), dim=1)


def test_cat_dim0(test_runner):
    test_runner.lower_and_run_model(Cat(0), (torch.randn(2, 5), torch.randn(3, 5)))


def test_cat_channels(test_runner):
    inputs = (torch.randn(1, 2, 4, 4), torch.randn(1, 3, 4, 4), torch.randn(1, 1, 4, 4))
    test_runner.lower_and_run_model(Cat(1), inputs)


def test_cat_last_dim(test_runner):
    test_runner.lower_and_run_model(Cat(-1), (torch.randn(2, 3, 4), torch.randn(2, 3, 6)))


def test_cat_repeated_input(test_runner):
    test_runner.lower_and_run_model(CatWithItself(), (torch.randn(2, 3, 5),))


def test_cat_many_inputs(test_runner):
    inputs = tuple(torch.randn(2, size, 3) for size in (1, 2, 3, 1, 2, 4))
    test_runner.lower_and_run_model(Cat(1), inputs)
