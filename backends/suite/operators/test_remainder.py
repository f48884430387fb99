"""aten.remainder and aten.fmod: integer and float dtypes, mixed signs (sign of divisor
vs dividend), scalar divisor, broadcasting, dynamic batch."""

import pytest
import torch

DTYPES = [torch.int32, torch.int64, torch.float32, torch.float16, torch.bfloat16]
DTYPE_IDS = ["int32", "int64", "float32", "float16", "bfloat16"]


class Remainder(torch.nn.Module):
    def forward(self, x, y):
        return torch.remainder(x, y)


class Fmod(torch.nn.Module):
    def forward(self, x, y):
        return torch.fmod(x, y)


class RemainderScalar(torch.nn.Module):
    def __init__(self, divisor):
        super().__init__()
        self.divisor = divisor

    def forward(self, x):
        return torch.remainder(x, self.divisor)


class FmodScalar(torch.nn.Module):
    def __init__(self, divisor):
        super().__init__()
        self.divisor = divisor

    def forward(self, x):
        return torch.fmod(x, self.divisor)


OPS = {"remainder": Remainder, "fmod": Fmod}
SCALAR_OPS = {"remainder": RemainderScalar, "fmod": FmodScalar}


def _divisor(shape, dtype):
    if dtype.is_floating_point:
        magnitude = torch.rand(shape) * 4 + 0.5
    else:
        magnitude = torch.randint(1, 9, shape)
    return (magnitude * torch.where(torch.rand(shape) > 0.5, 1, -1)).to(dtype)


def _dividend(shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape) * 10).to(dtype)
    return torch.randint(-100, 100, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", list(OPS))
def test_remainder_dtype(test_runner, op, dtype):
    shape = (3, 4, 5)
    test_runner.lower_and_run_model(OPS[op](), (_dividend(shape, dtype), _divisor(shape, dtype)))


@pytest.mark.parametrize("divisor", [3, -2.5], ids=["int3", "float_neg2_5"])
@pytest.mark.parametrize("op", list(OPS))
def test_remainder_scalar(test_runner, op, divisor):
    x = torch.randint(-40, 40, (4, 7)) if isinstance(divisor, int) else torch.randn(4, 7) * 10
    test_runner.lower_and_run_model(SCALAR_OPS[op](divisor), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_remainder_broadcast(test_runner, op):
    x = _dividend((2, 3, 6), torch.float32)
    test_runner.lower_and_run_model(OPS[op](), (x, _divisor((6,), torch.float32)))
    test_runner.lower_and_run_model(OPS[op](),
                                    (_dividend((5, 1), torch.int64), _divisor((1, 4), torch.int64)))


@pytest.mark.parametrize("op", list(OPS))
def test_remainder_float_special_values(test_runner, op):
    x = torch.tensor([5.5, -5.5, 0.0, -0.0, 3.0, float("inf"), float("nan"), 1e10, 4.0])
    y = torch.tensor([2.0, 2.0, -3.0, 3.0, 0.0, 2.0, 2.0, 3.0, float("inf")])
    test_runner.lower_and_run_model(OPS[op](), (x, y))


def test_remainder_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _dividend((4, 5), torch.float32), _divisor((4, 5), torch.float32)
    test_runner.lower_and_run_model(Remainder(), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
