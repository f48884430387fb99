"""torch.nn.LSTM: one and two layers, bidirectional, batch_first, initial states,
proj_size, unbatched input."""

import pytest
import torch


class Lstm(torch.nn.Module):
    def __init__(self, input_size, hidden_size, **options):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size, **options)

    def forward(self, x):
        output, (h, c) = self.lstm(x)
        return output, h, c


class LstmWithState(torch.nn.Module):
    def __init__(self, input_size, hidden_size, **options):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size, **options)

    def forward(self, x, h0, c0):
        output, (h, c) = self.lstm(x, (h0, c0))
        return output, h, c


@pytest.mark.parametrize(
    "num_layers, bidirectional, batch_first",
    [(1, False, False), (2, False, False), (1, True, False), (1, False, True), (2, True, True)],
    ids=["one_layer", "two_layers", "bidirectional", "batch_first", "two_layers_bidirectional_batch_first"],
)
def test_lstm(test_runner, num_layers, bidirectional, batch_first):
    model = Lstm(6, 8, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    test_runner.lower_and_run_model(model, (torch.randn(3, 3, 6),))


def test_lstm_initial_state(test_runner):
    model = LstmWithState(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    inputs = (torch.randn(2, 3, 4), torch.randn(4, 2, 6), torch.randn(4, 2, 6))
    test_runner.lower_and_run_model(model, inputs)


def test_lstm_no_bias_proj_size(test_runner):
    model = Lstm(5, 8, bias=False, proj_size=3)
    test_runner.lower_and_run_model(model, (torch.randn(4, 2, 5),))


def test_lstm_unbatched(test_runner):
    test_runner.lower_and_run_model(Lstm(3, 5), (torch.randn(4, 3),))


def test_lstm_large(test_runner):
    model = Lstm(32, 64, batch_first=True)
    test_runner.lower_and_run_model(model, (torch.randn(8, 6, 32),))


def test_lstm_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = Lstm(4, 6, batch_first=True)
    test_runner.lower_and_run_model(model, (torch.randn(3, 5, 4),), dynamic_shapes=({0: batch},))
