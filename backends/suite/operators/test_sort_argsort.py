"""aten.sort (default and stable overloads, values and indices) and aten.argsort: dim,
descending, stable sort with ties, float and integer dtypes, nan/inf, dynamic batch."""

import pytest
import torch


class Sort(torch.nn.Module):
    def __init__(self, dim=-1, descending=False, stable=False):
        super().__init__()
        self.dim = dim
        self.descending = descending
        self.stable = stable

    def forward(self, x):
        if self.stable:  # exports as aten.sort.stable; without it, as aten.sort.default
            values, indices = torch.sort(x, dim=self.dim, descending=self.descending, stable=True)
        else:
            values, indices = torch.sort(x, dim=self.dim, descending=self.descending)
        return values, indices


class Argsort(torch.nn.Module):
    def __init__(self, dim=-1, descending=False):
        super().__init__()
        self.dim = dim
        self.descending = descending

    def forward(self, x):
        return torch.argsort(x, dim=self.dim, descending=self.descending)


def _distinct(shape, dtype=torch.float32):
    # distinct values, so the indices are unambiguous without a stable sort
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)


@pytest.mark.parametrize("dim", [-1, 0, 1], ids=["dim_neg1", "dim0", "dim1"])
def test_sort_dim(test_runner, dim):
    test_runner.lower_and_run_model(Sort(dim), (torch.randn(4, 6, 5),))


def test_sort_descending(test_runner):
    test_runner.lower_and_run_model(Sort(descending=True), (torch.randn(3, 11),))


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_argsort(test_runner, descending):
    test_runner.lower_and_run_model(Argsort(descending=descending), (torch.randn(5, 9),))
    test_runner.lower_and_run_model(Argsort(dim=0, descending=descending), (torch.randn(7, 3),))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
def test_sort_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Sort(), (_distinct((6, 10), dtype),))


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_sort_stable_ties(test_runner, descending):
    # many ties: a stable sort keeps equal elements in input order
    test_runner.lower_and_run_model(Sort(descending=descending, stable=True), (torch.randint(0, 4, (4, 16)),))


def test_sort_special_values(test_runner):
    # nan sorts after +inf
    x = torch.tensor([[3.0, float("nan"), -1.0, float("inf"), float("-inf"), 0.5]])
    test_runner.lower_and_run_model(Sort(), (x,))


def test_sort_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Sort(), (torch.randn(4, 10),), dynamic_shapes=({0: batch},))
