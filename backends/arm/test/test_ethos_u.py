"""Arm-only checks of the Ethos-U flows: Vela compiles a small int8 model whole into an
Ethos-U delegate, and the subtest ends `lowered_not_run` with the reason this host cannot
run it. (Other arm flows skip these tests: expectations.toml.)"""

import torch

from etsuite.backends.harness.case.delegation import computing_ops


def assert_compiled_not_run(record, ops):
    assert record.status == "lowered_not_run", (record.status, record.stage, record.error)
    assert record.runtime is None  # nothing executed it
    assert "has no 'EthosUBackend'" in record.error and "FVP" in record.error, record.error
    assert record.pte_size
    # Every op of the model went to the NPU, with its per-channel int8 weights; only the
    # boundary quantize/dequantize of the int8 graph stay outside the delegate.
    assert computing_ops(record.undelegated_ops) == 0, record.undelegated_ops
    assert set(ops) <= set(record.delegated_ops), record.delegated_ops
    assert "quantized_decomposed.dequantize_per_channel.default" in record.delegated_ops
    assert record.delegated_precision == "quantized"


def test_conv_relu_compiled_for_ethos_u(test_runner):
    conv_relu = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU())
    record = test_runner.lower_and_run_model(conv_relu, (torch.randn(1, 3, 8, 8),))
    assert_compiled_not_run(record, ["aten.convolution.default", "aten.relu.default"])


def test_mlp_compiled_for_ethos_u(test_runner):
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    record = test_runner.lower_and_run_model(mlp, (torch.randn(2, 16),))
    assert_compiled_not_run(record, ["aten.linear.default", "aten.relu.default"])
