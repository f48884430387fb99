"""The pytest plugin (entry point `pytest11: etsuite`): a registrar. It declares the
options, builds the session's settings once and registers one plugin object per
concern, the way pytest-xdist's plugin.py declares options and registers `DSession`:

    session.SessionHeader         what the session is (settings built once; the header)
    collection.Collection         parametrization, selection, collection-time statuses,
                                  shards, resume, order
    runner_fixture.RunnerFixture  the `test_runner` fixture
    verdicts.Verdicts             final statuses and outcomes, for a finished test and a
                                  lost child alike
    workers.XdistCoordination     what an xdist controller and its workers tell each other
    session_end.SessionEnd        the exit status
    runner_config.RunnerSession   runners in the header, devices lost, the pool folder
    isolation.IsolationPlugin     each test in a forked child (when isolation is on)
    stream.ResultsStream          the results stream and the JSON report's contents

and hands a run to the warm process when asked (`--warm`, warm_client.py) before any of
them is needed.
"""

from __future__ import annotations

import argparse

import pytest

from etsuite.backends.harness import (
    artifacts,
    collection,
    declared,
    hookspecs,
    isolation,
    runner_config,
    runner_fixture,
    session,
    session_end,
    shard_plan,
    speedups,
    stream,
    verdicts,
    warm_client,
    workers,
)


def _shard_arg(text: str) -> tuple[int, int]:
    try:
        return shard_plan.parse_shard(text)
    except shard_plan.ShardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
    declared.addoption(group)
    isolation.addoption(group, parser)
    stream.addoption(group)
    artifacts.addoption(group)
    runner_config.addoption(group, parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With --warm or $ETSUITE_WARM=1, the warm process runs the session (warm_client.py);
    else, or when it cannot, the run goes on here."""
    return warm_client.forward(config)


def pytest_configure(config: pytest.Config) -> None:
    """Settings first (a bad one is a usage error, exit 4), then the speed-ups in any
    process that runs tests (no import patches torch: see `speedups.apply`), then one
    plugin object per concern, each handed the same session state."""
    state = session.build_state(config)
    warm_client.xdist_workers_from_server(config)
    if not workers.is_xdist_controller(config):
        speedups.apply()
    collection.register_markers(config, state.flows.values())
    isolation.register_markers(config)
    config.stash[session.STATE_KEY] = state  # for conftests and other plugins
    register = config.pluginmanager.register
    register(session.SessionHeader(state), "etsuite-session")
    register(collection.Collection(state), "etsuite-collection")
    register(runner_fixture.RunnerFixture(state), "etsuite-runner")
    register(verdicts.Verdicts(state), "etsuite-verdicts")
    register(workers.XdistCoordination(state), "etsuite-xdist")
    register(session_end.SessionEnd(state), "etsuite-session-end")
    register(runner_config.RunnerSession(state), "etsuite-runners")
    if isolation.isolation_mode(config) == "fork":
        register(isolation.IsolationPlugin(config, state.time_limits,
                                           lambda: runner_fixture.warm_up(config, state)),
                 "etsuite-isolation")
    stream.configure(config, state)
