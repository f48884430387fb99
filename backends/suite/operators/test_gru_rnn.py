"""torch.nn.GRU and torch.nn.RNN (tanh, relu): layers, bidirectional, batch_first,
initial state, unbatched."""

import pytest
import torch


class Recurrent(torch.nn.Module):
    def __init__(self, kind, input_size, hidden_size, **options):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(input_size, hidden_size, **options)

    def forward(self, x):
        return self.rnn(x)


class RecurrentWithState(torch.nn.Module):
    def __init__(self, kind, input_size, hidden_size, **options):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(input_size, hidden_size, **options)

    def forward(self, x, h0):
        return self.rnn(x, h0)


CONFIGS = [
    ("one_layer", {}),
    ("two_layers_bidirectional", {"num_layers": 2, "bidirectional": True}),
    ("batch_first_no_bias", {"batch_first": True, "bias": False}),
]


@pytest.mark.parametrize("options", [c[1] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_gru(test_runner, options):
    test_runner.lower_and_run_model(Recurrent("GRU", 6, 8, **options), (torch.randn(3, 3, 6),))


@pytest.mark.parametrize("options", [c[1] for c in CONFIGS[::2]], ids=[c[0] for c in CONFIGS[::2]])
def test_rnn(test_runner, options):
    test_runner.lower_and_run_model(Recurrent("RNN", 6, 8, **options), (torch.randn(3, 3, 6),))


def test_rnn_relu(test_runner):
    model = Recurrent("RNN", 4, 6, nonlinearity="relu", num_layers=2)
    test_runner.lower_and_run_model(model, (torch.randn(3, 2, 4),))


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_recurrent_initial_state(test_runner, kind):
    model = RecurrentWithState(kind, 4, 6, num_layers=2, batch_first=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4), torch.randn(2, 2, 6)))


def test_gru_unbatched(test_runner):
    test_runner.lower_and_run_model(Recurrent("GRU", 3, 5), (torch.randn(4, 3),))


def test_gru_large(test_runner):
    model = Recurrent("GRU", 32, 64, batch_first=True)
    test_runner.lower_and_run_model(model, (torch.randn(8, 6, 32),))


def test_gru_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = Recurrent("GRU", 4, 6, batch_first=True)
    test_runner.lower_and_run_model(model, (torch.randn(3, 5, 4),), dynamic_shapes=({0: batch},))
