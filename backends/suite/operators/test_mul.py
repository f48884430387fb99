"""aten.mul: same shapes, broadcasting, scalar, a tensor squared."""

import torch


class Mul(torch.nn.Module):
    def forward(self, x, y):
        return x * y


class MulScalar(torch.nn.Module):
    def forward(self, x):
        return x * -3.0


class Square(torch.nn.Module):
    def forward(self, x):
        return x * x


def test_mul_same_shape(test_runner):
    test_runner.lower_and_run_model(Mul(), (torch.randn(16), torch.randn(16)))
    test_runner.lower_and_run_model(Mul(), (torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)))


def test_mul_broadcast(test_runner):
    test_runner.lower_and_run_model(Mul(), (torch.randn(2, 4, 6), torch.randn(6)))
    test_runner.lower_and_run_model(Mul(), (torch.randn(3, 1), torch.randn(1, 9)))


def test_mul_scalar(test_runner):
    test_runner.lower_and_run_model(MulScalar(), (torch.randn(5, 6),))


def test_mul_self(test_runner):
    test_runner.lower_and_run_model(Square(), (torch.randn(4, 8),))
