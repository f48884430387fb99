"""aten.max_pool1d(_with_indices): kernel, stride, padding, dilation, ceil_mode, indices, dtypes."""

import pytest
import torch


class MaxPool1d(torch.nn.Module):
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
        return torch.nn.functional.max_pool1d(
            x, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


@pytest.mark.parametrize(
    "kernel_size, stride, padding",
    [(2, None, 0), (3, 1, 1), (4, 3, 2)],
    ids=["k2", "k3_s1_p1", "k4_s3_p2"],
)
def test_maxpool1d_kernel_stride_padding(test_runner, kernel_size, stride, padding):
    model = MaxPool1d(kernel_size, stride, padding)
    test_runner.lower_and_run_model(model, (torch.randn(4, 16, 127),))


def test_maxpool1d_dilation(test_runner):
    model = MaxPool1d(3, stride=2, padding=1, dilation=3)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 15),))


def test_maxpool1d_ceil_mode(test_runner):
    model = MaxPool1d(3, stride=2, ceil_mode=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 10),))


def test_maxpool1d_return_indices(test_runner):
    model = MaxPool1d(3, stride=2, padding=1, return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 11),))


def test_maxpool1d_negative_and_unbatched(test_runner):
    model = MaxPool1d(2)
    test_runner.lower_and_run_model(model, (-torch.rand(5, 12) - 1.0,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_maxpool1d_dtype(test_runner, dtype):
    model = MaxPool1d(3, stride=2, padding=1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 16).to(dtype),))


def test_maxpool1d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = MaxPool1d(2)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 12),),
                                    dynamic_shapes=({0: batch},))
