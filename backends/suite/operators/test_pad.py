"""aten.constant_pad_nd via F.pad: one, two and three dimensions, non-zero value, negative pads."""

import torch


class ConstantPad(torch.nn.Module):
    def __init__(self, pad, value=0.0):
        super().__init__()
        self.pad = pad
        self.value = value

    def forward(self, x):
        return torch.nn.functional.pad(x, self.pad, mode="constant", value=self.value)


def test_pad_last_dim(test_runner):
    test_runner.lower_and_run_model(ConstantPad((1, 2)), (torch.randn(3, 4, 5),))


def test_pad_two_dims(test_runner):
    test_runner.lower_and_run_model(ConstantPad((1, 1, 2, 0), value=1.5), (torch.randn(1, 3, 4, 4),))


def test_pad_three_dims(test_runner):
    test_runner.lower_and_run_model(ConstantPad((1, 1, 0, 2, 1, 0)), (torch.randn(1, 2, 3, 4),))


def test_pad_negative(test_runner):
    test_runner.lower_and_run_model(ConstantPad((-1, 2, 1, -2)), (torch.randn(2, 6, 6),))
