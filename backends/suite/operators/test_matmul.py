"""aten.matmul: 2-D, batched, broadcast batch dimensions, matrix-vector, constant right operand."""

import torch


class Matmul(torch.nn.Module):
    def forward(self, x, y):
        return torch.matmul(x, y)


class MatmulConstant(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(in_features, out_features))

    def forward(self, x):
        return x @ self.weight


def test_matmul_2d(test_runner):
    test_runner.lower_and_run_model(Matmul(), (torch.randn(4, 8), torch.randn(8, 6)))


def test_matmul_batched(test_runner):
    test_runner.lower_and_run_model(Matmul(), (torch.randn(2, 4, 8), torch.randn(2, 8, 5)))


def test_matmul_broadcast(test_runner):
    test_runner.lower_and_run_model(Matmul(), (torch.randn(2, 3, 4, 8), torch.randn(3, 8, 5)))
    test_runner.lower_and_run_model(Matmul(), (torch.randn(3, 4, 8), torch.randn(8, 6)))


def test_matmul_vector(test_runner):
    test_runner.lower_and_run_model(Matmul(), (torch.randn(4, 8), torch.randn(8)))


def test_matmul_constant(test_runner):
    test_runner.lower_and_run_model(MatmulConstant(12, 5), (torch.randn(3, 12),))
