"""aten.ceil, floor, round (incl. round.decimals) and trunc: float and integer dtypes, .5 ties, inf/nan, dynamic batch."""

import pytest
import torch

OPS = {"ceil": torch.ceil, "floor": torch.floor, "round": torch.round, "trunc": torch.trunc}
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
DTYPE_IDS = ["float32", "float16", "bfloat16", "int32", "int64"]


class Rounding(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


class RoundDecimals(torch.nn.Module):
    def __init__(self, decimals):
        super().__init__()
        self.decimals = decimals

    def forward(self, x):
        return torch.round(x, decimals=self.decimals)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("op", list(OPS))
def test_rounding_dtype(test_runner, op, dtype):
    if dtype.is_floating_point:
        x = (torch.randn(3, 4, 8) * 5).to(dtype)
    else:
        x = torch.randint(-1000, 1000, (3, 4, 8), dtype=dtype)
    test_runner.lower_and_run_model(Rounding(op), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_rounding_half_integers(test_runner, op):
    # exact .5 ties (round goes to even), negative values and signed zero
    x = torch.arange(-10, 11, dtype=torch.float32) * 0.5
    x = torch.cat([x, torch.tensor([-0.0, -0.4, 0.4, 1e7 + 0.5, -1e7 - 0.5])])
    test_runner.lower_and_run_model(Rounding(op), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_rounding_special_values(test_runner, op):
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 3.0e38, -3.0e38, 1e-30, -1e-30])
    test_runner.lower_and_run_model(Rounding(op), (x,))


@pytest.mark.parametrize("decimals", [2, -1], ids=["decimals2", "decimals_neg1"])
def test_round_decimals(test_runner, decimals):
    test_runner.lower_and_run_model(RoundDecimals(decimals), (torch.randn(4, 6, 5) * 50,))


def test_rounding_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Rounding("floor"), (torch.randn(4, 7) * 5,), dynamic_shapes=({0: batch},))
