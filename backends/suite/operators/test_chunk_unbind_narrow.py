"""aten.unbind, aten.split via chunk/tensor_split, aten.slice via narrow: dims, fewer
chunks than asked, dtypes."""

import pytest
import torch


class Unbind(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.unbind(x, self.dim)


class Chunk(torch.nn.Module):
    def __init__(self, chunks, dim):
        super().__init__()
        self.chunks = chunks
        self.dim = dim

    def forward(self, x):
        return torch.chunk(x, self.chunks, dim=self.dim)


class TensorSplit(torch.nn.Module):
    def __init__(self, indices_or_sections, dim):
        super().__init__()
        self.indices_or_sections = indices_or_sections
        self.dim = dim

    def forward(self, x):
        return torch.tensor_split(x, self.indices_or_sections, dim=self.dim)


class Narrow(torch.nn.Module):
    def __init__(self, dim, start, length):
        super().__init__()
        self.dim = dim
        self.start = start
        self.length = length

    def forward(self, x):
        return torch.narrow(x, self.dim, self.start, self.length)


class UnbindSum(torch.nn.Module):
    def forward(self, x):
        a, b, c = x.unbind(1)
        return a * b + c


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randn(shape).to(dtype)


@pytest.mark.parametrize(
    "shape, dim", [((4,), 0), ((2, 3, 4, 5), -1)], ids=["1d_to_scalars", "4d_last_dim"],
)
def test_unbind(test_runner, shape, dim):
    test_runner.lower_and_run_model(Unbind(dim), (torch.randn(shape),))


def test_unbind_then_compute(test_runner):
    test_runner.lower_and_run_model(UnbindSum(), (torch.randn(2, 3, 8),))


def test_chunk_fewer_than_requested(test_runner):
    # 6 split into 4 chunks of ceil(6/4)=2 gives only 3 chunks.
    test_runner.lower_and_run_model(Chunk(4, 1), (torch.randn(2, 6, 3),))


@pytest.mark.parametrize("split", [3, [1, 4]], ids=["sections", "indices"])
def test_tensor_split(test_runner, split):
    test_runner.lower_and_run_model(TensorSplit(split, 1), (torch.randn(2, 7, 3),))


@pytest.mark.parametrize(
    "dim, start, length", [(-1, -4, 3), (1, 0, 5)], ids=["negative_start", "full_length"],
)
def test_narrow(test_runner, dim, start, length):
    test_runner.lower_and_run_model(Narrow(dim, start, length), (torch.randn(3, 5, 6),))


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.bool], ids=["bfloat16", "bool"],
)
def test_unbind_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(Unbind(1), (_tensor((2, 3, 4), dtype),))


def test_unbind_large(test_runner):
    test_runner.lower_and_run_model(Unbind(0), (torch.randn(12, 64, 64),))


def test_unbind_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Unbind(1), (torch.randn(3, 4, 5),),
                                    dynamic_shapes=({0: batch},))
