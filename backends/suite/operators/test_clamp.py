"""aten.clamp and aten.hardtanh: both bounds, one bound, tensor bounds, default and custom hardtanh range."""

import torch


class Clamp(torch.nn.Module):
    def __init__(self, min_value=None, max_value=None):
        super().__init__()
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        return torch.clamp(x, min=self.min_value, max=self.max_value)


class ClampTensorBounds(torch.nn.Module):
    def forward(self, x, low, high):
        return torch.clamp(x, min=low, max=high)


class Hardtanh(torch.nn.Module):
    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.hardtanh = torch.nn.Hardtanh(min_val=min_val, max_val=max_val)

    def forward(self, x):
        return self.hardtanh(x)


def test_clamp_both_bounds(test_runner):
    test_runner.lower_and_run_model(Clamp(-0.5, 0.75), (torch.randn(3, 4, 5),))


def test_clamp_one_bound(test_runner):
    test_runner.lower_and_run_model(Clamp(min_value=0.2), (torch.randn(30),))
    test_runner.lower_and_run_model(Clamp(max_value=-0.1), (torch.randn(2, 3, 2, 4),))


def test_clamp_tensor_bounds(test_runner):
    low = -torch.rand(1, 8)
    high = torch.rand(1, 8)
    test_runner.lower_and_run_model(ClampTensorBounds(), (torch.randn(4, 8), low, high))


def test_hardtanh(test_runner):
    test_runner.lower_and_run_model(Hardtanh(), (torch.randn(4, 12) * 2,))
    test_runner.lower_and_run_model(Hardtanh(-2.0, 0.5), (torch.randn(2, 3, 8) * 2,))
