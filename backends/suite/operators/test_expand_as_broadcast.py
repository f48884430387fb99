"""aten.expand via expand_as and broadcast_to (and broadcast_tensors): singleton and new dims, 0-D, dtypes."""

import pytest
import torch


class ExpandAs(torch.nn.Module):
    def forward(self, x, y):
        return x.expand_as(y) * y


class BroadcastTo(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return torch.broadcast_to(x, self.shape)


class BroadcastTensors(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.broadcast_tensors(x, y, z)


class BroadcastToInputShape(torch.nn.Module):
    def forward(self, x, y):
        return torch.broadcast_to(x, y.shape) + y


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "x_shape, y_shape", [((4,), (2, 3, 4)), ((1, 3, 1, 5), (2, 3, 4, 5))],
    ids=["new_leading_dims", "4d_mixed"],
)
def test_expand_as(test_runner, x_shape, y_shape):
    test_runner.lower_and_run_model(ExpandAs(), (torch.randn(x_shape), torch.randn(y_shape)))


@pytest.mark.parametrize(
    "x_shape, shape", [((), (2, 3)), ((2, 1, 3), (4, 2, 5, 3)), ((1, 1, 1, 1, 2), (2, 3, 1, 4, 2))],
    ids=["0d", "new_and_singleton", "5d"],
)
def test_broadcast_to(test_runner, x_shape, shape):
    test_runner.lower_and_run_model(BroadcastTo(shape), (torch.randn(x_shape),))


def test_broadcast_tensors(test_runner):
    inputs = (torch.randn(3, 1), torch.randn(1, 4), torch.randn(2, 1, 1))
    test_runner.lower_and_run_model(BroadcastTensors(), inputs)


def test_broadcast_to_large(test_runner):
    test_runner.lower_and_run_model(BroadcastTo((16, 64, 64)), (torch.randn(1, 64, 1),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_broadcast_to_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(BroadcastTo((3, 4, 5)), (_tensor((4, 1), dtype),))


def test_broadcast_to_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=2, max=8)
    test_runner.lower_and_run_model(BroadcastToInputShape(), (torch.randn(1, 4), torch.randn(3, 4)),
                                    dynamic_shapes=(None, {0: batch}))
