"""Stateful programs (backends/harness/case/steps.py): one loaded method called step after
step. A healthy program passes every step; a runtime that loses or mixes up the state
fails `fail_mismatch` at the step where the fault first shows, and the record says so."""

import dataclasses

import pytest
import torch

from etsuite.backends.harness.case.pipeline import run_methods_pipeline, run_steps_pipeline
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.portable.flows import PORTABLE
from etsuite.backends.xnnpack.flows import XNNPACK, XNNPACK_STATIC_INT8_PER_TENSOR

pytestmark = pytest.mark.slow


class CacheModel(torch.nn.Module):
    """A KV cache in miniature: each step writes its projected input at its position
    of a zero-initialized buffer, and the output reads every position written so far."""

    def __init__(self, length: int = 8, width: int = 4):
        super().__init__()
        self.proj = torch.nn.Linear(width, width)
        self.register_buffer("cache", torch.zeros(length, width))

    def forward(self, x, position):
        self.cache.index_copy_(0, position, self.proj(x))
        return self.cache.sum(dim=0, keepdim=True) * torch.tanh(x)


STEPS = 6


def cache_steps():
    torch.manual_seed(7)
    return CacheModel(), [(torch.randn(1, 4), torch.tensor([k])) for k in range(STEPS)]


class _Method:
    """A faulty runtime's loaded method: the real one, plus what the fault needs."""

    def __init__(self, runtime, program):
        self.runtime, self.program = runtime, program
        self.loaded = runtime.load(program)
        self.calls, self.history, self.last = 0, [], None


@dataclasses.dataclass(frozen=True)
class StepFaultRuntime:
    """Wraps a flow's runtime and spoils the state at step `at`:
    - "reload": the method is loaded again before the step (the state is lost);
    - "previous": the step returns the previous step's outputs;
    - "lost_write": the step's own state update is lost afterwards (a fresh method
      replays the earlier steps), so the first step that reads it is the next one."""

    inner: object
    fault: str
    at: int = 3
    name: str = "step_fault"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return _Method(self.inner, program)

    def execute(self, method, inputs):
        step, method.calls = method.calls, method.calls + 1
        faulty = step == self.at
        if faulty and self.fault == "reload":
            method.loaded = self.inner.load(method.program)
        outputs = list(self.inner.execute(method.loaded, inputs))
        previous, method.last = method.last, outputs
        if faulty and self.fault == "previous":
            return previous
        if faulty and self.fault == "lost_write":
            method.loaded = self.inner.load(method.program)
            for earlier in method.history:
                self.inner.execute(method.loaded, earlier)
            return outputs
        method.history.append(inputs)
        return outputs


@pytest.mark.parametrize("flow", [PORTABLE, XNNPACK, XNNPACK_STATIC_INT8_PER_TENSOR],
                         ids=lambda f: f.name)
def test_healthy_program_passes_every_step(flow):
    """(The quantizing flow calibrates on every step and then restores the cache, not the
    observers.)"""
    model, steps = cache_steps()
    outcome = run_steps_pipeline(model, steps, flow)
    assert outcome.status in (Status.PASS, Status.PASS_UNDELEGATED), outcome.error
    assert outcome.steps == STEPS and outcome.failed_step is None
    assert len(outcome.step_errors) == STEPS and len(outcome.step_ms) == STEPS
    assert all(ms > 0 for ms in outcome.step_ms)
    if not flow.quantizes:
        assert max(e for step in outcome.step_errors for e in step) < 1e-5
    # the cache update (index_copy) stays in portable ops: XNNPACK takes the linear only
    assert outcome.state == "portable"
    assert model.cache.abs().sum() == 0  # the test's module kept its initial state


