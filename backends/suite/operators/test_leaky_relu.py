"""aten.leaky_relu: default slope, small and large slopes, a negative slope, several ranks."""

import torch


class LeakyRelu(torch.nn.Module):
    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


class LeakyReluModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaky_relu = torch.nn.LeakyReLU()

    def forward(self, x):
        return self.leaky_relu(x)


def test_leaky_relu_default_slope(test_runner):
    test_runner.lower_and_run_model(LeakyRelu(), (torch.randn(36),))
    test_runner.lower_and_run_model(LeakyReluModule(), (torch.randn(2, 3, 4, 5),))


def test_leaky_relu_custom_slope(test_runner):
    test_runner.lower_and_run_model(LeakyRelu(0.2), (torch.randn(4, 9),))
    test_runner.lower_and_run_model(LeakyRelu(1.5), (torch.randn(3, 4, 6),))


def test_leaky_relu_negative_slope(test_runner):
    test_runner.lower_and_run_model(LeakyRelu(-0.3), (torch.randn(5, 8),))
