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
from dataclasses import dataclass, field

import pytest

from etsuite.backends.harness import artifacts, declared, isolation, runner_config, stream, workers
from etsuite.backends.harness.contract.facts import SEED_POLICIES, FlowFacts, RunFacts, SessionFacts
from etsuite.backends.harness.expectations import check_for_flow
from etsuite.backends.harness.flow_selection import UnknownNameError, select_flows
from etsuite.backends.harness.registry import backend_folders, builtin_flows, hook_flows, index_flows
from etsuite.backends.harness.seeds import derive_seed

STATE_KEY = pytest.StashKey["SessionState"]()
SEED_ENV = "ETSUITE_SEED"


@dataclass
class RunIdentity:
    """Which run a report belongs to, so that the report tools can put the shards of one
    run together: the run id (--run-id, $ETSUITE_RUN_ID, the GitHub Actions run, else
    "local"), what was selected, this shard, and the shard plan once items are known."""

    id: str
    selection: str
    shard: tuple[int, int] | None = None
    plan: dict | None = None  # shard_plan.Plan.facts(), from collection

    @classmethod
    def from_config(cls, config) -> "RunIdentity":
        option = config.option
        run_id = option.run_id or os.environ.get("ETSUITE_RUN_ID") or (
            f"gh-{os.environ['GITHUB_RUN_ID']}" if os.environ.get("GITHUB_RUN_ID") else "local")
        names = sorted(set(option.backend)) + sorted(set(option.flow) - set(option.backend))
        parts = ["+".join(names) if names else "all flows"]
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            parts.extend(config.args)
        if option.keyword:
            parts.append(f"-k {option.keyword!r}")
        if option.markexpr:
            parts.append(f"-m {option.markexpr!r}")
        if option.declared:
            parts.append(f"--declared {','.join(sorted(option.declared))}")
            for name in ("declared_sample", "passing_sample"):
                sample = getattr(option, name)
                if sample:
                    parts.append(f"--{name.replace('_', '-')} {sample[0]}/{sample[1]}")
        return cls(run_id, " ".join(parts), option.shard)

    def facts(self) -> RunFacts:
        shard, shards = self.shard if self.shard else (None, None)
        return RunFacts(self.id, self.selection, shard, shards, self.plan)

    def seed(self) -> int:
        """The default seed of a sharded run: the same for every shard of the run, so all
        of its cases see inputs from one seed."""
        return derive_seed(0, f"{self.id} {self.selection}") % 10**6


@dataclass
class SessionState:
    """The session's settings (built once) and the few facts learnt as it runs."""

    flows: dict                # every known flow, by name
    selected: list             # the flows --backend / --flow selected
    seed: int
    seed_policy: str           # a key of contract.facts.SEED_POLICIES
    run: RunIdentity
    # Probed once per session, for the selected flows only (a probe may import a
    # backend's package): why each cannot run here (None: it can).
    unavailable: dict
    time_limits: list          # isolation.parse_time_limits
    artifacts: artifacts.ArtifactPolicy | None = None
    resumed: stream.Resumed | None = None   # the killed run --resume continues
    runners: list = field(default_factory=list)  # runner_config.RunnerChoice, in order
    runner_folder: str | None = None   # the run's pool folder of runner devices
    owns_runner_folder: bool = False   # made here (not handed by an xdist controller)
    finished_before: set[str] = field(default_factory=set)  # its finished tests: not run again
    # Learnt during the session:
    usage_error: str | None = None     # found by an xdist worker at collection
    flows_in_run: list | None = None   # flows of the collected items, once known
    tests_in_run: int | None = None    # collected items that use a flow, once known
    selected_backends: set[str] = field(init=False)

    def __post_init__(self):
        self.selected_backends = {f.backend for f in self.selected}

    def facts(self) -> SessionFacts:
        """Session facts stored in every report (JSON and stream)."""
        from importlib.metadata import PackageNotFoundError, version

        def package_version(name):
            try:
                return version(name)
            except PackageNotFoundError:
                return None

        folders = backend_folders()
        return SessionFacts(
            seed=self.seed,
            versions={name: package_version(name) for name in ("torch", "executorch")},
            flows={
                f.name: FlowFacts(
                    backend=f.backend,
                    tox_env=f.backend if f.backend in folders else None,
                    description=f.description,
                    delegates=f.delegates,
                    quantizes=f.quantizes,
                    selected=f in self.selected,
                    unavailable=self.unavailable.get(f.name),
                    enable_hint=f.enable_hint or None,
                )
                for f in self.flows.values()
            },
            run=self.run.facts(),
            seed_policy=self.seed_policy,
        )


def build_state(config) -> SessionState:
    """Every setting, validated; raises pytest.UsageError naming a bad one."""
    try:
        flows = builtin_flows() + hook_flows(config)
        flows_by_name = index_flows(flows)
        selected = select_flows(flows_by_name, config.option.backend, config.option.flow)
        for flow in selected:  # an entry that cannot mean what it says stops the run
            check_for_flow(flow.expectations, flow.name, flow.tolerance)
        time_limits = isolation.parse_time_limits(config)
        declared.check_options(config.option)
        resumed = stream.resumed_run(config)
        runners = runner_config.parse_choices(config)
        runner_config.apply_runners(flows_by_name, runners, None)  # patterns checked
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
    runner_folder, owned = runner_config.pool_folder(config, runners)
    flows_by_name = runner_config.apply_runners(flows_by_name, runners, runner_folder)
    selected = [flows_by_name[f.name] for f in selected]
    return SessionState(
        flows=flows_by_name, selected=selected, seed=seed, seed_policy=policy, run=run,
        unavailable={f.name: f.unavailable_reason() for f in selected},
        time_limits=time_limits, artifacts=artifact_policy, resumed=resumed,
        finished_before=finished, runners=runners, runner_folder=runner_folder,
        owns_runner_folder=owned)


def seed_arg(text: str) -> int:
    """--seed's type: a non-negative integer (0x.. and 0o.. too)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}")
    return value


def session_seed(config, resumed, run: RunIdentity) -> tuple[int, str]:
    """(seed, policy): --seed, else a resumed run's, else a pinned $ETSUITE_SEED (CI
    exports .ci/seed), else one derived from a sharded run's identity, else random. The
    policy (a key of contract.facts.SEED_POLICIES) goes into the report."""
    if config.option.seed is not None:
        return config.option.seed, "option"
    if resumed:
        return resumed.seed, "resumed"
    pinned = os.environ.get(SEED_ENV, "").strip()
    if pinned:
        try:
            return seed_arg(pinned), "pinned"
        except argparse.ArgumentTypeError:
            raise pytest.UsageError(f"${SEED_ENV}={pinned!r}: wants a non-negative integer") from None
    if run.shard:
        return run.seed(), "run"
    return random.randrange(1, 10**6), "random"


def _check_resumable(resumed, run: RunIdentity, seed: int | None) -> None:
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
