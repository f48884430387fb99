"""What a session is, decided once at configure time (`build_state`): every flow and the
selected ones (with the runners chosen for them), the seed and its policy, the run a
report belongs to, what a resumed run carried over, the time limits and the artifact
policy. Every setting is validated here,
so a bad one is a usage error (exit 4) naming the value, never an INTERNALERROR in the
middle of a run. The header says what was decided.
"""

from __future__ import annotations

import argparse
import os
import random

import pytest

from etsuite.backends.harness import artifacts, declared, isolation, recording, workers
from etsuite.backends.harness.case.runner import LocalizePolicy
from etsuite.backends.harness.contract.facts import SEED_POLICIES, RunFacts
from etsuite.backends.harness.flows.expectations import check_for_flow
from etsuite.backends.harness.flows.registry import builtin_flows, hook_flows, index_flows
from etsuite.backends.harness.flows.selection import UnknownNameError, select_flows
from etsuite.backends.harness.remote import placement
from etsuite.backends.harness.state import Resumed, RunIdentity, SessionState

SEED_ENV = "ETSUITE_SEED"


def build_state(config: pytest.Config) -> SessionState:
    """Every setting, validated; raises pytest.UsageError naming a bad one."""
    try:
        flows = builtin_flows() + hook_flows(config)
        flows_by_name = index_flows(flows)
        selected = select_flows(flows_by_name, config.option.backend, config.option.flow)
        for flow in selected:  # an entry that cannot mean what it says stops the run
            check_for_flow(flow.expectations, flow.name, flow.tolerance)
        time_limits = isolation.parse_time_limits(config)
        declared.check_options(config.option)
        resumed = recording.resumed_run(config)
        runners = placement.parse_choices(config)
        placement.apply_runners(flows_by_name, runners, None)  # patterns checked
    except (UnknownNameError, isolation.SettingError, ValueError) as error:
        raise pytest.UsageError(str(error)) from None
    run = RunIdentity.from_config(config)
    if resumed:
        _check_resumable(resumed, run, config.option.seed)
    seed, policy = workers.controller_seed(config) or session_seed(config, resumed, run)
    finished = workers.controller_finished(config)
    if finished is None:
        finished = set(resumed.tests) if resumed else set()
    artifact_policy = artifacts.ArtifactPolicy.from_config(config)
    if artifact_policy is not None and not workers.is_xdist_worker(config):
        stale = os.path.join(artifact_policy.root, artifacts.CAP_FILE)
        if os.path.exists(stale):  # a new run: a new cap
            os.remove(stale)
    # Runners last, once every setting is valid: the pool folder is made here.
    runner_folder, owned = placement.pool_folder(config, runners)
    flows_by_name = placement.apply_runners(flows_by_name, runners, runner_folder)
    selected = [flows_by_name[f.name] for f in selected]
    return SessionState(
        flows=flows_by_name, selected=selected, seed=seed, seed_policy=policy, run=run,
        unavailable={f.name: f.unavailable_reason() for f in selected},
        time_limits=time_limits, artifacts=artifact_policy, resumed=resumed,
        finished_before=finished, runners=runners, runner_folder=runner_folder,
        owns_runner_folder=owned, localize=LocalizePolicy.from_config(config))


def seed_arg(text: str) -> int:
    """--seed's type: a non-negative integer (0x.. and 0o.. too)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}")
    return value


def session_seed(config: pytest.Config, resumed: Resumed | None, run: RunIdentity) -> tuple[int, str]:
    """(seed, policy): --seed, else a resumed run's, else a pinned $ETSUITE_SEED (CI
    exports .ci/seed), else one derived from a sharded run's identity, else random. The
    policy (a key of contract.facts.SEED_POLICIES) goes into the report."""
    if config.option.seed is not None:
        return config.option.seed, "option"
    if resumed:
        # (None for a stream whose facts hold no seed: the annotations of issue 55 leave it)
        return resumed.seed, "resumed"  # type: ignore[return-value]
    pinned = os.environ.get(SEED_ENV, "").strip()
    if pinned:
        try:
            return seed_arg(pinned), "pinned"
        except argparse.ArgumentTypeError:
            raise pytest.UsageError(f"${SEED_ENV}={pinned!r}: wants a non-negative integer") from None
    if run.shard:
        return run.seed(), "run"
    return random.randrange(1, 10**6), "random"


def _check_resumable(resumed: Resumed, run: RunIdentity, seed: int | None) -> None:
    """--resume continues the same run: the same selection and shard, and its seed."""
    before = resumed.facts.run or RunFacts()
    shard = (before.shard, before.shards) if before.shard else None
    if before.selection != run.selection or shard != run.shard:
        was = before.selection or "?"
        raise pytest.UsageError(
            f"--resume: {resumed.path} is a run of {was}"
            f"{f' shard {shard[0]}/{shard[1]}' if shard else ''}, not of {run.selection}"
            f"{f' shard {run.shard[0]}/{run.shard[1]}' if run.shard else ''}: select the same, "
            f"or run without --resume to start afresh")
    if seed is not None and resumed.seed is not None and seed != resumed.seed:
        raise pytest.UsageError(f"--resume: {resumed.path} ran with --seed {resumed.seed}, "
                                f"not {seed}: resume with its seed (or leave --seed out)")


class SessionHeader:
    """The header lines: the seed and how to rerun with it, the flows (and why any cannot
    run here), isolation, the shard, and what a resumed run keeps."""

    def __init__(self, state: SessionState):
        self.state = state

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        state = self.state
        names = ", ".join(f.name for f in state.selected) or "none"
        lines = [f"etsuite: seed {state.seed} ({state.seed_policy}: "
                 f"{SEED_POLICIES[state.seed_policy]}; rerun with "
                 f"--seed {state.seed}); flows: {names}"]
        for flow in state.selected:
            reason = state.unavailable[flow.name]
            if reason:
                hint = f" (to enable it: {flow.enable_hint})" if flow.enable_hint else ""
                lines.append(f"etsuite: flow {flow.name} is unavailable: {reason}{hint}")
        lines.append(isolation.header_line(config))
        if state.run.shard:
            index, count = state.run.shard
            lines.append(f"etsuite: shard {index}/{count} of run {state.run.id} "
                         f"({state.run.selection})")
        if state.resumed:
            lines.append(f"etsuite: resuming {state.resumed.path}: {len(state.finished_before)} "
                         f"tests finished before are kept, not run again")
        elif config.option.resume:
            lines.append("etsuite: --resume: no results stream left to continue; running all")
        return lines
