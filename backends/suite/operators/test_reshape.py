"""aten.view_copy via reshape/unflatten/reshape_as: rank changes 0-D to 5-D, size-1 dims,
dtypes, dynamic batch."""

import pytest
import torch


class Reshape(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.reshape(self.shape)


class ReshapeBatch(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1, 2)


class Unflatten(torch.nn.Module):
    def forward(self, x):
        return x.unflatten(1, (2, -1, 3))


class ReshapeAs(torch.nn.Module):
    def forward(self, x, y):
        return x.reshape_as(y) + y


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "in_shape, out_shape",
    [((60,), (1, 3, 1, 4, 5)), ((2, 1, 3, 4, 1), (2, 12)), ((1, 1), ()), ((4, 6), (-1, 2, 2))],
    ids=["1d_to_5d_size1", "5d_drop_size1", "to_0d", "leading_inferred"],
)
def test_reshape_shapes(test_runner, in_shape, out_shape):
    test_runner.lower_and_run_model(Reshape(out_shape), (torch.randn(in_shape),))


def test_unflatten(test_runner):
    test_runner.lower_and_run_model(Unflatten(), (torch.randn(2, 12, 3),))


def test_reshape_as(test_runner):
    test_runner.lower_and_run_model(ReshapeAs(), (torch.randn(3, 8), torch.randn(2, 3, 4)))


def test_reshape_large(test_runner):
    test_runner.lower_and_run_model(Reshape((-1, 64)), (torch.randn(16, 48, 64),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_reshape_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Reshape((4, 3, 2)), (_tensor((2, 12), dtype),))


def test_reshape_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(ReshapeBatch(), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
