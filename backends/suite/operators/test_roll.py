"""aten.roll: one dim, several dims, flattened (no dim), negative and oversized shifts, dtypes."""

import pytest
import torch


class Roll(torch.nn.Module):
    def __init__(self, shifts, dims=None):
        super().__init__()
        self.shifts = shifts
        self.dims = dims

    def forward(self, x):
        if self.dims is None:
            return torch.roll(x, self.shifts)
        return torch.roll(x, self.shifts, self.dims)


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, shifts, dims",
    [((4, 7), -2, 1), ((3, 5), 12, 1), ((2, 3, 4, 5), (1, -2), (1, 3)), ((2, 3, 4), 5, None),
     ((2, 1, 3, 4, 5), 2, -1)],
    ids=["2d_negative_shift", "shift_larger_than_size", "4d_two_dims", "flattened", "5d_negative_dim"],
)
def test_roll(test_runner, shape, shifts, dims):
    test_runner.lower_and_run_model(Roll(shifts, dims), (torch.randn(shape),))


def test_roll_large(test_runner):
    test_runner.lower_and_run_model(Roll((3, -5), (2, 3)), (torch.randn(2, 16, 40, 48),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_roll_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Roll(2, 1), (_tensor((3, 5, 4), dtype),))


def test_roll_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Roll(1, -1), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
