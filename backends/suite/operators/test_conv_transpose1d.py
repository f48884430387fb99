"""aten.convolution (transposed 1-D): stride, padding, output_padding, dilation, groups, bias."""

import pytest
import torch


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_conv_transpose1d_bias(test_runner, bias):
    model = torch.nn.ConvTranspose1d(4, 6, 3, bias=bias)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 10),))


@pytest.mark.parametrize(
    "kernel_size, stride, padding, output_padding",
    [(3, 2, 1, 1), (4, 3, 0, 2), (5, 1, 2, 0)],
    ids=["k3_s2_p1_op1", "k4_s3_op2", "k5_s1_p2"],
)
def test_conv_transpose1d_stride_padding(test_runner, kernel_size, stride, padding,
                                         output_padding):
    model = torch.nn.ConvTranspose1d(4, 4, kernel_size, stride=stride, padding=padding,
                                     output_padding=output_padding)
    test_runner.lower_and_run_model(model, (torch.randn(4, 4, 9),))


def test_conv_transpose1d_dilation(test_runner):
    model = torch.nn.ConvTranspose1d(3, 4, 3, stride=2, dilation=2, output_padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 8),))


@pytest.mark.parametrize("in_channels, out_channels, groups", [(4, 8, 2), (6, 6, 6)],
                         ids=["groups2", "depthwise"])
def test_conv_transpose1d_groups(test_runner, in_channels, out_channels, groups):
    model = torch.nn.ConvTranspose1d(in_channels, out_channels, 3, groups=groups, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, in_channels, 7),))


def test_conv_transpose1d_unbatched(test_runner):
    model = torch.nn.ConvTranspose1d(3, 5, 2, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(3, 6),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_conv_transpose1d_dtype(test_runner, dtype):
    model = torch.nn.ConvTranspose1d(4, 4, 3, stride=2, padding=1).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 8).to(dtype),))


def test_conv_transpose1d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = torch.nn.ConvTranspose1d(4, 6, 3, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 10),),
                                    dynamic_shapes=({0: batch},))
