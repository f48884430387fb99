"""aten.expand (unittest-style, through the shim): singleton dims, new leading dims, -1."""

import torch

from etsuite.backends.harness.case.shim import OperatorTest, dtype_test, operator_test


class Expand(torch.nn.Module):
    def __init__(self, *sizes):
        super().__init__()
        self.sizes = sizes

    def forward(self, x):
        return x.expand(*self.sizes) + 0


@operator_test
class TestExpand(OperatorTest):
    @dtype_test
    def test_expand_singleton(self, flow, dtype):
        self._test_op(Expand(3, 4), (torch.randn(1, 4).to(dtype),), flow)

    def test_expand_new_leading_dims(self, flow):
        self._test_op(Expand(2, 3, 5), (torch.randn(3, 5),), flow)

    def test_expand_keep_dims(self, flow):
        self._test_op(Expand(-1, 6, -1), (torch.randn(2, 1, 3),), flow)
