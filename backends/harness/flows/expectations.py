"""Expectations as data: what a backend's flows are known to fail, skip, or must delegate,
each with its reason, in `backends/<name>/expectations.toml` beside its flows.py.

    [[fail]]                       # a known failure, strict about where it fails
    flows = ["xnnpack", "xnnpack_static_int8_*"]   # patterns on flow names: * and ? only
    case = "backends/suite/operators/test_pad.py::test_pad_negative*"  # on the case id
    status = "fail_run"            # the status it fails with (the stage follows from it)
    reason = "portable constant_pad_nd rejects negative padding (error 0x12)"
    # status = ["fail_mismatch", "fail_crash"]   a test whose subtests fail in more ways
    seeds_failed = 10              # written by the updater (a [[fail]] or [[tolerance]]):
    seeds_swept = 10               # the sweep it was decided from; absent: none recorded

    [[skip]]                       # not run at all (skip_unsupported)
    [[must_delegate]]              # a pass_undelegated here is a failure (a silent fallback)
    [[tolerance]]                  # this case's outputs are judged by a changed rule
    flows = ["xnnpack_static_int8_*"]
    case = "backends/suite/operators/test_log_softmax.py::*"
    dtype = "float32"              # optional: only outputs of this dtype
    min_sqnr_db = 8                # rule fields (tolerance.RULE_FIELDS) replace the flow's
    reason = "int8 log of small probabilities saturates: a recipe limit, not a kernel bug"

A case pattern that names no case (`*`, `*::*`: no letter or digit) decides every case of
its flows; a [[fail]], [[skip]] or [[tolerance]] entry with one must say `catch_all = true`.
An entry that an earlier one of its kind covers whole is refused (it could never apply).

The case id is the test's node id without the flow, with its other parameters, e.g.
`backends/suite/operators/test_add.py::test_add_dtype[float16]`. A [[fail]] entry covers
exactly the statuses it names: every failing subtest of the test must end with one of
them, so a second subtest that starts crashing is never absorbed by the first one's
`fail_mismatch`. A strict entry whose case passes, or fails with a status it does not
name, or gets past the stage it names on a host that cannot run the program (a
`fail_lower` that now lowers and serializes), fails the run with a message that names the
entry (`file:line`) to change. `make update-expectations BACKEND=<name>`
(`upkeep/update_expectations.py`, deciding in `upkeep/entries_from_sweeps.py`) rewrites the file
from the last report, keeping every reason written by hand.

Torch-free: read at collection time.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.statuses import FAILING, PASSING, Status
from etsuite.backends.harness.flows.tolerance import (
    BOUND_SCALE,
    DTYPE_NAMES,
    MAX_BOUND_SCALE,
    OVERRIDE_FIELDS,
    Override,
    RuleBook,
    Tolerance,
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
    # Said by the file (`catch_all = true`) for a case pattern that names no case ("*"):
    # such an entry decides every case of its flows, so it must be meant.
    catch_all: bool = False
    # The sweep the updater wrote it from (HISTORY_FIELDS): at how many seeds its case
    # failed (a tolerance: failed the rule it widens), of how many swept; None: no sweep
    # recorded (an entry written by hand, or from one run).
    seeds_failed: int | None = None
    seeds_swept: int | None = None

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

    @property
    def swept_text(self) -> str | None:
        """Its sweep history in words ("10 of 10 seeds"), None when it has none."""
        if self.seeds_swept is None:
            return None
        return f"{self.seeds_failed} of {self.seeds_swept} seeds"


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


def entry_positions(text: str, kinds: Iterable[str]) -> dict[tuple[str, int], int]:
    """{(kind, index of that kind): line number} of each `[[kind]]` header of `kinds`
    (tomllib keeps no positions, and the messages must say which line to change)."""
    positions: dict[tuple[str, int], int] = {}
    counters = {kind: 0 for kind in kinds}
    line, counted_to = 1, 0
    for m in re.finditer(r"^[ \t]*\[\[[ \t]*([A-Za-z_]+)[ \t]*\]\]", text, re.MULTILINE):
        line += text.count("\n", counted_to, m.start())  # counted once per stretch
        counted_to = m.start()
        kind = m.group(1)
        if kind in counters:
            positions[(kind, counters[kind])] = line
            counters[kind] += 1
    return positions


def is_non_negative_number(value: Any) -> bool:
    """What a limit or rule field of an entry may be: an int or float (not a bool, which
    TOML would otherwise let through as 0 or 1), finite and not below 0."""
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value) and value >= 0)


# A larger file is refused before it is parsed: the biggest backend's is under 200 KiB.
MAX_FILE_BYTES = 16 * 1024 * 1024


def read_entries(path: Path, display: str, kinds: Sequence[str],
                 error: type[Exception] | None = None) -> tuple[dict, dict]:
    """A TOML file of `[[kind]]` tables: (its data, `entry_positions`). The one checked
    reader of expectations and budgets files: anything else (unreadable, too large, not
    UTF-8, not TOML, a section of another kind or not an array of tables, an entry that
    is not a table) raises `error` (default ExpectationsError), one line naming the file
    and, where there is one, the line."""
    error = error or ExpectationsError
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as problem:
        raise error(f"{display}: cannot read: {problem.strerror or problem}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise error(f"{display}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; "
                    f"not an expectations or budgets file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as problem:
        line = raw.count(b"\n", 0, problem.start) + 1
        raise error(f"{display}:{line}: not UTF-8 text (byte {raw[problem.start]:#04x})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        found = re.search(r"at line (\d+)", str(problem))
        raise error(f"{display}:{found.group(1) if found else 1}: not valid TOML: "
                    f"{problem}") from None
    for key, value in data.items():
        line = _line_of_section(text, key)
        if key not in kinds:
            raise error(f"{display}:{line}: unknown section(s) {[key]}; known: {', '.join(kinds)}")
        if not isinstance(value, list):
            raise error(f"{display}:{line}: {key!r} must be written as [[{key}]] tables, "
                        f"one per entry")
    positions = entry_positions(text, kinds)
    for kind in kinds:
        for index, entry in enumerate(data.get(kind, [])):
            if not isinstance(entry, dict):
                raise error(f"{display}:{_line_of_section(text, kind)}: {kind!r} must be "
                            f"written as [[{kind}]] tables, one per entry; entry {index + 1} "
                            f"is a {type(entry).__name__}")
    return data, positions


def _line_of_section(text: str, key: str) -> int:
    """The line where a top-level key first appears, as `[key]`, `[[key]]` or `key =`
    (1 when it is spelt another way, e.g. quoted)."""
    name = re.escape(key)
    found = re.search(rf"^[ \t]*(\[\[?[ \t]*{name}[ \t]*[\].]|{name}[ \t]*=)", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def load(path: Path, display: str | None = None) -> Expectations:
    """Read one expectations file; raises ExpectationsError naming the bad entry."""
    display = display or str(path)
    data, positions = read_entries(path, display, KINDS)
    entries = []
    for kind in KINDS:
        for index, raw in enumerate(data.get(kind, [])):
            where = f"{display}:{positions.get((kind, index), '?')}"
            entries.append(_entry(kind, raw, where))
    # An entry can be covered by one of the same case, or one whose case has wildcards.
    same_case: dict[tuple[str, str], list[Expectation]] = {}
    wildcard: dict[str, list[Expectation]] = {}
    for entry in entries:
        before = same_case.setdefault((entry.kind, entry.case), [])
        earlier = next((e for e in (*before, *wildcard.get(entry.kind, ()))
                        if _shadows(e, entry)), None)
        before.append(entry)
        if _literal_prefix(entry.case) != entry.case:
            wildcard.setdefault(entry.kind, []).append(entry)
        if earlier is not None:
            raise ExpectationsError(
                f"{entry.source}: this [[{entry.kind}]] can never apply: the entry at "
                f"{earlier.source} names every flow and case it names and comes first; "
                f"remove one of them or narrow the first")
    return Expectations(tuple(entries))


def _shadows(first: Expectation, later: Expectation) -> bool:
    """Whether `first` decides every flow and case `later` names (the first matching entry
    of a kind wins; a tolerance, the first for its dtype)."""
    if first.kind == "tolerance" and first.dtype not in (None, later.dtype):
        return False
    return names_all_of(first, later)


def names_all_of(first: Any, later: Any) -> bool:
    """Whether an entry (of expectations or budgets: its `flows` and `case`) names every
    flow and case that a later one names."""
    return pattern_covers(first.case, later.case) and all(
        any(pattern_covers(mine, theirs) for mine in first.flows) for theirs in later.flows)


def pattern_covers(first: str, later: str) -> bool:
    """Whether every text `later` matches, `first` matches too: the same pattern, a
    pattern of stars only, or a `later` without wildcards that `first` matches."""
    if first == later or not first.strip("*"):
        return True
    return later.startswith(_literal_prefix(first)) and _literal_prefix(later) == later \
        and matches(first, later)


@functools.lru_cache(maxsize=None)
def _literal_prefix(pattern: str) -> str:
    """The pattern up to its first wildcard (all of it when it has none)."""
    return re.split(r"[*?]", pattern, maxsplit=1)[0]


def is_catch_all(case: str) -> bool:
    """A case pattern that names nothing (no letter or digit: `*`, `*::*`): it matches
    every case of the flows it names."""
    return re.search(r"[A-Za-z0-9]", case) is None


# What an entry of each kind may say beyond flows, case and reason.
ENTRY_KEYS = {"fail": {"status", "strict", "catch_all", "seeds_failed", "seeds_swept"},
              "skip": {"catch_all"}, "must_delegate": set(),
              "tolerance": {*OVERRIDE_FIELDS, "dtype", "catch_all", "seeds_failed",
                            "seeds_swept"}}
# The kinds whose catch-all must say so: each one loosens what a case is held to (a
# [[must_delegate]] only tightens it).
CATCH_ALL_KINDS = ("fail", "skip", "tolerance")


def _entry(kind: str, raw: dict, where: str) -> Expectation:
    def need(key: str, kind_of: type | tuple[type, ...]) -> Any:
        value = raw.get(key)
        if not isinstance(value, kind_of) or not value:
            raise ExpectationsError(f"{where}: [[{kind}]] needs a non-empty {key!r}")
        return value

    extra = set(raw) - {"flows", "case", "reason"} - ENTRY_KEYS[kind]
    if extra:
        raise ExpectationsError(f"{where}: unknown key(s) {sorted(extra)} for [[{kind}]]")
    flows = need("flows", list)
    if not all(isinstance(f, str) and f for f in flows):
        raise ExpectationsError(f"{where}: 'flows' must be a list of flow name patterns")
    case, reason = need("case", str), need("reason", str)
    statuses = _statuses(raw.get("status"), where) if kind == "fail" else ()
    for flag in ("strict", "catch_all"):
        if not isinstance(raw.get(flag, False), bool):
            raise ExpectationsError(f"{where}: {flag!r} must be true or false")
    catch_all = raw.get("catch_all", False)
    if kind in CATCH_ALL_KINDS and is_catch_all(case) and not catch_all:
        raise ExpectationsError(
            f"{where}: [[{kind}]] case {case!r} matches every case of its flows: a catch-all "
            f"that would decide each one; name the cases, or say `catch_all = true` with "
            f"the reason it holds for all of them")
    if catch_all and not is_catch_all(case):
        raise ExpectationsError(f"{where}: 'catch_all = true' on case {case!r}, which names "
                                f"cases; remove it (it is for a case pattern of stars only)")
    rule = _rule(raw, where) if kind == "tolerance" else ()
    seeds_failed, seeds_swept = _history(raw, kind, where)
    dtype = raw.get("dtype")
    if dtype is not None and dtype not in DTYPE_NAMES:
        raise ExpectationsError(f"{where}: 'dtype' must be a dtype name such as \"float16\", "
                                f"got {dtype!r}")
    return Expectation(kind=kind, flows=tuple(flows), case=case, reason=reason,
                       statuses=statuses, source=where, dtype=dtype, rule=rule,
                       strict=raw.get("strict", True), catch_all=catch_all,
                       seeds_failed=seeds_failed, seeds_swept=seeds_swept)


# The kinds a sweep decides, and the fields in which the updater records that sweep.
SWEPT_KINDS = ("fail", "tolerance")
HISTORY_FIELDS = ("seeds_failed", "seeds_swept")


def _history(raw: dict, kind: str, where: str) -> tuple[int | None, int | None]:
    """(seeds_failed, seeds_swept), both or neither. An entry exists because a run saw
    its case fail, so at least one seed failed: 1 <= seeds_failed <= seeds_swept."""
    given = [key for key in HISTORY_FIELDS if key in raw]
    if not given:
        return None, None
    if len(given) == 1:
        raise ExpectationsError(f"{where}: [[{kind}]] sets {given[0]!r} without "
                                f"{next(k for k in HISTORY_FIELDS if k not in given)!r}: "
                                f"a sweep's figures are both or neither")
    failed, swept = raw["seeds_failed"], raw["seeds_swept"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (failed, swept)) \
            or not 1 <= failed <= swept:
        raise ExpectationsError(f"{where}: [[{kind}]] seeds_failed and seeds_swept must be "
                                f"integers with 1 <= seeds_failed <= seeds_swept, got "
                                f"{failed!r} and {swept!r}")
    return failed, swept


# Statuses no entry may declare: not a failure of the flow's program (fail_infra: the
# runner's device or its connection failed, which says nothing about the program).
UNDECLARABLE = frozenset({Status.XPASS, Status.FAIL_TEST, Status.ERROR, Status.FAIL_INFRA})
# Failures an entry covers only when it names them (an entry without statuses does not):
# a crash, a timeout, and a breached budget (the program is correct but costs too much;
# budgets.toml is where its limit is changed).
NAMED_ONLY = frozenset({Status.FAIL_CRASH, Status.FAIL_TIMEOUT, Status.FAIL_BUDGET})


def _statuses(value: Any, where: str) -> tuple[Status, ...]:
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
        if not is_non_negative_number(value) or (key == "bits" and not isinstance(value, int)):
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


def check_for_flow(expectations: Expectations, flow: str, base: Tolerance) -> None:
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


def shown_path(path: Path, root: Path | None) -> str:
    """How messages name a file: relative to `root` when it is under it."""
    return str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)


def load_backend(folder: Path, root: Path | None = None) -> Expectations:
    """The expectations of the backend in `folder` (empty when it has no file)."""
    path = folder / FILE_NAME
    return load(path, shown_path(path, root)) if path.is_file() else Expectations()


# ---------------------------------------------------------------- what the entries make of a test

@dataclass
class DeclaredOutcome:
    """What the declared entries make of a test's records, before its final outcome
    (`verdicts.Outcome`): None fields mean no change."""

    xfail_reason: str | None = None   # the test is an expected failure (pytest xfail)
    failure: str | None = None        # the test fails with this message


def judge(expectations: Expectations, flow: str, case: str,
          records: list[SubtestRecord]) -> DeclaredOutcome:
    """Apply the `fail` and `must_delegate` entries to a finished test's records (which
    are updated: the failing records a [[fail]] entry covers become xfail, a strict
    entry's unexpected pass makes the passing records xpass, an undelegated pass that must
    delegate fail_lower). A failing record the entry does not cover keeps its status and
    fails the test, whatever the others did. Every record rewritten keeps what the
    pipeline said in `observed_status`, and every record of a declared case names its
    entry."""
    declared = DeclaredOutcome()
    expected = expectations.failure(flow, case)
    if expected is not None:
        for record in records:
            record.declared_by, record.declared_strict = expected.source, expected.strict
        declared = _judge_failure(expected, records)
        if declared.xfail_reason or declared.failure:
            return declared
    must = expectations.must_delegate(flow, case)
    if must is not None:
        undelegated = [r for r in records if r.status is Status.PASS_UNDELEGATED]
        for record in undelegated:  # a failure of its own, not a rewritten verdict:
            record.status = Status.FAIL_LOWER  # a sweep sees it as the failure it is
            record.stage = "lower"
            record.error = (f"must be delegated ({must.source}: {must.reason}), but the "
                            f"partitioner took no node")
        if undelegated:
            declared.failure = undelegated[0].error
    return declared


# The stages a host that cannot run the program still checks: a case that ends
# lowered_not_run got past each of them.
CHECKED_BEFORE_RUN = frozenset({Status.FAIL_QUANTIZE, Status.FAIL_LOWER, Status.FAIL_SERIALIZE})


def _judge_failure(expected: Expectation, records: list[SubtestRecord]) -> DeclaredOutcome:
    """What a [[fail]] entry makes of a test's records (see `judge`)."""
    declared = DeclaredOutcome()
    kind = "" if expected.strict else "non-strict, "
    failing = [r for r in records if r.status in FAILING]
    uncovered = [r for r in failing if not expected.covers(r.status)]
    for record in failing:
        if expected.covers(record.status):
            rewrite_status(record, Status.XFAIL)
    if uncovered:
        named = "; ".join(f"subtest {r.subtest} ended {r.status}" for r in uncovered)
        declared.failure = (f"expected {expected.statuses_text} ({kind}{expected.source}), "
                           f"but {named}: that entry does not cover it; fix the regression, "
                           f"or name that status in the entry with its reason")
        return declared
    if failing:
        declared.xfail_reason = f"{expected.reason} ({kind}{expected.source})"
        return declared
    if not expected.strict:
        return declared
    if any(r.status in PASSING for r in records):
        for record in records:
            if record.status in PASSING:
                rewrite_status(record, Status.XPASS)
        declared.failure = (f"expected {expected.statuses_text} ({expected.source}), but it "
                           f"passed at this seed; {xpass_advice(expected, records)}")
        return declared
    not_run = [r for r in records if r.status is Status.LOWERED_NOT_RUN]
    if not_run and expected.statuses and set(expected.statuses) <= CHECKED_BEFORE_RUN:
        for record in not_run:
            rewrite_status(record, Status.XPASS)
        declared.failure = (f"expected {expected.statuses_text} ({expected.source}), but it "
                           f"quantized, lowered and serialized (this host has no runtime "
                           f"for it: lowered_not_run); {xpass_advice(expected, records)}")
    return declared


