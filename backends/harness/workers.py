"""pytest-xdist coordination, in one place: whether this process is a worker or the
controller, what the controller hands each worker (the run's one seed, what a resumed
run finished before, the runners' pool folder), and what a worker hands back (a usage error it found at
collection, the shard plan).

Torch-free and free of the rest of the plugin, so that every part can ask
`is_xdist_worker` without an import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from etsuite.backends.harness.state import USAGE_ERROR_KEY as STASHED_USAGE_ERROR
from etsuite.backends.harness.state import SessionState

if TYPE_CHECKING:  # xdist's types, for the annotations only
    from xdist.workermanage import WorkerController

# workerinput keys: controller -> worker
SEED_KEY = "etsuite_seed"
SEED_POLICY_KEY = "etsuite_seed_policy"
FINISHED_KEY = "etsuite_finished_before"
RUNNER_FOLDER_KEY = "etsuite_runner_folder"
# workeroutput keys: worker -> controller
USAGE_ERROR_KEY = "etsuite_usage_error"
SHARD_PLAN_KEY = "etsuite_shard_plan"


def is_xdist_worker(config: pytest.Config) -> bool:
    """A worker collects and runs tests but writes no report: its controller does."""
    return hasattr(config, "workerinput")


def is_xdist_controller(config: pytest.Config) -> bool:
    """A controller hands the tests to its workers and runs none itself."""
    return not is_xdist_worker(config) and config.getoption("dist", "no") != "no" \
        and bool(config.getoption("tx", None))


def worker_count(config: pytest.Config) -> int:
    """How many processes share this run's tests (1 without xdist)."""
    return getattr(config, "workerinput", {}).get("workercount", 1)


def controller_seed(config: pytest.Config) -> tuple[int, str] | None:
    """(seed, policy) the controller chose, on a worker; None elsewhere."""
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None or SEED_KEY not in worker_input:
        return None
    return worker_input[SEED_KEY], worker_input[SEED_POLICY_KEY]


def controller_finished(config: pytest.Config) -> set[str] | None:
    """The tests a resumed run finished before, as the controller read them, on a
    worker (a worker does not read the stream itself); None elsewhere."""
    worker_input = getattr(config, "workerinput", None)
    return None if worker_input is None else set(worker_input.get(FINISHED_KEY, ()))


def controller_runner_folder(config: pytest.Config) -> str | None:
    """The run's pool folder of runner devices (remote/pool.py), made by the controller
    and shared by every worker; None elsewhere."""
    return getattr(config, "workerinput", {}).get(RUNNER_FOLDER_KEY)


def hand_over_shard_plan(config: Any, plan: dict) -> None:  # a Config; xdist's workeroutput
    """Only workers know the collected items: the controller reports their plan."""
    if is_xdist_worker(config):
        config.workeroutput[SHARD_PLAN_KEY] = plan


def usage_error_at_collection(config: Any, items: list[pytest.Item], message: str) -> None:
    # (config: a pytest.Config, which has xdist's `workeroutput` on a worker)
    """Markers are only seen at collection, which xdist does in its workers, where a
    raised UsageError becomes an INTERNALERROR. A worker therefore runs nothing and hands
    the message to the controller (`pytest_testnodedown`), which ends the session with
    the usage error's exit code."""
    if not is_xdist_worker(config):
        raise pytest.UsageError(message)
    config.workeroutput[USAGE_ERROR_KEY] = message
    config.hook.pytest_deselected(items=list(items))
    items[:] = []


class XdistCoordination:
    """The controller's side: one seed for every worker, and what workers report back
    stored on the config's stash (`state.USAGE_ERROR_KEY`) and in the run's identity."""

    def __init__(self, config: pytest.Config, state: SessionState):
        self.config = config
        self.state = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: WorkerController) -> None:
        node.workerinput[SEED_KEY] = self.state.seed
        node.workerinput[SEED_POLICY_KEY] = self.state.seed_policy
        node.workerinput[FINISHED_KEY] = sorted(self.state.finished_before)
        if self.state.runner_folder:
            node.workerinput[RUNNER_FOLDER_KEY] = self.state.runner_folder

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: WorkerController, error: object | None) -> None:
        output = getattr(node, "workeroutput", {})
        if output.get(USAGE_ERROR_KEY):
            self.config.stash[STASHED_USAGE_ERROR] = output[USAGE_ERROR_KEY]
        if output.get(SHARD_PLAN_KEY):
            self.state.run.plan = output[SHARD_PLAN_KEY]
