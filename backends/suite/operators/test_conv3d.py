"""aten.convolution (3-D): stride, padding, dilation, groups, depthwise, bias on/off, dtypes."""

import pytest
import torch


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_conv3d_bias(test_runner, bias):
    model = torch.nn.Conv3d(3, 4, 3, bias=bias)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 6, 6, 6),))


@pytest.mark.parametrize(
    "kernel_size, stride, padding",
    [(3, 2, 1), ((1, 3, 3), (1, 2, 2), (0, 1, 1)), (2, 1, "same")],
    ids=["k3_s2_p1", "k1x3x3_s1x2x2_p0x1x1", "k2_same"],
)
def test_conv3d_stride_padding(test_runner, kernel_size, stride, padding):
    model = torch.nn.Conv3d(4, 6, kernel_size, stride=stride, padding=padding)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 5, 7, 8),))


def test_conv3d_dilation(test_runner):
    model = torch.nn.Conv3d(2, 4, 3, dilation=(1, 2, 2), padding=(1, 2, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 8, 8),))


@pytest.mark.parametrize("in_channels, out_channels, groups", [(4, 8, 2), (6, 6, 6)],
                         ids=["groups2", "depthwise"])
def test_conv3d_groups(test_runner, in_channels, out_channels, groups):
    model = torch.nn.Conv3d(in_channels, out_channels, 3, groups=groups, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(1, in_channels, 4, 6, 6),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_conv3d_dtype(test_runner, dtype):
    model = torch.nn.Conv3d(3, 4, 3, padding=1).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 5, 5).to(dtype),))


def test_conv3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = torch.nn.Conv3d(3, 4, 3)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 5, 5, 5),),
                                    dynamic_shapes=({0: batch},))