@pytest.mark.parametrize("fault, failing_step", [
    ("reload", 3), ("previous", 3), ("lost_write", 4),
])
def test_state_fault_fails_at_the_step_where_it_shows(fault, failing_step):
    model, steps = cache_steps()
    flow = dataclasses.replace(PORTABLE, name=f"portable_{fault}",
                               runtime=StepFaultRuntime(PORTABLE.runtime, fault))
    outcome = run_steps_pipeline(model, steps, flow)
    assert outcome.status is Status.FAIL_MISMATCH
    assert outcome.failed_step == failing_step
    assert outcome.error.startswith(f"diverges at step {failing_step} of {STEPS}:")
    assert outcome.margin.startswith(f"step {failing_step} of {STEPS}:")
    # every step before the fault matched, and the series goes on after it
    assert max(max(outcome.step_errors[k]) for k in range(failing_step)) < 1e-5
    assert len(outcome.step_errors) == STEPS


def test_stateful_subtests_in_the_report(pytester, run_suite):
    """Through the plugin: the record of a stateful subtest carries the step series."""
    pytester.makepyfile(test_stateful_case=STATEFUL_TEST)
    run = run_suite("--flow", "portable")
    assert run.ret == 0, run.stdout[-3000:]
    (record,) = run.records("test_cache")
    assert record["status"] == "pass"
    assert record["steps"] == 4 and record["failed_step"] is None
    assert len(record["step_errors"]) == 4 and len(record["step_ms"]) == 4
    assert max(max(step) for step in record["step_errors"]) < 1e-5
    assert all(ms > 0 for ms in record["step_ms"])
    assert record["state"] == "portable"


def test_a_diverging_step_in_the_summary(pytester, run_suite):
    """A state fault through the plugin and the summary: the test fails with "diverges at
    step 3", and the summary's stateful section names the case and the step."""
    pytester.makeconftest(STEP_FAULT_FLOWS)
    pytester.makepyfile(test_stateful_case=STATEFUL_TEST)
    run = run_suite("--flow", "portable", "--flow", "portable_lost_state")
    assert run.ret == 1
    assert "diverges at step 3 of 4" in run.stdout
    (record,) = run.records("test_cache[portable_lost_state]")
    assert (record["status"], record["failed_step"]) == ("fail_mismatch", 3)
    summary = pytester.path / "summary.md"
    assert markdown_summary([str(pytester.path / "reports" / "run.json")], summary) == 0
    section = summary.read_text().split("## Stateful programs")[1].split("\n## ")[0]
    rows = {line.split("|")[1].strip(): line for line in section.splitlines()
            if line.startswith("| ") and "flow" not in line}
    lost = [cell.strip() for cell in rows["portable_lost_state"].split("|")[2:5]]
    assert lost == ["1", "0", "`test_stateful_case.py::test_cache` at step 3"]
    healthy = [cell.strip() for cell in rows["portable"].split("|")[2:5]]
    assert healthy == ["1", "1", "–"]


def markdown_summary(reports: list, output) -> int:
    from etsuite.tools.report import summary

    return summary.main([*reports, "--output", str(output)])


# The generated project's flows: the real portable flow whose runtime loses the state
# before step 3 (the method is loaded again).
STEP_FAULT_FLOWS = '''
import dataclasses

from etsuite.backends.portable.flows import PORTABLE
from test_stateful import StepFaultRuntime


def pytest_etsuite_flows(config):
    return [dataclasses.replace(PORTABLE, name="portable_lost_state", backend="faulty",
                                runtime=StepFaultRuntime(PORTABLE.runtime, "reload"))]
'''

STATEFUL_TEST = '''
import torch


class CacheModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 3))

    def forward(self, x, position):
        self.cache.index_copy_(0, position, x * 2)
        return self.cache.cumsum(dim=0)


def test_cache(test_runner):
    steps = [(torch.randn(1, 3), torch.tensor([k])) for k in range(4)]
    test_runner.lower_and_run_steps(CacheModel(), steps)
'''


