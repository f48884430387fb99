"""aten.sqrt and aten.rsqrt: float16/bfloat16, integer inputs (promoted to float),
zero/inf/nan/negatives, dynamic batch."""

import pytest
import torch

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
FLOAT_IDS = ["float32", "float16", "bfloat16"]


class Sqrt(torch.nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


class Rsqrt(torch.nn.Module):
    def forward(self, x):
        return torch.rsqrt(x)


OPS = {"sqrt": Sqrt, "rsqrt": Rsqrt}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=FLOAT_IDS)
@pytest.mark.parametrize("op", list(OPS))
def test_sqrt_rsqrt_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(OPS[op](), ((torch.rand(3, 5, 8) * 10 + 0.1).to(dtype),))


@pytest.mark.parametrize("op", list(OPS))
def test_sqrt_rsqrt_shapes(test_runner, op):
    test_runner.lower_and_run_model(OPS[op](), (torch.rand(19) + 0.05,))
    test_runner.lower_and_run_model(OPS[op](), (torch.rand(2, 1, 3, 1, 5) * 100 + 0.05,))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("op", list(OPS))
def test_sqrt_rsqrt_integer_input(test_runner, op, dtype):
    test_runner.lower_and_run_model(OPS[op](), (torch.randint(1, 1000, (4, 9), dtype=dtype),))


@pytest.mark.parametrize("op", list(OPS))
def test_sqrt_rsqrt_special_values(test_runner, op):
    # 0 -> 0 / inf, -0 -> -0 / -inf, negatives -> nan.
    x = torch.tensor([0.0, -0.0, 1.0, 4.0, 1e-30, 1e30, -1.0, float("inf"), float("nan")])
    test_runner.lower_and_run_model(OPS[op](), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_sqrt_rsqrt_dynamic_shape(test_runner, op):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(OPS[op](), (torch.rand(5, 7) + 0.1,), dynamic_shapes=({0: batch},))
