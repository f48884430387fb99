"""aten.avg_pool3d: kernel, stride, padding, count_include_pad, ceil_mode, divisor_override."""

import pytest
import torch


class AvgPool3d(torch.nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x):
        return torch.nn.functional.avg_pool3d(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override)


@pytest.mark.parametrize(
    "kernel_size, stride, padding",
    [(2, None, 0), ((1, 3, 2), (1, 2, 2), 0), (3, 2, 1)],
    ids=["k2", "k1x3x2_s1x2x2", "k3_s2_p1"],
)
def test_avgpool3d_kernel_stride_padding(test_runner, kernel_size, stride, padding):
    model = AvgPool3d(kernel_size, stride, padding)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 6, 7, 8),))


def test_avgpool3d_exclude_pad(test_runner):
    model = AvgPool3d(3, stride=2, padding=1, count_include_pad=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 7, 7, 7),))


def test_avgpool3d_ceil_mode(test_runner):
    model = AvgPool3d(3, stride=2, padding=1, ceil_mode=True,
                      count_include_pad=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 6, 8, 8),))


def test_avgpool3d_divisor_override(test_runner):
    model = AvgPool3d(2, divisor_override=5)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 6, 6),))


def test_avgpool3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AvgPool3d(2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 6, 6),),
                                    dynamic_shapes=({0: batch},))
