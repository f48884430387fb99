"""The unittest-style shim: a decorated OperatorTest class expands per flow (and dtype)
and yields the same records as the equivalent function-style test."""

SHIM_STYLE = """
import torch

from etsuite.backends.harness.case.shim import OperatorTest, dtype_test, operator_test


class Mul(torch.nn.Module):
    def forward(self, x, y):
        return x * y


@operator_test
class TestMul(OperatorTest):
    @dtype_test
    def test_mul(self, flow, dtype):
        self._test_op(Mul(), (torch.randn(3, 4).to(dtype), torch.randn(3, 4).to(dtype)), flow)

    def test_mul_ones(self, flow):
        record = self._test_op(Mul(), (torch.ones(2), torch.ones(2)), flow)
        self.assertEqual(record.flow, flow.name)
"""

PLAIN_STYLE = """
import pytest
import torch


class Mul(torch.nn.Module):
    def forward(self, x, y):
        return x * y


@pytest.mark.parametrize("dtype", [torch.float32], ids=["float32"])
def test_mul(test_runner, dtype):
    test_runner.lower_and_run_model(
        Mul(), (torch.randn(3, 4).to(dtype), torch.randn(3, 4).to(dtype)))


def test_mul_ones(test_runner):
    record = test_runner.lower_and_run_model(Mul(), (torch.ones(2), torch.ones(2)))
    assert record.flow == test_runner.flow.name
"""

ARGS = ("--backend", "portable", "--flow", "xnnpack", "--seed", "5", "-p", "no:xdist")
IDENTITY_FREE = lambda record: {k: v for k, v in record.items() if k != "timings"}  # noqa: E731


def test_unittest_style_expands_per_flow_like_plain_style(pytester, run_suite):
    # Both styles live at the same path in turn, so their seeds and node ids coincide.
    pytester.makepyfile(test_mul=SHIM_STYLE)
    shim = run_suite(*ARGS)
    assert shim.ret == 0, shim.stdout
    assert set(shim.tests) == {
        "test_mul.py::test_mul[portable-float32]",
        "test_mul.py::test_mul[xnnpack-float32]",
        "test_mul.py::test_mul_ones[portable]",
        "test_mul.py::test_mul_ones[xnnpack]",
    }
    records = {r["test_id"]: r for r in shim.records()}
    assert all(r["status"] == "pass" for r in records.values())
    xnnpack = records["test_mul.py::test_mul[xnnpack-float32]"]
    assert xnnpack["delegated_nodes"] == 1 and xnnpack["params"] == {"dtype": "torch.float32"}
    assert xnnpack["test_case"] == "test_mul.py::test_mul"

    pytester.makepyfile(test_mul=PLAIN_STYLE)
    plain = run_suite(*ARGS)
    assert plain.ret == 0, plain.stdout
    plain_records = {r["test_id"]: r for r in plain.records()}
    assert set(plain_records) == set(records)
    for test_id, record in records.items():
        assert IDENTITY_FREE(record) == IDENTITY_FREE(plain_records[test_id])


UPSTREAM_SHAPED = """
import unittest

import torch

from etsuite.backends.harness.case.shim import OperatorTest, TestFlow, dtype_test, operator_test


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.abs(x) + 1


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(10, 4)

    def forward(self, x):
        return self.embedding(x)


@operator_test
class Abs(OperatorTest):
    @dtype_test
    def test_abs_dtype(self, flow: TestFlow, dtype) -> None:
        self._test_op(Model(), ((torch.rand(2, 10) * 100).to(dtype),), flow)

    def test_abs_random_inputs(self, flow: TestFlow) -> None:
        self._test_op(Model(), (torch.randn(3, 5),), flow, generate_random_test_inputs=True)

    def test_embedding_random_indices(self, flow: TestFlow) -> None:
        self._test_op(Embed(), (torch.tensor([[0, 9], [3, 4]]),), flow,
                      generate_random_test_inputs=True)

    def test_abs_dynamic(self, flow: TestFlow) -> None:
        if flow.quantize:
            self.skipTest("not for quantized flows")
        batch = torch.export.Dim("batch", min=1, max=8)
        self._test_op(Model(), (torch.randn(4, 3),), flow, dynamic_shapes=({0: batch},))

    @unittest.skip("NaN and Inf are not enforced for backends.")
    def test_abs_nan(self, flow: TestFlow) -> None:
        raise AssertionError("a skipped test must not run")
"""


def test_a_module_shaped_like_executorchs_runs_with_only_its_imports_changed(pytester, run_suite):
    pytester.makepyfile(test_abs=UPSTREAM_SHAPED)
    run = run_suite("--flow", "xnnpack", "--seed", "3", "-p", "no:xdist")
    assert run.ret == 0, run.stdout
    outcomes = {nodeid.split("::")[-1]: t["outcome"] for nodeid, t in run.tests.items()}
    assert outcomes == {
        "test_abs_dtype[xnnpack-float32]": "passed",
        "test_abs_random_inputs[xnnpack]": "passed",
        "test_embedding_random_indices[xnnpack]": "passed",
        "test_abs_dynamic[xnnpack]": "passed",
        "test_abs_nan[xnnpack]": "skipped",
    }
    statuses = {r["test_id"].split("::")[-1]: r["status"] for r in run.records()}
    # ran on fresh inputs and matched eager (XNNPACK may leave these ops to portable kernels)
    assert statuses["test_abs_random_inputs[xnnpack]"] in ("pass", "pass_undelegated")
    assert statuses["test_embedding_random_indices[xnnpack]"] in ("pass", "pass_undelegated")
