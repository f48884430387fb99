"""Localizing a stage failure (case/bisection.py) with real export, lowering and
execution: a lowering exception planted in one node's lowering is blamed on exactly that
node, on portable (an edge pass) and on XNNPACK (its partitioner), by bisecting over
prefixes of the graph; a failure no prefix shows is "not localized" with why; the time limit
holds."""

import dataclasses

import pytest
import torch

from etsuite.backends.harness.case.pipeline import run_pipeline


class Chain(torch.nn.Module):
    """Six computing nodes: mul, add, relu, cos, tanh, sub."""

    def forward(self, x, y):
        rectified = torch.relu(x * 2 + y)
        wave = torch.cos(rectified)
        return torch.tanh(wave) - rectified


COS_LINE = "        wave = torch.cos(rectified)"


def _inputs():
    return (torch.randn(3, 4), torch.randn(3, 4))


def refusing_cos_flow():
    """Portable, with an edge pass that raises on a cos: a lowering exception of one node."""
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import ExportPass

    from etsuite.backends.portable.flows import PORTABLE

    class RefuseCos(ExportPass):
        def call_operator(self, op, args, kwargs, meta):
            if op == exir_ops.edge.aten.cos.default:
                raise RuntimeError("this lowering cannot take cos")
            return super().call_operator(op, args, kwargs, meta)

    return dataclasses.replace(PORTABLE, name="refuse_cos", transform_passes=lambda: [RefuseCos()])


@pytest.mark.slow
def test_a_lowering_exception_is_bisected_to_its_node(tmp_path):
    import inspect

    flow = refusing_cos_flow()
    folder = tmp_path / "repros" / "case" / "subtest0"
    stages: list[str] = []
    outcome = run_pipeline(Chain(), _inputs(), flow, localize_seconds=60.0, on_stage=stages.append,
                           repro_to={"folder": str(folder), "test_id": "t.py::t",
                                     "tox_env": "portable"})
    assert outcome.status.value == "fail_lower", outcome.error
    assert stages[-1] == "localize"
    found = outcome.localization
    assert found["localized"] is True and found["method"] == "bisection over graph prefixes", found
    assert (found["node"], found["target"]) == ("cos", "aten.cos.default")
    assert (found["prefix"], found["of"]) == (4, 6)   # mul, add, relu lower; cos does not
    assert 2 <= found["attempts"] <= 5                 # the whole graph, then log2(6) halvings
    line = inspect.getsourcelines(Chain.forward)[1] + 2
    assert found["source"].endswith(f"test_bisection.py:{line}")
    assert found["inputs"] == [{"shape": [3, 4], "dtype": "float32"}]
    # The cos alone, lowered with the same flow, fails the same way; its folder says so.
    repro = found["repro"]
    assert (repro["op"], repro["status"], repro["reproduces"]) == \
        ("aten.cos.default", "fail_lower", True)
    assert (folder / "repro.py").is_file() and 'status.value == "fail_lower"' in \
        (folder / "repro.py").read_text()
    assert 0 < found["seconds"] < 60


@pytest.mark.slow
def test_a_partitioner_that_raises_on_one_node_is_bisected_to_it():
    """XNNPACK's partitioner, made to raise when it would delegate a tanh: the lowering
    fails for the whole graph and for every prefix that holds the tanh."""
    from etsuite.backends.harness.contract.record import where_it_breaks
    from etsuite.backends.xnnpack.flows import XNNPACK

    def refusing_tanh(inner):
        class RefuseTanh(type(inner)):
            def partition(self, exported_program):
                result = super().partition(exported_program)
                graph = result.tagged_exported_program.graph_module.graph
                if any("tanh" in str(n.target) and n.meta.get("delegation_tag")
                       for n in graph.nodes):
                    raise RuntimeError("XNNPACK cannot take this tanh")
                return result

        refusing = RefuseTanh.__new__(RefuseTanh)
        refusing.__dict__.update(inner.__dict__)
        return refusing

    inner = XNNPACK.partitioners
    flow = dataclasses.replace(XNNPACK, name="xnnpack_refusing_tanh",
                               partitioners=lambda: [refusing_tanh(p) for p in inner()])
    outcome = run_pipeline(Chain(), _inputs(), flow, localize_seconds=60.0)
    assert outcome.status.value == "fail_lower", outcome.error
    assert "XNNPACK cannot take this tanh" in outcome.error
    found = outcome.localization
    assert found["localized"] is True, found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default")
    assert where_it_breaks(found).startswith("aten.tanh.default (")
    assert found["repro"]["reproduces"] is True


