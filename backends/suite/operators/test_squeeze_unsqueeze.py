"""aten.squeeze and aten.unsqueeze: one, all size-1, several and negative dimensions."""

import torch


class Squeeze(torch.nn.Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.squeeze() if self.dim is None else x.squeeze(self.dim)


class Unsqueeze(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.unsqueeze(self.dim)


def test_squeeze_dim(test_runner):
    test_runner.lower_and_run_model(Squeeze(1), (torch.randn(3, 1, 5),))


def test_squeeze_all(test_runner):
    test_runner.lower_and_run_model(Squeeze(), (torch.randn(1, 4, 1, 6, 1),))


def test_squeeze_several_dims(test_runner):
    test_runner.lower_and_run_model(Squeeze((0, -1)), (torch.randn(1, 5, 1, 4, 1),))


def test_unsqueeze(test_runner):
    test_runner.lower_and_run_model(Unsqueeze(0), (torch.randn(4, 6),))
    test_runner.lower_and_run_model(Unsqueeze(-1), (torch.randn(2, 3, 5),))
