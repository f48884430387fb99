"""`python -m etsuite.backends.harness.upkeep.update_budgets --backend NAME [--host CLASS]
[REPORT...]` (`make update-budgets BACKEND=NAME`): write a backend's budgets.toml from a
run, each case of each flow it ran correctly getting the limits it measured with
headroom (`HEADROOM`), and, with `--host`, a time budget for that class of host.

Kept as they are: entries written by hand (a reason that is not this updater's), entries
of flows or cases the run did not cover, and time budgets of other hosts. An entry this
updater wrote before for a case it now measured is replaced."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from etsuite.backends.harness.contract.costs import SINGLE_CALL_NOISE_S, time_per_call
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.budgets import (
    FILE_NAME,
    LIMITS,
    PLANNED_LIMIT,
    PTE_LIMIT,
    SHARE_LIMIT,
    TIME_LIMIT,
    Budget,
    Budgets,
    BudgetsError,
    load,
    measured,
)
from etsuite.backends.harness.flows.registry import backend_folders, backends_dir
from etsuite.backends.harness.upkeep.entries_from_sweeps import leading_comment
from etsuite.backends.harness.upkeep.sweeps import tests_in

# The headroom over what a run measured: a share may fall by 0.05 (floored at 0), bytes
# grow by a quarter (rounded up to whole KiB), a call take twice as long, and a call
# timed once in-process at least SINGLE_CALL_NOISE_S longer (its run-to-run noise).
SHARE_DROP, BYTES_FACTOR, TIME_FACTOR, KIB = 0.05, 1.25, 2.0, 1024
# How this updater's own reasons start: any other reason was written by hand and is kept.
AUTO = "measured "
# Statuses whose programs are correct, so what they cost is a figure to budget from (a
# fail_budget is correct, it only cost more than an older budget allowed).
MEASURABLE = frozenset({Status.PASS, Status.PASS_UNDELEGATED, Status.FAIL_BUDGET})


@dataclass
class Worst:
    """The worst of each cost over a case's subtests and reports, for one flow."""

    costs: dict[str, float] = field(default_factory=dict)
    single_call: bool = False       # some time was one in-process call, timed once

    def add(self, record: SubtestRecord) -> None:
        call = time_per_call(record)
        self.single_call |= call is not None and not call.repeated
        for limit in LIMITS:
            value = measured(limit, record)
            if value is None:
                continue
            old = self.costs.get(limit)
            worse = min if limit == SHARE_LIMIT else max
            self.costs[limit] = value if old is None else worse(old, value)


def observe(paths: list[Path], backend: str) -> dict[tuple[str, str], Worst]:
    """{(case, flow): Worst} over the reports' correct subtests of the backend."""
    seen: dict[tuple[str, str], Worst] = {}
    for path in paths:
        for nodeid, subtests in tests_in(path)[1]:
            for record in (SubtestRecord.from_dict(r) for r in subtests):
                observed = Status(record.observed_status) if record.observed_status else record.status
                if record.backend == backend and record.flow and observed in MEASURABLE:
                    seen.setdefault((case_id(nodeid, record.flow), record.flow), Worst()).add(record)
    return seen


def with_headroom(limit: str, value: float, single_call: bool = False) -> float:
    if limit == SHARE_LIMIT:
        return max(0.0, math.floor((value - SHARE_DROP) * 1000) / 1000)
    if limit == TIME_LIMIT:
        noise = SINGLE_CALL_NOISE_S * 1000 if single_call else 0.0
        return math.ceil(max(value * TIME_FACTOR, value + noise) * 100) / 100
    return math.ceil(value * BYTES_FACTOR / KIB) * KIB


def _figures(costs: dict[str, float]) -> str:
    shown = {SHARE_LIMIT: lambda v: f"share {v:.3f}", PTE_LIMIT: lambda v: f".pte {int(v)} B",
             PLANNED_LIMIT: lambda v: f"planned {int(v)} B", TIME_LIMIT: lambda v: f"{v:.3f} ms/call"}
    return ", ".join(shown[k](v) for k, v in costs.items())