@pytest.mark.slow
def test_a_failure_no_prefix_shows_is_not_localized_and_says_why(monkeypatch):
    """An attempt that passes where the case failed (here: every attempt) leaves nothing to
    bisect; the record says so, and the subtest keeps its status."""
    from etsuite.backends.harness.case import bisection

    monkeypatch.setattr(bisection, "attempt", lambda *args: {"status": "pass"})
    outcome = run_pipeline(Chain(), _inputs(), refusing_cos_flow(), localize_seconds=60.0)
    assert outcome.status.value == "fail_lower"
    found = outcome.localization
    assert found["localized"] is False and found["attempts"] == 1, found
    assert found["reason"] == ("not localized: the whole graph exported again ends pass, not "
                               "fail_lower: nothing to bisect")


def test_the_stage_bisection_respects_its_time_limit():
    outcome = run_pipeline(Chain(), _inputs(), refusing_cos_flow(), localize_seconds=1e-6)
    assert outcome.status.value == "fail_lower"
    found = outcome.localization
    assert found["localized"] is False, found
    assert found["reason"].startswith("not localized: budget of 1e-06 s spent"), found
    assert found["seconds"] < 30


def test_a_crashing_attempt_is_an_answer_not_the_end(monkeypatch):
    """Each attempt is forked: one that aborts counts as "does not fail the same way" for a
    fail_lower (and as failing for a fail_crash), and the search goes on."""
    import os

    from etsuite.backends.harness.case import bisection

    real = bisection.attempt

    def abort_on_small_prefixes(unlifted, count, *rest):
        if count <= 2:
            os.abort()
        return real(unlifted, count, *rest)

    monkeypatch.setattr(bisection, "attempt", abort_on_small_prefixes)
    outcome = run_pipeline(Chain(), _inputs(), refusing_cos_flow(), localize_seconds=60.0)
    found = outcome.localization
    assert found["localized"] is True and found["node"] == "cos", found


def test_stateful_and_other_statuses_are_not_bisected():
    from etsuite.backends.harness.case import bisection

    exported = torch.export.export(Chain(), _inputs())
    found = bisection.localize_stage(exported, _inputs(), refusing_cos_flow(), "fail_quantize",
                                     60.0, run_pipeline)
    assert found["localized"] is False
    assert found["reason"] == ("not localized: fail_quantize is not a stage failure that "
                               "bisection localizes")


REFUSING_PASSES = '''
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import ExportPass


class RefuseCos(ExportPass):
    def call_operator(self, op, args, kwargs, meta):
        if op == exir_ops.edge.aten.cos.default:
            raise RuntimeError("this lowering cannot take cos")
        return super().call_operator(op, args, kwargs, meta)
'''

CONFTEST = '''
import dataclasses

from etsuite.backends.portable.flows import PORTABLE
from refusing_passes import RefuseCos


def pytest_etsuite_flows(config):
    return [dataclasses.replace(PORTABLE, name="refuse_cos", backend="faulty",
                                transform_passes=lambda: [RefuseCos()])]
'''

CASES = '''
import torch


class Chain(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(torch.cos(torch.relu(x * 2)))


def test_chain(test_runner):
    test_runner.lower_and_run_model(Chain(), (torch.randn(3, 8),))
'''


