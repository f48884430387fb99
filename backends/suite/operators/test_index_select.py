"""aten.index_select (unittest-style, through the shim): first, last and middle dim."""

import torch

from etsuite.backends.harness.case.shim import OperatorTest, dtype_test, operator_test


class IndexSelect(torch.nn.Module):
    def __init__(self, dim, index):
        super().__init__()
        self.dim = dim
        self.register_buffer("index", torch.tensor(index, dtype=torch.long))

    def forward(self, x):
        return torch.index_select(x, self.dim, self.index)


@operator_test
class TestIndexSelect(OperatorTest):
    @dtype_test
    def test_index_select_dim0(self, flow, dtype):
        self._test_op(IndexSelect(0, [2, 0, 2]), (torch.randn(4, 5).to(dtype),), flow)

    def test_index_select_last_dim(self, flow):
        self._test_op(IndexSelect(-1, [1, 3]), (torch.randn(2, 3, 4),), flow)

    def test_index_select_middle_dim(self, flow):
        self._test_op(IndexSelect(1, [0]), (torch.randn(2, 3, 4),), flow)
