"""The `test_runner` fixture, the seeding that makes every flow of a case see the same
inputs, and when priming (case/priming.py) runs so that forked tests start with the
per-process memos filled.
"""

from __future__ import annotations

import random
import sys

import pytest

from etsuite.backends.harness import isolation, workers
from etsuite.backends.harness.case.runner import TestRunner
from etsuite.backends.harness.items import RUNNER_KEY, context_of
from etsuite.backends.harness.state import FLOWS_IN_RUN_KEY, TESTS_IN_RUN_KEY, SessionState


class TestRunnerFixture:
    def __init__(self, state: SessionState):
        self.state = state

    @pytest.fixture
    def test_runner(self, request: pytest.FixtureRequest) -> TestRunner:
        """The per-flow runner: `test_runner.lower_and_run_model(model, inputs)`.

        Seeds torch, random and numpy from (session seed, test case without the flow)
        before the test body runs, so every flow sees the same inputs and weights."""
        flow = self.state.flows[request.param]
        context, input_seed = context_of(request.node, flow, self.state)
        seed_everything(input_seed)
        runner = TestRunner(flow, context, on_progress=isolation.progress_sink(request.node),
                            artifacts=self.state.artifacts, localize=self.state.localize,
                            crash_target=isolation.crash_target(request.node))
        request.node.stash[RUNNER_KEY] = runner
        return runner


def seed_everything(seed: int) -> None:
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


def prime(config: pytest.Config, state: SessionState) -> None:
    """Lower once in the parent so that forked tests start warm. A process that runs one
    test (a repro command; under xdist, no more tests than workers) would pay that
    lowering and its own, so it goes straight to the test."""
    from etsuite.backends.harness.case.priming import prime as lower_once

    tests = config.stash.get(TESTS_IN_RUN_KEY, None)
    if tests is not None and tests <= workers.worker_count(config):
        return
    problems = lower_once(config.stash.get(FLOWS_IN_RUN_KEY, state.selected))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for problem in problems:
        line = f"etsuite: priming skipped part of its work (tests run, a little slower): {problem}"
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")
