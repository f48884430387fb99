"""Elementwise unary math: abs, neg, exp, log, sqrt, rsqrt, floor, ceil, round, trunc, reciprocal."""

import pytest
import torch

OPS = {
    "abs": torch.abs,
    "neg": torch.neg,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "reciprocal": torch.reciprocal,
}
NEEDS_POSITIVE_INPUT = {"log", "sqrt", "rsqrt", "reciprocal"}
ROUNDING_OPS = {"floor", "ceil", "round", "trunc"}


class UnaryOp(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


def _input_for(name):
    shape = (2, 3, 16)
    if name in NEEDS_POSITIVE_INPUT:
        return torch.rand(shape) * 4 + 0.25
    if name in ROUNDING_OPS:
        return torch.randn(shape) * 4
    return torch.randn(shape)


@pytest.mark.parametrize("op", list(OPS))
def test_unary_math(test_runner, op):
    test_runner.lower_and_run_model(UnaryOp(op), (_input_for(op),))
