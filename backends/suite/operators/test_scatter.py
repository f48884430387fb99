"""aten.scatter (src and value), aten.scatter_add, aten.scatter_reduce (sum, prod, amax,
amin, mean; include_self)."""

import pytest
import torch


class Scatter(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, index, src):
        return torch.scatter(x, self.dim, index, src)


class ScatterValue(torch.nn.Module):
    def __init__(self, dim, value):
        super().__init__()
        self.dim = dim
        self.value = value

    def forward(self, x, index):
        return torch.scatter(x, self.dim, index, self.value)


class ScatterAdd(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, index, src):
        return torch.scatter_add(x, self.dim, index, src)


class ScatterReduce(torch.nn.Module):
    def __init__(self, dim, reduce, include_self):
        super().__init__()
        self.dim = dim
        self.reduce = reduce
        self.include_self = include_self

    def forward(self, x, index, src):
        return torch.scatter_reduce(x, self.dim, index, src, self.reduce,
                                    include_self=self.include_self)


def _unique_index(shape, dim, size):
    """Indices into a dim of `size`, distinct along `dim` (so scatter is deterministic)."""
    order = torch.argsort(torch.rand(*shape[:dim], size, *shape[dim + 1:]), dim=dim)
    return order.narrow(dim, 0, shape[dim])


@pytest.mark.parametrize(
    "shape, dim, src_shape",
    [((3, 7), 1, (2, 4)), ((2, 3, 6), -1, (2, 3, 6))], ids=["2d_smaller_src", "3d_permutation"],
)
def test_scatter_src(test_runner, shape, dim, src_shape):
    dim_pos = dim % len(shape)
    index = _unique_index(src_shape, dim_pos, shape[dim_pos])
    test_runner.lower_and_run_model(Scatter(dim), (torch.randn(shape), index, torch.randn(src_shape)))


def test_scatter_value(test_runner):
    index = _unique_index((3, 2), 1, 5)
    test_runner.lower_and_run_model(ScatterValue(1, -2.5), (torch.randn(3, 5), index))


@pytest.mark.parametrize(
    "shape, dim, src_shape", [((5,), 0, (12,)), ((3, 4, 5), 1, (3, 6, 5))],
    ids=["1d_histogram", "3d_dim1"],
)
def test_scatter_add(test_runner, shape, dim, src_shape):
    index = torch.randint(0, shape[dim], src_shape)
    test_runner.lower_and_run_model(ScatterAdd(dim), (torch.randn(shape), index, torch.randn(src_shape)))


REDUCTIONS = [("sum", True), ("prod", True), ("amin", True), ("amax", False), ("mean", False)]


@pytest.mark.parametrize(
    "reduce, include_self", REDUCTIONS,
    ids=[f"{r}_{'include_self' if s else 'exclude_self'}" for r, s in REDUCTIONS],
)
def test_scatter_reduce(test_runner, reduce, include_self):
    index = torch.randint(0, 4, (3, 8))
    inputs = (torch.randn(3, 4), index, torch.randn(3, 8))
    test_runner.lower_and_run_model(ScatterReduce(1, reduce, include_self), inputs)


def test_scatter_add_large(test_runner):
    index = torch.randint(0, 32, (16, 64, 32))
    inputs = (torch.randn(16, 32, 32), index, torch.randn(16, 64, 32))
    test_runner.lower_and_run_model(ScatterAdd(1), inputs)


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.int64], ids=["bfloat16", "int64"],
)
def test_scatter_add_dtype(test_runner, dtype):
    index = torch.randint(0, 5, (3, 7))
    x = torch.randint(-20, 20, (3, 5)).to(dtype)
    src = torch.randint(-20, 20, (3, 7)).to(dtype)
    test_runner.lower_and_run_model(ScatterAdd(1), (x, index, src))
