"""The pytest plugin (entry point `pytest11: etsuite`): a registrar. It declares the
options, builds the session's settings once and registers one plugin object per
concern, the way pytest-xdist's plugin.py declares options and registers `DSession`:

    session.SessionHeader           what the session is (settings built once; the header)
    collection.Collection           parametrization, selection, collection-time statuses,
                                    shards, resume, order
    fixture.TestRunnerFixture       the `test_runner` fixture
    verdicts.Verdicts               final statuses and outcomes, for a finished test and a
                                    lost child alike
    workers.XdistCoordination       what an xdist controller and its workers tell each other
    session_end.SessionEnd          the exit status
    devices.RunnerSession           runners in the header, devices lost, the pool folder
    isolation.IsolationPlugin       each test in a forked child (when isolation is on)
    recording.ResultsStream         the results stream and the JSON report's contents

and hands a run to the warm process when asked (`--warm`, warm/client.py) before any of
them is needed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from etsuite.backends.harness import (
    artifacts,
    collection,
    declared,
    devices,
    fixture,
    hookspecs,
    isolation,
    recording,
    session,
    session_end,
    sharding,
    verdicts,
    workers,
)
from etsuite.backends.harness.case import speedups
from etsuite.backends.harness.case.runner import LOCALIZE_MODES
from etsuite.backends.harness.remote import placement
from etsuite.backends.harness.state import STATE_KEY
from etsuite.backends.harness.warm import client as warm_client


def _shard_arg(text: str) -> tuple[int, int]:
    try:
        return sharding.parse_shard(text)
    except sharding.ShardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _seconds_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants a number of seconds, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"wants a non-negative number of seconds, got {text!r}")
    return value


class _OldName(argparse.Action):
    """An option's old name, kept for one release: it sets what the new name sets, and
    the session says once that it is going (`say_old_names`). Said at configure time,
    not here: the arguments are parsed again by the warm process and by each xdist
    worker."""

    def __init__(self, option_strings: Sequence[str], dest: str, new_name: str,
                 **kwargs: Any) -> None:
        self.new_name = new_name
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        used = getattr(namespace, OLD_NAMES, None)
        if used is None:  # a list of its own per namespace (pytest parses into copies)
            used = []
            setattr(namespace, OLD_NAMES, used)
        if (option_string, self.new_name) not in used:
            used.append((option_string, self.new_name))


# Where _OldName notes the old names a command line used, in pytest's option namespace.
OLD_NAMES = "etsuite_old_names"


def say_old_names(config: pytest.Config) -> None:
    """One line on stderr per old option name used, in the process that runs the session
    (an xdist controller or a run without workers, never a worker)."""
    if workers.is_xdist_worker(config):
        return
    for old, new in getattr(config.option, OLD_NAMES, None) or []:
        sys.stderr.write(f"etsuite: {old} is deprecated and goes in the next release: "
                         f"use {new}\n")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("etsuite", "ExecuTorch backend test suite")
    group.addoption("--backend", action="append", default=[], metavar="NAME",
                    help="run only this backend's flows (repeatable)")
    group.addoption("--flow", action="append", default=[], metavar="NAME",
                    help="run only this flow (repeatable)")
    group.addoption("--seed", type=session.seed_arg, default=None, metavar="N",
                    help="session seed for test inputs (default: random, printed in the header)")
    group.addoption("--allow-unavailable", action="store_true", default=False,
                    help=f"a requested backend or flow that cannot run on this host is "
                         f"reported, but does not make the run exit "
                         f"{session_end.EXIT_UNAVAILABLE}")
    group.addoption("--may-be-unavailable", type=session_end.flow_patterns_arg, default=None,
                    metavar="FLOWS",
                    help=f"only these flows (name patterns, comma-separated, e.g. "
                         f"'arm_vgf_*') may be unavailable: any other selected flow that "
                         f"cannot run on this host makes the run exit "
                         f"{session_end.EXIT_UNAVAILABLE}, asked for by name or not")
    group.addoption("--shard", type=_shard_arg, default=None, metavar="K/N",
                    help="run only the K-th of N shards of the selected tests, balanced by "
                         "the backends' recorded durations (backends/<name>/durations.json)")
    group.addoption("--run-id", default=None, metavar="ID",
                    help="the run this report belongs to (default: $ETSUITE_RUN_ID, the "
                         "GitHub Actions run, else 'local'); shards of one run share it")
    group.addoption("--warm", action="store_true", default=False,
                    help=f"run in this checkout's warm process (started if none runs; also "
                         f"${warm_client.ENV_FLAG}=1): torch and executorch stay imported "
                         f"between runs")
    group.addoption("--warm-stop", action="store_true", default=False,
                    help="stop this checkout's warm process (of this environment) and exit")
    group.addoption("--localize", choices=LOCALIZE_MODES, default="undeclared",
                    help="find the node a failure starts at (a fail_mismatch: the first "
                         "node whose runtime output leaves the flow's rule; a failure or "
                         "crash at lower, serialize, load or run: the smallest failing prefix "
                         "of the graph): for failures no [[fail]] entry declares (default), for "
                         "all, or off")
    group.addoption("--localize-seconds", type=_seconds_arg, default=60.0, metavar="SECONDS",
                    help="the most localization may take in one test, its subtests together "
                         "(default 60)")
    # "budget" is a backend's cost limit (budgets.toml); the time's old name, for one release
    group.addoption("--localize-budget", dest="localize_seconds", type=_seconds_arg,
                    default=60.0, action=_OldName, new_name="--localize-seconds",
                    metavar="SECONDS", help=argparse.SUPPRESS)
    group.addoption("--budget-host", default=None, metavar="NAME",
                    help="the class of host this run measures time on: the time budgets "
                         "of budgets.toml with `host = NAME` apply (without it, none does; "
                         "the other budgets apply everywhere)")
    declared.addoption(group)
    isolation.addoption(group, parser)
    recording.addoption(group)
    artifacts.addoption(group)
    placement.addoption(group, parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With --warm or $ETSUITE_WARM=1, the warm process runs the session (warm/client.py);
    else, or when it cannot, the run goes on here."""
    return warm_client.forward(config)


def pytest_configure(config: pytest.Config) -> None:
    """Settings first (a bad one is a usage error, exit 4), then the speed-ups in any
    process that runs tests (no import patches torch: see `speedups.apply`), then one
    plugin object per concern, each handed the same session state."""
    state = session.build_state(config)
    say_old_names(config)
    warm_client.xdist_workers_from_server(config)
    if not workers.is_xdist_controller(config):
        speedups.apply()
    collection.register_markers(config, state.flows.values())
    isolation.register_markers(config)
    config.stash[STATE_KEY] = state  # for conftests and other plugins
    register = config.pluginmanager.register
    register(session.SessionHeader(state), "etsuite-session")
    register(collection.Collection(state), "etsuite-collection")
    register(fixture.TestRunnerFixture(state), "etsuite-runner")
    register(verdicts.Verdicts(state), "etsuite-verdicts")
    register(workers.XdistCoordination(config, state), "etsuite-xdist")
    register(session_end.SessionEnd(state), "etsuite-session-end")
    register(devices.RunnerSession(state), "etsuite-runners")
    if isolation.isolation_mode(config) == "fork":
        register(isolation.IsolationPlugin(config, state.time_limits,
                                           lambda: fixture.prime(config, state)),
                 "etsuite-isolation")
    recording.configure(config, state)
