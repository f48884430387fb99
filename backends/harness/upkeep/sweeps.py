"""What a seed sweep saw: the same selection run at several seeds (`make sweep`), read
back per case and flow and classified, so that a declared verdict is one that holds at
any seed rather than at the one it was written from. Per case and flow: the status at
each seed, the range of the worst output's error ratio (its largest error in units of
the rule's bound) and of its SQNR. `stability_report.py` prints it; the updater decides from it
what to declare (declare.`declaration`).

Torch-free: it reads reports only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import SubtestRecord, error_headline
from etsuite.backends.harness.contract.report import facts_of_report, records_of_test
from etsuite.backends.harness.contract.statuses import FAILING, OUT_OF_RULE, PASSING, Status
from etsuite.backends.harness.contract.stream import (
    STREAM_SUFFIX,
    ended_tests,
    facts_of_header,
    header_of,
    records_of_phases,
    stream_entries,
)
from etsuite.backends.harness.flows.tolerance import EXACT

# A mismatch at every seed but by less than this many times its bound is one input away
# from passing: it is declared as a tolerance, never as a strict failure.
CLEAR_RATIO = 1.5
# An SQNR this far under a quantizing flow's floor at every seed is a clear failure.
CLEAR_SQNR_DB = 3.0
# A stable verdict whose worst error ratio spread over the seeds is wider than this
# factor is listed as "margin moves" (its verdict held, but only by luck of the inputs).
MARGIN_SPREAD = 2.0


@dataclass
class SeedOutcome:
    """One case of one flow at one seed: the pipeline's own verdict (before any declared
    expectation rewrote it), with the worst output's figures."""

    seed: int | None
    # The first failing subtest's status; None: it passed. XFAIL: a report written before
    # records kept `observed_status`, which cannot tell how the declared failure failed.
    status: Status | None
    error: str = ""             # that failure's first line
    worst_ratio: float | None = None   # over every output; inf: an exact output differed
    least_sqnr: float | None = None
    # A non-strict [[fail]] entry named it (its verdict may move with the inputs by
    # declaration, so a move is no news).
    declared_non_strict: bool = False
    # Every status its subtests failed with, first seen first (a [[fail]] entry must name
    # each of them).
    failed_with: tuple[Status, ...] = ()


@dataclass
class CaseSweep:
    case: str
    flow: str
    outcomes: list[SeedOutcome] = field(default_factory=list)

    @property
    def statuses(self) -> set:
        return {o.status for o in self.outcomes}

    @property
    def passes(self) -> bool:
        return self.statuses == {None}

    @property
    def depends_on_seed(self) -> bool:
        """Passed at one seed and failed at another, or failed differently."""
        return len(self.statuses) > 1

    @property
    def declared_non_strict(self) -> bool:
        """Every seed's records were declared input-dependent (a non-strict entry)."""
        return all(o.declared_non_strict for o in self.outcomes)

    @property
    def ratios(self) -> list[float]:
        return [o.worst_ratio for o in self.outcomes if o.worst_ratio is not None]

    def near_bound(self, sqnr_floor: float | None = None) -> bool:
        """Failed with a mismatch at every seed, each time because an error exceeded its
        bound, but by less than CLEAR_RATIO at one, and (for a quantizing flow with SQNR
        floor `sqnr_floor`) not also clearly short of that floor at every seed. A
        mismatch whose ratio is under 1 failed for another reason (nan/inf elements, a
        shape, its SQNR): the ratio says nothing about how near it is to passing."""
        ratios = self.ratios
        if len(self.statuses) != 1 or not self.statuses <= OUT_OF_RULE or not ratios:
            return False
        if not all(1 < r < math.inf for r in ratios) or min(ratios) >= CLEAR_RATIO:
            return False
        sqnrs = [o.least_sqnr for o in self.outcomes]
        clearly_short = sqnr_floor is not None and all(
            s is not None and s < sqnr_floor - CLEAR_SQNR_DB for s in sqnrs)
        return not clearly_short

    def strict(self, sqnr_floor: float | None = None) -> bool:
        """The same failure at every seed, clear of its bound: a verdict that holds."""
        return not self.depends_on_seed and not self.passes and not self.near_bound(sqnr_floor)

    @property
    def margin_moves(self) -> bool:
        finite = [r for r in self.ratios if math.isfinite(r) and r > 0]
        return len(finite) > 1 and max(finite) / min(finite) > MARGIN_SPREAD

    def figures(self) -> str:
        """The measured range in words, for a reason or a table cell."""
        seeds = ", ".join(str(o.seed) for o in self.outcomes)
        parts = []
        finite = [r for r in self.ratios if math.isfinite(r)]
        if finite:
            parts.append(f"{_range(finite, 'x')} the bound")
        if len(finite) < len(self.ratios):
            parts.append("exact outputs differ at some seeds")
        sqnrs = [o.least_sqnr for o in self.outcomes if o.least_sqnr is not None]
        if sqnrs:
            parts.append(f"SQNR {_range(sqnrs, ' dB', '.1f')}")
        counts: dict[str, int] = {}
        for o in self.outcomes:
            counts[str(o.status or "pass")] = counts.get(str(o.status or "pass"), 0) + 1
        verdicts = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        return f"{verdicts} of {len(self.outcomes)} seeds ({seeds}); " + "; ".join(parts) \
            if parts else f"{verdicts} of {len(self.outcomes)} seeds ({seeds})"