def test_executorch_llama_decodes_through_xnnpack():
    """The real thing, small: ExecuTorch's own Llama (GQA, KV cache in mutable buffers),
    a prompt then decode steps through one loaded XNNPACK program, every step matching
    eager."""
    from etsuite.backends.suite.llm import decoders

    torch.manual_seed(3)
    decoder = decoders.llama_kv_static(n_kv_heads=2, prefill_len=2, n_decode=3)
    outcome = run_steps_pipeline(decoder.module, decoder.steps, XNNPACK)
    assert outcome.status is Status.PASS, outcome.error
    assert outcome.steps == 5 and outcome.failed_step is None
    assert outcome.delegated_nodes > 0
    # the cache update runs outside the delegate (XNNPACK takes no mutable buffer)
    assert outcome.state == "portable"


class SharedCache(torch.nn.Module):
    """The state two methods share: a projection and a cache of 8 positions."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.register_buffer("cache", torch.zeros(8, 4))


class Prefill(torch.nn.Module):
    """Writes a prompt of 3 positions into the shared cache."""

    def __init__(self, core):
        super().__init__()
        self.core = core

    def forward(self, x):
        self.core.cache[0:3].copy_(self.core.proj(x))
        return self.core.cache.sum(dim=0, keepdim=True)


class Decode(torch.nn.Module):
    """Writes one position and reads them all (the prompt's included)."""

    def __init__(self, core):
        super().__init__()
        self.core = core

    def forward(self, x, position):
        self.core.cache.index_copy_(0, position, self.core.proj(x))
        return self.core.cache.sum(dim=0, keepdim=True) * torch.tanh(x)


def prefill_decode():
    torch.manual_seed(11)
    core = SharedCache()
    methods = {"prefill": (Prefill(core), (torch.randn(3, 4),)),
               "decode": (Decode(core), (torch.randn(1, 4), torch.tensor([3])))}
    calls = [("prefill", (torch.randn(3, 4),))] + [
        ("decode", (torch.randn(1, 4), torch.tensor([3 + k]))) for k in range(4)]
    return methods, calls


@pytest.mark.parametrize("flow", [PORTABLE, XNNPACK], ids=lambda f: f.name)
def test_prefill_and_decode_methods_share_one_cache(flow):
    methods, calls = prefill_decode()
    outcome = run_methods_pipeline(methods, calls, flow)
    assert outcome.status in (Status.PASS, Status.PASS_UNDELEGATED), outcome.error
    assert outcome.step_methods == ["prefill"] + ["decode"] * 4
    assert outcome.steps == 5 and outcome.failed_step is None
    if flow is XNNPACK:
        assert outcome.delegated_nodes > 0 and outcome.status is Status.PASS


@dataclasses.dataclass(frozen=True)
class SeparateProgramsRuntime:
    """Loads each method from a program of its own: what a runtime that does not share
    the program's mutable state between methods does."""

    inner: object
    name: str = "separate_programs"

    def missing(self, program):
        return self.inner.missing(program)

    def load_methods(self, program, names):
        return {name: self.inner.load_methods(program, [name])[name] for name in names}

    def execute(self, loaded, inputs):
        return self.inner.execute(loaded, inputs)


def test_methods_that_do_not_share_the_cache_diverge_at_the_first_decode():
    """When decode does not see the cache prefill wrote, the prompt is lost and the first
    decode call is where it shows."""
    methods, calls = prefill_decode()
    flow = dataclasses.replace(PORTABLE, runtime=SeparateProgramsRuntime(PORTABLE.runtime))
    outcome = run_methods_pipeline(methods, calls, flow)
    assert outcome.status is Status.FAIL_MISMATCH
    assert outcome.failed_step == 1 and outcome.error.startswith("diverges at step 1 of 5:")


def test_a_runtime_of_one_method_does_not_run_a_multi_method_program():
    methods, calls = prefill_decode()
    flow = dataclasses.replace(PORTABLE, runtime=StepFaultRuntime(PORTABLE.runtime, "none"))
    outcome = run_methods_pipeline(methods, calls, flow)
    assert outcome.status is Status.LOWERED_NOT_RUN
    assert outcome.error == "runtime step_fault runs programs of one method only"
