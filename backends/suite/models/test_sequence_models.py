"""Recurrent sequence models built from code: embedding + LSTM / GRU + linear head.
Static cases vary the recurrent layout (layers, bidirectional, per-step or last-step
output); dynamic cases make the batch dynamic. Sequences are short: export unrolls the
recurrence over time steps, which is also why the sequence length cannot be dynamic."""

import pytest
import torch
from torch import nn

VOCAB = 64
def batch_dim():
    """Made when a test runs: torch.export costs 0.7 s to import during collection."""
    return torch.export.Dim("batch", min=1, max=4)


class RecurrentClassifier(nn.Module):
    def __init__(self, cell, num_layers=2, bidirectional=False, per_step=False):
        super().__init__()
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.embedding = nn.Embedding(VOCAB, 32)
        self.rnn = rnn(32, 48, num_layers=num_layers, batch_first=True,
                       bidirectional=bidirectional)
        self.head = nn.Linear(48 * (2 if bidirectional else 1), 8)
        self.per_step = per_step

    def forward(self, tokens):
        output, _ = self.rnn(self.embedding(tokens))
        # per-step: a tagger (logits for every token); otherwise classify from the last step
        return self.head(output if self.per_step else output[:, -1])


def _tokens(batch=2, seq=6):
    return torch.randint(0, VOCAB, (batch, seq))


LAYOUTS = {
    "2layer_last": dict(num_layers=2),
    "1layer_per_step": dict(num_layers=1, per_step=True),
    "bidirectional": dict(num_layers=1, bidirectional=True),
}


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
def test_lstm(test_runner, layout):
    test_runner.lower_and_run_model(RecurrentClassifier("lstm", **LAYOUTS[layout]), (_tokens(),))


def test_lstm_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(RecurrentClassifier("lstm", num_layers=1), (_tokens(),),
                                    dynamic_shapes=({0: batch_dim()},))


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
def test_gru(test_runner, layout):
    test_runner.lower_and_run_model(RecurrentClassifier("gru", **LAYOUTS[layout]), (_tokens(),))


def test_gru_dynamic_batch(test_runner):
    test_runner.lower_and_run_model(RecurrentClassifier("gru", num_layers=1), (_tokens(),),
                                    dynamic_shapes=({0: batch_dim()},))
