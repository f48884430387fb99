"""The session's state, typed, in a leaf module: the settings every plugin object is
handed (`SessionState`, with the run a report belongs to, `RunIdentity`) and the stash
keys of what a session learns as it runs. Built by `session.build_state`; this module
imports no plugin module, so any of them can name the type."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from etsuite.backends.harness.case.runner import LocalizePolicy
from etsuite.backends.harness.case.seeds import derive_seed
from etsuite.backends.harness.contract.facts import RunFacts, SessionFacts
from etsuite.backends.harness.flows.flow import Flow

if TYPE_CHECKING:  # for the annotations only
    from etsuite.backends.harness.artifacts import ArtifactPolicy
    from etsuite.backends.harness.remote.spec import RunnerChoice


@dataclass
class RunIdentity:
    """Which run a report belongs to, so that the report tools can put the shards of one
    run together: the run id (--run-id, $ETSUITE_RUN_ID, the GitHub Actions run, else
    "local"), what was selected, this shard, and the shard plan once items are known."""

    id: str
    selection: str
    shard: tuple[int, int] | None = None
    plan: dict | None = None  # sharding.Plan.facts(), learnt at collection

    @classmethod
    def from_config(cls, config: pytest.Config) -> "RunIdentity":
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
class Resumed:
    """What a killed run left in its results stream: its facts and, for each test that
    ended, its phase reports as the stream holds them."""

    path: str
    facts: SessionFacts
    tests: dict[str, dict]  # node id -> {when: stream report entry}

    @property
    def seed(self) -> int | None:
        return self.facts.seed


@dataclass
class SessionState:
    """The session's settings, built once at configure time (`session.build_state`) and
    handed to every plugin object. What is learnt as the session runs is kept apart, in
    the typed stash keys below."""

    flows: dict[str, Flow]             # every known flow, by name
    selected: list[Flow]               # the flows --backend / --flow selected
    seed: int
    seed_policy: str                   # a key of contract.facts.SEED_POLICIES
    run: RunIdentity
    # Probed once per session, for the selected flows only (a probe may import a
    # backend's package): why each cannot run here (None: it can).
    unavailable: dict[str, str | None]
    time_limits: list[tuple[str, float]]   # isolation.parse_time_limits
    artifacts: ArtifactPolicy | None = None
    resumed: Resumed | None = None     # the killed run --resume continues
    runners: list[RunnerChoice] = field(default_factory=list)  # in order
    runner_folder: str | None = None   # the run's pool folder of runner devices
    owns_runner_folder: bool = False   # made here (not handed by an xdist controller)
    finished_before: set[str] = field(default_factory=set)  # its finished tests: not run again
    localize: LocalizePolicy = field(default_factory=LocalizePolicy)  # --localize, its time limit
    selected_backends: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.selected_backends = {f.backend for f in self.selected}


# On config.stash: the state (for conftests and other plugins too), and what the session
# learns as it runs.
STATE_KEY = pytest.StashKey[SessionState]()
USAGE_ERROR_KEY = pytest.StashKey[str]()        # found by an xdist worker at collection
FLOWS_IN_RUN_KEY = pytest.StashKey[list[Flow]]()  # flows of the collected items
TESTS_IN_RUN_KEY = pytest.StashKey[int]()       # collected items that use a flow
