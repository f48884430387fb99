"""aten.view_copy: view with explicit and inferred sizes, reshape of a non-contiguous tensor, flatten."""

import torch


class View(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.view(self.shape)


class ReshapeTransposed(torch.nn.Module):
    def forward(self, x):
        return x.transpose(1, 2).reshape(x.shape[0], -1)


class Flatten(torch.nn.Module):
    def __init__(self, start_dim=0, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x):
        return torch.flatten(x, self.start_dim, self.end_dim)


def test_view(test_runner):
    test_runner.lower_and_run_model(View((4, 6)), (torch.randn(2, 12),))


def test_view_inferred(test_runner):
    test_runner.lower_and_run_model(View((-1, 3, 5)), (torch.randn(2, 3, 10),))


def test_reshape_non_contiguous(test_runner):
    test_runner.lower_and_run_model(ReshapeTransposed(), (torch.randn(2, 3, 4),))


def test_flatten(test_runner):
    test_runner.lower_and_run_model(Flatten(), (torch.randn(2, 3, 4),))
    test_runner.lower_and_run_model(Flatten(1), (torch.randn(2, 3, 4, 4),))
    test_runner.lower_and_run_model(Flatten(1, 2), (torch.randn(2, 3, 4, 5),))
