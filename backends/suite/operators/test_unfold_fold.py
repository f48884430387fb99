"""aten.unfold (Tensor.unfold sliding windows) and F.unfold/F.fold (im2col/col2im): size,
step, dilation, padding."""

import pytest
import torch


class TensorUnfold(torch.nn.Module):
    def __init__(self, dim, size, step):
        super().__init__()
        self.dim = dim
        self.size = size
        self.step = step

    def forward(self, x):
        return x.unfold(self.dim, self.size, self.step)


class Im2Col(torch.nn.Module):
    def __init__(self, kernel_size, **options):
        super().__init__()
        self.kernel_size = kernel_size
        self.options = options

    def forward(self, x):
        return torch.nn.functional.unfold(x, self.kernel_size, **self.options)


class Col2Im(torch.nn.Module):
    def __init__(self, output_size, kernel_size, **options):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.options = options

    def forward(self, x):
        return torch.nn.functional.fold(x, self.output_size, self.kernel_size, **self.options)


@pytest.mark.parametrize(
    "shape, dim, size, step",
    [((10,), 0, 3, 1), ((2, 7, 3), 1, 2, 3), ((2, 3, 8, 5), -2, 8, 1)],
    ids=["1d_overlapping", "3d_step_larger_than_size", "4d_whole_dim"],
)
def test_tensor_unfold(test_runner, shape, dim, size, step):
    test_runner.lower_and_run_model(TensorUnfold(dim, size, step), (torch.randn(shape),))


@pytest.mark.parametrize(
    "kernel_size, options",
    [((2, 3), {"stride": 2, "padding": 1}), (2, {"dilation": 2})], ids=["k2x3_stride2_pad1", "dilation2"],
)
def test_im2col(test_runner, kernel_size, options):
    test_runner.lower_and_run_model(Im2Col(kernel_size, **options), (torch.randn(2, 3, 7, 8),))


@pytest.mark.parametrize(
    "kernel_size, options, blocks",
    [(2, {"stride": 2}, 12), (3, {"padding": 1}, 48)],
    ids=["non_overlapping", "overlapping_padded"],
)
def test_col2im(test_runner, kernel_size, options, blocks):
    channels = 2 * kernel_size * kernel_size
    model = Col2Im((6, 8), kernel_size, **options)
    test_runner.lower_and_run_model(model, (torch.randn(1, channels, blocks),))


def test_unfold_large(test_runner):
    test_runner.lower_and_run_model(TensorUnfold(2, 8, 4), (torch.randn(4, 32, 256),))


def test_tensor_unfold_dtype(test_runner):
    x = torch.randint(-50, 50, (3, 10), dtype=torch.int32)
    test_runner.lower_and_run_model(TensorUnfold(1, 3, 2), (x,))


def test_tensor_unfold_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(TensorUnfold(1, 3, 2), (torch.randn(3, 9),),
                                    dynamic_shapes=({0: batch},))
