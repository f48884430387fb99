"""End to end through real export, lowering and the ExecuTorch runtime on tiny models:
each status the pipeline assigns, checked in the JSON report of a real run."""

import pytest
import torch

from conftest import TEST_FLOWS_CONFTEST

CASES = """
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class CumSum(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=0)


class Broken(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("this model is broken on purpose")


def test_add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(2, 8), torch.randn(2, 8)))


def test_cumsum(test_runner):
    test_runner.lower_and_run_model(CumSum(), (torch.randn(6, 3),))


def test_broken(test_runner):
    test_runner.lower_and_run_model(Broken(), (torch.randn(3),))


def test_two_subtests_one_fails(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(3), torch.randn(3)))
    test_runner.lower_and_run_model(Broken(), (torch.randn(3),))
"""




@pytest.fixture
def run(pytester, run_suite):
    pytester.makeconftest(TEST_FLOWS_CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    return run_suite("--flow", "portable", "--flow", "xnnpack", "--flow", "xnnpack_perturbed",
                     "--flow", "vulkan", "--seed", "11", "-p", "no:xdist")


def one(run, nodeid_part):
    records = run.records(nodeid_part)
    assert len(records) == 1, records
    return records[0]


def test_statuses_of_a_real_run(run):
    assert run.report is not None, run.stdout + run.stderr

    add = one(run, "test_add[xnnpack]")
    assert add["status"] == "pass"
    assert add["delegated_nodes"] > 0 and add["delegated_ops"] == {"aten.add.Tensor": 1}
    assert add["undelegated_nodes"] == 0
    assert add["pte_size"] > 0
    assert add["outputs"][0]["max_abs_error"] <= 1e-5
    assert {"export", "lower", "serialize", "load", "run", "compare"} <= set(add["timings"])
    assert add["seed"] == 11 and add["flow"] == "xnnpack" and add["backend"] == "xnnpack"
    assert add["test_case"] == "test_cases.py::test_add"
    assert run.outcome("test_add[xnnpack]") == "passed"

    portable = one(run, "test_add[portable]")
    assert portable["status"] == "pass" and portable["delegated_nodes"] == 0
    assert portable["undelegated_ops"] == {"aten.add.Tensor": 1}

    cumsum = one(run, "test_cumsum[xnnpack]")
    assert cumsum["status"] == "pass_undelegated", cumsum
    assert cumsum["delegated_nodes"] == 0 and cumsum["undelegated_nodes"] >= 1

    perturbed = one(run, "test_add[xnnpack_perturbed]")
    assert perturbed["status"] == "fail_mismatch" and perturbed["stage"] == "compare"
    assert perturbed["outputs"][0]["max_abs_error"] == pytest.approx(1.0, abs=1e-5)
    assert run.outcome("test_add[xnnpack_perturbed]") == "failed"
    assert "--seed 11" in perturbed["repro"] and "test_add[xnnpack_perturbed]" in perturbed["repro"]

    # Vulkan lowers here, but the PyPI runtime has no Vulkan backend to run it.
    vulkan = one(run, "test_add[vulkan]")
    assert vulkan["status"] == "lowered_not_run", vulkan
    assert vulkan["delegated_nodes"] > 0 and vulkan["pte_size"] > 0
    assert "VulkanBackend" in vulkan["error"] and "run" not in vulkan["timings"]
    assert run.outcome("test_add[vulkan]") == "skipped"

    broken = one(run, "test_broken[xnnpack]")
    assert broken["status"] == "skip_invalid" and broken["stage"] == "eager"
    assert "broken on purpose" in broken["error"]
    assert run.outcome("test_broken[xnnpack]") == "skipped"

    # A test keeps running after a failing subtest, and every subtest is recorded.
    two = run.records("test_two_subtests_one_fails[xnnpack_perturbed]")
    assert [r["status"] for r in two] == ["fail_mismatch", "skip_invalid"]
    assert [r["subtest"] for r in two] == [0, 1]

    assert run.facts.seed == 11
    assert run.facts.versions["executorch"]
    assert run.ret == 1


REPRO_CASE = """
import torch


class AddRelu(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x + y)


def test_add_relu(test_runner):
    test_runner.lower_and_run_model(AddRelu(), (torch.randn(4, 16), torch.randn(4, 16)))
"""


def test_repro_command_reproduces_inputs_and_outcome(pytester, run_suite):
    """Rerunning a record's repro command (its pytest arguments) gives the same record:
    the int8 error statistics depend on the exact inputs, so they only match if the seed
    reproduced them."""
    import shlex

    pytester.makepyfile(test_repro=REPRO_CASE)
    first = run_suite("--flow", "xnnpack_static_int8_per_tensor", "-p", "no:xdist")
    (record,) = first.records()
    assert record["outputs"][0]["max_abs_error"] > 0  # int8: error depends on the inputs

    words = shlex.split(record["repro"])
    assert words[:3] == ["tox", "-e", "xnnpack"] and words[3] == "--"
    again = run_suite(*words[4:])
    (repeated,) = again.records()
    assert repeated["test_id"] == record["test_id"]
    assert repeated["status"] == record["status"]
    assert repeated["outputs"] == record["outputs"]

    other_seed = run_suite("--flow", "xnnpack_static_int8_per_tensor", "--seed",
                           str(record["seed"] + 1), "-p", "no:xdist")
    assert other_seed.records()[0]["outputs"] != record["outputs"]


class StackAll(torch.nn.Module):
    def forward(self, *tensors):
        return torch.stack(tensors, dim=1)


def test_quantized_varargs_model_with_dynamic_shapes():
    """A `forward(self, *xs)` model's dynamic_shapes hold one entry for all of *xs; the
    quantized flow re-exports the converted module, whose inputs are positional, so the
    entry must be spread over them (it used to fail at quantize)."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

    batch = torch.export.Dim("batch", min=1, max=8)
    result = run_pipeline(StackAll(), (torch.randn(3, 4), torch.randn(3, 4)),
                          XNNPACK_STATIC_INT8_PER_TENSOR,
                          dynamic_shapes=(({0: batch}, {0: batch}),),
                          run_inputs=(torch.randn(5, 4), torch.randn(5, 4)))
    assert result.status is Status.PASS, (result.stage, result.error)


class UnbatchedAvgPool1d(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.avg_pool1d(x, 2)


def test_a_wrapped_failure_names_its_cause():
    """Pass managers wrap a pass's failure in "An error occurred when running the X pass",
    which names no cause: the record carries the chain, the root cause last."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.xnnpack.flows import XNNPACK_STATIC_INT8_PER_TENSOR

    result = run_pipeline(UnbatchedAvgPool1d(), (torch.randn(3, 8),),
                          XNNPACK_STATIC_INT8_PER_TENSOR)
    assert (result.status.value, result.stage) == ("fail_lower", "lower")
    wrapper, cause = result.error.split("\ncaused by: ")
    assert "An error occurred when running the 'ChannelsLastTaggedReshapePass' pass" in wrapper
    assert cause.startswith("AssertionError: ") and "NHWC" in cause


def test_a_long_wrapper_leaves_room_for_a_long_cause():
    """A pass manager's message lists every pass run before; the root cause (often a long
    graph dump) must still get its head into the trimmed record."""
    from etsuite.backends.harness.case.pipeline import _error_text
    from etsuite.backends.harness.contract.record import ERROR_LIMIT

    try:
        try:
            raise ValueError("the real cause\n" + "graph line\n" * 500)
        except ValueError as cause:
            raise Exception("An error occurred when running the 'P' pass after the following "
                            "passes: " + str(["_Adapter"] * 500)) from cause
    except Exception as error:  # noqa: BLE001
        text = _error_text(error)
    assert len(text) <= ERROR_LIMIT + 20
    assert text.startswith("Exception: An error occurred when running the 'P' pass")
    assert "\ncaused by: ValueError: the real cause\n" in text


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_an_outcome_holds_the_record_fields_and_the_replay_apart():
    """What run_pipeline found goes into a record as it is; the Replay that runs the
    program again travels beside it, never inside the record."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.harness.contract.record import SubtestRecord
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.backends.portable.flows import PORTABLE

    model = AddOne()
    outcome = run_pipeline(model, (torch.randn(2, 3),), PORTABLE)
    found = outcome.record_fields()
    assert "replay" not in found
    record = SubtestRecord(test_id="t.py::t", test_case="t.py::t", subtest=0, suite="operators",
                           backend="portable", flow="portable", **found)
    assert (record.status, record.runtime) == (Status.PASS, "executorch"), record
    assert record.pte_size and record.outputs and set(record.timings) >= {"lower", "run"}
    assert outcome.replay is not None and outcome.replay.status(model) is Status.PASS


def test_every_built_in_runtime_is_a_runtime_by_shape():
    """Runtimes implement `runtimes.Runtime` by shape, not by a base class: each built-in
    flow's runtime has every member the pipeline calls."""
    from etsuite.backends.harness.flows.registry import builtin_flows
    from etsuite.backends.harness.flows.runtimes import Runtime

    runtimes = {type(flow.runtime).__name__: flow.runtime for flow in builtin_flows()}
    assert {"ExecuTorchRuntime", "TosaReferenceRuntime", "CortexMHostRuntime"} <= set(runtimes)
    assert [name for name, runtime in runtimes.items() if not isinstance(runtime, Runtime)] == []
    assert not isinstance(object(), Runtime)


class IndexesTooFar(torch.nn.Module):
    def forward(self, x):
        return x + [1][int(torch.compiler.is_exporting())]  # an IndexError only in export


def test_a_stage_failure_says_where_it_was_raised():
    """An IndexError alone names neither the library nor the line: the record's error
    ends with the innermost frame, its path from the package or this checkout on."""
    from etsuite.backends.harness.case.pipeline import run_pipeline
    from etsuite.backends.portable.flows import PORTABLE

    outcome = run_pipeline(IndexesTooFar(), (torch.randn(2, 3),), PORTABLE)
    assert (outcome.stage, outcome.status.value) == ("export", "skip_invalid"), outcome.error
    line = IndexesTooFar.forward.__code__.co_firstlineno + 1
    assert outcome.error.endswith(f"(raised at test/test_pipeline.py:{line} in forward)"), \
        outcome.error