def _range(values: list[float], unit: str, spec: str = ".2g") -> str:
    low, high = min(values), max(values)
    if f"{low:{spec}}" == f"{high:{spec}}":
        return f"{low:{spec}}{unit}"
    return f"{low:{spec}}-{high:{spec}}{unit}"


def pipeline_status(record: SubtestRecord) -> Status:
    """What the pipeline said, before an expectation made it xfail or xpass."""
    return Status(record.observed_status) if record.observed_status else record.status


def outcome_of(records: list[SubtestRecord], seed: int | None) -> SeedOutcome | None:
    """One test's records at one seed; None when no subtest reached a verdict here
    (skipped, lowered but not run, unavailable)."""
    statuses = [pipeline_status(r) for r in records]
    failing = [(r, s) for r, s in zip(records, statuses, strict=True)
               if s in FAILING and s is not Status.XPASS]
    ratios, sqnrs = [], []
    for record in records:
        for stats in record.outputs:
            if not stats.judged:
                continue
            if stats.error_ratio is None:
                ratios.append(math.inf)  # an exact rule found elements that differ
            elif stats.rule != EXACT.name:  # an exact match's 0 is no distance to a bound
                ratios.append(float(stats.error_ratio))
            if stats.sqnr_db is not None:
                sqnrs.append(float(stats.sqnr_db))
    worst = max(ratios) if ratios else None
    least = min(sqnrs) if sqnrs else None
    non_strict = any(r.declared_strict is False for r in records)
    if failing:
        record, status = failing[0]
        failed_with = tuple(dict.fromkeys(s for _, s in failing))
        return SeedOutcome(seed, status, error_headline(record.error or ""), worst, least,
                           non_strict, failed_with)
    if any(s is Status.XFAIL for s in statuses):  # an old report: no observed_status
        return SeedOutcome(seed, Status.XFAIL, "", worst, least, non_strict)
    if any(s in PASSING or s is Status.XPASS for s in statuses):
        return SeedOutcome(seed, None, "", worst, least, non_strict)
    return None


def tests_in(path: Path) -> tuple[int | None, list[tuple[str, list[dict]]]]:
    """(the report's seed, [(node id, record dicts)]) of a JSON report, or of the tests a
    results stream (a killed or running session's `.partial.jsonl`) shows finished."""
    text = path.read_text(encoding="utf-8")
    if not path.name.endswith(STREAM_SUFFIX):
        data = json.loads(text)
        return _seed_of(facts_of_report(data)), [(test["nodeid"], records_of_test(test))
                                                 for test in data.get("tests", [])]
    try:
        entries = stream_entries(text)
        ended = ended_tests(entries)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    header = header_of(entries)
    seed = _seed_of(facts_of_header(header)) if header else None
    return seed, [(nodeid, records_of_phases(phases)) for nodeid, phases in ended.items()]


def _seed_of(facts: Any) -> int | None:
    """The seed of stored session facts (None when none are stored)."""
    return None if facts is None else SessionFacts.from_dict(facts).seed


