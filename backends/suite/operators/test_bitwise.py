"""aten.bitwise_and/or/xor/not and bitwise_left_shift/right_shift: int32/int64/int8/uint8
and bool, scalar operand, broadcasting, dynamic batch."""

import pytest
import torch

from .op_modules import WithScalar

BINARY = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}
SHIFTS = {"left_shift": torch.bitwise_left_shift, "right_shift": torch.bitwise_right_shift}
INT_DTYPES = [torch.int32, torch.int64, torch.bool]
INT_IDS = ["int32", "int64", "bool"]


class Bitwise(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x, y):
        return self.op(x, y)


class AllBinary(torch.nn.Module):
    """bitwise_and, bitwise_or and bitwise_xor of the same operands, in that order."""

    def forward(self, x, y):
        return torch.bitwise_and(x, y), torch.bitwise_or(x, y), torch.bitwise_xor(x, y)


class BitwiseNot(torch.nn.Module):
    def forward(self, x):
        return torch.bitwise_not(x)


def _input(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, dtype=dtype)
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, dtype=dtype)
    return torch.randint(-(2**20), 2**20, shape, dtype=dtype)


@pytest.mark.parametrize("op", list(BINARY))
def test_bitwise_binary(test_runner, op):
    shape = (3, 4, 5)
    test_runner.lower_and_run_model(Bitwise(BINARY[op]),
                                    (_input(shape, torch.int32), _input(shape, torch.int32)))


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.bool, torch.int8, torch.uint8], ids=["int64", "bool", "int8", "uint8"]
)
def test_bitwise_binary_dtype(test_runner, dtype):
    shape = (4, 6)
    test_runner.lower_and_run_model(AllBinary(), (_input(shape, dtype), _input(shape, dtype)))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=INT_IDS)
def test_bitwise_not(test_runner, dtype):
    test_runner.lower_and_run_model(BitwiseNot(), (_input((4, 3, 6), dtype),))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("op", list(SHIFTS))
def test_bitwise_shift(test_runner, op, dtype):
    # negative values included: right shift is arithmetic
    x = torch.randint(-1000, 1000, (4, 6), dtype=dtype)
    amount = torch.randint(0, 8, (4, 6), dtype=dtype)
    test_runner.lower_and_run_model(Bitwise(SHIFTS[op]), (x, amount))


def test_bitwise_scalar(test_runner):
    test_runner.lower_and_run_model(WithScalar(torch.bitwise_and, 0x0F0F), (_input((4, 7), torch.int32),))
    test_runner.lower_and_run_model(WithScalar(torch.bitwise_xor, -1), (_input((4, 7), torch.int64),))


def test_bitwise_shift_scalar(test_runner):
    test_runner.lower_and_run_model(WithScalar(torch.bitwise_right_shift, 3),
                                    (_input((4, 7), torch.int64),))


def test_bitwise_broadcast(test_runner):
    x = _input((2, 3, 6), torch.int32)
    test_runner.lower_and_run_model(Bitwise(torch.bitwise_or), (x, _input((6,), torch.int32)))
    test_runner.lower_and_run_model(Bitwise(torch.bitwise_and),
                                    (_input((5, 1), torch.bool), _input((1, 4), torch.bool)))


def test_bitwise_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _input((4, 6), torch.int64), _input((4, 6), torch.int64)
    test_runner.lower_and_run_model(Bitwise(torch.bitwise_xor), (x, y),
                                    dynamic_shapes=({0: batch}, {0: batch}))
