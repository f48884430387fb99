"""aten.max.dim and aten.min.dim: the values and the indices of a reduction over one
dimension, keepdim, negative dims, int32, and the values alone."""

import pytest
import torch

OPS = {"max": torch.max, "min": torch.min}


class ValuesAndIndices(torch.nn.Module):
    def __init__(self, name, dim, keepdim=False):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        values, indices = self.op(x, self.dim, self.keepdim)
        return values, indices


class ValuesOnly(torch.nn.Module):
    def __init__(self, name, dim):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim

    def forward(self, x):
        return self.op(x, self.dim).values * 2


# Continuous random inputs have no ties, so every implementation picks the same index.
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dim, keepdim", [(1, False), (-1, True), (0, False)],
                         ids=["dim1", "last_keepdim", "dim0"])
def test_max_min_dim(test_runner, op, dim, keepdim):
    test_runner.lower_and_run_model(ValuesAndIndices(op, dim, keepdim), (torch.randn(4, 7, 5),))


@pytest.mark.parametrize("op", list(OPS))
def test_max_min_dim_int32(test_runner, op):
    x = torch.randperm(60, dtype=torch.int32).reshape(6, 10)  # distinct values: no ties
    test_runner.lower_and_run_model(ValuesAndIndices(op, 1), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_max_min_dim_values_only(test_runner, op):
    test_runner.lower_and_run_model(ValuesOnly(op, 2), (torch.randn(2, 3, 9),))
