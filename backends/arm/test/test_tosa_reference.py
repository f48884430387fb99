"""Arm-only checks of the TOSA reference model runtime (tosa_reference.py): whole
delegated graphs run on it, in both flows; a graph the partitioner leaves partly
undelegated is not run (the reference model executes TOSA, not portable kernels)."""

import torch

from etsuite.backends.harness.case.delegation import computing_ops


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


class TwoOutputs(torch.nn.Module):
    def forward(self, x, y):
        return x + y, torch.cat([x, y], dim=1).permute(0, 2, 3, 1)


class SortInTheMiddle(torch.nn.Module):
    """aten.sort has no TOSA lowering: relu and mul are delegated, sort is not."""

    def forward(self, x):
        return torch.sort(torch.relu(x), dim=-1).values * 2


class ShapeOnlyInput(torch.nn.Module):
    """ones_like(x) reads only x's static shape: the TOSA graph has no input for x."""

    def forward(self, x, y):
        return torch.ones_like(x) + y


def assert_ran_on_reference_model(record):
    assert record.status == "pass", record.error
    assert record.runtime == "tosa-reference-model"
    assert record.delegated_nodes > 0
    # The INT flow leaves the boundary quantize/dequantize outside the delegate.
    assert computing_ops(record.undelegated_ops) == 0, record.undelegated_ops


def test_conv_block_on_reference_model(test_runner):
    assert_ran_on_reference_model(
        test_runner.lower_and_run_model(ConvBlock(), (torch.randn(1, 3, 8, 8),)))


def test_mlp_on_reference_model(test_runner):
    assert_ran_on_reference_model(test_runner.lower_and_run_model(MLP(), (torch.randn(2, 16),)))


def test_two_outputs_in_order(test_runner):
    inputs = (torch.randn(1, 2, 4, 5), torch.randn(1, 2, 4, 5))
    assert_ran_on_reference_model(test_runner.lower_and_run_model(TwoOutputs(), inputs))


def test_an_input_the_tosa_graph_does_not_read(test_runner):
    inputs = (torch.randn(3, 4), torch.randn(3, 4))
    assert_ran_on_reference_model(test_runner.lower_and_run_model(ShapeOnlyInput(), inputs))


def test_partly_delegated_is_not_run(test_runner):
    record = test_runner.lower_and_run_model(SortInTheMiddle(), (torch.randn(2, 8),))
    assert record.status == "lowered_not_run", (record.status, record.error)
    assert "not fully delegated" in record.error and "sort" in record.error
