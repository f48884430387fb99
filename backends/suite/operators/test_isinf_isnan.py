"""aten.isinf and aten.isnan: finite values mixed with inf, -inf and nan, float16 and
bfloat16, a mask computed from the result, rank 4."""

import pytest
import torch

OPS = {"isinf": torch.isinf, "isnan": torch.isnan}


class Check(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


class ReplaceNonFinite(torch.nn.Module):
    """nan to 0 and inf to the largest finite value, by the two masks."""

    def forward(self, x):
        x = torch.where(torch.isnan(x), torch.zeros_like(x), x)
        return torch.where(torch.isinf(x), torch.sign(x) * 3.0e38, x)


def _with_special_values(shape, dtype=torch.float32):
    x = torch.randn(shape)
    flat = x.view(-1)
    picks = torch.randperm(flat.numel())[:6]
    flat[picks] = torch.tensor([float("inf"), float("-inf"), float("nan"), float("nan"), 0.0, -0.0])
    return x.to(dtype)


@pytest.mark.parametrize("op", list(OPS))
def test_isinf_isnan_float32(test_runner, op):
    test_runner.lower_and_run_model(Check(op), (_with_special_values((5, 13)),))
    test_runner.lower_and_run_model(Check(op), (_with_special_values((2, 3, 4, 5)),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_isinf_isnan_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(Check(op), (_with_special_values((4, 16), dtype),))


def test_isinf_isnan_as_masks(test_runner):
    test_runner.lower_and_run_model(ReplaceNonFinite(), (_with_special_values((6, 11)),))
