"""Expectations as data: what a backend's flows are known to fail, skip, or must delegate,
each with its reason, in `backends/<name>/expectations.toml` beside its flows.py.

    [[fail]]                       # a known failure, strict about where it fails
    flows = ["xnnpack", "xnnpack_static_int8_*"]   # patterns on flow names: * and ? only
    case = "backends/suite/operators/test_pad.py::test_pad_negative*"  # on the case id
    status = "fail_run"            # the status it fails with (the stage follows from it)
    reason = "portable constant_pad_nd rejects negative padding (error 0x12)"
    # status = ["fail_mismatch", "fail_crash"]   a test whose subtests fail in more ways

    [[skip]]                       # not run at all (skip_unsupported)
    [[must_delegate]]              # a pass_undelegated here is a failure (a silent fallback)
    [[tolerance]]                  # this case's outputs are judged by a changed rule
    flows = ["xnnpack_static_int8_*"]
    case = "backends/suite/operators/test_log_softmax.py::*"
    dtype = "float32"              # optional: only outputs of this dtype
    min_sqnr_db = 8                # rule fields (tolerance.RULE_FIELDS) replace the flow's
    reason = "int8 log of small probabilities saturates: a recipe limit, not a kernel bug"

The case id is the test's node id without the flow, with its other parameters, e.g.
`backends/suite/operators/test_add.py::test_add_dtype[float16]`. A [[fail]] entry covers
exactly the statuses it names: every failing subtest of the test must end with one of
them, so a second subtest that starts crashing is never absorbed by the first one's
`fail_mismatch`. A strict entry whose case passes, or fails with a status it does not
name, or gets past the stage it names on a host that cannot run the program (a
`fail_lower` that now lowers and serializes), fails the run with a message that names the
entry (`file:line`) to change. `make update-expectations BACKEND=<name>`
(`update_expectations.py`) rewrites the file from the last report, keeping every reason
written by hand.

Torch-free: read at collection time.
"""

from __future__ import annotations

import functools
import json
import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, Status
from etsuite.backends.harness.stability import CaseSweep, sweep_of
from etsuite.backends.harness.tolerance import (
    BOUND_SCALE,
    LINEAR_BOUND_FIELDS,
    MAX_BOUND_SCALE,
    OVERRIDE_FIELDS,
    Override,
    RuleBook,
    judges_nothing,
)

FILE_NAME = "expectations.toml"
KINDS = ("fail", "skip", "must_delegate", "tolerance")


class ExpectationsError(ValueError):
    """A malformed expectations file; the message names the file and the entry."""


def matches(pattern: str, text: str) -> bool:
    """`*` is any text and `?` one character; everything else is literal, so a case id's
    own brackets (`test_add[float16]`) need no escaping."""
    return _compiled(pattern).fullmatch(text) is not None


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str) -> re.Pattern:
    """Each pattern once: collection matches every entry against every collected case."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in pattern), re.DOTALL)


@dataclass(frozen=True)
class Expectation:
    kind: str                      # one of KINDS
    flows: tuple[str, ...]         # patterns on flow names (see `matches`)
    case: str                      # pattern on the case id
    reason: str
    # For "fail": the statuses its failing subtests may end with (); none: a failure at
    # any stage, but never a crash, a timeout or an infrastructure failure).
    statuses: tuple[Status, ...] = ()
    source: str = ""               # "path:line", for messages that say what to change
    dtype: str | None = None       # for "tolerance": the output dtype it is for (None: all)
    rule: tuple = ()               # for "tolerance": ((rule field, value), ...)
    # For "fail": strict (a pass or another status fails the run), or not (`strict =
    # false`: an input-dependent failure that may fail with its status or pass; never
    # fails a run by itself, and the summary lists it apart).
    strict: bool = True

    def applies(self, flow: str, case: str) -> bool:
        return matches(self.case, case) and any(matches(p, flow) for p in self.flows)

    def covers(self, status: Status) -> bool:
        """Whether a subtest failing with `status` is the failure this entry declares."""
        if self.statuses:
            return status in self.statuses
        return status in FAILING and status not in NAMED_ONLY | UNDECLARABLE

    @property
    def statuses_text(self) -> str:
        return " or ".join(s.value for s in self.statuses) or "a failure"


@dataclass(frozen=True)
class Expectations:
    """A flow's (or a backend's) expectations; the first matching entry of a kind wins."""

    entries: tuple[Expectation, ...] = ()

    def first(self, kind: str, flow: str, case: str) -> Expectation | None:
        return next((e for e in self.entries if e.kind == kind and e.applies(flow, case)), None)

    def failure(self, flow: str, case: str) -> Expectation | None:
        return self.first("fail", flow, case)

    def skip(self, flow: str, case: str) -> Expectation | None:
        return self.first("skip", flow, case)

    def must_delegate(self, flow: str, case: str) -> Expectation | None:
        return self.first("must_delegate", flow, case)

    def tolerances(self, flow: str, case: str) -> tuple[Override, ...]:
        """The case's rule overrides, in file order (the first one for a dtype wins)."""
        return tuple(Override(e.rule, e.reason, e.source, e.dtype) for e in self.entries
                     if e.kind == "tolerance" and e.applies(flow, case))

    def __add__(self, other: "Expectations") -> "Expectations":
        return Expectations(self.entries + other.entries)


