"""aten.convolution (transposed, 2-D): stride, padding, output_padding, dilation, groups, bias on/off."""

import torch


def test_conv_transpose2d_basic(test_runner):
    model = torch.nn.ConvTranspose2d(4, 6, 3)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 6, 6),))


def test_conv_transpose2d_stride_padding(test_runner):
    model = torch.nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 5, 5),))


def test_conv_transpose2d_dilation(test_runner):
    model = torch.nn.ConvTranspose2d(3, 4, 3, dilation=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 5, 5),))


def test_conv_transpose2d_groups_no_bias(test_runner):
    model = torch.nn.ConvTranspose2d(4, 8, 3, groups=2, bias=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 6, 6),))
