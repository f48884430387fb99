"""aten.prod and aten.prod.dim_int: whole tensor, dim (incl. negative), keepdim, dtype
argument, float and integer dtypes, zeros, dynamic batch."""

import pytest
import torch


class Prod(torch.nn.Module):
    def __init__(self, dtype=None):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        return torch.prod(x, dtype=self.dtype)


class ProdDim(torch.nn.Module):
    def __init__(self, dim, keepdim=False, dtype=None):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim
        self.dtype = dtype

    def forward(self, x):
        return torch.prod(x, self.dim, keepdim=self.keepdim, dtype=self.dtype)


def _near_one(shape):
    # magnitudes close to 1 and both signs, so the products stay well scaled
    sign = torch.where(torch.rand(shape) > 0.5, 1.0, -1.0)
    return (torch.rand(shape) * 0.5 + 0.75) * sign


@pytest.mark.parametrize("dim,keepdim", [(0, False), (-1, False), (1, True)],
                         ids=["dim0", "dim_neg1", "dim1_keepdim"])
def test_prod_dim(test_runner, dim, keepdim):
    test_runner.lower_and_run_model(ProdDim(dim, keepdim), (_near_one((4, 5, 6)),))


def test_prod_whole_tensor(test_runner):
    test_runner.lower_and_run_model(Prod(), (_near_one((3, 4, 5)),))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
def test_prod_dtype(test_runner, dtype):
    if dtype.is_floating_point:
        x = _near_one((3, 8)).to(dtype)
    else:
        x = torch.randint(-3, 4, (3, 8), dtype=dtype)  # int inputs accumulate (and return) int64
    test_runner.lower_and_run_model(ProdDim(-1), (x,))
    test_runner.lower_and_run_model(Prod(), (x[:, :4],))


def test_prod_dtype_argument(test_runner):
    x = torch.randint(-3, 4, (4, 6), dtype=torch.int32)
    test_runner.lower_and_run_model(ProdDim(1, dtype=torch.float32), (x,))


def test_prod_special_values(test_runner):
    x = torch.tensor([[1.0, 0.0, float("inf")], [2.0, -0.0, 3.0], [float("nan"), 1.0, 2.0],
                      [-1.0, float("inf"), -2.0]])
    test_runner.lower_and_run_model(ProdDim(1), (x,))


def test_prod_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(ProdDim(-1), (_near_one((4, 7)),), dynamic_shapes=({0: batch},))
