"""aten.amax and aten.amin: one dimension, several dimensions, keepdim, all elements."""

import torch


class Amax(torch.nn.Module):
    def __init__(self, dim=(), keepdim=False):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.amax(x, dim=self.dim, keepdim=self.keepdim)


class Amin(torch.nn.Module):
    def __init__(self, dim=(), keepdim=False):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.amin(x, dim=self.dim, keepdim=self.keepdim)


def test_amax_dim(test_runner):
    test_runner.lower_and_run_model(Amax(-1), (torch.randn(3, 4, 10),))
    test_runner.lower_and_run_model(Amax((2, 3), keepdim=True), (torch.randn(1, 4, 6, 6),))


def test_amax_all(test_runner):
    test_runner.lower_and_run_model(Amax(), (torch.randn(4, 8, 3),))


def test_amin_dim(test_runner):
    test_runner.lower_and_run_model(Amin(0), (torch.randn(5, 6),))
    test_runner.lower_and_run_model(Amin(1, keepdim=True), (torch.randn(2, 7, 5),))


def test_amin_all(test_runner):
    test_runner.lower_and_run_model(Amin(), (torch.randn(4, 8, 3),))
