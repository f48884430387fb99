"""aten.linalg_vector_norm (torch.linalg.vector_norm, torch.norm): ord 1, 2, inf, -inf,
3, dims and keepdim, float16/bfloat16, dynamic batch."""

import math

import pytest
import torch


class VectorNorm(torch.nn.Module):
    def __init__(self, ord=2, dim=None, keepdim=False):
        super().__init__()
        self.ord = ord
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=self.ord, dim=self.dim, keepdim=self.keepdim)


class Norm(torch.nn.Module):
    def __init__(self, p="fro", dim=None, keepdim=False):
        super().__init__()
        self.p = p
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return torch.norm(x, p=self.p, dim=self.dim, keepdim=self.keepdim)


@pytest.mark.parametrize("ord", [1, 2, math.inf, -math.inf, 3],
                         ids=["ord1", "ord2", "ord_inf", "ord_neg_inf", "ord3"])
def test_vector_norm_ord(test_runner, ord):
    test_runner.lower_and_run_model(VectorNorm(ord, dim=-1), (torch.randn(4, 3, 10),))


@pytest.mark.parametrize(
    "dim,keepdim", [(None, False), ((1, 2), True), (0, True)], ids=["all", "dims12_keepdim", "dim0_keepdim"]
)
def test_vector_norm_dims(test_runner, dim, keepdim):
    test_runner.lower_and_run_model(VectorNorm(2, dim=dim, keepdim=keepdim), (torch.randn(3, 4, 5, 2),))


@pytest.mark.parametrize("p,dim", [("fro", None), (1, 1), (2, -1)],
                         ids=["default_fro", "p1_dim1", "p2_dim_neg1"])
def test_torch_norm(test_runner, p, dim):
    test_runner.lower_and_run_model(Norm(p, dim=dim), (torch.randn(5, 6, 4),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_vector_norm_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(VectorNorm(2, dim=-1), (torch.randn(4, 16).to(dtype),))


def test_vector_norm_special_values(test_runner):
    # an all-zero row, a row with inf, a row with nan
    x = torch.tensor([[0.0, 0.0, -0.0], [1.0, float("-inf"), 2.0], [3.0, float("nan"), 4.0]])
    test_runner.lower_and_run_model(VectorNorm(2, dim=1), (x,))
    test_runner.lower_and_run_model(VectorNorm(math.inf, dim=1), (x,))


def test_vector_norm_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(VectorNorm(2, dim=-1), (torch.randn(4, 12),),
                                    dynamic_shapes=({0: batch},))
