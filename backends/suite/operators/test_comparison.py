"""aten.eq, ne, lt, le, gt, ge (Tensor and Scalar overloads): float and integer dtypes,
broadcasting, nan and inf, dynamic batch."""

import operator

import pytest
import torch

OPS = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}
PY_OPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


class Compare(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x, y):
        return self.op(x, y)


class AllComparisons(torch.nn.Module):
    """The six comparisons of the same operands; output i is eq, ne, lt, le, gt, ge in that order."""

    def forward(self, x, y):
        return torch.eq(x, y), torch.ne(x, y), torch.lt(x, y), torch.le(x, y), torch.gt(x, y), torch.ge(x, y)


class AllComparisonsScalar(torch.nn.Module):
    """The six comparisons against a Python scalar, in the order eq, ne, lt, le, gt, ge."""

    def __init__(self, scalar):
        super().__init__()
        self.scalar = scalar

    def forward(self, x):
        return tuple(op(x, self.scalar) for op in PY_OPS)


def _values(shape, dtype):
    # small integer values so that equal elements are frequent
    return torch.randint(-3, 4, shape).to(dtype)


@pytest.mark.parametrize("op", list(OPS))
def test_compare_tensor(test_runner, op):
    shape = (3, 4, 5)
    test_runner.lower_and_run_model(Compare(op),
                                    (_values(shape, torch.float32), _values(shape, torch.float32)))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
def test_compare_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(AllComparisons(), (_values((4, 8), dtype), _values((4, 8), dtype)))


@pytest.mark.parametrize("scalar", [1, 0.5], ids=["int_scalar", "float_scalar"])
def test_compare_scalar(test_runner, scalar):
    x = _values((4, 6), torch.int64) if isinstance(scalar, int) else torch.randn(4, 6)
    test_runner.lower_and_run_model(AllComparisonsScalar(scalar), (x,))


def test_compare_broadcast(test_runner):
    test_runner.lower_and_run_model(AllComparisons(),
                                    (_values((2, 3, 6), torch.float32), _values((6,), torch.float32)))
    test_runner.lower_and_run_model(AllComparisons(),
                                    (_values((5, 1), torch.int32), _values((1, 2, 4), torch.int32)))


def test_compare_mixed_dtypes(test_runner):
    # int tensor against float tensor: type promotion to float
    test_runner.lower_and_run_model(Compare("le"), (_values((3, 7), torch.int32), torch.randn(3, 7) * 2))


def test_compare_special_values(test_runner):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, nan, 1.0, inf, -inf, inf, 0.0, -0.0])
    y = torch.tensor([nan, 1.0, nan, inf, inf, 1e38, -0.0, 0.0])
    test_runner.lower_and_run_model(AllComparisons(), (x, y))


def test_compare_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    x, y = _values((4, 6), torch.float32), _values((4, 6), torch.float32)
    test_runner.lower_and_run_model(Compare("ge"), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
