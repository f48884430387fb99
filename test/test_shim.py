"""The unittest-style shim: a decorated OperatorTest class expands per flow (and dtype)
and yields the same records as the equivalent function-style test."""

SHIM_STYLE = """
import torch

from etsuite.backends.harness.shim import OperatorTest, dtype_test, operator_test


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
        self.assertEqual(record["flow"], flow.name)
"""

PLAIN_STYLE = """
import pytest
import torch


class Mul(torch.nn.Module):
    def forward(self, x, y):
        return x * y


class TestMul:
    @pytest.mark.parametrize("dtype", [torch.float32], ids=["float32"])
    def test_mul(self, test_runner, dtype):
        test_runner.lower_and_run_model(
            Mul(), (torch.randn(3, 4).to(dtype), torch.randn(3, 4).to(dtype)))

    def test_mul_ones(self, test_runner):
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
        "test_mul.py::TestMul::test_mul[portable-float32]",
        "test_mul.py::TestMul::test_mul[xnnpack-float32]",
        "test_mul.py::TestMul::test_mul_ones[portable]",
        "test_mul.py::TestMul::test_mul_ones[xnnpack]",
    }
    records = {r["test_id"]: r for r in shim.records()}
    assert all(r["status"] == "pass" for r in records.values())
    xnnpack = records["test_mul.py::TestMul::test_mul[xnnpack-float32]"]
    assert xnnpack["delegated_nodes"] == 1 and xnnpack["params"] == {"dtype": "torch.float32"}
    assert xnnpack["test_case"] == "test_mul.py::TestMul::test_mul"

    pytester.makepyfile(test_mul=PLAIN_STYLE)
    plain = run_suite(*ARGS)
    assert plain.ret == 0, plain.stdout
    plain_records = {r["test_id"]: r for r in plain.records()}
    assert set(plain_records) == set(records)
    for test_id, record in records.items():
        assert IDENTITY_FREE(record) == IDENTITY_FREE(plain_records[test_id])
