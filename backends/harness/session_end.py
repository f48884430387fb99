"""How a session ends: its exit status and its last words. A usage error an xdist worker
found is the session's (exit 4), a shard that holds none of the selected items is no
error (exit 0), and a backend or flow asked for by name that cannot run here exits 7
unless --allow-unavailable; with `--may-be-unavailable FLOWS`, any other selected flow
that cannot run here exits 7, so that a check of what runs here (make check-declared)
cannot pass by running nothing.
"""

from __future__ import annotations

import argparse
import sys

import pytest

from etsuite.backends.harness import artifacts, workers
from etsuite.backends.harness.flows.expectations import matches
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.state import USAGE_ERROR_KEY, SessionState

EXIT_UNAVAILABLE = 7  # a backend or flow asked for by name cannot run on this host


class SessionEnd:
    def __init__(self, state: SessionState):
        self.state = state

    # Not tryfirst: pytest-json-report writes its exit code in a tryfirst
    # pytest_sessionfinish, and this one has always run after it (registered before it),
    # so the JSON report records the same exit code as before the plugin was split.
    def pytest_sessionfinish(self, session: pytest.Session,
                             exitstatus: int | pytest.ExitCode) -> None:
        config = session.config
        if workers.is_xdist_worker(config):
            return
        state = self.state
        usage_error = config.stash.get(USAGE_ERROR_KEY, None)
        if usage_error:
            sys.stderr.write(f"ERROR: {usage_error}\n")
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        plan, shard = state.run.plan, state.run.shard
        if plan and shard and plan["items"] and \
                session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            # More shards than test cases: this one is empty, which is no error of the run.
            sys.stderr.write(f"etsuite: shard {shard[0]}/{shard[1]} holds "
                             f"none of the {plan['items']} selected items\n")
            session.exitstatus = pytest.ExitCode.OK
        allowed = config.option.may_be_unavailable
        if allowed is None:
            missing = unavailable_requests(config, state)
            hint = "pass --allow-unavailable to exit as if it had run"
        else:
            missing = [_unavailable_line("flow", flow, state) for flow in state.selected
                       if state.unavailable.get(flow.name)
                       and not any(matches(p, flow.name) for p in allowed)]
            hint = f"--may-be-unavailable allows only {','.join(allowed)}"
        if missing:
            for line in missing:
                sys.stderr.write(f"etsuite: {line}\n")
            if (allowed is not None or not config.option.allow_unavailable) \
                    and session.exitstatus in (0, 5):
                sys.stderr.write(f"etsuite: exit {EXIT_UNAVAILABLE}: what was asked for cannot "
                                 f"run here (the report lists it as unavailable); {hint}\n")
                session.exitstatus = EXIT_UNAVAILABLE

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter,
                                config: pytest.Config) -> None:
        message = artifacts.cap_message(self.state.artifacts)
        if message and not workers.is_xdist_worker(config):
            terminalreporter.write_line(message)


def flow_patterns_arg(text: str) -> tuple[str, ...]:
    """`--may-be-unavailable FLOWS`: comma-separated flow name patterns (`*`, `?`)."""
    patterns = tuple(part.strip() for part in text.split(",") if part.strip())
    if not patterns:
        raise argparse.ArgumentTypeError("expected flow name patterns, e.g. 'arm_vgf_*'")
    return patterns


def unavailable_requests(config: pytest.Config, state: SessionState) -> list[str]:
    """One line per backend (every flow unavailable) or flow asked for by name that
    cannot run here, with the reason and how to enable it."""
    lines: list[str] = []
    for backend in config.option.backend:
        flows = [f for f in state.selected if f.backend == backend]
        if flows and all(state.unavailable.get(f.name) for f in flows):
            lines.extend(_unavailable_line(f"backend {backend}, flow", f, state) for f in flows)
    for name in config.option.flow:
        flow = state.flows[name]
        if state.unavailable.get(name) and flow.backend not in config.option.backend:
            lines.append(_unavailable_line("flow", flow, state))
    return lines


def _unavailable_line(what: str, flow: Flow, state: SessionState) -> str:
    hint = f"; to enable it: {flow.enable_hint}" if flow.enable_hint else ""
    return f"{what} {flow.name} cannot run on this host: {state.unavailable[flow.name]}{hint}"
