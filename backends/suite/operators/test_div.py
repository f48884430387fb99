"""aten.div: true division, broadcasting, scalar divisor, and the trunc and floor rounding modes."""

import torch


def _away_from_zero(shape):
    """Divisors in [-2, -0.5] U [0.5, 2], so results stay small and well conditioned."""
    magnitude = torch.rand(shape) * 1.5 + 0.5
    sign = torch.where(torch.rand(shape) < 0.5, -1.0, 1.0)
    return magnitude * sign


class Div(torch.nn.Module):
    def forward(self, x, y):
        return x / y


class DivScalar(torch.nn.Module):
    def forward(self, x):
        return x / 4.0


class DivRoundingMode(torch.nn.Module):
    def __init__(self, rounding_mode):
        super().__init__()
        self.rounding_mode = rounding_mode

    def forward(self, x, y):
        return torch.div(x, y, rounding_mode=self.rounding_mode)


def test_div_same_shape(test_runner):
    test_runner.lower_and_run_model(Div(), (torch.randn(3, 10), _away_from_zero((3, 10))))


def test_div_broadcast(test_runner):
    test_runner.lower_and_run_model(Div(), (torch.randn(2, 3, 4, 4), _away_from_zero((4, 1))))


def test_div_scalar(test_runner):
    test_runner.lower_and_run_model(DivScalar(), (torch.randn(6, 5),))


def test_div_rounding_mode(test_runner):
    numerator = torch.randn(4, 12) * 5
    test_runner.lower_and_run_model(DivRoundingMode("trunc"), (numerator, _away_from_zero((4, 12))))
    test_runner.lower_and_run_model(DivRoundingMode("floor"), (numerator, _away_from_zero((4, 12))))
