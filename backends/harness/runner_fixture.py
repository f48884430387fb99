"""The `test_runner` fixture, the seeding that makes every flow of a case see the same
inputs, and when the warm-up (warm_up.py) runs so that forked tests start with the
per-process memos filled.
"""

from __future__ import annotations

import random
import sys

import pytest

from etsuite.backends.harness import isolation, workers
from etsuite.backends.harness.items import RUNNER_KEY, context_of
from etsuite.backends.harness.runner import TestRunner


class RunnerFixture:
    def __init__(self, state):
        self.state = state

    @pytest.fixture
    def test_runner(self, request):
        """The per-flow runner: `test_runner.lower_and_run_model(model, inputs)`.

        Seeds torch, random and numpy from (session seed, test case without the flow)
        before the test body runs, so every flow sees the same inputs and weights."""
        flow = self.state.flows[request.param]
        context, input_seed = context_of(request.node, flow, self.state)
        seed_everything(input_seed)
        runner = TestRunner(flow, context, on_progress=isolation.progress_sink(request.node),
                            artifacts=self.state.artifacts)
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


def warm_up(config, state) -> None:
    """Lower once in the parent so that forked tests start warm. A process that runs one
    test (a repro command; under xdist, no more tests than workers) would pay that
    lowering and its own, so it goes straight to the test."""
    from etsuite.backends.harness.warm_up import warm_up as lower_once

    if state.tests_in_run is not None and state.tests_in_run <= workers.worker_count(config):
        return
    problems = lower_once(state.flows_in_run if state.flows_in_run is not None
                          else state.selected)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for problem in problems:
        line = f"etsuite: warm-up skipped part of its work (tests run, a little slower): {problem}"
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")