def _entry_lines(text: str) -> list[tuple[str, int]]:
    """(kind, line number) of each `[[kind]]` header, in file order (tomllib keeps no
    positions, and the messages must say which line to change)."""
    found, line, counted_to = [], 1, 0
    for m in re.finditer(r"^[ \t]*\[\[[ \t]*([A-Za-z_]+)[ \t]*\]\]", text, re.MULTILINE):
        line += text.count("\n", counted_to, m.start())  # counted once per stretch
        counted_to = m.start()
        found.append((m.group(1), line))
    return found


def load(path: Path, display: str | None = None) -> Expectations:
    """Read one expectations file; raises ExpectationsError naming the bad entry."""
    display = display or str(path)
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ExpectationsError(f"{display}: not valid TOML: {error}") from None
    unknown = set(data) - set(KINDS)
    if unknown:
        raise ExpectationsError(f"{display}: unknown section(s) {sorted(unknown)}; "
                                f"known: {', '.join(KINDS)}")
    counters = {kind: 0 for kind in KINDS}
    positions = {}
    for kind, line in _entry_lines(text):
        if kind in counters:
            positions[(kind, counters[kind])] = line
            counters[kind] += 1
    entries = []
    for kind in KINDS:
        for index, raw in enumerate(data.get(kind, [])):
            where = f"{display}:{positions.get((kind, index), '?')}"
            entries.append(_entry(kind, raw, where))
    return Expectations(tuple(entries))


def _entry(kind: str, raw: dict, where: str) -> Expectation:
    def need(key, kind_of):
        value = raw.get(key)
        if not isinstance(value, kind_of) or not value:
            raise ExpectationsError(f"{where}: [[{kind}]] needs a non-empty {key!r}")
        return value

    flows = need("flows", list)
    if not all(isinstance(f, str) and f for f in flows):
        raise ExpectationsError(f"{where}: 'flows' must be a list of flow name patterns")
    statuses = _statuses(raw.get("status"), where) if kind == "fail" else ()
    rule_keys = set(OVERRIDE_FIELDS) | {"dtype"} if kind == "tolerance" else set()
    if kind == "fail":
        rule_keys = {"strict"}
        if not isinstance(raw.get("strict", True), bool):
            raise ExpectationsError(f"{where}: 'strict' must be true or false")
    extra = set(raw) - {"flows", "case", "reason", "status"} - rule_keys
    if extra:
        raise ExpectationsError(f"{where}: unknown key(s) {sorted(extra)}")
    rule = _rule(raw, where) if kind == "tolerance" else ()
    dtype = raw.get("dtype")
    if dtype is not None and not isinstance(dtype, str):
        raise ExpectationsError(f"{where}: 'dtype' must be a dtype name such as \"float16\"")
    return Expectation(kind=kind, flows=tuple(flows), case=need("case", str),
                       reason=need("reason", str), statuses=statuses, source=where,
                       dtype=dtype, rule=rule, strict=raw.get("strict", True))


