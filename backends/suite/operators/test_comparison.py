"""aten.eq, ne, lt, le, gt, ge (Tensor and Scalar overloads): float and integer dtypes, broadcasting, nan and inf, dynamic batch."""

import operator

import pytest
import torch

OPS = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}
PY_OPS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


class Compare(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x, y):
        return self.op(x, y)


class CompareScalar(torch.nn.Module):
    def __init__(self, name, scalar):
        super().__init__()
        self.op = PY_OPS[name]
        self.scalar = scalar

    def forward(self, x):
        return self.op(x, self.scalar)


def _values(shape, dtype):
    # small integer values so that equal elements are frequent
    return torch.randint(-3, 4, shape).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64], ids=["float32", "int32", "int64"])
@pytest.mark.parametrize("op", list(OPS))
def test_compare_tensor(test_runner, op, dtype):
    shape = (3, 4, 5)
    test_runner.lower_and_run_model(Compare(op), (_values(shape, dtype), _values(shape, dtype)))


@pytest.mark.parametrize("op", list(OPS))
def test_compare_scalar(test_runner, op):
    test_runner.lower_and_run_model(CompareScalar(op, 1), (_values((4, 6), torch.int64),))
    test_runner.lower_and_run_model(CompareScalar(op, 0.5), (torch.randn(4, 6),))


@pytest.mark.parametrize("op", list(OPS))
def test_compare_broadcast(test_runner, op):
    test_runner.lower_and_run_model(Compare(op), (_values((2, 3, 6), torch.float32), _values((6,), torch.float32)))
    test_runner.lower_and_run_model(Compare(op), (_values((5, 1), torch.int32), _values((1, 2, 4), torch.int32)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["eq", "lt"])
def test_compare_half_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(Compare(op), (_values((4, 8), dtype), _values((4, 8), dtype)))


def test_compare_mixed_dtypes(test_runner):
    # int tensor against float tensor: type promotion to float
    test_runner.lower_and_run_model(Compare("le"), (_values((3, 7), torch.int32), torch.randn(3, 7) * 2))


@pytest.mark.parametrize("op", list(OPS))
def test_compare_special_values(test_runner, op):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, nan, 1.0, inf, -inf, inf, 0.0, -0.0])
    y = torch.tensor([nan, 1.0, nan, inf, inf, 1e38, -0.0, 0.0])
    test_runner.lower_and_run_model(Compare(op), (x, y))


def test_compare_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _values((4, 6), torch.float32), _values((4, 6), torch.float32)
    test_runner.lower_and_run_model(Compare("ge"), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
