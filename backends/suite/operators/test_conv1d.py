"""aten.convolution (1-D): stride, padding, dilation, groups, depthwise, bias on/off."""

import torch


def test_conv1d_basic(test_runner):
    test_runner.lower_and_run_model(torch.nn.Conv1d(3, 8, 3), (torch.randn(2, 3, 16),))


def test_conv1d_stride_padding(test_runner):
    model = torch.nn.Conv1d(4, 6, 5, stride=2, padding=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 21),))


def test_conv1d_dilation(test_runner):
    model = torch.nn.Conv1d(2, 4, 3, dilation=2, padding=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 18),))


def test_conv1d_groups_no_bias(test_runner):
    model = torch.nn.Conv1d(4, 8, 3, groups=2, bias=False)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 12),))


def test_conv1d_depthwise(test_runner):
    model = torch.nn.Conv1d(6, 6, 3, groups=6, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(1, 6, 15),))
