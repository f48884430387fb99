"""Expectations as data: what a backend's flows are known to fail, skip, or must delegate,
each with its reason, in `backends/<name>/expectations.toml` beside its flows.py.

    [[fail]]                       # a known failure, strict about where it fails
    flows = ["xnnpack", "xnnpack_static_int8_*"]   # patterns on flow names: * and ? only
    case = "backends/suite/operators/test_pad.py::test_pad_negative*"  # on the case id
    status = "fail_run"            # the status it fails with (the stage follows from it)
    reason = "portable constant_pad_nd rejects negative padding (error 0x12)"

    [[skip]]                       # not run at all (skip_unsupported)
    [[must_delegate]]              # a pass_undelegated here is a failure (a silent fallback)
    [[tolerance]]                  # this case's outputs are judged by a changed rule
    flows = ["xnnpack_static_int8_*"]
    case = "backends/suite/operators/test_log_softmax.py::*"
    dtype = "float32"              # optional: only outputs of this dtype
    min_sqnr_db = 8                # rule fields (tolerance.RULE_FIELDS) replace the flow's
    reason = "int8 log of small probabilities saturates: a recipe limit, not a kernel bug"

The case id is the test's node id without the flow, with its other parameters, e.g.
`backends/suite/operators/test_add.py::test_add_dtype[float16]`. A failing case that
passes, or fails with another status, fails the run with a message that names the entry
(`file:line`) to change. `make update-expectations BACKEND=<name>` (`update_expectations.py`) rewrites the file from the last report, keeping
every reason written by hand.

Torch-free: read at collection time.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from etsuite.backends.harness.contract import (FAILING, PASSING, STREAM_SUFFIX, Status,
                                              SubtestRecord, case_id, ended_tests,
                                              error_headline, records_of_phases,
                                              stream_entries)
from etsuite.backends.harness.tolerance import OVERRIDE_FIELDS, Override

FILE_NAME = "expectations.toml"
KINDS = ("fail", "skip", "must_delegate", "tolerance")


class ExpectationsError(ValueError):
    """A malformed expectations file; the message names the file and the entry."""


def matches(pattern: str, text: str) -> bool:
    """`*` is any text and `?` one character; everything else is literal, so a case id's
    own brackets (`test_add[float16]`) need no escaping."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


@dataclass(frozen=True)
class Expectation:
    kind: str                      # one of KINDS
    flows: tuple[str, ...]         # patterns on flow names (see `matches`)
    case: str                      # pattern on the case id
    reason: str
    status: Status | None = None   # for "fail": the status it fails with (None: any)
    source: str = ""               # "path:line", for messages that say what to change
    dtype: str | None = None       # for "tolerance": the output dtype it is for (None: all)
    rule: tuple = ()               # for "tolerance": ((rule field, value), ...)
    # For "fail": strict (a pass or another status fails the run), or not (`strict =
    # false`: an input-dependent failure that may fail with its status or pass; never
    # fails a run by itself, and the summary lists it apart).
    strict: bool = True

    def applies(self, flow: str, case: str) -> bool:
        return matches(self.case, case) and any(matches(p, flow) for p in self.flows)


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
    status = None
    if kind == "fail":
        try:
            status = Status(need("status", str))
        except ValueError:
            raise ExpectationsError(f"{where}: unknown status {raw.get('status')!r}") from None
        if status not in FAILING or status in (Status.XPASS, Status.FAIL_TEST, Status.ERROR):
            raise ExpectationsError(f"{where}: status {status.value!r} is not a failure a flow "
                                    f"can be expected to have")
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
                       reason=need("reason", str), status=status, source=where,
                       dtype=dtype, rule=rule, strict=raw.get("strict", True))


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
        rule.append((key, value))
    if not rule:
        raise ExpectationsError(f"{where}: [[tolerance]] sets no rule field; known: "
                                f"{', '.join(OVERRIDE_FIELDS)}")
    return tuple(rule)


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
    are updated: an expected failure's failing records become xfail, a strict entry's
    unexpected pass makes the passing records xpass, an undelegated pass that must
    delegate fail_lower). Every record rewritten keeps what the pipeline said in
    `observed_status`, and every record of a declared case names its entry."""
    verdict = Verdict()
    expected = expectations.failure(flow, case)
    failing = [r for r in records if r.status in FAILING]
    if expected is not None:
        for record in records:
            record.declared_by, record.declared_strict = expected.source, expected.strict
        kind = "" if expected.strict else "non-strict, "
        if failing and expected.status in (None, failing[0].status):
            for record in failing:
                rewrite_status(record, Status.XFAIL)
            verdict.xfail_reason = f"{expected.reason} ({kind}{expected.source})"
            return verdict
        if failing:
            verdict.failure = (f"expected {expected.status or 'a failure'} ({kind}"
                               f"{expected.source}), got {failing[0].status}: change the "
                               f"status of that entry or fix the regression")
            return verdict
        if expected.strict and any(r.status in PASSING for r in records):
            for record in records:
                if record.status in PASSING:
                    rewrite_status(record, Status.XPASS)
            verdict.failure = (f"expected {expected.status} ({expected.source}), but it "
                               f"passed: delete that entry")
            return verdict
    must = expectations.must_delegate(flow, case)
    if must is not None:
        undelegated = [r for r in records if r.status is Status.PASS_UNDELEGATED]
        for record in undelegated:
            rewrite_status(record, Status.FAIL_LOWER)
            record.stage = "lower"
            record.error = (f"must be delegated ({must.source}: {must.reason}), but the "
                            f"partitioner took no node")
        if undelegated:
            verdict.failure = undelegated[0].error
    return verdict


def rewrite_status(record: SubtestRecord, status: Status) -> None:
    """Give a record the status an expectation decides, keeping the pipeline's own."""
    if record.observed_status is None:
        record.observed_status = record.status.value
    record.status = status