@pytest.mark.slow
def test_the_console_and_summary_name_the_node_a_lowering_failure_starts_at(pytester, run_suite):
    pytester.makepyfile(refusing_passes=REFUSING_PASSES)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    run = run_suite("--flow", "refuse_cos", "--seed", "3", "-p", "no:xdist")
    assert run.report is not None, run.stdout + run.stderr
    (record,) = run.records("test_chain[refuse_cos]")
    assert record["status"] == "fail_lower"
    assert record["localization"]["target"] == "aten.cos.default", record["localization"]
    line = CASES.lstrip("\n").splitlines().index(
        "        return torch.tanh(torch.cos(torch.relu(x * 2)))") + 1
    assert f"subtest 0: fail_lower at aten.cos.default (test_cases.py:{line})" in run.stdout

    from etsuite.tools.report import summary

    out = pytester.path / "summary.md"
    summary.main([str(run.report_path), "--output", str(out)])
    where = out.read_text().split("## Where it breaks", 1)[1]
    assert "`refuse_cos`" in where and "`aten.cos.default`" in where


class Accumulator(torch.nn.Module):
    """A stateful program: a buffer updated in place at every step."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3, 4))

    def forward(self, x):
        self.total.add_(torch.cos(x * 2))
        return torch.relu(self.total) + 1


@pytest.mark.slow
def test_a_step_sequence_that_fails_to_lower_is_bisected_on_its_first_step():
    from etsuite.backends.harness.case.pipeline import run_steps_pipeline

    steps = [(torch.randn(3, 4),), (torch.randn(3, 4),)]
    outcome = run_steps_pipeline(Accumulator(), steps, refusing_cos_flow(), localize_seconds=60.0)
    assert outcome.status.value == "fail_lower"
    found = outcome.localization
    assert found["localized"] is True and found["target"] == "aten.cos.default", found
    assert found["repro"]["reproduces"] is True


ABORTING_CONFTEST = '''
import dataclasses
import os

from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import ExportPass

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import Expectation, Expectations
from etsuite.backends.portable.flows import PORTABLE


class AbortOnCos(ExportPass):
    """A lowering that dies (SIGABRT, as a native compiler's assertion would) on a cos."""

    def call_operator(self, op, args, kwargs, meta):
        if op == exir_ops.edge.aten.cos.default:
            os.abort()
        return super().call_operator(op, args, kwargs, meta)


def pytest_etsuite_flows(config):
    declared = Expectations((Expectation(kind="fail", flows=("abort_on_cos_declared",),
                                         case="test_cases.py::test_chain", reason="known",
                                         statuses=(Status.FAIL_CRASH,)),))
    return [dataclasses.replace(PORTABLE, name="abort_on_cos", backend="faulty",
                                transform_passes=lambda: [AbortOnCos()]),
            dataclasses.replace(PORTABLE, name="abort_on_cos_declared", backend="faulty",
                                transform_passes=lambda: [AbortOnCos()], expectations=declared)]
'''

TWO_SUBTESTS = '''
import torch


class Chain(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(torch.cos(torch.relu(x * 2)))


def test_chain(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(3, 8),))
    test_runner.lower_and_run_model(Chain(), (torch.randn(3, 8),))
'''


@pytest.mark.slow
def test_a_crash_is_bisected_by_a_second_child(pytester, run_suite):
    """The lowering aborts the test's process at subtest 1. A second child runs the test
    again up to that subtest, stops before the stage that died, and bisects the crash with
    every attempt forked: the record of the crash names the cos; the op alone crashes too.
    A declared crash is not run again (default --localize)."""
    pytester.makeconftest(ABORTING_CONFTEST)
    pytester.makepyfile(test_cases=TWO_SUBTESTS)
    run = run_suite("--flow", "abort_on_cos", "--flow", "abort_on_cos_declared", "--seed", "3",
                    "-p", "no:xdist")
    assert run.report is not None, run.stdout + run.stderr
    first, crashed = run.records("test_chain[abort_on_cos]")
    assert first["status"] == "pass"
    assert (crashed["subtest"], crashed["status"], crashed["stage"]) == (1, "fail_crash", "lower")
    assert "SIGABRT" in crashed["error"] and crashed["crash_dump"]
    found = crashed["localization"]
    assert found["localized"] is True and found["method"] == "bisection over graph prefixes", found
    assert (found["node"], found["target"]) == ("cos", "aten.cos.default")
    assert (found["repro"]["status"], found["repro"]["reproduces"]) == ("fail_crash", True)
    assert "fail_crash at aten.cos.default (test_cases.py:" in run.stdout, run.stdout[-4000:]

    _, declared = run.records("test_chain[abort_on_cos_declared]")
    assert declared["status"] == "xfail" and declared["localization"] is None


def test_a_prefix_keeps_the_symbolic_dimensions_dynamic():
    from etsuite.backends.harness.case import bisection

    batch = torch.export.Dim("batch", min=2, max=10)
    exported = torch.export.export(Chain(), _inputs(), dynamic_shapes=({0: batch}, {0: batch}))
    module, nodes = bisection.prefix_module(exported, 4)
    assert [n.name for n in nodes] == ["mul", "add", "relu", "cos"]
    assert bisection.dynamic_shapes_of(module) == ({0: torch.export.Dim.AUTO},) * 2
    # The prefix returns what later nodes read (relu, for the sub) and its last node (cos).
    x, y = _inputs()
    relu, cos = module(x, y)
    assert torch.equal(relu, torch.relu(x * 2 + y)) and torch.equal(cos, torch.cos(relu))
    static = torch.export.export(Chain(), _inputs())
    assert bisection.dynamic_shapes_of(bisection.prefix_module(static, 2)[0]) is None


def add_after_relu_broken_flow():
    """Portable, with an edge pass that computes an add as a sub only where the add reads a
    relu: the add alone passes, the failure needs its neighbour."""
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import ExportPass

    from etsuite.backends.portable.flows import PORTABLE

    class BreakAddAfterRelu(ExportPass):
        def call(self, graph_module):
            for node in graph_module.graph.nodes:
                if node.target == exir_ops.edge.aten.add.Tensor and any(
                        getattr(a, "target", None) == exir_ops.edge.aten.relu.default
                        for a in node.args):
                    node.target = exir_ops.edge.aten.sub.Tensor
            graph_module.recompile()
            return super().call(graph_module)

    return dataclasses.replace(PORTABLE, name="add_after_relu_broken",
                               transform_passes=lambda: [BreakAddAfterRelu()])


class Context(torch.nn.Module):
    def forward(self, x, y):
        rectified = torch.relu(torch.tanh(x * 2) - 0.1)
        return torch.sigmoid(rectified + y)


@pytest.mark.slow
def test_an_op_that_passes_alone_gets_the_smallest_failing_window(tmp_path):
    """The add is where the mismatch starts, but alone it passes: the repro then bisects the
    start of a window ending at the add, fed the eager values before it, to the smallest
    that still fails (relu, add), and writes that window as a program of its own."""
    flow = add_after_relu_broken_flow()
    folder = tmp_path / "repros" / "case" / "subtest0"
    outcome = run_pipeline(Context(), _inputs(), flow, localize_seconds=60.0,
                           repro_to={"folder": str(folder), "test_id": "t.py::t",
                                     "tox_env": "portable"})
    assert outcome.status.value == "fail_mismatch"
    found = outcome.localization
    assert found["target"] == "aten.add.Tensor", found
    repro = found["repro"]
    assert (repro["status"], repro["reproduces"]) == ("pass", False)
    window = repro["subgraph"]
    assert (window["nodes"], window["first"], window["last"]) == (2, "relu", "add"), window
    assert window["folder"] == str(folder) and window["attempts"] >= 2

    unlifted = torch.export.load(folder / "subgraph.pt2").module()
    module = torch.fx.GraphModule(unlifted, unlifted.graph)  # as subgraph.py runs it
    inputs = tuple(torch.load(folder / "subgraph_inputs.pt"))
    from etsuite.backends.portable.flows import PORTABLE

    assert run_pipeline(module, inputs, flow).status.value == "fail_mismatch"
    assert run_pipeline(module, inputs, PORTABLE).status.value == "pass"
    assert "exits 1 while the failure reproduces" in (folder / "subgraph.py").read_text()


@pytest.mark.slow
def test_a_mismatch_on_a_runner_is_bisected_where_it_ran(tmp_path):
    """A delegated program run by a runner (here the `process` kind: a separate agent
    process) has no ETDump on this host: its mismatch is bisected over prefixes, each run
    by the runner, and the smallest that mismatches names the swapped tanh. An
    undelegated one is localized through this host's runtime (the same portable kernels)."""
    from etsuite.backends.harness.remote.kinds import parse_spec
    from etsuite.backends.harness.remote.runtime import RunnerRuntime
    from etsuite.backends.portable.flows import PORTABLE
    from etsuite.backends.xnnpack.flows import XNNPACK
    from test_localize import Wave, Waves, _swapping_flow

    runner = RunnerRuntime((parse_spec("process"),), str(tmp_path))
    flow = dataclasses.replace(_swapping_flow(XNNPACK, "tanh_as_sigmoid"), runtime=runner)
    outcome = run_pipeline(Waves(), _inputs(), flow, localize_seconds=120.0)
    assert outcome.status.value == "fail_mismatch" and outcome.runtime == "process"
    found = outcome.localization
    assert found["localized"] is True and found["method"] == "bisection over graph prefixes", found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default")
    assert found["repro"]["reproduces"] is True

    flow = dataclasses.replace(_swapping_flow(PORTABLE, "sin_as_cos"), runtime=runner)
    found = run_pipeline(Wave(), _inputs(), flow, localize_seconds=120.0).localization
    assert (found["method"], found["target"]) == ("intermediates", "aten.sin.default"), found


def test_a_quantized_mismatch_the_fake_quantized_program_agrees_with_is_the_quantizations(
        monkeypatch):
    """When the quantized graph, lowered without quantizing again, matches itself run
    eagerly, no node is to blame: the case's rule measured the quantization's error."""
    from etsuite.backends.harness.case import bisection
    from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

    monkeypatch.setattr(bisection, "attempt", lambda *args: {"status": "pass"})
    exported = torch.export.export(Chain(), _inputs())
    found = bisection.localize_stage(exported, _inputs(), XNNPACK_STATIC_INT8_PER_TENSOR,
                                     "fail_mismatch", 60.0, run_pipeline, stage="compare")
    assert found["localized"] is False
    assert found["reason"].endswith("the mismatch is the quantization's error, not a node's")
    assert "ends pass against the fake-quantized program" in found["reason"]


class ConvLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.linear = torch.nn.Linear(6, 5)

    def forward(self, x):
        return self.linear(torch.relu(self.conv(x)))


def test_a_quantized_graph_is_cut_between_ops_never_inside_their_quantization():
    """The quantize/dequantize nodes of a PT2E graph are not counted (never blamed): a
    window ends after its last op's quantize-dequantize and returns that dequantized
    value, as the rest of the program reads it, and the weights' dequantize goes with
    the op that reads it."""
    import operator

    from etsuite.backends.harness.case import bisection
    from etsuite.backends.harness.case.pipeline import quantize
    from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

    inputs = (torch.randn(1, 3, 8, 8),)
    exported = quantize(torch.export.export(ConvLinear().eval(), inputs), inputs,
                        XNNPACK_STATIC_INT8_PER_TENSOR, None)
    unlifted = exported.module()
    every = [n for n in unlifted.graph.nodes if n.op == "call_function"]
    assert any("quantize_per_tensor" in str(n.target) for n in every)  # it is quantized
    nodes = bisection.computing_nodes(unlifted.graph)
    names = [str(n.target) for n in nodes]
    assert not any("quantized_decomposed" in name for name in names), names
    relu = next(i for i, n in enumerate(nodes) if "relu" in str(n.target))
    window, _, _ = bisection.window_module(unlifted, 0, relu + 1)  # conv, relu, then q-dq
    kept = [str(n.target) for n in window.graph.nodes if n.op == "call_function"
            and n.target is not operator.getitem]
    assert kept[-1].startswith("quantized_decomposed.dequantize_per_tensor"), kept
    output = next(n for n in window.graph.nodes if n.op == "output")
    (returned,) = output.args[0]
    assert str(returned.target).startswith("quantized_decomposed.dequantize_per_tensor")
    # the conv's weight dequantized in its window; the linear's not before its own
    assert sum("dequantize" in name for name in kept) >= 2, kept
    assert not any("linear" in name or "addmm" in name for name in kept)
    window(*inputs)  # and it runs
