"""aten.bmm: batched operands, one batch, transposed right operand, constant right operand."""

import torch


class Bmm(torch.nn.Module):
    def forward(self, x, y):
        return torch.bmm(x, y)


class BmmTransposed(torch.nn.Module):
    def forward(self, x, y):
        return torch.bmm(x, y.transpose(1, 2))


class BmmConstant(torch.nn.Module):
    def __init__(self, batch, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(batch, in_features, out_features))

    def forward(self, x):
        return torch.bmm(x, self.weight)


def test_bmm(test_runner):
    test_runner.lower_and_run_model(Bmm(), (torch.randn(3, 4, 8), torch.randn(3, 8, 5)))


def test_bmm_single_batch(test_runner):
    test_runner.lower_and_run_model(Bmm(), (torch.randn(1, 6, 6), torch.randn(1, 6, 6)))


def test_bmm_transposed(test_runner):
    test_runner.lower_and_run_model(BmmTransposed(), (torch.randn(2, 5, 8), torch.randn(2, 7, 8)))


def test_bmm_constant(test_runner):
    test_runner.lower_and_run_model(BmmConstant(2, 8, 4), (torch.randn(2, 3, 8),))
