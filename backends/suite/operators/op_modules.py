"""Small modules that wrap one operator call, shared by the operator tests that need the
same shape of wrapper (an op with a fixed scalar operand)."""

import torch


class WithScalar(torch.nn.Module):
    """`op(x, scalar)` with a Python number held by the module. Which overload the
    exported graph holds depends on `op`: export turns `torch.add(x, 2)` into add.Tensor,
    while a direct `aten.add.Scalar` call keeps the Scalar overload."""

    def __init__(self, op, scalar):
        super().__init__()
        self.op = op
        self.scalar = scalar

    def forward(self, x):
        return self.op(x, self.scalar)
