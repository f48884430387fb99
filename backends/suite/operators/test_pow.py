"""aten.pow: tensor ** scalar (integer, fractional, negative), tensor ** tensor, scalar ** tensor."""

import torch


class PowScalarExponent(torch.nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.exponent = exponent

    def forward(self, x):
        return torch.pow(x, self.exponent)


class PowTensorExponent(torch.nn.Module):
    def forward(self, x, y):
        return torch.pow(x, y)


class ScalarBasePow(torch.nn.Module):
    def forward(self, x):
        return torch.pow(2.0, x)


def test_pow_integer_exponent(test_runner):
    test_runner.lower_and_run_model(PowScalarExponent(2), (torch.randn(4, 6),))
    test_runner.lower_and_run_model(PowScalarExponent(3), (torch.randn(2, 3, 5),))


def test_pow_fractional_exponent(test_runner):
    test_runner.lower_and_run_model(PowScalarExponent(0.5), (torch.rand(3, 8) + 0.1,))
    test_runner.lower_and_run_model(PowScalarExponent(-1.5), (torch.rand(3, 8) + 0.5,))


def test_pow_tensor_exponent(test_runner):
    base = torch.rand(2, 4, 6) + 0.5
    test_runner.lower_and_run_model(PowTensorExponent(), (base, torch.randn(6)))


def test_pow_scalar_base(test_runner):
    test_runner.lower_and_run_model(ScalarBasePow(), (torch.randn(5, 5),))
