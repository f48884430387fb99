"""Budgets as data: what a case of a flow may cost, in `backends/<name>/budgets.toml`
beside its expectations. A passing subtest that costs more ends `fail_budget`, a
failure of its own that names the budget, the measured value and the limit.

    [[budget]]
    flows = ["xnnpack"]            # patterns on flow names, as in expectations.toml
    case = "backends/suite/models/test_small_models.py::test_mlp*"   # on the case id
    min_delegation_share = 0.95    # share of computing nodes delegated (q/dq left out)
    max_pte_bytes = 20480          # the serialized program
    max_planned_bytes = 8192       # memory-planned buffers (only where a native runner
                                   # reported them)
    reason = "measured 0.98, 16.1 KiB on 2026-12-06"

    [[budget]]                     # a time budget holds for one class of host only
    flows = ["xnnpack"]
    case = "backends/suite/models/test_small_models.py::test_mlp*"
    host = "ci-2core"              # applies when the run says `--budget-host ci-2core`
    max_ms_per_call = 4.0          # a runner's median per call, else the one call timed
    reason = "..."

Matching is expectations.py's (`matches`); of the entries that apply to a flow and case,
the first that sets a limit decides it. An entry with `host` sets only
`max_ms_per_call`, and `max_ms_per_call` needs a `host`: time depends on where it ran,
the rest does not. `make update-budgets BACKEND=<name>` (upkeep/update_budgets.py)
writes the file from a run with headroom, keeping hand-written reasons.

Torch-free: read at collection time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from etsuite.backends.harness.contract.costs import (
    PLANNED_LIMIT,
    PTE_LIMIT,
    SHARE_LIMIT,
    TIME_LIMIT,
    delegated_share,
    planned_bytes,
    shown_limit,
    time_per_call,
)
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import (
    ExpectationsError,
    is_non_negative_number,
    matches,
    names_all_of,
    read_entries,
    shown_path,
)

FILE_NAME = "budgets.toml"
KIND = "budget"
LIMITS = (SHARE_LIMIT, PTE_LIMIT, PLANNED_LIMIT, TIME_LIMIT)


class BudgetsError(ExpectationsError):
    """A malformed budgets file; the message names the file and the entry (a kind of
    ExpectationsError: it stops collection the same way)."""


@dataclass(frozen=True)
class Budget:
    flows: tuple[str, ...]
    case: str
    limits: tuple[tuple[str, float], ...]   # ((limit name, value), ...) in LIMITS order
    reason: str
    host: str | None = None                 # the host class a time limit holds for
    source: str = ""                        # "path:line"

    def applies(self, flow: str, case: str, host: str | None) -> bool:
        return (self.host is None or self.host == host) and matches(self.case, case) \
            and any(matches(p, flow) for p in self.flows)


@dataclass(frozen=True)
class Breach:
    limit: str          # one of LIMITS
    measured: float
    value: float        # the limit
    source: str

    def to_dict(self) -> dict:
        return {"limit": self.limit, "measured": self.measured, "value": self.value,
                "source": self.source}

    @property
    def message(self) -> str:
        return (f"budget {self.limit}: measured {shown_limit(self.limit, self.measured)}, "
                f"limit {shown_limit(self.limit, self.value)} ({self.source})")


@dataclass(frozen=True)
class Budgets:
    entries: tuple[Budget, ...] = ()

    def limits(self, flow: str, case: str, host: str | None) -> dict[str, Budget]:
        """{limit name: the entry that decides it} for one case of one flow on `host`."""
        found: dict[str, Budget] = {}
        for entry in self.entries:
            if entry.applies(flow, case, host):
                for name, _ in entry.limits:
                    found.setdefault(name, entry)
        return found

    def __add__(self, other: "Budgets") -> "Budgets":
        return Budgets(self.entries + other.entries)


def measured(limit: str, record: SubtestRecord) -> float | None:
    """What the record says of the cost a limit bounds (None: not measured here)."""
    if limit == SHARE_LIMIT:
        return delegated_share(record)
    if limit == PTE_LIMIT:
        return record.pte_size
    if limit == PLANNED_LIMIT:
        return planned_bytes(record)
    call = time_per_call(record)
    return call.seconds * 1000 if call is not None else None


def breaches(budgets: Budgets, flow: str, case: str, record: SubtestRecord,
             host: str | None) -> list[Breach]:
    found = []
    for name, entry in budgets.limits(flow, case, host).items():
        value = dict(entry.limits)[name]
        cost = measured(name, record)
        if cost is None:
            continue
        if (cost < value) if name == SHARE_LIMIT else (cost > value):
            found.append(Breach(name, cost, value, entry.source))
    return found


def check(budgets: Budgets, flow: str, case: str, records: list[SubtestRecord],
          host: str | None) -> None:
    """Every passing record that breaks a budget becomes `fail_budget` (in place), its
    error naming each breach; a failing record is not checked (it measured nothing
    comparable)."""
    for record in records:
        if not record.status.passing:
            continue
        found = breaches(budgets, flow, case, record, host)
        if found:
            record.status, record.stage = Status.FAIL_BUDGET, "budget"
            record.error = "; ".join(b.message for b in found)
            record.budget_breaches = [b.to_dict() for b in found]


def load(path: Path, display: str | None = None) -> Budgets:
    """Read one budgets file; raises BudgetsError naming the bad entry."""
    display = display or str(path)
    data, positions = read_entries(path, display, (KIND,), BudgetsError)
    entries = [_entry(raw, f"{display}:{positions.get((KIND, index), '?')}")
               for index, raw in enumerate(data.get(KIND, []))]
    for index, entry in enumerate(entries):
        deciding = {name: next((e for e in entries[:index] if _covers(e, entry)
                                and name in dict(e.limits)), None) for name, _ in entry.limits}
        if all(deciding.values()):
            said = ", ".join(f"{name} by {e.source}" for name, e in deciding.items() if e)
            raise BudgetsError(f"{entry.source}: this [[budget]] can never apply: each of its "
                               f"limits is decided first by an entry that names every flow and "
                               f"case it names ({said}); remove it or narrow those")
    return Budgets(tuple(entries))


def _covers(first: Budget, later: Budget) -> bool:
    """Whether `first` applies wherever `later` does (same host, every flow and case)."""
    return first.host == later.host and names_all_of(first, later)


def _entry(raw: dict, where: str) -> Budget:
    extra = set(raw) - {"flows", "case", "reason", "host"} - set(LIMITS)
    if extra:
        raise BudgetsError(f"{where}: unknown key(s) {sorted(extra)}; limits: {', '.join(LIMITS)}")
    flows, case, reason, host = raw.get("flows"), raw.get("case"), raw.get("reason"), raw.get("host")
    if not isinstance(flows, list) or not flows or not all(isinstance(f, str) and f for f in flows):
        raise BudgetsError(f"{where}: [[budget]] needs 'flows', a list of flow name patterns")
    for key, value in (("case", case), ("reason", reason)):
        if not isinstance(value, str) or not value:
            raise BudgetsError(f"{where}: [[budget]] needs a non-empty {key!r}")
    limits = []
    for name in LIMITS:
        if name not in raw:
            continue
        value = raw[name]
        if not is_non_negative_number(value) or (name == SHARE_LIMIT and value > 1):
            raise BudgetsError(f"{where}: {name} must be a non-negative number"
                               f"{' at most 1' if name == SHARE_LIMIT else ''}, got {value!r}")
        limits.append((name, value))
    if not limits:
        raise BudgetsError(f"{where}: [[budget]] sets no limit; known: {', '.join(LIMITS)}")
    if host is not None and (not isinstance(host, str) or not host):
        raise BudgetsError(f"{where}: 'host' must be the name of a class of hosts")
    names = {name for name, _ in limits}
    if TIME_LIMIT in names and host is None:
        raise BudgetsError(f"{where}: {TIME_LIMIT} needs a 'host' (time depends on where it ran)")
    if host is not None and names != {TIME_LIMIT}:
        raise BudgetsError(f"{where}: an entry with 'host' sets only {TIME_LIMIT}; put "
                           f"{', '.join(sorted(names - {TIME_LIMIT}))} in an entry without it")
    return Budget(tuple(flows), str(case), tuple(limits), str(reason), host, where)


def load_backend(folder: Path, root: Path | None = None) -> Budgets:
    """The budgets of the backend in `folder` (none when it has no file)."""
    path = folder / FILE_NAME
    return load(path, shown_path(path, root)) if path.is_file() else Budgets()
