"""Localizing a fail_mismatch (case/localize.py) with real export, lowering and execution:
a flow whose lowering swaps one op for another (an edge transform pass; eager untouched)
is blamed on exactly that node, a healthy subtest pays nothing, the time limit holds, and
--localize decides which failures are localized."""

import dataclasses

import pytest
import torch

# A lowering that computes one op wrongly: the edge transform pass turns every sin into
# cos (and, for the delegate case, tanh into sigmoid) before partitioning.
SWAPPING_PASSES = '''
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import ExportPass


class SwapOps(ExportPass):
    def __init__(self, swaps):
        super().__init__()
        self.swaps = swaps

    def call_operator(self, op, args, kwargs, meta):
        return super().call_operator(self.swaps.get(op, op), args, kwargs, meta)


def sin_as_cos():
    return [SwapOps({exir_ops.edge.aten.sin.default: exir_ops.edge.aten.cos.default})]


def tanh_as_sigmoid():
    return [SwapOps({exir_ops.edge.aten.tanh.default: exir_ops.edge.aten.sigmoid.default})]
'''

CONFTEST = '''
import dataclasses

from etsuite.backends.harness.flows.expectations import Expectation, Expectations
from etsuite.backends.portable.flows import PORTABLE
from swapping_passes import sin_as_cos


def pytest_etsuite_flows(config):
    declared = Expectations((Expectation(kind="fail", flows=("sin_as_cos_declared",),
                                         case="test_cases.py::test_wave", reason="known"),))
    return [
        dataclasses.replace(PORTABLE, name="sin_as_cos", backend="faulty",
                            transform_passes=sin_as_cos),
        dataclasses.replace(PORTABLE, name="sin_as_cos_declared", backend="faulty",
                            transform_passes=sin_as_cos, expectations=declared),
    ]
'''

CASES = '''
import torch


class Wave(torch.nn.Module):
    def forward(self, x, y):
        scaled = x * 2
        wave = torch.sin(scaled)
        return torch.relu(wave + y)


class Ramp(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x * 3 - 1)


def test_wave(test_runner):
    test_runner.lower_and_run_model(Wave(), (torch.randn(3, 8), torch.randn(3, 8)))


def test_ramp(test_runner):
    test_runner.lower_and_run_model(Ramp(), (torch.randn(3, 8),))
'''
SIN_LINE = CASES.lstrip("\n").splitlines().index("        wave = torch.sin(scaled)") + 1


def one(run, nodeid_part):
    records = run.records(nodeid_part)
    assert len(records) == 1, (records, run.stdout[-3000:])
    return records[0]


@pytest.fixture
def project(pytester):
    pytester.makepyfile(swapping_passes=SWAPPING_PASSES)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    return pytester


def test_a_swapped_op_is_localized_to_its_node(project, run_suite):
    run = run_suite("--flow", "sin_as_cos", "--flow", "sin_as_cos_declared", "--seed", "3",
                    "-p", "no:xdist")
    assert run.report is not None, run.stdout + run.stderr

    wave = one(run, "test_wave[sin_as_cos]")
    assert wave["status"] == "fail_mismatch"
    found = wave["localization"]
    assert found["localized"] is True and found["method"] == "intermediates", found
    # The first node off the rule is the sin, not the mul before it nor the add after it.
    assert found["node"] == "sin" and found["target"] == "aten.sin.default"
    assert found["source"] == f"test_cases.py:{SIN_LINE}"
    assert found["inputs"] == [{"shape": [3, 8], "dtype": "float32"}]
    assert found["error"]["error_ratio"] > 1 and found["error"]["rule"] == "fp32"
    assert found["compared"] == 2  # the mul matched, then the sin failed
    assert 0 < found["seconds"] < 60
    assert f"at aten.sin.default (test_cases.py:{SIN_LINE})" in run.stdout
    # The sin alone, lowered with the same flow on the values it had, still fails.
    repro = found["repro"]
    assert (repro["op"], repro["status"], repro["reproduces"]) == \
        ("aten.sin.default", "fail_mismatch", True)
    assert (project.path / repro["folder"] / "repro.py").is_file()
    assert repro["folder"].startswith("reports/repros/")

    # A passing subtest is not localized; a declared failure is not either, by default.
    assert one(run, "test_ramp[sin_as_cos]")["localization"] is None
    declared = one(run, "test_wave[sin_as_cos_declared]")
    assert declared["status"] == "xfail" and declared["localization"] is None

    # The summary groups localized failures by the op they start at, per flow.
    from etsuite.tools.report import summary

    out = project.path / "summary.md"
    summary.main([str(run.report_path), "--output", str(out)])
    text = out.read_text()
    where = text[text.index("## Where it breaks"):]
    row = next(line for line in where.splitlines() if "`sin_as_cos`" in line)
    assert "`aten.sin.default`" in row and "| 1 " in row and "test_cases.py::test_wave" in row
    assert "breaks at `aten.sin.default (test_cases.py:" in text  # in the failure's block
    assert "Minimal repro of subtest 0, `aten.sin.default` still fails alone" in text


