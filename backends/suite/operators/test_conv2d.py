"""aten.convolution (2-D): stride, padding, dilation, groups, depthwise, bias on/off."""

import torch


def test_conv2d_no_bias(test_runner):
    model = torch.nn.Conv2d(3, 8, 3, bias=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 10, 10),))


def test_conv2d_stride_padding(test_runner):
    model = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 9, 9),))
    model = torch.nn.Conv2d(3, 4, (3, 5), stride=(1, 2), padding=(1, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 8, 11),))


def test_conv2d_dilation(test_runner):
    model = torch.nn.Conv2d(3, 6, 3, dilation=2, padding="same")
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 10, 10),))


def test_conv2d_groups(test_runner):
    model = torch.nn.Conv2d(4, 8, 3, groups=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 8, 8),))


def test_conv2d_depthwise(test_runner):
    model = torch.nn.Conv2d(6, 12, 3, groups=6, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(1, 6, 8, 8),))
