"""aten.flip (also fliplr/flipud): one, several and all dims, negative dims, 1-D to 5-D,
size-1 dims, dtypes."""

import pytest
import torch


class Flip(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.flip(x, self.dims)


class FlipLrUd(torch.nn.Module):
    def forward(self, x):
        return torch.fliplr(x) + torch.flipud(x)


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dims",
    [((9,), (0,)), ((2, 3, 4, 5), (1, 3)), ((2, 3, 4), (0, 1, 2)), ((2, 3, 4, 5, 3), (-2, 0))],
    ids=["1d", "4d_two_dims", "3d_all_dims", "5d_negative_dims"],
)
def test_flip_dims(test_runner, shape, dims):
    test_runner.lower_and_run_model(Flip(dims), (torch.randn(shape),))


def test_flip_lr_ud(test_runner):
    test_runner.lower_and_run_model(FlipLrUd(), (torch.randn(5, 5, 3),))


def test_flip_large(test_runner):
    test_runner.lower_and_run_model(Flip((2, 3)), (torch.randn(2, 16, 40, 48),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_flip_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Flip((0, -1)), (_tensor((3, 4, 5), dtype),))


def test_flip_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Flip((-1,)), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
