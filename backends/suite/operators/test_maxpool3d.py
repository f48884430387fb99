"""aten.max_pool3d_with_indices: kernel, stride, padding, dilation, ceil_mode, indices, dtypes."""

import pytest
import torch


class MaxPool3d(torch.nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                 return_indices=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.ceil_mode = ceil_mode
        self.return_indices = return_indices

    def forward(self, x):
        return torch.nn.functional.max_pool3d(
            x, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


@pytest.mark.parametrize(
    "kernel_size, stride, padding",
    [(2, None, 0), ((1, 3, 2), (1, 2, 2), 0), (3, 2, 1)],
    ids=["k2", "k1x3x2_s1x2x2", "k3_s2_p1"],
)
def test_maxpool3d_kernel_stride_padding(test_runner, kernel_size, stride, padding):
    model = MaxPool3d(kernel_size, stride, padding)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 6, 7, 8),))


def test_maxpool3d_dilation(test_runner):
    model = MaxPool3d(3, stride=1, padding=1, dilation=(1, 2, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 8, 8),))


def test_maxpool3d_ceil_mode(test_runner):
    model = MaxPool3d(3, stride=2, ceil_mode=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 6, 8, 8),))


def test_maxpool3d_return_indices(test_runner):
    model = MaxPool3d(2, stride=2, padding=1, return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 5, 6, 6),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_maxpool3d_dtype(test_runner, dtype):
    model = MaxPool3d(2, stride=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 6, 6, 6).to(dtype),))


def test_maxpool3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = MaxPool3d(2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 6, 6),),
                                    dynamic_shapes=({0: batch},))
