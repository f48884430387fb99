"""XNNPACK-only expectations: graphs made only of ops XNNPACK implements must be
delegated whole, in every XNNPACK flow (nothing left to portable kernels)."""

import torch


class ConvBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def assert_fully_delegated(record):
    assert record.status == "pass", record.error
    assert record.delegated_nodes > 0
    assert record.undelegated_nodes == 0, record.undelegated_ops


def test_mlp_fully_delegated(test_runner):
    assert_fully_delegated(test_runner.lower_and_run_model(MLP(), (torch.randn(2, 16),)))


def test_conv_block_fully_delegated(test_runner):
    assert_fully_delegated(test_runner.lower_and_run_model(ConvBlock(), (torch.randn(1, 3, 8, 8),)))