def test_localize_off_leaves_the_field_empty(project, run_suite):
    run = run_suite("--flow", "sin_as_cos", "--seed", "3", "--localize", "off",
                    "-k", "test_wave", "-p", "no:xdist")
    assert run.report is not None, run.stdout + run.stderr
    wave = one(run, "test_wave[sin_as_cos]")
    assert wave["status"] == "fail_mismatch" and wave["localization"] is None
    assert "at aten.sin.default" not in run.stdout


def test_the_time_limits_old_name_still_works_for_one_release(project, run_suite):
    """`--localize-budget` was `--localize-seconds`'s name; "budget" is now only a
    backend's cost limit. The old name sets the same limit and says so once."""
    run = run_suite("--flow", "sin_as_cos", "--seed", "3", "--localize-budget", "1e-6",
                    "-k", "test_wave", "-p", "no:xdist")
    assert run.report is not None, run.stdout + run.stderr
    found = one(run, "test_wave[sin_as_cos]")["localization"]
    assert found["reason"].startswith("not localized: budget of 1e-06 s spent"), found
    line = "etsuite: --localize-budget is deprecated and goes in the next release: " \
           "use --localize-seconds"
    assert run.stderr.count(line) == 1, run.stderr
    run = run_suite("--flow", "sin_as_cos", "--seed", "3", "--localize-seconds", "1e-6",
                    "-k", "test_wave", "-p", "no:xdist")
    assert one(run, "test_wave[sin_as_cos]")["localization"]["reason"] == found["reason"]
    assert "deprecated" not in run.stderr


def test_the_policy_localizes_declared_failures_only_when_asked():
    from etsuite.backends.harness.case.runner import LocalizePolicy

    assert LocalizePolicy().seconds_for(declared=False) == 60.0
    assert LocalizePolicy().seconds_for(declared=True) is None
    assert LocalizePolicy("all", 5.0).seconds_for(declared=True) == 5.0
    assert LocalizePolicy("off").seconds_for(declared=False) is None


def _swapping_flow(base, passes: str):
    """`base` with one of SWAPPING_PASSES's lowerings."""
    namespace: dict = {}
    exec(SWAPPING_PASSES, namespace)
    return dataclasses.replace(base, name=f"{base.name}_swapped",
                               transform_passes=namespace[passes])


