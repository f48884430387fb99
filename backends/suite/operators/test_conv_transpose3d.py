"""aten.convolution (transposed 3-D): stride, padding, output_padding, dilation, groups, bias."""

import pytest
import torch


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_conv_transpose3d_bias(test_runner, bias):
    model = torch.nn.ConvTranspose3d(3, 4, 3, bias=bias)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 4, 4),))


@pytest.mark.parametrize(
    "kernel_size, stride, padding, output_padding",
    [(3, 2, 1, 1), ((1, 3, 2), (1, 2, 2), (0, 1, 0), (0, 1, 1))],
    ids=["k3_s2_p1_op1", "k1x3x2_s1x2x2_p0x1x0_op0x1x1"],
)
def test_conv_transpose3d_stride_padding(test_runner, kernel_size, stride, padding,
                                         output_padding):
    model = torch.nn.ConvTranspose3d(4, 4, kernel_size, stride=stride, padding=padding,
                                     output_padding=output_padding)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 3, 4, 5),))


def test_conv_transpose3d_dilation(test_runner):
    model = torch.nn.ConvTranspose3d(2, 3, 3, dilation=(1, 2, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 3, 4, 4),))


@pytest.mark.parametrize("in_channels, out_channels, groups", [(4, 8, 2), (4, 4, 4)],
                         ids=["groups2", "depthwise"])
def test_conv_transpose3d_groups(test_runner, in_channels, out_channels, groups):
    model = torch.nn.ConvTranspose3d(in_channels, out_channels, 2, groups=groups, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, in_channels, 3, 4, 4),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_conv_transpose3d_dtype(test_runner, dtype):
    model = torch.nn.ConvTranspose3d(3, 3, 2, stride=2).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 3, 4, 4).to(dtype),))


def test_conv_transpose3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = torch.nn.ConvTranspose3d(3, 4, 3, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 3, 4, 4),),
                                    dynamic_shapes=({0: batch},))