# ---------------------------------------------------------------- update from reports

@dataclass
class Observed:
    """Per (case, flow) of the reports: the failing status (None: it passed), the error's
    first line, and whether an existing entry already explained it (xfail)."""

    status: Status | None
    error: str = ""
    xfail: bool = False


def _tests_in(path: Path) -> list[tuple[str, list[dict]]]:
    """(node id, record dicts) of each test a JSON report holds, or each test a results
    stream (a killed or running session's `.partial.jsonl`) holds as finished."""
    text = path.read_text(encoding="utf-8")
    if not path.name.endswith(STREAM_SUFFIX):
        return [(test["nodeid"], (test.get("metadata") or {}).get("subtests", []))
                for test in json.loads(text).get("tests", [])]
    try:
        ended = ended_tests(stream_entries(text))
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return [(nodeid, records_of_phases(phases)) for nodeid, phases in ended.items()]


def observe(report_paths: list[Path], backend: str) -> dict[tuple[str, str], Observed]:
    seen: dict[tuple[str, str], Observed] = {}
    for path in report_paths:
        for nodeid, subtests in _tests_in(path):
            records = [SubtestRecord.from_dict(r) for r in subtests]
            records = [r for r in records if r.backend == backend and r.flow]
            if not records:
                continue
            flow = records[0].flow
            key = (case_id(nodeid, flow), flow)
            failing = [r for r in records if r.status in FAILING and r.status is not Status.XPASS]
            if any(r.status is Status.XFAIL for r in records):
                seen[key] = Observed(None, xfail=True)
            elif failing:
                first = failing[0]
                seen[key] = Observed(first.status, error_headline(first.error or ""))
            elif any(r.status in PASSING or r.status is Status.XPASS for r in records):
                seen[key] = Observed(None)
    return seen


def updated(current: Expectations, seen: dict[tuple[str, str], Observed],
            elsewhere: Expectations = Expectations()) -> Expectations:
    """The `fail` entries rewritten from what the reports saw, keeping hand-written
    reasons: an entry whose cases all passed goes, one whose cases fail with another
    status gets that status, a new failure gets an entry (its reason: the error's first
    line, to be edited). Skips and must_delegate entries are kept as they are. Failures
    that `elsewhere` (the flows' own entries, e.g. a host-dependent file) already
    declares get no entry here."""
    kept: list[Expectation] = []
    explained: set[tuple[str, str]] = {
        key for key in seen if elsewhere.failure(key[1], key[0]) is not None}
    for entry in current.entries:
        if entry.kind != "fail":
            kept.append(entry)
            continue
        matched = {key: obs for key, obs in seen.items() if entry.applies(key[1], key[0])}
        still = {key: obs for key, obs in matched.items() if obs.xfail or obs.status is not None}
        if matched and not still:
            continue  # every case it names passes now
        statuses = {obs.status for obs in still.values() if obs.status is not None}
        if len(statuses) == 1 and entry.status not in statuses:
            entry = replace(entry, status=statuses.pop())
        kept.append(entry)
        explained.update(still)
    new: dict[tuple[str, Status], list[str]] = {}
    errors: dict[tuple[str, Status], str] = {}
    for (case, flow), obs in sorted(seen.items()):
        if obs.status is None or (case, flow) in explained:
            continue
        new.setdefault((case, obs.status), []).append(flow)
        errors.setdefault((case, obs.status), obs.error or obs.status.value)
    for (case, status), flows in new.items():
        kept.append(Expectation(kind="fail", flows=tuple(sorted(flows)), case=case,
                                status=status, reason=f"TODO explain: {errors[(case, status)]}"))
    return Expectations(tuple(kept))


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dump(expectations: Expectations, backend: str) -> str:
    lines = [f"# Expectations of the {backend} flows: known failures (strict: a pass or another",
             "# status fails the run), skips, cases that must be delegated, tolerance overrides.",
             f"# Rewrite from the last report with: make update-expectations BACKEND={backend}",
             "# (reasons written by hand are kept; new entries say TODO explain)."]
    for kind in KINDS:
        for entry in (e for e in expectations.entries if e.kind == kind):
            lines += ["", f"[[{kind}]]",
                      f"flows = [{', '.join(_toml_string(f) for f in entry.flows)}]",
                      f"case = {_toml_string(entry.case)}"]
            if entry.status is not None:
                lines.append(f"status = {_toml_string(entry.status.value)}")
            if not entry.strict:
                lines.append("strict = false")
            if entry.dtype is not None:
                lines.append(f"dtype = {_toml_string(entry.dtype)}")
            lines += [f"{key} = {value!r}" for key, value in entry.rule]
            lines.append(f"reason = {_toml_string(entry.reason)}")
    return "\n".join(lines) + "\n"
