"""aten.index_put (accumulate or not; one, two and middle-dim index tensors; broadcast
values), index_add, index_copy."""

import pytest
import torch


class IndexPut(torch.nn.Module):
    def __init__(self, accumulate=False):
        super().__init__()
        self.accumulate = accumulate

    def forward(self, x, index, values):
        return torch.index_put(x, (index,), values, accumulate=self.accumulate)


class IndexPut2d(torch.nn.Module):
    def forward(self, x, rows, cols, values):
        return torch.index_put(x, (rows, cols), values)


class SetItemMiddleDim(torch.nn.Module):
    def forward(self, x, index, values):
        x = x.clone()
        x[:, index] = values
        return x


class SetItemScalar(torch.nn.Module):
    def forward(self, x, index):
        x = x.clone()
        x[index] = 0.0
        return x


class IndexAdd(torch.nn.Module):
    def __init__(self, dim, alpha=1):
        super().__init__()
        self.dim = dim
        self.alpha = alpha

    def forward(self, x, index, source):
        return torch.index_add(x, self.dim, index, source, alpha=self.alpha)


class IndexCopy(torch.nn.Module):
    def forward(self, x, index, source):
        return torch.index_copy(x, 1, index, source)


@pytest.mark.parametrize(
    "shape, values_shape", [((5, 4), (3, 4)), ((4, 3, 2), ())], ids=["2d_rows", "3d_broadcast_scalar"],
)
def test_index_put(test_runner, shape, values_shape):
    index = torch.randperm(shape[0])[:3]
    test_runner.lower_and_run_model(IndexPut(), (torch.randn(shape), index, torch.randn(values_shape)))


def test_index_put_accumulate(test_runner):
    index = torch.tensor([0, 2, 2, 4, 0, 2])  # repeated indices accumulate
    inputs = (torch.randn(5, 3), index, torch.randn(6, 3))
    test_runner.lower_and_run_model(IndexPut(accumulate=True), inputs)


def test_index_put_two_indices(test_runner):
    rows, cols = torch.tensor([0, 1, 3]), torch.tensor([2, 0, 1])
    test_runner.lower_and_run_model(IndexPut2d(), (torch.randn(4, 3), rows, cols, torch.randn(3)))


def test_index_put_middle_dim(test_runner):
    index = torch.tensor([3, 0])
    inputs = (torch.randn(2, 5, 3), index, torch.randn(2, 2, 3))
    test_runner.lower_and_run_model(SetItemMiddleDim(), inputs)


def test_index_put_negative_index_scalar_value(test_runner):
    test_runner.lower_and_run_model(SetItemScalar(), (torch.randn(6, 4), torch.tensor([-1, 1])))


def test_index_put_large(test_runner):
    index = torch.randperm(256)[:100]
    inputs = (torch.randn(256, 128), index, torch.randn(100, 128))
    test_runner.lower_and_run_model(IndexPut(), inputs)


def test_index_put_int32(test_runner):
    index = torch.tensor([1, 3])
    x = torch.randint(-20, 20, (4, 3), dtype=torch.int32)
    values = torch.randint(-20, 20, (2, 3), dtype=torch.int32)
    test_runner.lower_and_run_model(IndexPut(), (x, index, values))


def test_index_add(test_runner):
    index = torch.tensor([0, 2, 2, 1])  # repeated index: contributions add up
    inputs = (torch.randn(3, 4), index, torch.randn(3, 4))
    test_runner.lower_and_run_model(IndexAdd(1, alpha=2.5), inputs)


def test_index_copy(test_runner):
    index = torch.tensor([4, 0, 2])
    test_runner.lower_and_run_model(IndexCopy(), (torch.randn(2, 5), index, torch.randn(2, 3)))