class Wave(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(torch.sin(x * 2) + y)


class Waves(torch.nn.Module):
    def forward(self, x, y):
        return torch.tanh(x + y) * 2 - x


def test_a_healthy_subtest_runs_no_localization():
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    stages: list[str] = []
    outcome = run_pipeline(Wave(), (torch.randn(2, 5), torch.randn(2, 5)), PORTABLE,
                           localize_seconds=60.0, on_stage=stages.append)
    assert outcome.status.value == "pass" and outcome.localization is None
    assert "localize" not in stages and stages.count("run") == 1


def test_the_time_limit_is_respected():
    # (the reason's words, "budget of ... spent", are the record's, kept as they were)
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    stages: list[str] = []
    outcome = run_pipeline(Wave(), (torch.randn(2, 5), torch.randn(2, 5)),
                           _swapping_flow(PORTABLE, "sin_as_cos"), localize_seconds=1e-6,
                           on_stage=stages.append)
    assert outcome.status.value == "fail_mismatch" and "localize" in stages
    found = outcome.localization
    assert found["localized"] is False, found
    assert found["reason"].startswith("not localized: budget of 1e-06 s spent"), found
    assert found["seconds"] < 30


def test_a_failing_delegate_is_split_one_node_per_call_to_name_the_node():
    """XNNPACK takes add, tanh, mul and sub as one delegate call, which ETDump sees as one
    row; lowered again one node per call, the swapped tanh is the first call off the rule."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.harness.contract.record import where_it_breaks
    from etsuite.backends.xnnpack.flows import XNNPACK

    outcome = run_pipeline(Waves(), (torch.randn(2, 5), torch.randn(2, 5)),
                           _swapping_flow(XNNPACK, "tanh_as_sigmoid"), localize_seconds=60.0)
    assert outcome.status.value == "fail_mismatch"
    found = outcome.localization
    assert found["localized"] is True and found["delegate"] == "XnnpackBackend", found
    assert found["method"] == "intermediates, one node per delegate call"
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default")
    assert found["boundary"]["nodes"] == 1
    within = found["within"]
    assert within["nodes"] >= 3 and (within["first"], within["last"]) == ("add", "sub")
    assert where_it_breaks(found).startswith("aten.tanh.default (")
    assert where_it_breaks(found).endswith(" inside delegate XnnpackBackend")


def test_a_delegate_that_cannot_be_split_is_named_with_its_boundary(monkeypatch):
    from etsuite.backends.harness.case import localize
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.xnnpack.flows import XNNPACK

    def refuse(inner, *rest):
        raise RuntimeError("no splitting here")

    monkeypatch.setattr(localize, "one_node_per_partition", refuse)
    outcome = run_pipeline(Waves(), (torch.randn(2, 5), torch.randn(2, 5)),
                           _swapping_flow(XNNPACK, "tanh_as_sigmoid"), localize_seconds=60.0)
    found = outcome.localization
    assert found["localized"] is True and found["node"] is None, found
    assert (found["boundary"]["first"], found["boundary"]["last"]) == ("add", "sub")
    assert found["inside"].startswith("not localized inside (one node per delegate call): "
                                      "lowering one node per delegate call failed: "
                                      "RuntimeError: no splitting here")


def test_a_crash_or_hang_while_localizing_is_contained(monkeypatch):
    """The work runs in a forked process: its answer comes back; an abort (as a runtime
    that crashes with ETDump on would) or a hang past the time limit is "not localized", and
    this process, the test's, lives on."""
    import os
    import time

    from etsuite.backends.harness.case import localize

    assert localize.contained(lambda: {"localized": True, "node": "sin"}, 5.0) == \
        {"localized": True, "node": "sin"}
    crashed = localize.contained(lambda: os.abort(), 5.0)
    assert crashed["localized"] is False
    assert crashed["reason"] == "not localized: the localization run was killed by SIGABRT"
    monkeypatch.setattr(localize, "GRACE_SECONDS", 0.2)
    started = time.monotonic()
    hung = localize.contained(lambda: time.sleep(30) or {}, 0.1)
    assert time.monotonic() - started < 5
    assert hung["reason"] == "not localized: budget of 0.1 s spent (stopped)"
    assert hung["method"] == localize.METHOD
    # The record names what was stopped: a stage bisection is not an intermediates pass.
    stopped = localize.contained(lambda: time.sleep(30) or {}, 0.1, method="bisection")
    assert stopped["method"] == "bisection" and stopped["localized"] is False


class SignedRemainder(torch.nn.Module):
    def forward(self, x, y):
        return torch.remainder(x * 3, y)


def test_the_localized_op_alone_is_a_repro_that_fails_on_its_own(tmp_path):
    """Portable's integer remainder follows C's sign rule, eager Python's: localized to the
    remainder, the op is lowered alone on the values it had (x * 3, y) and still fails,
    and the folder's script shows it in a fresh process (exit 1 while it reproduces)."""
    import subprocess
    import sys

    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    x, y = torch.tensor([-7, 7, -5, 4]), torch.tensor([3, -3, 2, 3])
    folder = tmp_path / "repros" / "case" / "subtest0"
    outcome = run_pipeline(SignedRemainder(), (x, y), PORTABLE, localize_seconds=60.0,
                           repro_to={"folder": str(folder), "test_id": "t.py::t",
                                     "tox_env": "portable"})
    assert outcome.status.value == "fail_mismatch", outcome.error
    found = outcome.localization
    assert found["localized"] and found["target"] == "aten.remainder.Tensor", found
    repro = found["repro"]
    assert repro == {"op": "aten.remainder.Tensor", "status": "fail_mismatch",
                     "reproduces": True, "folder": str(folder)}
    saved = torch.load(folder / "inputs.pt")
    assert saved["target"] == "aten.remainder.Tensor"
    assert torch.equal(saved["args"][0], x * 3) and torch.equal(saved["args"][1], y)
    done = subprocess.run([sys.executable, str(folder / "repro.py")], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("fail_mismatch ")


def test_an_op_that_passes_alone_says_so():
    """A repro lowered with a flow that computes it right does not reproduce: the record
    says the failure needs its context (here the flow's swap applies only to sin)."""
    from etsuite.backends.harness.case import repro

    class Graph(torch.nn.Module):
        def forward(self, x):
            return torch.cos(x)

    exported = torch.export.export(Graph(), (torch.randn(4),))
    node = next(n for n in exported.graph.nodes if n.op == "call_function")
    from etsuite.backends.portable.flows import PORTABLE

    values = {"x": torch.randn(4)}
    from etsuite.backends.harness.case.pipeline import run_pipeline

    found = repro.reproduce(node, values, PORTABLE, "fail_mismatch", None, {}, run_pipeline)
    assert found == {"op": "aten.cos.default", "status": "pass", "reproduces": False,
                     "folder": None}

    # An op that cannot be run alone says nothing either way.
    def broken_pipeline(*args, **kwargs):
        from etsuite.backends.harness.case.pipeline import PipelineOutcome
        from etsuite.backends.harness.contract.statuses import Status

        return PipelineOutcome(status=Status.SKIP_INVALID, error="export failed: why\nmore")

    found = repro.reproduce(node, values, PORTABLE, "fail_mismatch", None, {}, broken_pipeline)
    assert found["reproduces"] is None and found["status"] == "skip_invalid"
    assert found["error"] == "export failed: why"


class QuantizedWave(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.second(torch.tanh(self.first(x)))


def test_a_quantized_flow_is_judged_against_the_fake_quantized_graph():
    """XNNPACK int8 static with tanh lowered as sigmoid: every node is judged against the
    quantized program run eagerly (its quantize/dequantize ops compute the quantization
    the recipe asked for), the calls of the split program that end in a quantize are
    judged dequantized, and the tanh is named inside the delegate, not the linears."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

    torch.manual_seed(0)
    flow = _swapping_flow(XNNPACK_STATIC_INT8_PER_TENSOR, "tanh_as_sigmoid")
    outcome = run_pipeline(QuantizedWave(), (torch.randn(4, 8),), flow, localize_seconds=60.0)
    assert outcome.status.value == "fail_mismatch", outcome.error
    found = outcome.localization
    assert found["localized"] is True, found
    assert found["method"] == "intermediates, one node per delegate call", found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default")
    assert found["reference"] == "fake-quantized exported program, run eagerly"
    assert found["error"]["rule"] == "int8 static"
    assert found["compared"] >= 3  # the delegate, then the first linear's call matched
    assert found["repro"]["reproduces"] is True

    healthy = run_pipeline(QuantizedWave(), (torch.randn(4, 8),), XNNPACK_STATIC_INT8_PER_TENSOR,
                           localize_seconds=60.0)
    assert healthy.status.value == "pass" and healthy.localization is None


def test_a_repro_keeps_the_weights_as_weights_and_a_missing_bias_missing():
    """A conv without bias, localized: the op alone has its weight as the module's own
    parameter (a backend takes a conv whose weight is an input differently) and None for
    the bias, and runs."""
    from etsuite.backends.harness.case import repro
    from etsuite.backends.harness.case.localize import eager_intermediates
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    conv = torch.nn.Conv2d(3, 4, 3, bias=False).eval()
    x = torch.randn(1, 3, 8, 8)
    exported = torch.export.export(conv, (x,))
    node = next(n for n in exported.graph.nodes if n.op == "call_function")
    values = eager_intermediates(exported, [x])
    args, kwargs = repro.op_call(node, values)
    module, tensors = repro.OneOp.from_saved({"target": str(node.target), "args": args,
                                              "kwargs": kwargs})
    assert [name for name, _ in module.named_parameters()] == ["weight1"]
    assert len(tensors) == 1 and torch.equal(tensors[0], x)
    assert torch.allclose(module(*tensors), conv(x))
    found = repro.reproduce(node, values, PORTABLE, "fail_mismatch", None, {}, run_pipeline)
    assert found == {"op": "aten.conv2d.default", "status": "pass", "reproduces": False,
                     "folder": None}


class CountedWave(torch.nn.Module):
    """A stateful program whose sin counts from the second step on: the first step passes
    with a lowering that computes sin as cos, the second fails."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x):
        self.calls.add_(1)
        counted = (self.calls > 1).float()
        return x + torch.sin(x) * counted


def test_a_step_sequence_is_localized_at_its_first_failing_step():
    """The steps before the failing one run first, on the runtime's one loaded method and
    eagerly with the buffers each step mutates: the mask that reads the state agrees (had
    the state not been carried, it would be named), and the sin is."""
    from etsuite.backends.harness.case.pipeline import run_steps_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    steps = [(torch.randn(2, 5),), (torch.randn(2, 5),), (torch.randn(2, 5),)]
    outcome = run_steps_pipeline(CountedWave(), steps, _swapping_flow(PORTABLE, "sin_as_cos"),
                                 localize_seconds=60.0)
    assert outcome.status.value == "fail_mismatch" and outcome.failed_step == 1, outcome.error
    found = outcome.localization
    assert found["localized"] is True, found
    assert (found["node"], found["target"]) == ("sin", "aten.sin.default")
    assert found["compared"] >= 3  # the count, the mask and its cast matched first
    assert found["repro"]["reproduces"] is True


def test_an_in_place_op_is_reproduced_by_its_out_of_place_variant():
    from etsuite.backends.harness.case.repro import functional

    assert functional("aten.index_put_.default") == "aten.index_put.default"
    assert functional("aten.relu_.default") == "aten.relu.default"
    assert functional("aten.sin.default") == "aten.sin.default"
    assert functional("aten._to_copy.default") == "aten._to_copy.default"
    assert functional("aten.no_such_op_.default") == "aten.no_such_op_.default"
