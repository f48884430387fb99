"""aten.slice: ranges, steps, negative bounds, several dimensions, narrow."""

import torch


class SliceRange(torch.nn.Module):
    def forward(self, x):
        return x[:, 1:4]


class SliceStep(torch.nn.Module):
    def forward(self, x):
        return x[..., 1::2]


class SliceNegative(torch.nn.Module):
    def forward(self, x):
        return x[:, -3:-1]


class SliceSeveralDims(torch.nn.Module):
    def forward(self, x):
        return x[1:3, :, 2:5]


class Narrow(torch.nn.Module):
    def forward(self, x):
        return torch.narrow(x, 2, 1, 3)


def test_slice_range(test_runner):
    test_runner.lower_and_run_model(SliceRange(), (torch.randn(3, 6, 4),))


def test_slice_step(test_runner):
    test_runner.lower_and_run_model(SliceStep(), (torch.randn(2, 3, 9),))


def test_slice_negative(test_runner):
    test_runner.lower_and_run_model(SliceNegative(), (torch.randn(4, 7),))


def test_slice_several_dims(test_runner):
    test_runner.lower_and_run_model(SliceSeveralDims(), (torch.randn(4, 3, 6),))


def test_narrow(test_runner):
    test_runner.lower_and_run_model(Narrow(), (torch.randn(1, 2, 6, 5),))
