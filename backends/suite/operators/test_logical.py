"""aten.logical_and, logical_or, logical_xor, logical_not: bool and float inputs (zero is
false, nan is true), broadcasting, dynamic batch."""

import pytest
import torch

BINARY = {"and": torch.logical_and, "or": torch.logical_or, "xor": torch.logical_xor}


class LogicalBinary(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = BINARY[name]

    def forward(self, x, y):
        return self.op(x, y)


class LogicalNot(torch.nn.Module):
    def forward(self, x):
        return torch.logical_not(x)


def _input(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    # about 40 % exact zeros, the rest random of both signs
    return (torch.randn(shape) * (torch.rand(shape) > 0.4)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32], ids=["bool", "float32"])
@pytest.mark.parametrize("op", list(BINARY))
def test_logical_binary(test_runner, op, dtype):
    shape = (3, 4, 5)
    test_runner.lower_and_run_model(LogicalBinary(op), (_input(shape, dtype), _input(shape, dtype)))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32], ids=["bool", "float32"])
def test_logical_not(test_runner, dtype):
    test_runner.lower_and_run_model(LogicalNot(), (_input((4, 3, 6), dtype),))


@pytest.mark.parametrize("op", list(BINARY))
def test_logical_broadcast(test_runner, op):
    test_runner.lower_and_run_model(LogicalBinary(op),
                                    (_input((2, 3, 6), torch.bool), _input((6,), torch.bool)))


def test_logical_mixed_dtypes(test_runner):
    test_runner.lower_and_run_model(LogicalBinary("and"),
                                    (_input((4, 7), torch.bool), _input((4, 7), torch.float32)))


def test_logical_float_special_values(test_runner):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([0.0, -0.0, nan, inf, -inf, 1e-40, 0.0, nan])
    y = torch.tensor([0.0, 1.0, 0.0, -0.0, inf, 0.0, nan, nan])
    test_runner.lower_and_run_model(LogicalBinary("xor"), (x, y))
    test_runner.lower_and_run_model(LogicalNot(), (x,))


def test_logical_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _input((4, 6), torch.bool), _input((4, 6), torch.bool)
    test_runner.lower_and_run_model(LogicalBinary("or"), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