# How wide a sweep must be before a strict entry is trusted at any seed (and the advice
# an unexpected pass gives names a sweep this wide).
SWEEP_SEEDS = 10


def xpass_advice(expected: Expectation, records: list[SubtestRecord]) -> str:
    """What to do about a strict entry that did not fail here, read from the entry's own
    sweep history. Never "delete it": the entry exists because some run saw it fail, so
    one pass says the verdict moves with the inputs, or that the code changed; a sweep
    tells which (and `make update-expectations` then removes an entry that passes at
    every seed)."""
    if expected.swept_text is not None:
        return (f"the entry says it fails at {expected.swept_text}: make it non-strict or "
                f"sweep again")
    backend = records[0].backend if records else "<backend>"
    test = (records[0].test_case if records else "").split("::")[-1].split("[")[0]
    return (f"one run cannot tell: sweep it (make sweep BACKEND={backend} "
            f"SEEDS='<{SWEEP_SEEDS} seeds>' ARGS='-k {test or '<test>'}', then "
            f"make update-expectations BACKEND={backend} "
            f"UPDATE_FROM='reports/sweep/{backend}-seed*.json')")


def rewrite_status(record: SubtestRecord, status: Status) -> None:
    """Give a record the status an expectation decides, keeping the pipeline's own."""
    if record.observed_status is None:
        record.observed_status = record.status.value
    record.status = status
