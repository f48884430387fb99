"""aten.hardswish and aten.hardsigmoid: inputs past both saturation points, several ranks, the nn modules."""

import torch


class Hardswish(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardswish(x)


class HardswishModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hardswish = torch.nn.Hardswish()

    def forward(self, x):
        return self.hardswish(x)


class Hardsigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardsigmoid(x)


class HardsigmoidModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hardsigmoid = torch.nn.Hardsigmoid()

    def forward(self, x):
        return self.hardsigmoid(x)


def test_hardswish(test_runner):
    test_runner.lower_and_run_model(Hardswish(), (torch.randn(40) * 4,))
    test_runner.lower_and_run_model(Hardswish(), (torch.randn(2, 3, 4, 5) * 4,))


def test_hardswish_module(test_runner):
    test_runner.lower_and_run_model(HardswishModule(), (torch.randn(5, 8) * 4,))


def test_hardsigmoid(test_runner):
    test_runner.lower_and_run_model(Hardsigmoid(), (torch.randn(40) * 4,))
    test_runner.lower_and_run_model(Hardsigmoid(), (torch.randn(2, 3, 4, 5) * 4,))


def test_hardsigmoid_module(test_runner):
    test_runner.lower_and_run_model(HardsigmoidModule(), (torch.randn(5, 8) * 4,))
