"""aten.permute and aten.transpose: NCHW to NHWC, 3-D orders, swapped dimensions, 2-D transpose."""

import torch


class Permute(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return x.permute(self.dims)


class Transpose(torch.nn.Module):
    def __init__(self, dim0, dim1):
        super().__init__()
        self.dim0 = dim0
        self.dim1 = dim1

    def forward(self, x):
        return torch.transpose(x, self.dim0, self.dim1)


class MatrixTranspose(torch.nn.Module):
    def forward(self, x):
        return x.t()


def test_permute_channels_last(test_runner):
    test_runner.lower_and_run_model(Permute((0, 2, 3, 1)), (torch.randn(1, 3, 4, 5),))


def test_permute_3d(test_runner):
    test_runner.lower_and_run_model(Permute((2, 0, 1)), (torch.randn(3, 4, 5),))


def test_transpose(test_runner):
    test_runner.lower_and_run_model(Transpose(1, 2), (torch.randn(2, 3, 4, 5),))
    test_runner.lower_and_run_model(Transpose(-1, -2), (torch.randn(2, 6, 3),))


def test_transpose_2d(test_runner):
    test_runner.lower_and_run_model(MatrixTranspose(), (torch.randn(4, 7),))
