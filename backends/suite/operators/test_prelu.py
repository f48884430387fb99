"""aten.prelu (unittest-style, through the shim): one shared slope and per-channel slopes."""

import torch

from etsuite.backends.harness.case.shim import OperatorTest, operator_test


class PReLU(torch.nn.Module):
    def __init__(self, num_parameters, init):
        super().__init__()
        self.prelu = torch.nn.PReLU(num_parameters=num_parameters, init=init)

    def forward(self, x):
        return self.prelu(x)


@operator_test
class TestPReLU(OperatorTest):
    def test_prelu_shared_slope(self, flow):
        self._test_op(PReLU(1, 0.25), (torch.randn(2, 3, 4, 4),), flow)

    def test_prelu_per_channel(self, flow):
        self._test_op(PReLU(3, 0.1), (torch.randn(1, 3, 5, 5),), flow)

    def test_prelu_2d_input(self, flow):
        self._test_op(PReLU(6, 0.5), (torch.randn(4, 6),), flow)
