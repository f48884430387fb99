"""aten.ceil, floor, round (incl. round.decimals) and trunc: .5 ties and signed zero per
op, float16/bfloat16 and integer dtypes, inf/nan, dynamic batch."""

import pytest
import torch

OPS = {"ceil": torch.ceil, "floor": torch.floor, "round": torch.round, "trunc": torch.trunc}


class Rounding(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


class AllRounding(torch.nn.Module):
    """ceil, floor, round and trunc of one input, in that order."""

    def forward(self, x):
        return torch.ceil(x), torch.floor(x), torch.round(x), torch.trunc(x)


class RoundDecimals(torch.nn.Module):
    def __init__(self, decimals):
        super().__init__()
        self.decimals = decimals

    def forward(self, x):
        return torch.round(x, decimals=self.decimals)


@pytest.mark.parametrize("op", list(OPS))
def test_rounding_float32(test_runner, op):
    # exact .5 ties (round goes to even), negative values, signed zero, random values
    ties = torch.arange(-10, 11, dtype=torch.float32) * 0.5
    x = torch.cat([ties, torch.tensor([-0.0, -0.4, 0.4, 1e7 + 0.5, -1e7 - 0.5]), torch.randn(40) * 5])
    test_runner.lower_and_run_model(Rounding(op), (x,))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
def test_rounding_dtype(test_runner, dtype):
    if dtype.is_floating_point:
        x = (torch.randn(3, 4, 8) * 5).to(dtype)
    else:
        x = torch.randint(-1000, 1000, (3, 4, 8), dtype=dtype)  # integer inputs come back unchanged
    test_runner.lower_and_run_model(AllRounding(), (x,))


def test_rounding_special_values(test_runner):
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 3.0e38, -3.0e38, 1e-30, -1e-30])
    test_runner.lower_and_run_model(AllRounding(), (x,))


@pytest.mark.parametrize("decimals", [2, -1], ids=["decimals2", "decimals_neg1"])
def test_round_decimals(test_runner, decimals):
    test_runner.lower_and_run_model(RoundDecimals(decimals), (torch.randn(4, 6, 5) * 50,))


def test_rounding_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Rounding("floor"), (torch.randn(4, 7) * 5,), dynamic_shapes=({0: batch},))
