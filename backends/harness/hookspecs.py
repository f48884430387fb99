"""Hooks the plugin offers to conftest.py files and other plugins, and the one it uses
to hear from its isolation layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # for the annotations only: flow.py is not loaded with the hookspecs
    from etsuite.backends.harness.contract.statuses import Status
    from etsuite.backends.harness.flows.flow import Flow
    from etsuite.backends.harness.remote.spec import RunnerKind


def pytest_etsuite_flows(config: pytest.Config) -> list[Flow]:
    """Return a list of extra `Flow` objects (e.g. a vendor's own backend, or flows
    made for the harness's self-tests). Called once, at configure time."""


def pytest_etsuite_runner_kinds(config: pytest.Config) -> list[RunnerKind]:
    """Return runner kinds to add to the built-in ones (process, ssh, adb, cmd, native): objects
    of the `remote.spec.RunnerKind` shape, e.g. a board reached over a vendor's own
    transport. A `--runner` spec goes to the first kind that claims it. Called once at
    configure time, and only when a runner is asked for."""


@pytest.hookspec(firstresult=True)
def pytest_etsuite_child_lost(item: pytest.Item, status: Status, message: str, stage: str | None,
                              records: list[dict[str, Any]], duration: float,
                              crash_dump: str | None,
                              localization: dict[str, Any] | None) -> pytest.TestReport:
    """The isolation layer lost the child running `item`: it crashed (`status` is
    fail_crash) or was killed at its time limit (fail_timeout). `records` are the record
    dicts the child finished before, `stage` the pipeline stage it had entered after them
    (or None), `crash_dump` what faulthandler wrote as it died (Python stacks and the
    extension modules; None when it wrote nothing), `localization` where a second child
    found the crash to start (case/bisection.py; None: not asked). Return the call-phase
    TestReport that stands for the test.

    Modelled on pytest-xdist's `pytest_handlecrashitem`: the isolation layer reports
    the loss, the plugin decides what the report and its records say."""