# Statuses no entry may declare: not a failure of the flow's program (fail_infra: the
# runner's device or its connection failed, which says nothing about the program).
UNDECLARABLE = frozenset({Status.XPASS, Status.FAIL_TEST, Status.ERROR, Status.FAIL_INFRA})
# Failures an entry covers only when it names them (an entry without statuses does not).
NAMED_ONLY = frozenset({Status.FAIL_CRASH, Status.FAIL_TIMEOUT})


def _statuses(value, where: str) -> tuple[Status, ...]:
    """A [[fail]] entry's `status`: one status, or a list of them (each distinct)."""
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ExpectationsError(f"{where}: [[fail]] needs a 'status': a status or a list of them")
    statuses = []
    for name in names:
        try:
            status = Status(name)
        except ValueError:
            raise ExpectationsError(f"{where}: unknown status {name!r}") from None
        if status is Status.FAIL_INFRA:
            raise ExpectationsError(f"{where}: fail_infra (a lost runner device, a runner that "
                                    f"cannot start) is never a verdict about the program, so "
                                    f"no entry may declare it: fix the runner")
        if status not in FAILING or status in UNDECLARABLE:
            raise ExpectationsError(f"{where}: status {status.value!r} is not a failure a flow "
                                    f"can be expected to have")
        if status in statuses:
            raise ExpectationsError(f"{where}: status {status.value!r} is listed twice")
        statuses.append(status)
    return tuple(statuses)


def _rule(raw: dict, where: str) -> tuple:
    """The rule fields a [[tolerance]] entry sets: numbers (bits: an integer)."""
    rule = []
    for key in OVERRIDE_FIELDS:
        if key not in raw:
            continue
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 \
                or (key == "bits" and not isinstance(value, int)):
            raise ExpectationsError(f"{where}: [[tolerance]] {key!r} must be a non-negative "
                                    f"number, got {value!r}")
        if key == BOUND_SCALE and value > MAX_BOUND_SCALE:
            raise ExpectationsError(f"{where}: [[tolerance]] bound_scale {value:g} is beyond "
                                    f"the widest a tolerance may make a bound "
                                    f"({MAX_BOUND_SCALE:g}): a worse error is a wrong answer "
                                    f"on some inputs, declare it with a non-strict [[fail]]")
        rule.append((key, value))
    if not rule:
        raise ExpectationsError(f"{where}: [[tolerance]] sets no rule field; known: "
                                f"{', '.join(OVERRIDE_FIELDS)}")
    return tuple(rule)


# Kinds that cannot both apply to one case of one flow: a skip is never run, and a
# [[fail]] entry decides a failing case whatever its [[tolerance]] says.
EXCLUSIVE_KINDS = ("fail", "skip", "tolerance")


def check_for_flow(expectations: Expectations, flow: str, base) -> None:
    """The entries that apply to `flow` (whose rule is the Tolerance `base`), checked as
    a whole: a [[tolerance]] whose bound would judge nothing, and entries of two
    exclusive kinds whose case patterns can name one case. Raises ExpectationsError
    naming the lines."""
    mine = [e for e in expectations.entries if any(matches(p, flow) for p in e.flows)]
    for entry in mine:
        if entry.kind != "tolerance":
            continue
        override = Override(entry.rule, entry.reason, entry.source, entry.dtype)
        problem = judges_nothing(RuleBook(base, (override,)).for_dtype(entry.dtype or "float32"))
        if problem:
            raise ExpectationsError(f"{entry.source}: [[tolerance]] on flow {flow}: {problem}, "
                                    f"so no output can fail it; declare the case a [[fail]]")
    exclusive = [e for e in mine if e.kind in EXCLUSIVE_KINDS]
    for index, first in enumerate(exclusive):
        for second in exclusive[index + 1:]:
            if first.kind != second.kind and patterns_overlap(first.case, second.case):
                raise ExpectationsError(
                    f"{second.source}: [[{second.kind}]] and [[{first.kind}]] at "
                    f"{first.source} can both name a case of flow {flow} "
                    f"({second.case!r}, {first.case!r}): only one of them would decide it; "
                    f"keep one")


