"""aten.max_pool2d: kernel, stride, padding, dilation, ceil_mode, rectangular windows, indices."""

import torch


def test_maxpool2d_basic(test_runner):
    test_runner.lower_and_run_model(torch.nn.MaxPool2d(2), (torch.randn(1, 3, 8, 8),))


def test_maxpool2d_stride_padding(test_runner):
    model = torch.nn.MaxPool2d(3, stride=2, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 9, 9),))
    model = torch.nn.MaxPool2d((2, 3), stride=(2, 1))
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 8, 7),))


def test_maxpool2d_dilation(test_runner):
    model = torch.nn.MaxPool2d(3, stride=1, dilation=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 9, 9),))


def test_maxpool2d_ceil_mode(test_runner):
    model = torch.nn.MaxPool2d(3, stride=2, ceil_mode=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 10, 10),))


def test_maxpool2d_return_indices(test_runner):
    model = torch.nn.MaxPool2d(2, return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 6, 6),))
