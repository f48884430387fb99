"""The session facts: stored once per report (`report.put_facts`, and in the results
stream's first line), they say which seed the run used and why, the package versions,
every known flow as this run saw it, and which run and shard the report belongs to.
Typed here; on disk the keys are the field names, as `to_dict` writes them."""

from __future__ import annotations

from dataclasses import Field, dataclass, fields
from typing import Any, ClassVar, Self

from etsuite.backends.harness.contract import shapes as sh

SCHEMA_VERSION = 1

# Where a session's seed came from (`seed_policy` in the session facts).
SEED_POLICIES = {
    "option": "given with --seed",
    "pinned": "$ETSUITE_SEED, e.g. CI's .ci/seed",
    "resumed": "the killed run's seed (--resume)",
    "run": "derived from the run id and selection (shards of one run share it)",
    "random": "drawn at random",
}


class FactsError(ValueError):
    """Session facts that do not follow the contract (a part that is not an object)."""


def _object(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise FactsError(f"{what} must be an object, got {type(value).__name__}")
    return value


class _Flat:
    """Facts whose JSON keys are the field names, in field order. A key an older writer
    did not write reads as None; a key a newer writer added is ignored."""

    # Declared for the type checker only (every subclass is a dataclass): it makes
    # `fields(self)` type-sh.check. An annotation without a value adds no attribute.
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Any, what: str = "") -> Self:
        data = _object(data, what or cls.__name__)
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class FlowFacts(_Flat):
    """One known flow as a run saw it. `FlowFacts()` (all None) stands for a flow the run
    does not know."""

    backend: str | None = None
    tox_env: str | None = None       # the backend's tox environment (None: run it with pytest)
    description: str | None = None
    delegates: bool | None = None    # None: a report older than the key
    quantizes: bool | None = None    # None: a report older than the key
    selected: bool | None = None     # whether this run selected it
    unavailable: str | None = None   # why it cannot run here (None: it can, or not probed)
    enable_hint: str | None = None


@dataclass(frozen=True)
class RunFacts(_Flat):
    """Who a report belongs to. Shards of one run share `id` (ETSUITE_RUN_ID, the CI run,
    or "local") and `selection` (what was asked for: backends or flows, paths, -k, -m), so
    the report tools can put them together and name a missing one. `shard` of `shards`
    is this report's shard (None: not sharded); `plan` (known once the items are
    collected; sharding.Plan.facts) holds the whole selection's item count and digest,
    which shard plan was used and the predicted seconds of every shard."""

    id: str | None = None
    selection: str | None = None
    shard: int | None = None
    shards: int | None = None
    plan: dict | None = None


_NAME, _FLAG = sh.Maybe(sh.TEXT), sh.Maybe(sh.BOOLEAN)
# What the report tools use of the facts, typed once where they are read.
FACTS_SHAPE = sh.Fields({
    "seed": sh.Maybe(sh.INTEGER), "seed_policy": _NAME, "versions": sh.Maybe(sh.MapOf(_NAME)),
    "flows": sh.Maybe(sh.MapOf(sh.Fields({
        "backend": _NAME, "tox_env": _NAME, "description": _NAME, "unavailable": _NAME,
        "enable_hint": _NAME, "delegates": _FLAG, "quantizes": _FLAG, "selected": _FLAG}))),
    "run": sh.Maybe(sh.Fields({
        "id": _NAME, "selection": _NAME, "shard": sh.Maybe(sh.INTEGER),
        "shards": sh.Maybe(sh.INTEGER),
        "plan": sh.Maybe(sh.Fields({"predicted": sh.Maybe(sh.ListOf(sh.Maybe(sh.FINITE)))}))}))})


@dataclass(frozen=True)
class SessionFacts:
    """The facts of one session. `seed_policy`, `run` and `core_aten_ops` are left out
    of the JSON when None (reports older than them have none)."""

    seed: int | None
    versions: dict                     # {package: version, None when not installed}
    flows: dict[str, FlowFacts]        # every known flow, in registry order
    seed_policy: str | None = None     # a key of SEED_POLICIES
    run: RunFacts | None = None
    schema_version: int | None = SCHEMA_VERSION
    # The installed torch's core ATen overloads ("aten.add.Tensor", sorted): the
    # denominator of the report's core ATen coverage, so that the torch-free tools need
    # not import torch (None: a report older than the key, or torch was not importable).
    core_aten_ops: list[str] | None = None

    def to_dict(self) -> dict:
        data: dict[str, Any] = {
            "schema_version": self.schema_version, "seed": self.seed,
            "versions": dict(self.versions),
            "flows": {name: flow.to_dict() for name, flow in self.flows.items()}}
        if self.seed_policy is not None:
            data["seed_policy"] = self.seed_policy
        if self.run is not None:
            data["run"] = self.run.to_dict()
        if self.core_aten_ops is not None:
            data["core_aten_ops"] = list(self.core_aten_ops)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "SessionFacts":
        """Read facts written by `to_dict` (of any version: the caller checks
        `schema_version`); FactsError when a part is not an object."""
        data = _object(data, "the session facts")
        try:
            sh.check(data, FACTS_SHAPE, "facts")
        except sh.ShapeError as error:
            raise FactsError(str(error)) from None
        flows = _object(data.get("flows") or {}, "'flows'")
        run = data.get("run")
        core = data.get("core_aten_ops")
        if core is not None and not (isinstance(core, list)
                                     and all(isinstance(op, str) for op in core)):
            raise FactsError("'core_aten_ops' must be a list of op names")
        return cls(seed=data.get("seed"),
                   versions=_object(data.get("versions") or {}, "'versions'"),
                   flows={name: FlowFacts.from_dict(flow, f"flow {name!r}")
                          for name, flow in flows.items()},
                   seed_policy=data.get("seed_policy"),
                   run=None if run is None else RunFacts.from_dict(run, "'run'"),
                   schema_version=data.get("schema_version"),
                   core_aten_ops=core)
