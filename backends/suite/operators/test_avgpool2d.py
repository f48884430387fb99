"""aten.avg_pool2d: kernel, stride, padding, count_include_pad, ceil_mode, divisor_override."""

import torch


def test_avgpool2d_basic(test_runner):
    test_runner.lower_and_run_model(torch.nn.AvgPool2d(2), (torch.randn(1, 3, 8, 8),))


def test_avgpool2d_stride_padding(test_runner):
    model = torch.nn.AvgPool2d(3, stride=2, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 9, 9),))


def test_avgpool2d_exclude_pad(test_runner):
    model = torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 9, 9),))


def test_avgpool2d_ceil_mode(test_runner):
    model = torch.nn.AvgPool2d((3, 2), stride=2, ceil_mode=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 10, 9),))


def test_avgpool2d_divisor_override(test_runner):
    model = torch.nn.AvgPool2d(2, divisor_override=3)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 6, 6),))
