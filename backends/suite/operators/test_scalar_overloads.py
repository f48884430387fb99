"""aten's `.Scalar` overloads, a tensor and a Python number: add, sub, mul, div (also with
a rounding mode), remainder, fmod, pow with a number as the base, and bitwise and/or/xor.
Export turns `x + 2` into the `.Tensor` overload (the number becomes a tensor), so these
call the overload itself, as a decomposition or a hand-written graph does; float32 and
int32 inputs, and a rank-4 input."""

import pytest
import torch

from .op_modules import WithScalar

aten = torch.ops.aten

ARITHMETIC = {
    "add": lambda x, s: aten.add.Scalar(x, s),
    "sub": lambda x, s: aten.sub.Scalar(x, s),
    "mul": lambda x, s: aten.mul.Scalar(x, s),
    "div": lambda x, s: aten.div.Scalar(x, s),
    "remainder": lambda x, s: aten.remainder.Scalar(x, s),
    "fmod": lambda x, s: aten.fmod.Scalar(x, s),
}
BITWISE = {
    "and": lambda x, s: aten.bitwise_and.Scalar(x, s),
    "or": lambda x, s: aten.bitwise_or.Scalar(x, s),
    "xor": lambda x, s: aten.bitwise_xor.Scalar(x, s),
}


class DivRounding(torch.nn.Module):
    def __init__(self, scalar, rounding_mode):
        super().__init__()
        self.scalar = scalar
        self.rounding_mode = rounding_mode

    def forward(self, x):
        return aten.div.Scalar_mode(x, self.scalar, rounding_mode=self.rounding_mode)


class PowScalarBase(torch.nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base

    def forward(self, x):
        return torch.pow(self.base, x)  # aten.pow.Scalar


@pytest.mark.parametrize("op", list(ARITHMETIC))
def test_scalar_overload_float32(test_runner, op):
    # 1.75 keeps remainder and fmod away from a divisor that is a power of two
    test_runner.lower_and_run_model(WithScalar(ARITHMETIC[op], 1.75), (torch.randn(3, 17) * 4,))
    test_runner.lower_and_run_model(WithScalar(ARITHMETIC[op], -2.5), (torch.randn(2, 3, 4, 5) * 4,))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "remainder", "fmod"])
def test_scalar_overload_int32(test_runner, op):
    x = torch.randint(-50, 50, (4, 9), dtype=torch.int32)
    test_runner.lower_and_run_model(WithScalar(ARITHMETIC[op], 7), (x,))


@pytest.mark.parametrize("rounding_mode", ["floor", "trunc"])
def test_div_scalar_rounding(test_runner, rounding_mode):
    test_runner.lower_and_run_model(DivRounding(1.5, rounding_mode), (torch.randn(5, 12) * 6,))


def test_pow_scalar_base(test_runner):
    test_runner.lower_and_run_model(PowScalarBase(2.0), (torch.randn(4, 10) * 3,))
    test_runner.lower_and_run_model(PowScalarBase(0.5), (torch.randn(2, 3, 8),))


@pytest.mark.parametrize("op", list(BITWISE))
def test_bitwise_scalar(test_runner, op):
    x = torch.randint(-128, 128, (6, 8), dtype=torch.int32)
    test_runner.lower_and_run_model(WithScalar(BITWISE[op], 0x5A), (x,))
    flags = torch.rand(6, 8) > 0.5
    test_runner.lower_and_run_model(WithScalar(BITWISE[op], True), (flags,))
