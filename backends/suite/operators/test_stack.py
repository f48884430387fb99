"""aten.stack (and dstack): stacking dim, input rank 0 to 4, one and many inputs, dtypes."""

import pytest
import torch


class Stack(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, *tensors):
        return torch.stack(tensors, dim=self.dim)


class Dstack(torch.nn.Module):
    def forward(self, x, y):
        return torch.dstack((x, y))


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dim",
    [((), 0), ((5,), -1), ((2, 3, 4), 3), ((2, 1, 3, 4), -2)],
    ids=["0d", "1d_dim_last", "3d_new_last_dim", "4d_negative_dim"],
)
def test_stack_dim(test_runner, shape, dim):
    inputs = tuple(torch.randn(shape) for _ in range(3))
    test_runner.lower_and_run_model(Stack(dim), inputs)


def test_stack_single_input(test_runner):
    test_runner.lower_and_run_model(Stack(1), (torch.randn(3, 4),))


def test_stack_many_inputs(test_runner):
    inputs = tuple(torch.randn(4, 16, 24) for _ in range(10))
    test_runner.lower_and_run_model(Stack(2), inputs)


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_stack_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Stack(1), (_tensor((3, 4), dtype), _tensor((3, 4), dtype)))


def test_dstack(test_runner):
    test_runner.lower_and_run_model(Dstack(), (torch.randn(3, 4), torch.randn(3, 4)))


def test_stack_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Stack(1), (torch.randn(3, 4), torch.randn(3, 4)),
                                    dynamic_shapes=(({0: batch}, {0: batch}),))
