"""aten.relu: 1-D to 4-D inputs, the nn.ReLU module, and relu after an add."""

import torch


class Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ReluModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(x)


class AddThenRelu(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x + y)


def test_relu_ranks(test_runner):
    test_runner.lower_and_run_model(Relu(), (torch.randn(32),))
    test_runner.lower_and_run_model(Relu(), (torch.randn(4, 12),))
    test_runner.lower_and_run_model(Relu(), (torch.randn(2, 3, 4, 5),))


def test_relu_module(test_runner):
    test_runner.lower_and_run_model(ReluModule(), (torch.randn(3, 5, 7),))


def test_relu_after_add(test_runner):
    test_runner.lower_and_run_model(AddThenRelu(), (torch.randn(2, 16), torch.randn(2, 16)))