def updated(current: Budgets, seen: dict[tuple[str, str], Worst], host: str | None,
            today: str) -> Budgets:
    """The new file's entries: one per case and flow measured (time on `host` in one of
    its own), then every entry kept, in its order."""
    replaced, new = set(), []
    for (case, flow), worst in sorted(seen.items()):
        costs = {k: v for k, v in worst.costs.items() if k != TIME_LIMIT}
        if SHARE_LIMIT in costs and with_headroom(SHARE_LIMIT, costs[SHARE_LIMIT]) == 0:
            del costs[SHARE_LIMIT]  # a floor of 0 holds for any program: no limit at all
        kinds = [(None, costs)] + ([(host, {TIME_LIMIT: worst.costs[TIME_LIMIT]})]
                                   if host and TIME_LIMIT in worst.costs else [])
        for on_host, figures in kinds:
            if not figures:
                continue
            old = next((e for e in current.entries if e.flows == (flow,) and e.case == case
                        and e.host == on_host and {n for n, _ in e.limits} <= set(figures)), None)
            reason = f"{AUTO}{_figures(figures)} on {today}" + (f" ({on_host})" if on_host else "")
            if old is not None:
                replaced.add(old)
                if not old.reason.startswith(AUTO):
                    reason = old.reason
            limits = tuple((k, with_headroom(k, figures[k], worst.single_call))
                           for k in LIMITS if k in figures)
            new.append(Budget((flow,), case, limits, reason, on_host))
    return Budgets(tuple(new) + tuple(e for e in current.entries if e not in replaced))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and value >= 1 else repr(float(value))


def dump(budgets: Budgets, backend: str, header: list[str] | None = None) -> str:
    lines = list(header or [
        f"# Budgets of the {backend} flows: what a passing case may cost (see",
        "# docs/reference/budgets-format.md); a breach is fail_budget. Rewrite from a run:",
        f"# make update-budgets BACKEND={backend} [BUDGET_HOST=<class>] (hand-written reasons",
        "# are kept)."])
    for entry in budgets.entries:
        lines += ["", "[[budget]]", f"flows = [{', '.join(json.dumps(f) for f in entry.flows)}]",
                  f"case = {json.dumps(entry.case)}"]
        if entry.host is not None:
            lines.append(f"host = {json.dumps(entry.host)}")
        lines += [f"{name} = {_number(value)}" for name, value in entry.limits]
        lines.append(f"reason = {json.dumps(entry.reason, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.backends.harness.upkeep.update_budgets",
        description="Write a backend's budgets.toml from a run, with headroom.")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--host", default=None, metavar="CLASS",
                        help="also write time budgets, for this class of host (the run's "
                             "--budget-host)")
    parser.add_argument("--output", type=Path, default=None,
                        help=f"the file to write (default backends/<backend>/{FILE_NAME})")
    parser.add_argument("reports", nargs="*",
                        help="JSON reports (default: reports/<backend>.json)")
    args = parser.parse_args(argv)
    if args.backend not in backend_folders():
        parser.error(f"unknown backend {args.backend!r}; known backends: "
                     f"{', '.join(backend_folders())}")
    paths = [Path(p) for p in args.reports] or [Path("reports") / f"{args.backend}.json"]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no report {', '.join(missing)}: run `make test-{args.backend}` first")
    target = args.output or backends_dir() / args.backend / FILE_NAME
    try:
        current = load(target) if target.is_file() else Budgets()
        seen = observe(paths, args.backend)
    except (BudgetsError, json.JSONDecodeError, ValueError) as error:
        sys.stderr.write(f"update-budgets: error: {error}\n")
        return 2
    result = updated(current, seen, args.host, datetime.date.today().isoformat())
    header = leading_comment(target.read_text(encoding="utf-8")) if target.is_file() else None
    target.write_text(dump(result, args.backend, header), encoding="utf-8")
    sys.stderr.write(f"update-budgets: {len(seen)} cases and flows measured; "
                     f"{len(result.entries)} entries in {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
