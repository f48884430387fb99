"""aten.diagonal, aten.alias and aten.as_strided, which the edge dialect turns into their
`_copy` ops: a diagonal with an offset and of chosen dims, an alias feeding arithmetic,
strided windows over a contiguous input."""

import pytest
import torch


class Diagonal(torch.nn.Module):
    def __init__(self, offset=0, dim1=0, dim2=1):
        super().__init__()
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def forward(self, x):
        return torch.diagonal(x, self.offset, self.dim1, self.dim2)


class Alias(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.alias(x) * 2 + x


class AsStrided(torch.nn.Module):
    def __init__(self, size, stride, offset=0):
        super().__init__()
        self.size, self.stride, self.offset = size, stride, offset

    def forward(self, x):
        return x.as_strided(self.size, self.stride, self.offset) + 1


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (1, 0, 1), (-2, 0, 1), (0, 1, 2)],
                         ids=["main", "above", "below", "inner_dims"])
def test_diagonal(test_runner, offset, dim1, dim2):
    test_runner.lower_and_run_model(Diagonal(offset, dim1, dim2), (torch.randn(5, 6, 4),))


def test_alias(test_runner):
    test_runner.lower_and_run_model(Alias(), (torch.randn(3, 9),))


@pytest.mark.parametrize("size, stride, offset", [((3, 3), (4, 1), 0), ((2, 4), (1, 3), 2),
                                                  ((4, 2, 2), (3, 2, 1), 1)],
                         ids=["rows", "transposed", "overlapping"])
def test_as_strided(test_runner, size, stride, offset):
    test_runner.lower_and_run_model(AsStrided(size, stride, offset), (torch.randn(4, 5),))
