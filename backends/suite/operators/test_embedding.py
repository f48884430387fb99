"""aten.embedding: 2-D and 1-D int64 indices, int32 indices, padding_idx."""

import torch


class Embedding(torch.nn.Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.embedding = torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx=padding_idx)

    def forward(self, indices):
        return self.embedding(indices)


def test_embedding(test_runner):
    test_runner.lower_and_run_model(Embedding(20, 8), (torch.randint(0, 20, (2, 5)),))


def test_embedding_1d_indices(test_runner):
    test_runner.lower_and_run_model(Embedding(10, 16), (torch.randint(0, 10, (7,)),))


def test_embedding_int32_indices(test_runner):
    indices = torch.randint(0, 20, (3, 4), dtype=torch.int32)
    test_runner.lower_and_run_model(Embedding(20, 6), (indices,))


def test_embedding_padding_idx(test_runner):
    indices = torch.tensor([[0, 3, 5, 0], [2, 0, 9, 1]])
    test_runner.lower_and_run_model(Embedding(10, 4, padding_idx=0), (indices,))