def sweep_of(report_paths: list[Path], backend: str | None = None) -> dict[tuple, CaseSweep]:
    """{(case, flow): CaseSweep} over the reports: one outcome per seed at which a report
    ran the case with a verdict (reports of one seed, e.g. shards, add up; a case two of
    them ran counts once)."""
    sweeps: dict[tuple, CaseSweep] = {}
    for path in report_paths:
        seed, tests = tests_in(path)
        for nodeid, subtests in tests:
            records = [SubtestRecord.from_dict(r) for r in subtests]
            records = [r for r in records if r.flow and (backend is None or r.backend == backend)]
            if not records:
                continue
            flow = records[0].flow
            assert flow  # records without a flow were left out above
            outcome = outcome_of(records, seed if seed is not None else records[0].seed)
            if outcome is None:
                continue
            key = (case_id(nodeid, flow), flow)
            sweep = sweeps.setdefault(key, CaseSweep(key[0], flow))
            if any(o.seed == outcome.seed for o in sweep.outcomes):
                continue  # two reports of one seed ran it: the same inputs, said once
            sweep.outcomes.append(outcome)
    for sweep in sweeps.values():
        sweep.outcomes.sort(key=lambda o: seed_order(o.seed))
    return sweeps


def seeds_of(sweeps: dict[tuple, CaseSweep]) -> list:
    """The seeds the sweep's outcomes came from."""
    return sorted({o.seed for s in sweeps.values() for o in s.outcomes}, key=seed_order)


def seed_order(seed: int | None) -> tuple:
    """Seeds by value (2 before 202), a report without one last."""
    return (seed is None, seed or 0)


def seed_dependent(sweeps: dict[tuple, CaseSweep], floors: dict | None = None,
                   declared: bool = False) -> list[CaseSweep]:
    """The cases whose verdict depends on the seed, or would at a seed not swept (a
    mismatch just beyond its bound). `floors`: each quantizing flow's least SQNR.
    `declared`: those a non-strict entry already names (news only when False)."""
    floors = floors or {}
    return [s for _, s in sorted(sweeps.items())
            if (s.depends_on_seed or s.near_bound(floors.get(s.flow)))
            and s.declared_non_strict == declared]


def markdown(sweeps: dict[tuple, CaseSweep], seeds: list, floors: dict | None = None) -> str:
    """The sweep in one page: counts, then each case whose verdict depends on the seed
    (undeclared, then those a non-strict entry names), then those whose verdict held but
    whose margin moved by more than MARGIN_SPREAD."""
    floors = floors or {}
    dependent = seed_dependent(sweeps, floors)
    declared = seed_dependent(sweeps, floors, declared=True)
    moving = [s for _, s in sorted(sweeps.items())
              if s not in dependent + declared and s.margin_moves and not s.passes]
    moving += [s for _, s in sorted(sweeps.items()) if s.passes and s.margin_moves
               and max(s.ratios) >= 0.7]
    stable_fail = sum(s.strict(floors.get(s.flow)) for s in sweeps.values())
    lines = [f"# Seed sweep: {len(sweeps)} cases x flows at seeds "
             f"{', '.join(map(str, seeds))}", "",
             f"- one verdict at every seed: {len(sweeps) - len(dependent) - len(declared)} "
             f"({sum(s.passes for s in sweeps.values())} pass, {stable_fail} fail the same "
             f"way, clear of their bound)",
             f"- the verdict depends on the seed (or a mismatch within {CLEAR_RATIO}x of its "
             f"bound): {len(dependent)}",
             f"- the same, already declared non-strict (input-dependent; never fails a run): "
             f"{len(declared)}", ""]
    for title, rows in (("Verdict depends on the seed", dependent),
                        ("Declared non-strict, verdict depends on the seed", declared),
                        (f"Verdict held, margin moved more than {MARGIN_SPREAD}x", moving)):
        if not rows:
            continue
        lines += [f"## {title}", "", "| case | flow | per seed | figures |", "|---|---|---|---|"]
        for s in rows:
            per_seed = ", ".join(f"{o.seed}: {o.status or 'pass'}"
                                 + (f" {o.worst_ratio:.2g}x" if o.worst_ratio is not None
                                    and math.isfinite(o.worst_ratio) else "")
                                 for o in s.outcomes)
            lines.append(f"| `{s.case}` | {s.flow} | {per_seed} | {s.figures()} |")
        lines.append("")
    return "\n".join(lines)
