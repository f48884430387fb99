"""aten.silu: 1-D to 4-D inputs, a wide input range, the nn.SiLU module, and the x * sigmoid(x) spelling."""

import torch


class Silu(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


class SiluModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.silu = torch.nn.SiLU()

    def forward(self, x):
        return self.silu(x)


class TimesSigmoid(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def test_silu_ranks(test_runner):
    test_runner.lower_and_run_model(Silu(), (torch.randn(32),))
    test_runner.lower_and_run_model(Silu(), (torch.randn(2, 3, 4, 5),))


def test_silu_wide_range(test_runner):
    test_runner.lower_and_run_model(Silu(), (torch.randn(4, 16) * 8,))


def test_silu_module(test_runner):
    test_runner.lower_and_run_model(SiluModule(), (torch.randn(3, 5, 6),))


def test_silu_as_times_sigmoid(test_runner):
    test_runner.lower_and_run_model(TimesSigmoid(), (torch.randn(6, 8),))
