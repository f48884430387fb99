"""aten.avg_pool1d: kernel, stride, padding, count_include_pad, ceil_mode, unbatched, dtypes."""

import pytest
import torch


class AvgPool1d(torch.nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, x):
        return torch.nn.functional.avg_pool1d(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad)


@pytest.mark.parametrize(
    "kernel_size, stride, padding",
    [(2, None, 0), (3, 1, 1), (4, 3, 2)],
    ids=["k2", "k3_s1_p1", "k4_s3_p2"],
)
def test_avgpool1d_kernel_stride_padding(test_runner, kernel_size, stride, padding):
    model = AvgPool1d(kernel_size, stride, padding)
    test_runner.lower_and_run_model(model, (torch.randn(4, 16, 127),))


def test_avgpool1d_exclude_pad(test_runner):
    model = AvgPool1d(3, stride=2, padding=1, count_include_pad=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 10),))


def test_avgpool1d_ceil_mode(test_runner):
    model = AvgPool1d(3, stride=2, padding=1, ceil_mode=True,
                      count_include_pad=False)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 10),))


def test_avgpool1d_unbatched(test_runner):
    test_runner.lower_and_run_model(AvgPool1d(2), (torch.randn(5, 9),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_avgpool1d_dtype(test_runner, dtype):
    model = AvgPool1d(3, stride=2, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 16).to(dtype),))


def test_avgpool1d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AvgPool1d(2)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 12),),
                                    dynamic_shapes=({0: batch},))
