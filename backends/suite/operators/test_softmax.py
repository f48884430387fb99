"""aten._softmax and aten._log_softmax: last dim, inner and leading dims, negative dims, 1-D to 4-D."""

import torch


class Softmax(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.softmax(x, dim=self.dim)


class LogSoftmax(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim)


def test_softmax_last_dim(test_runner):
    test_runner.lower_and_run_model(Softmax(-1), (torch.randn(20),))
    test_runner.lower_and_run_model(Softmax(-1), (torch.randn(2, 3, 4, 8) * 3,))


def test_softmax_other_dims(test_runner):
    test_runner.lower_and_run_model(Softmax(0), (torch.randn(6, 10),))
    test_runner.lower_and_run_model(Softmax(1), (torch.randn(2, 5, 4, 3),))


def test_log_softmax_last_dim(test_runner):
    test_runner.lower_and_run_model(LogSoftmax(-1), (torch.randn(4, 3, 12) * 3,))


def test_log_softmax_other_dims(test_runner):
    test_runner.lower_and_run_model(LogSoftmax(-3), (torch.randn(2, 6, 4, 5),))
