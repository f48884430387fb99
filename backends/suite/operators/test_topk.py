"""aten.topk (values and indices): k from 1 to the full size, dim, largest/smallest,
float and integer dtypes, dynamic batch."""

import pytest
import torch


class TopK(torch.nn.Module):
    def __init__(self, k, dim=-1, largest=True):
        super().__init__()
        self.k = k
        self.dim = dim
        self.largest = largest

    def forward(self, x):
        values, indices = torch.topk(x, self.k, dim=self.dim, largest=self.largest, sorted=True)
        return values, indices


def _distinct(shape, dtype=torch.float32):
    # distinct values in every slice, so the indices are unambiguous
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)


@pytest.mark.parametrize("k", [1, 3, 10], ids=["k1", "k3", "k_all"])
def test_topk_k(test_runner, k):
    test_runner.lower_and_run_model(TopK(k), (torch.randn(4, 5, 10),))


@pytest.mark.parametrize("dim", [0, 1], ids=["dim0", "dim1"])
def test_topk_dim(test_runner, dim):
    test_runner.lower_and_run_model(TopK(2, dim=dim), (torch.randn(6, 7, 3),))


def test_topk_smallest(test_runner):
    test_runner.lower_and_run_model(TopK(4, largest=False), (torch.randn(3, 12),))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
def test_topk_dtype(test_runner, dtype):
    # 96 distinct values: exact in bfloat16 as well
    test_runner.lower_and_run_model(TopK(5), (_distinct((8, 12), dtype),))


def test_topk_rank1_larger(test_runner):
    test_runner.lower_and_run_model(TopK(16), (torch.randn(5000),))


def test_topk_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(TopK(3), (torch.randn(4, 9),), dynamic_shapes=({0: batch},))
