"""aten.sign: float and integer dtypes, zeros, signed zero, inf and nan, shapes, dynamic batch."""

import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
DTYPE_IDS = ["float32", "float16", "bfloat16", "int32", "int64"]


class Sign(torch.nn.Module):
    def forward(self, x):
        return torch.sign(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_sign_dtype(test_runner, dtype):
    if dtype.is_floating_point:
        # a quarter of the elements exactly zero
        x = torch.randn(4, 5, 6) * (torch.rand(4, 5, 6) > 0.25)
    else:
        x = torch.randint(-3, 4, (4, 5, 6))
    test_runner.lower_and_run_model(Sign(), (x.to(dtype),))


@pytest.mark.parametrize("shape", [(31,), (2, 1, 3, 2, 4)], ids=["rank1", "rank5"])
def test_sign_shapes(test_runner, shape):
    test_runner.lower_and_run_model(Sign(), (torch.randn(shape),))


def test_sign_special_values(test_runner):
    x = torch.tensor([0.0, -0.0, 1e-40, -1e-40, float("inf"), float("-inf"), float("nan"), -2.0])
    test_runner.lower_and_run_model(Sign(), (x,))


def test_sign_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Sign(), (torch.randn(3, 6),), dynamic_shapes=({0: batch},))
