"""aten.glu: split dim (last, first, middle, negative), ranks 2-4, dtypes, inf/nan."""

import pytest
import torch


class Glu(torch.nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.nn.functional.glu(x, dim=self.dim)


@pytest.mark.parametrize(
    "dim, shape",
    [(-1, (3, 4, 10)), (0, (6, 5)), (1, (2, 8, 3, 3)), (-2, (2, 4, 6, 5))],
    ids=["last", "first", "channels_rank4", "negative_inner"],
)
def test_glu_dim(test_runner, dim, shape):
    test_runner.lower_and_run_model(Glu(dim), (torch.randn(*shape) * 2,))


def test_glu_module_large(test_runner):
    test_runner.lower_and_run_model(torch.nn.GLU(), (torch.randn(8, 32, 128),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_glu_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Glu(-1), ((torch.randn(3, 4, 8) * 2).to(dtype),))


def test_glu_inf_nan(test_runner):
    # Gate half: -inf, +inf, nan, 0; value half: finite, inf and nan.
    x = torch.tensor([[1.5, -2.0, 3.0, float("inf"), float("-inf"), float("inf"), 0.5, 40.0],
                      [float("nan"), 1.0, float("-inf"), 2.0, 0.0, float("nan"), -30.0, 2.0]])
    test_runner.lower_and_run_model(Glu(-1), (x,))


def test_glu_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Glu(-1), (torch.randn(3, 4, 10),),
                                    dynamic_shapes=({0: batch},))
