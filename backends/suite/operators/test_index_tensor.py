"""aten.index.Tensor (advanced indexing x[idx]): leading/middle dims, several and
broadcast index tensors, dtypes."""

import pytest
import torch


class IndexDim0(torch.nn.Module):
    def forward(self, x, index):
        return x[index]


class IndexMiddle(torch.nn.Module):
    def forward(self, x, index):
        return x[:, index]


class IndexLast(torch.nn.Module):
    def forward(self, x, index):
        return x[..., index]


class IndexTwo(torch.nn.Module):
    def forward(self, x, rows, cols):
        return x[rows, cols]


class IndexSeparated(torch.nn.Module):
    def forward(self, x, i, j):
        # Non-adjacent advanced indices: the indexed dims move to the front.
        return x[i, :, j]


class IndexConstant(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("index", torch.tensor([[0, 2], [3, -1]]))

    def forward(self, x):
        return x[self.index]


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, index_shape", [((5, 3), (6,)), ((5, 2, 3), (2, 3))],
    ids=["repeated_rows", "2d_index_tensor"],
)
def test_index_dim0(test_runner, shape, index_shape):
    index = torch.randint(0, shape[0], index_shape)
    test_runner.lower_and_run_model(IndexDim0(), (torch.randn(shape), index))


def test_index_middle_dim(test_runner):
    test_runner.lower_and_run_model(IndexMiddle(), (torch.randn(2, 6, 3), torch.tensor([5, 0, 2])))


def test_index_last_dim(test_runner):
    test_runner.lower_and_run_model(IndexLast(), (torch.randn(2, 3, 4, 6), torch.tensor([1, 1, 4])))


def test_index_two_broadcast(test_runner):
    rows = torch.tensor([[0], [2], [3]])
    cols = torch.tensor([1, 0, 4, 2])
    test_runner.lower_and_run_model(IndexTwo(), (torch.randn(4, 5, 2), rows, cols))


def test_index_separated(test_runner):
    i, j = torch.tensor([0, 1, 1]), torch.tensor([3, 0, 2])
    test_runner.lower_and_run_model(IndexSeparated(), (torch.randn(2, 3, 4), i, j))


def test_index_constant_negative(test_runner):
    test_runner.lower_and_run_model(IndexConstant(), (torch.randn(5, 4),))


def test_index_int32_indices(test_runner):
    index = torch.tensor([3, 0, 1], dtype=torch.int32)
    test_runner.lower_and_run_model(IndexDim0(), (torch.randn(4, 5), index))


def test_index_large(test_runner):
    index = torch.randint(0, 512, (300,))
    test_runner.lower_and_run_model(IndexDim0(), (torch.randn(512, 128), index))


@pytest.mark.parametrize(
    "dtype", [torch.bool], ids=["bool"],
)
def test_index_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(IndexDim0(), (_tensor((5, 3), dtype), torch.tensor([4, 1, 1])))


def test_index_dynamic(test_runner):
    count = torch.export.Dim("count", min=1, max=16)
    test_runner.lower_and_run_model(IndexDim0(), (torch.randn(6, 4), torch.randint(0, 6, (5,))),
                                    dynamic_shapes=(None, {0: count}))