def patterns_overlap(first: str, second: str) -> bool:
    """Whether some text matches both patterns (`matches`' * and ?): a walk over pairs of
    positions, one in each pattern, as two automata reading the same text."""
    seen, todo = set(), [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(first) and j == len(second):
            return True
        a = first[i] if i < len(first) else None
        b = second[j] if j < len(second) else None
        if a == "*":
            todo.append((i + 1, j))   # the star matches nothing more
        if b == "*":
            todo.append((i, j + 1))
        if a is not None and b is not None and (a in "*?" or b in "*?" or a == b):
            todo.append((i if a == "*" else i + 1, j if b == "*" else j + 1))  # one character
    return False


def load_backend(folder: Path, root: Path | None = None) -> Expectations:
    """The expectations of the backend in `folder` (empty when it has no file)."""
    path = folder / FILE_NAME
    if not path.is_file():
        return Expectations()
    display = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
    return load(path, display)


# ---------------------------------------------------------------- verdicts

@dataclass
class Verdict:
    """What the expectations make of a test's records: None fields mean no change."""

    xfail_reason: str | None = None   # the test is an expected failure (pytest xfail)
    failure: str | None = None        # the test fails with this message


def judge(expectations: Expectations, flow: str, case: str,
          records: list[SubtestRecord]) -> Verdict:
    """Apply the `fail` and `must_delegate` entries to a finished test's records (which
    are updated: the failing records a [[fail]] entry covers become xfail, a strict
    entry's unexpected pass makes the passing records xpass, an undelegated pass that must
    delegate fail_lower). A failing record the entry does not cover keeps its status and
    fails the test, whatever the others did. Every record rewritten keeps what the
    pipeline said in `observed_status`, and every record of a declared case names its
    entry."""
    verdict = Verdict()
    expected = expectations.failure(flow, case)
    if expected is not None:
        for record in records:
            record.declared_by, record.declared_strict = expected.source, expected.strict
        verdict = _judge_failure(expected, records)
        if verdict.xfail_reason or verdict.failure:
            return verdict
    must = expectations.must_delegate(flow, case)
    if must is not None:
        undelegated = [r for r in records if r.status is Status.PASS_UNDELEGATED]
        for record in undelegated:  # a failure of its own, not a rewritten verdict:
            record.status = Status.FAIL_LOWER  # a sweep sees it as the failure it is
            record.stage = "lower"
            record.error = (f"must be delegated ({must.source}: {must.reason}), but the "
                            f"partitioner took no node")
        if undelegated:
            verdict.failure = undelegated[0].error
    return verdict


# The stages a host that cannot run the program still checks: a case that ends
# lowered_not_run got past each of them.
CHECKED_BEFORE_RUN = frozenset({Status.FAIL_QUANTIZE, Status.FAIL_LOWER, Status.FAIL_SERIALIZE})


def _judge_failure(expected: Expectation, records: list[SubtestRecord]) -> Verdict:
    """What a [[fail]] entry makes of a test's records (see `judge`)."""
    verdict = Verdict()
    kind = "" if expected.strict else "non-strict, "
    failing = [r for r in records if r.status in FAILING]
    uncovered = [r for r in failing if not expected.covers(r.status)]
    for record in failing:
        if expected.covers(record.status):
            rewrite_status(record, Status.XFAIL)
    if uncovered:
        named = "; ".join(f"subtest {r.subtest} ended {r.status}" for r in uncovered)
        verdict.failure = (f"expected {expected.statuses_text} ({kind}{expected.source}), "
                           f"but {named}: that entry does not cover it; fix the regression, "
                           f"or name that status in the entry with its reason")
        return verdict
    if failing:
        verdict.xfail_reason = f"{expected.reason} ({kind}{expected.source})"
        return verdict
    if not expected.strict:
        return verdict
    if any(r.status in PASSING for r in records):
        for record in records:
            if record.status in PASSING:
                rewrite_status(record, Status.XPASS)
        verdict.failure = (f"expected {expected.statuses_text} ({expected.source}), but it "
                           f"passed: delete that entry")
        return verdict
    not_run = [r for r in records if r.status is Status.LOWERED_NOT_RUN]
    if not_run and expected.statuses and set(expected.statuses) <= CHECKED_BEFORE_RUN:
        for record in not_run:
            rewrite_status(record, Status.XPASS)
        verdict.failure = (f"expected {expected.statuses_text} ({expected.source}), but it "
                           f"quantized, lowered and serialized (this host has no runtime "
                           f"for it: lowered_not_run): delete that entry")
    return verdict


def rewrite_status(record: SubtestRecord, status: Status) -> None:
    """Give a record the status an expectation decides, keeping the pipeline's own."""
    if record.observed_status is None:
        record.observed_status = record.status.value
    record.status = status


# ---------------------------------------------------------------- update from reports
#
# What to declare is decided per (case, flow) from every report given, one per seed
# (stability.py reads them). A declared verdict must hold at any seed:
# - the same failure at every seed, clear of its bound: a strict [[fail]] entry;
# - a mismatch that comes and goes with the inputs (or stays within CLEAR_RATIO of its
#   bound) and that a moderately wider bound explains (at most MAX_BOUND_SCALE times, an
#   SQNR floor at most MAX_SQNR_DROP_DB lower): a [[tolerance]] entry whose `bound_scale`
#   covers the sweep's worst error with headroom, its figures in the reason;
# - anything else that depends on the seed (a mismatch far beyond any honest bound, an
#   exact output that differs at some seeds, a failure at another stage on some inputs):
#   a non-strict [[fail]] entry (`strict = false`), listed apart by the summary, unless
#   the case passed at under a tenth of ten or more seeds (`rarely_passes`): strict.

# The tolerance written covers the sweep's worst error times this (inputs of other seeds
# come a little closer to the edge than the few a sweep saw).
HEADROOM = 1.5
# An SQNR floor lowered by a tolerance sits this far under the worst SQNR seen, and a
# tolerance may lower a flow's floor by at most MAX_SQNR_DROP_DB (beyond, the result is
# too noisy to call a precision gap).
SQNR_HEADROOM_DB = 3.0
MAX_SQNR_DROP_DB = 6.0
# Non-strict is for cases the inputs decide: each outcome at RARE_PASS_SHARE or more of
# the seeds. A case that passed at fewer, in a sweep of RARE_PASS_MIN_SEEDS or more, is
# strict (a pass at another seed then fails the run as news, as a fixed case would).
RARE_PASS_SHARE = 0.1
RARE_PASS_MIN_SEEDS = 10


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


def declaration(sweep: CaseSweep, sqnr_floor: float | None = None) -> Declaration:
    """Decide from the sweep of one case and flow (see the comment above). `sqnr_floor`
    is the flow's least SQNR (a quantizing recipe's), None for floating-point rules."""
    failed = [o for o in sweep.outcomes if o.status is not None]
    error = failed[0].error if failed else ""
    if not failed:
        return Declaration("pass")
    statuses = {o.status for o in failed}
    if Status.XFAIL in statuses:  # an old report that cannot tell: keep what is declared
        return Declaration("keep")
    failed_with = tuple(dict.fromkeys(s for o in failed for s in o.failed_with or (o.status,)
                                      if s is not None))
    if sweep.strict(sqnr_floor):
        return Declaration("strict", failed_with, figures=sweep.figures(), error=error)
    rule = _tolerance_for(sweep, failed, sqnr_floor)
    if rule:
        return Declaration("tolerance", rule=rule, figures=sweep.figures(), error=error)
    if rarely_passes(sweep):
        return Declaration("strict", failed_with, figures=sweep.figures(), error=error)
    return Declaration("non-strict", failed_with, figures=sweep.figures(), error=error)


def rarely_passes(sweep: CaseSweep) -> bool:
    """Failed one way at nearly every seed of a sweep large enough to say so (passed at
    under RARE_PASS_SHARE of at least RARE_PASS_MIN_SEEDS): a strict failure whose rare
    pass is news, not a non-strict entry that no run could ever fail."""
    seeds = len(sweep.outcomes)
    passes = sum(o.status is None for o in sweep.outcomes)
    failing = {o.status for o in sweep.outcomes if o.status is not None}
    return seeds >= RARE_PASS_MIN_SEEDS and len(failing) == 1 and passes < RARE_PASS_SHARE * seeds


def _tolerance_for(sweep: CaseSweep, failed: list, sqnr_floor: float | None) -> tuple:
    """The rule fields that make every seed's outputs pass with headroom, or () when no
    honest widening does: only mismatches, every one explained by the bound (its error
    ratio above 1) or by a short SQNR, none beyond MAX_BOUND_SCALE."""
    if {o.status for o in failed} != {Status.FAIL_MISMATCH}:
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
            elsewhere: Expectations = Expectations(),
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
    fails: list[Expectation] = []
    tolerances: list[Expectation] = []
    for entry in current.entries:
        if entry.kind != "fail":
            continue
        mine = {key: d for key, d in decided.items() if owner[key] is entry}
        if not mine:
            fails.append(entry)  # not observed: kept as it is
            continue
        if all(d.kind in ("strict", "keep") for d in mine.values()):
            seen_with = tuple(dict.fromkeys(s for d in mine.values() if d.kind == "strict"
                                            for s in d.statuses))
            if seen_with and set(seen_with) != set(entry.statuses):
                entry = replace(entry, statuses=seen_with)
            fails.append(entry)
            continue
        if all(d.kind in ("pass", "retolerance") for d in mine.values()):
            continue  # every case it names passes at every seed (or under a wider tolerance)
        # Split: each observed case gets what its sweep says, with this entry's reason.
        fails.extend(_entries_for(mine, entry.reason, tolerances))
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
    grouped: dict[tuple, list[str]] = {}
    for (case, flow), d in sorted(widened.items()):
        grouped.setdefault((case, d.rule, d.figures), []).append(flow)
    base = MEASURED.sub("", entry.reason)
    moved = [replace(entry, flows=tuple(flows), case=case, rule=rule, source="",
                     reason=f"{base} [input-dependent, bound widened again from a sweep "
                            f"that failed under {_describe(entry.rule)}: {figures}]")
             for (case, rule, figures), flows in grouped.items()]
    literal = not any(c in text for text in (entry.case, *entry.flows) for c in "*?")
    if not literal:
        return moved + [entry]
    left = tuple(f for f in entry.flows if (entry.case, f) not in widened)
    return moved + ([replace(entry, flows=left)] if left else [])


def _describe(rule: tuple) -> str:
    return ", ".join(f"{name} {value:g}" for name, value in rule)


# The figures a sweep appends to a reason; a later sweep replaces them, not adds to them.
MEASURED = re.compile(r" \[input-dependent[^\]]*\]$")


def _entries_for(decided: dict, reason: str | None, tolerances: list) -> list[Expectation]:
    """Entries for the given cases (one per case and verdict, flows merged), appending
    tolerance entries to `tolerances`; `reason` is the entry's they came from (None: a
    new failure, whose reason says TODO explain)."""
    grouped: dict[tuple, list[str]] = {}
    for (case, flow), d in sorted(decided.items()):
        if d.kind in ("pass", "keep", "retolerance"):
            continue  # (a retolerance rewrites its own [[tolerance]] entry)
        grouped.setdefault((case, d.kind, d.statuses, d.rule, d.figures if d.kind != "strict"
                            else "", d.error if reason is None else ""), []).append(flow)
    fails = []
    for (case, kind, statuses, rule, figures, error), flows in grouped.items():
        base = MEASURED.sub("", reason) if reason else \
            f"TODO explain: {error or ' or '.join(s.value for s in statuses)}"
        if kind == "strict":
            fails.append(Expectation("fail", tuple(flows), case, base, statuses))
        elif kind == "non-strict":
            fails.append(Expectation("fail", tuple(flows), case,
                                     f"{base} [input-dependent: {figures}]", statuses,
                                     strict=False))
        else:
            tolerances.append(Expectation(
                "tolerance", tuple(flows), case,
                f"{base} [input-dependent, bound widened from the sweep: {figures}]",
                rule=rule))
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
            if entry.dtype is not None:
                lines.append(f"dtype = {_toml_string(entry.dtype)}")
            lines += [f"{key} = {value!r}" for key, value in entry.rule]
            lines.append(f"reason = {_toml_string(entry.reason)}")
    return "\n".join(lines) + "\n"
