"""aten.split, aten.split_with_sizes and aten.chunk: even and uneven pieces, sizes, use of the pieces."""

import torch


class Split(torch.nn.Module):
    def __init__(self, split_size_or_sections, dim):
        super().__init__()
        self.split_size_or_sections = split_size_or_sections
        self.dim = dim

    def forward(self, x):
        return torch.split(x, self.split_size_or_sections, dim=self.dim)


class Chunk(torch.nn.Module):
    def __init__(self, chunks, dim):
        super().__init__()
        self.chunks = chunks
        self.dim = dim

    def forward(self, x):
        return torch.chunk(x, self.chunks, dim=self.dim)


class GatedHalves(torch.nn.Module):
    def forward(self, x):
        value, gate = x.chunk(2, dim=-1)
        return value * torch.sigmoid(gate)


def test_split_even(test_runner):
    test_runner.lower_and_run_model(Split(2, 1), (torch.randn(3, 6, 4),))


def test_split_uneven(test_runner):
    test_runner.lower_and_run_model(Split(3, 0), (torch.randn(8, 5),))


def test_split_with_sizes(test_runner):
    test_runner.lower_and_run_model(Split([1, 3, 2], -1), (torch.randn(2, 4, 6),))


def test_chunk(test_runner):
    test_runner.lower_and_run_model(Chunk(3, 1), (torch.randn(2, 9, 4),))
    test_runner.lower_and_run_model(Chunk(4, -1), (torch.randn(3, 10),))


def test_chunk_gated(test_runner):
    test_runner.lower_and_run_model(GatedHalves(), (torch.randn(2, 4, 16),))
