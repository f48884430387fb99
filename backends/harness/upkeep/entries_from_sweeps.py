"""What to declare from a seed sweep, and the expectations file written back: per (case,
flow), from every report given (one per seed), a strict [[fail]], a [[tolerance]] with the
measured figures, or a non-strict [[fail]]; then the TOML, with the reasons written by hand
kept. Offline upkeep: the test-time reader and judge (expectations.py) never import it.

Torch-free: it reads reports and expectations files only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from etsuite.backends.harness.contract.statuses import OUT_OF_RULE, Status
from etsuite.backends.harness.flows.expectations import (
    KINDS,
    SWEEP_SEEDS,
    Expectation,
    Expectations,
    matches,
)
from etsuite.backends.harness.flows.tolerance import (
    BOUND_SCALE,
    LINEAR_BOUND_FIELDS,
    MAX_BOUND_SCALE,
)
from etsuite.backends.harness.upkeep.sweeps import CaseSweep, sweep_of
from etsuite.backends.harness.upkeep.unswept import depends_on_values

NO_ENTRIES = Expectations()  # an immutable empty set of entries

#
# What to declare is decided per (case, flow) from every report given, one per seed
# (sweeps.py reads them). A declared verdict must hold at any seed:
# - the same failure at every seed, clear of its bound: a strict [[fail]] entry;
# - a mismatch that comes and goes with the inputs (or stays within CLEAR_RATIO of its
#   bound) and that a moderately wider bound explains (at most MAX_BOUND_SCALE times, an
#   SQNR floor at most MAX_SQNR_DROP_DB lower): a [[tolerance]] entry whose `bound_scale`
#   covers the sweep's worst error with headroom, its figures in the reason;
# - anything else that depends on the seed (a mismatch far beyond any honest bound, an
#   exact output that differs at some seeds, a failure at another stage on some inputs):
#   a non-strict [[fail]] entry (`strict = false`), listed apart by the summary, however
#   rarely the case passed: a strict entry of a case that can pass would turn the gate red
#   at the seeds where it does (`make check-declared` must hold at any seed); its figures
#   ("fails at 20 of 22 seeds") stay in the entry, and a sweep finds the fix.

# The tolerance written covers the sweep's worst error times this (inputs of other seeds
# come a little closer to the edge than the few a sweep saw).
HEADROOM = 1.5
# An SQNR floor lowered by a tolerance sits this far under the worst SQNR seen, and a
# tolerance may lower a flow's floor by at most MAX_SQNR_DROP_DB (beyond, the result is
# too noisy to call a precision gap).
SQNR_HEADROOM_DB = 3.0
MAX_SQNR_DROP_DB = 6.0


def observe(report_paths: list[Path], backend: str) -> dict[tuple[str, str], CaseSweep]:
    """{(case, flow): what each report (one per seed) saw of it} for one backend."""
    return sweep_of(report_paths, backend)


@dataclass(frozen=True)
class Declaration:
    """What one case of one flow should be declared as, from its sweep."""

    # "pass" (nothing), "strict", "tolerance", "non-strict", "keep" (what is declared), or
    # "retolerance" (the case's own [[tolerance]] widened again; see `_rederived`)
    kind: str
    # For strict / non-strict: every status the case failed with, at any seed.
    statuses: tuple[Status, ...] = ()
    rule: tuple = ()                # for tolerance: ((field, value), ...)
    figures: str = ""               # the measured range, for the reason
    error: str = ""                 # the first failure's headline, for a new entry
    seeds_failed: int = 0           # at how many seeds of the sweep it failed
    seeds_swept: int = 0            # how many seeds the sweep ran it at


def declaration(sweep: CaseSweep, sqnr_floor: float | None = None) -> Declaration:
    """Decide from the sweep of one case and flow (see the comment above). `sqnr_floor`
    is the flow's least SQNR (a quantizing recipe's), None for floating-point rules."""
    failed = [o for o in sweep.outcomes if o.status is not None]
    error = failed[0].error if failed else ""
    if not failed:
        return Declaration("pass", seeds_swept=len(sweep.outcomes))
    statuses = {o.status for o in failed}
    if Status.XFAIL in statuses:  # an old report that cannot tell: keep what is declared
        return Declaration("keep")
    failed_with = tuple(dict.fromkeys(s for o in failed for s in o.failed_with or (o.status,)
                                      if s is not None))
    seen = Declaration("", figures=sweep.figures(), error=error, seeds_failed=len(failed),
                       seeds_swept=len(sweep.outcomes))
    if sweep.strict(sqnr_floor):
        return replace(seen, kind="strict", statuses=failed_with)
    rule = _tolerance_for(sweep, failed, sqnr_floor)
    if rule:
        return replace(seen, kind="tolerance", rule=rule)
    if fails_at_every_seed(sweep):
        return replace(seen, kind="strict", statuses=failed_with)
    return replace(seen, kind="non-strict", statuses=failed_with)


def fails_at_every_seed(sweep: CaseSweep) -> bool:
    """Failed, one way, at every seed of a sweep of SWEEP_SEEDS or more, some of them near
    the bound: strict all the same, the sweep having measured what one run cannot."""
    statuses = {o.status for o in sweep.outcomes}
    return len(sweep.outcomes) >= SWEEP_SEEDS and None not in statuses and len(statuses) == 1


def with_history(entry: Expectation, decided: Iterable[Declaration]) -> Expectation:
    """`entry` with the sweep figures of the cases it was decided from (`decided`:
    Declarations; the case that failed at the fewest seeds speaks for the entry). One
    run is no sweep, and a sweep narrower than the one the entry records leaves its
    history as it is."""
    swept = [d for d in decided if d.seeds_swept > 1]
    if not swept:
        return entry
    weakest = min(swept, key=lambda d: (d.seeds_failed / d.seeds_swept, d.seeds_swept))
    if weakest.seeds_swept < (entry.seeds_swept or 0):
        return entry
    return replace(entry, seeds_failed=weakest.seeds_failed, seeds_swept=weakest.seeds_swept)


def _tolerance_for(sweep: CaseSweep, failed: list, sqnr_floor: float | None) -> tuple:
    """The rule fields that make every seed's outputs pass with headroom, or () when no
    honest widening does: only mismatches, every one explained by the bound (its error
    ratio above 1) or by a short SQNR, none beyond MAX_BOUND_SCALE."""
    statuses = {o.status for o in failed}
    if len(statuses) != 1 or not statuses <= OUT_OF_RULE:
        return ()
    ratios = sweep.ratios
    if not ratios or not all(math.isfinite(r) for r in ratios) \
            or max(ratios) * HEADROOM > MAX_BOUND_SCALE:  # the bound written, headroom included
        return ()
    rule = []
    sqnrs = [o.least_sqnr for o in sweep.outcomes if o.least_sqnr is not None]
    sqnr_short = sqnr_floor is not None and sqnrs and min(sqnrs) < sqnr_floor
    for outcome in failed:
        explained = (outcome.worst_ratio or 0) > 1 or (
            sqnr_short and outcome.least_sqnr is not None and outcome.least_sqnr < sqnr_floor)
        if not explained:
            return ()  # fails for another reason (nan/inf elements, a shape): not a bound
    if max(ratios) > 1 / HEADROOM:
        rule.append((BOUND_SCALE, _round_up(max(ratios) * HEADROOM)))
    if sqnr_short and sqnr_floor is not None:  # (sqnr_short implies a floor)
        floor = math.floor(min(sqnrs) - SQNR_HEADROOM_DB)
        if floor <= 0 or sqnr_floor - floor > MAX_SQNR_DROP_DB:
            return ()
        rule.append(("min_sqnr_db", float(floor)))
    return tuple(rule)


def _round_up(value: float) -> float:
    """Two significant digits, never below `value` (beyond float noise: 0.01 x 1.8 is
    0.018, not 0.019)."""
    digits = 1 - math.floor(math.log10(value))
    rounded = round(value, digits)
    return rounded if rounded >= value * (1 - 1e-9) else round(rounded + 10.0 ** -digits, digits)


def updated(current: Expectations, seen: dict[tuple[str, str], CaseSweep],
            elsewhere: Expectations = NO_ENTRIES,
            sqnr_floors: dict[str, float | None] | None = None,
            add_new: bool = True) -> Expectations:
    """The entries rewritten from what the reports saw at every seed, keeping reasons
    written by hand: an entry whose cases all pass goes; one whose cases all fail the same
    way at every seed stays (its status updated); one that names a case whose verdict
    depends on the seed is split, that case getting a [[tolerance]] or a non-strict
    [[fail]] entry of its own (see `declaration`); a new failure gets an entry whose
    reason starts TODO explain. A case that fails under its own [[tolerance]] at some
    seeds gets that rule widened again from the sweep (`_rederived`), or, beyond an
    honest widening, a non-strict [[fail]]. Skips and must_delegate entries stay.
    Failures that `elsewhere` (the flows' own entries, e.g. a host-dependent file)
    declares get no entry here. `sqnr_floors` maps a quantizing flow to its least SQNR;
    `add_new=False` (a secondary file) re-derives the entries only."""
    floors = sqnr_floors or {}
    # A case's own [[tolerance]] judged its outputs: its ratios and SQNRs were measured
    # against that rule, so the widening is decided against it and composed with it.
    own = {key: current.first("tolerance", key[1], key[0]) for key in seen}
    decided = {}
    for key, sweep in seen.items():
        if elsewhere.failure(key[1], key[0]) is not None:
            continue
        entry = own[key]
        applied = dict(entry.rule).get("min_sqnr_db", floors.get(key[1])) if entry \
            else floors.get(key[1])
        decided[key] = declaration(sweep, applied)
        if entry is not None and decided[key].kind == "tolerance":
            decided[key] = _rederived(entry, decided[key], floors.get(key[1]))
    owner = {key: current.failure(key[1], key[0]) for key in decided}
    for key, entry in owner.items():
        if entry is not None:
            decided[key] = _unless_too_narrow(entry, decided[key])
    ran = {flow for _, flow in seen}
    fails: list[Expectation] = []
    tolerances: list[Expectation] = []
    for entry in current.entries:
        if entry.kind != "fail":
            continue
        mine = {key: d for key, d in decided.items() if owner[key] is entry}
        if not mine:
            fails.append(entry)  # not observed: kept as it is
            continue
        # The flows the reports never ran (e.g. Ethos-U beside TOSA): the entry stays as it
        # is for them, whatever the sweep decides for the others.
        unrun = tuple(p for p in entry.flows if not any(matches(p, f) for f in ran))
        kept = [replace(entry, flows=unrun)] if unrun else []
        observed = replace(entry, flows=tuple(p for p in entry.flows if p not in unrun))
        if all(d.kind in ("strict", "keep") for d in mine.values()):
            changed = _restated(observed, mine)
            fails.extend([entry] if changed == observed else kept + [changed])
            continue
        if all(d.kind in ("pass", "retolerance") for d in mine.values()):
            # every case it names passes at every seed (or under a wider tolerance) on the
            # flows that ran: only its unrun flows keep it
            fails.extend(kept)
            continue
        # Split: each observed case gets what its sweep says, with this entry's reason.
        fails.extend(kept + _entries_for(mine, entry.reason, tolerances))
    explained = {key for key, entry in owner.items() if entry is not None}
    fresh = {key: d for key, d in decided.items() if key not in explained and add_new}
    fails.extend(_entries_for(fresh, None, tolerances))
    others = []
    for entry in current.entries:
        if entry.kind == "fail":
            continue
        widened = {key: d for key, d in decided.items()
                   if d.kind == "retolerance" and own[key] is entry}
        others.extend(_widened_entries(entry, widened) if widened else [entry])
    return Expectations(tuple(fails + others + tolerances))


def _unless_too_narrow(entry: Expectation, decided: Declaration) -> Declaration:
    """A pass under a [[fail]] entry whose verdict depends on the input values, seen in
    fewer seeds than a sweep needs (SWEEP_SEEDS, or the entry's own recorded sweep if
    wider), does not remove it: one run cannot tell a fixed case from one the inputs
    decide. A non-strict entry stays as it is; a strict one becomes non-strict (it can
    pass, the run showed) until a sweep decides. A stage failure's pass removes it: the
    seed draws values only, so one run tells."""
    if decided.kind != "pass" or not depends_on_values(replace(entry, strict=True)):
        return decided
    needed = max(SWEEP_SEEDS, entry.seeds_swept or 0)
    if decided.seeds_swept >= needed:
        return decided
    if not entry.strict:
        return Declaration("keep")
    seeds = decided.seeds_swept
    return Declaration(
        "non-strict", statuses=entry.statuses, seeds_swept=seeds,
        figures=(f"passed at {seeds} of {seeds} seed{'s' if seeds > 1 else ''}, too few to "
                 f"remove it: a sweep of {needed} seeds decides"))


def _restated(entry: Expectation, mine: dict) -> Expectation:
    """A [[fail]] entry whose observed cases all fail the same way at every seed
    ("strict", or "keep" from an old report): its statuses as seen, its sweep history
    (`with_history`), and strict when it was non-strict and every case now fails at
    every seed of a sweep of SWEEP_SEEDS or more, as wide as the one the entry records,
    the figures that decided it in its reason. A non-strict
    entry that stays so keeps its history: a narrower sweep cannot overturn it. An entry
    whose recorded sweep saw its case pass (`passed_before`) is non-strict: a later sweep
    that happened to see only failures does not make it strict again."""
    strict = [d for d in mine.values() if d.kind == "strict"]
    seen_with = tuple(dict.fromkeys(s for d in strict for s in d.statuses))
    if seen_with and set(seen_with) != set(entry.statuses):
        entry = replace(entry, statuses=seen_with)
    if passed_before(entry):  # a case that can pass stays non-strict, whatever this sweep saw
        return replace(entry, strict=False)
    if entry.strict:
        return with_history(entry, strict)
    widest = min((d.seeds_swept for d in strict), default=0)
    if len(strict) == len(mine) and widest >= max(SWEEP_SEEDS, entry.seeds_swept or 0):
        figures = "; ".join(dict.fromkeys(d.figures for d in strict if d.figures))
        entry = replace(with_history(entry, strict), strict=True,
                        reason=f"{MEASURED.sub('', entry.reason)} [strict from a sweep: {figures}]")
    return entry


def passed_before(entry: Expectation) -> bool:
    """The entry's recorded sweep saw its case pass at some seed (seeds_failed under
    seeds_swept)."""
    return entry.seeds_swept is not None and (entry.seeds_failed or 0) < entry.seeds_swept


def _rederived(entry: Expectation, decided: Declaration, flow_floor: float | None) -> Declaration:
    """A case that failed under its own [[tolerance]] `entry` at some seeds, and that a
    further widening (`decided.rule`, measured against that entry's rule) explains: the
    entry's rule widened by it ("retolerance"), or non-strict when the total goes beyond
    an honest widening (MAX_BOUND_SCALE, MAX_SQNR_DROP_DB under the flow's floor)."""
    rule, extra = dict(entry.rule), dict(decided.rule)
    scale = extra.get(BOUND_SCALE)
    if scale is not None:
        for name in LINEAR_BOUND_FIELDS:
            if name in rule:
                rule[name] = _round_up(rule[name] * scale)
        rule[BOUND_SCALE] = _round_up(rule.get(BOUND_SCALE, 1.0) * scale)
    if "min_sqnr_db" in extra:
        rule["min_sqnr_db"] = extra["min_sqnr_db"]
    too_wide = rule.get(BOUND_SCALE, 1.0) > MAX_BOUND_SCALE or (
        flow_floor is not None and "min_sqnr_db" in rule
        and flow_floor - rule["min_sqnr_db"] > MAX_SQNR_DROP_DB)
    if too_wide:
        return replace(decided, kind="non-strict", statuses=(Status.FAIL_MISMATCH,), rule=())
    return replace(decided, kind="retolerance", rule=tuple(rule.items()))


def _widened_entries(entry: Expectation, widened: dict) -> list[Expectation]:
    """`entry` with the cases and flows in `widened` ({(case, flow): retolerance}) moved
    to entries of their own, placed before it (the first matching tolerance wins). An
    entry whose case or flows are patterns stays whole: the new ones shadow it."""
    grouped: dict[tuple, list] = {}
    for (case, flow), d in sorted(widened.items()):
        grouped.setdefault((case, d.rule, d.figures), []).append((flow, d))
    base = MEASURED.sub("", entry.reason)
    moved = [with_history(replace(
        entry, flows=tuple(f for f, _ in members), case=case, rule=rule, source="",
        seeds_failed=None, seeds_swept=None,
        reason=f"{base} [input-dependent, bound widened again from a sweep "
               f"that failed under {_describe(entry.rule)}: {figures}]"), [d for _, d in members])
             for (case, rule, figures), members in grouped.items()]
    literal = not any(c in text for text in (entry.case, *entry.flows) for c in "*?")
    if not literal:
        return moved + [entry]
    left = tuple(f for f in entry.flows if (entry.case, f) not in widened)
    return moved + ([replace(entry, flows=left)] if left else [])


def _describe(rule: tuple) -> str:
    return ", ".join(f"{name} {value:g}" for name, value in rule)


# The figures a sweep appends to a reason; a later sweep replaces them, not adds to them.
MEASURED = re.compile(r" \[(input-dependent|strict from a sweep)[^\]]*\]$")


def _entries_for(decided: dict, reason: str | None, tolerances: list) -> list[Expectation]:
    """Entries for the given cases (one per case and verdict, flows merged), appending
    tolerance entries to `tolerances`; `reason` is the entry's they came from (None: a
    new failure, whose reason says TODO explain)."""
    grouped: dict[tuple, list] = {}
    for (case, flow), d in sorted(decided.items()):
        if d.kind in ("pass", "keep", "retolerance"):
            continue  # (a retolerance rewrites its own [[tolerance]] entry)
        grouped.setdefault((case, d.kind, d.statuses, d.rule, d.figures if d.kind != "strict"
                            else "", d.error if reason is None else ""), []).append((flow, d))
    fails: list[Expectation] = []
    for (case, kind, statuses, rule, figures, error), members in grouped.items():
        flows = tuple(flow for flow, _ in members)
        base = MEASURED.sub("", reason) if reason else \
            f"TODO explain: {error or ' or '.join(s.value for s in statuses)}"
        if kind == "strict":
            made = Expectation("fail", flows, case, base, statuses)
        elif kind == "non-strict":
            made = Expectation("fail", flows, case, f"{base} [input-dependent: {figures}]",
                               statuses, strict=False)
        else:
            made = Expectation(
                "tolerance", flows, case,
                f"{base} [input-dependent, bound widened from the sweep: {figures}]",
                rule=rule)
        made = with_history(made, [d for _, d in members])
        (tolerances if kind == "tolerance" else fails).append(made)
    return fails


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def leading_comment(text: str) -> list[str]:
    """The comment lines a file starts with (its header), kept when it is rewritten."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def dump(expectations: Expectations, backend: str, header: list[str] | None = None) -> str:
    lines = list(header or [
        f"# Expectations of the {backend} flows: known failures (strict: a pass or another",
        "# status fails the run; non-strict, `strict = false`: may fail or pass), skips,",
        "# cases that must be delegated, tolerance overrides. Rewrite from the last report,",
        f"# or from a seed sweep's: make update-expectations BACKEND={backend} [UPDATE_FROM=...]",
        "# (reasons written by hand are kept; new entries say TODO explain)."])
    for kind in KINDS:
        for entry in (e for e in expectations.entries if e.kind == kind):
            lines += ["", f"[[{kind}]]",
                      f"flows = [{', '.join(_toml_string(f) for f in entry.flows)}]",
                      f"case = {_toml_string(entry.case)}"]
            if len(entry.statuses) == 1:
                lines.append(f"status = {_toml_string(entry.statuses[0].value)}")
            elif entry.statuses:
                listed = ", ".join(_toml_string(s.value) for s in entry.statuses)
                lines.append(f"status = [{listed}]")
            if not entry.strict:
                lines.append("strict = false")
            if entry.catch_all:
                lines.append("catch_all = true")
            if entry.dtype is not None:
                lines.append(f"dtype = {_toml_string(entry.dtype)}")
            lines += [f"{key} = {value!r}" for key, value in entry.rule]
            if entry.seeds_swept is not None:
                lines += [f"seeds_failed = {entry.seeds_failed}",
                          f"seeds_swept = {entry.seeds_swept}"]
            lines.append(f"reason = {_toml_string(entry.reason)}")
    return "\n".join(lines) + "\n"
