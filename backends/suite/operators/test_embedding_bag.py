"""aten._embedding_bag via nn.EmbeddingBag: sum/mean/max modes, offsets or 2-D input,
per-sample weights, padding_idx."""

import pytest
import torch


class EmbeddingBagOffsets(torch.nn.Module):
    def __init__(self, num, dim, mode, include_last_offset=False, padding_idx=None):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(num, dim, mode=mode, include_last_offset=include_last_offset,
                                         padding_idx=padding_idx)

    def forward(self, indices, offsets):
        return self.bag(indices, offsets)


class EmbeddingBag2d(torch.nn.Module):
    def __init__(self, num, dim, mode):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(num, dim, mode=mode)

    def forward(self, indices):
        return self.bag(indices)


class EmbeddingBagWeighted(torch.nn.Module):
    def __init__(self, num, dim):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(num, dim, mode="sum")

    def forward(self, indices, offsets, weights):
        return self.bag(indices, offsets, per_sample_weights=weights)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_offsets(test_runner, mode):
    indices = torch.randint(0, 20, (10,))
    offsets = torch.tensor([0, 3, 4, 8])
    test_runner.lower_and_run_model(EmbeddingBagOffsets(20, 6, mode), (indices, offsets))


def test_embedding_bag_2d_input(test_runner):
    test_runner.lower_and_run_model(EmbeddingBag2d(15, 8, "mean"), (torch.randint(0, 15, (4, 5)),))


def test_embedding_bag_per_sample_weights(test_runner):
    inputs = (torch.randint(0, 12, (7,)), torch.tensor([0, 2, 5]), torch.rand(7))
    test_runner.lower_and_run_model(EmbeddingBagWeighted(12, 4), inputs)


def test_embedding_bag_padding_idx(test_runner):
    inputs = (torch.tensor([0, 3, 0, 5, 2, 0, 7]), torch.tensor([0, 3, 5]))
    test_runner.lower_and_run_model(EmbeddingBagOffsets(8, 4, "mean", padding_idx=0), inputs)


def test_embedding_bag_large(test_runner):
    inputs = (torch.randint(0, 1000, (400,)), torch.arange(0, 400, 8))
    test_runner.lower_and_run_model(EmbeddingBagOffsets(1000, 64, "sum"), inputs)
