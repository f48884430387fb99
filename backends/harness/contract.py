"""The contract between the harness (which writes results) and the report tools (which
read them): the ordered status vocabulary, the typed subtest record, the session facts
and the results-stream format. Torch-free and dependency-free on purpose: the report tools
import this module and nothing else of the harness, and the harness imports nothing of
the tools.

A status travels as a field of a record (or of a stream line), never as text to parse.
"""

from __future__ import annotations

import enum
import json
import shlex
from dataclasses import asdict, dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 1

# Key under which the plugin stores the session facts in the JSON report.
REPORT_KEY = "etsuite"


class Status(str, enum.Enum):
    """Every status a test or subtest can have, in the order reports show them.

    Subtest records use all but `TEST_ONLY`; those three exist for outcomes no subtest
    describes (an assert outside any subtest, a setup error, a plain pytest skip)."""

    PASS = "pass"
    PASS_UNDELEGATED = "pass_undelegated"
    FAIL_QUANTIZE = "fail_quantize"
    FAIL_LOWER = "fail_lower"
    FAIL_SERIALIZE = "fail_serialize"
    FAIL_LOAD = "fail_load"
    FAIL_RUN = "fail_run"
    FAIL_MISMATCH = "fail_mismatch"
    FAIL_CRASH = "fail_crash"
    FAIL_TIMEOUT = "fail_timeout"
    FAIL_TEST = "fail_test"
    ERROR = "error"
    XPASS = "xpass"
    XFAIL = "xfail"
    SKIP_INVALID = "skip_invalid"
    SKIP_UNSUPPORTED = "skip_unsupported"
    SKIP = "skip"
    LOWERED_NOT_RUN = "lowered_not_run"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return ORDER[self]

    @property
    def passing(self) -> bool:
        return self in PASSING

    @property
    def failing(self) -> bool:
        return self in FAILING


ORDER = {status: index for index, status in enumerate(Status)}
TEST_ONLY = frozenset({Status.FAIL_TEST, Status.ERROR, Status.SKIP})
PASSING = frozenset({Status.PASS, Status.PASS_UNDELEGATED})
FAILING = frozenset({
    Status.FAIL_QUANTIZE, Status.FAIL_LOWER, Status.FAIL_SERIALIZE, Status.FAIL_LOAD,
    Status.FAIL_RUN, Status.FAIL_MISMATCH, Status.FAIL_CRASH, Status.FAIL_TIMEOUT,
    Status.FAIL_TEST, Status.ERROR, Status.XPASS,
})
SKIPPING = frozenset({
    Status.SKIP_INVALID, Status.SKIP_UNSUPPORTED, Status.SKIP, Status.LOWERED_NOT_RUN,
    Status.UNAVAILABLE,
})

# The pipeline stages in the order they run. A failing record names the stage that raised;
# eager and export failures are the test's own fault (skip_invalid).
STAGES = ("eager", "export", "quantize", "lower", "serialize", "load", "run", "compare")
STAGE_FAILURE = {
    "eager": Status.SKIP_INVALID,
    "export": Status.SKIP_INVALID,
    "quantize": Status.FAIL_QUANTIZE,
    "lower": Status.FAIL_LOWER,
    "serialize": Status.FAIL_SERIALIZE,
    "load": Status.FAIL_LOAD,
    "run": Status.FAIL_RUN,
    "compare": Status.FAIL_MISMATCH,
}

ERROR_LIMIT = 1200


# Joins an error to the errors it was raised from in a record's `error`, root cause last.
CAUSE_SEPARATOR = "\ncaused by: "


def error_headline(error: str) -> str:
    """One line for a record's error: the root cause of a chained error (its last
    "caused by:" part), else the error's first line. An exception whose message starts on
    a new line ("SpecViolationError: " then the text) gets that text's first line."""
    root = error.rsplit(CAUSE_SEPARATOR, 1)[-1].strip()
    lines = [line.strip() for line in root.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def trim_error(text: str, limit: int = ERROR_LIMIT) -> str:
    """Keep the head and the tail of long errors: the tail usually names the cause."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n[...]\n" + text[-half:]


class RecordError(ValueError):
    """A record that does not follow the contract (unknown status or field type)."""


@dataclass
class SubtestRecord:
    """One `lower_and_run_model` call (or a crash, timeout or collection-time verdict that
    stands in for one): what the harness found, as the report tools read it."""

    test_id: str                       # pytest node id
    test_case: str                     # node id without any parameters
    subtest: int                       # index of the call within the test
    suite: str                         # operators, models, or the backend's own folder
    backend: str | None                # None only for a lost test that has no flow
    flow: str | None
    status: Status
    params: dict = field(default_factory=dict)           # the test's other parameters
    stage: str | None = None           # failing stage (None when it did not fail)
    error: str | None = None           # trimmed error text
    seed: int | None = None            # the session seed that reproduces the inputs
    timings: dict = field(default_factory=dict)          # {stage: seconds}
    delegated_nodes: int | None = None
    undelegated_nodes: int | None = None
    delegated_ops: dict = field(default_factory=dict)    # {op name: count}
    # Quantizing flows only: how the delegated computation ran, "quantized" (q/dq around
    # every delegated op), "float" (the quantizer left it in floating point) or "mixed";
    # None when nothing was delegated or the flow does not quantize.
    delegated_precision: str | None = None
    undelegated_ops: dict = field(default_factory=dict)  # {op name: count}
    pte_size: int | None = None        # bytes, None when not serialized
    # per output: max/mean abs error, SQNR, error_ratio (max error in units of its bound)
    # and the rule that judged it
    outputs: list = field(default_factory=list)
    verdict_rule: str | None = None    # the deciding output's rule, e.g. "int8: SQNR >= 20 dB, ..."
    margin: str | None = None          # by how much it passed or failed, "SQNR 31.2 dB, needs 20; ..."
    runtime: str | None = None         # what executed the program (None: nothing did)
    # A fail_mismatch or fail_run is run again in the same process, once on the same
    # inputs and once on other inputs: {"same_inputs": status, "other_inputs": status,
    # "other_seed": seed}. None when it was not rerun.
    rerun: dict | None = None
    # True when the failure did not reproduce on the same inputs. A flaky subtest keeps
    # its failing status (a flaky case never passes silently); the report lists it apart.
    flaky: bool | None = None
    # Folder holding this subtest's .pte, inputs (.bin + manifest.json, and .pt) and
    # eager/runtime outputs, relative to where pytest ran; None: none written (not asked
    # for, nothing ran, or the run's artifact cap was reached).
    artifacts: str | None = None
    repro: str | None = None           # command that reproduces this record
    # The status the pipeline gave before a declared expectation rewrote it (an xfail's
    # fail_mismatch, an xpass's pass); None when no entry changed it. A seed sweep reads
    # this, so a declared failure still says what it did at each seed.
    observed_status: str | None = None
    # The [[fail]] entry of expectations.toml that names this case ("path:line"), and
    # whether it is strict (a pass fails the run) or non-strict (input-dependent: it may
    # fail with its status or pass, and never fails a run by itself).
    declared_by: str | None = None
    declared_strict: bool | None = None
    # A crashed test's last words: what faulthandler wrote as the process died (each
    # thread's Python stack, the extension modules loaded), trimmed; kept here rather
    # than printed on the console.
    crash_dump: str | None = None

    def __post_init__(self):
        try:
            self.status = Status(self.status)
        except ValueError:
            raise RecordError(f"unknown status {self.status!r}") from None
        if self.status in TEST_ONLY:
            raise RecordError(f"status {self.status.value!r} is not a subtest status")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "SubtestRecord":
        """Read a record written by `to_dict`; unknown keys (a newer writer) are ignored,
        a missing identity or an unknown status raises RecordError."""
        if not isinstance(data, dict):
            raise RecordError(f"a record must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as error:
            raise RecordError(str(error)) from None


RECORD_FIELDS = tuple(f.name for f in fields(SubtestRecord))


# ---------------------------------------------------------------- test identity

def test_case_id(nodeid: str) -> str:
    """The node id without any parameters: the operator/model case across flows."""
    return nodeid.split("[", 1)[0]


def param_ids(nodeid: str) -> list[str]:
    """The parameter ids in a node id's brackets, split at "-" ([] when it has none).
    A flow name never contains "-", so finding the flow among them is exact."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return []
    return nodeid[nodeid.index("[") + 1:-1].split("-")


def case_id(nodeid: str, flow: str | None) -> str:
    """The node id without the flow among its parameter ids: the same for every flow."""
    rest = [p for p in param_ids(nodeid) if p != flow]
    base = test_case_id(nodeid)
    return f"{base}[{'-'.join(rest)}]" if rest else base


def repro_command(tox_env: str | None, nodeid: str, seed: int | None) -> str:
    """One command, pasted at the repository root, that reruns exactly this test: through
    the backend's tox environment when it has one, else plain pytest."""
    target = shlex.quote(nodeid)
    seed_option = f" --seed {seed}" if seed is not None else ""
    if tox_env:
        return (f"tox -e {tox_env} -- {target}{seed_option} -n 0 "
                f"--json-report-file=reports/repro/last.json")
    return f"pytest {target}{seed_option} -p no:xdist"


# ---------------------------------------------------------------- session facts

# Where a session's seed came from (`seed_policy` in the session facts).
SEED_POLICIES = {
    "option": "given with --seed",
    "pinned": "$ETSUITE_SEED, e.g. CI's .ci/seed",
    "resumed": "the killed run's seed (--resume)",
    "run": "derived from the run id and selection (shards of one run share it)",
    "random": "drawn at random",
}


def session_facts(seed: int, versions: dict, flows: dict, run: dict | None = None,
                  seed_policy: str | None = None) -> dict:
    """The facts stored once per report: under REPORT_KEY in the JSON report and in the
    stream's first line. `flows` maps each known flow to backend, description, whether
    this run selected it, its tox environment (None: run it with pytest) and why it cannot
    run here (None: it can, or it was not probed because not selected). `run` is the
    run's identity and its shard (`run_facts`)."""
    facts = {"schema_version": SCHEMA_VERSION, "seed": seed, "versions": versions, "flows": flows}
    if seed_policy is not None:
        facts["seed_policy"] = seed_policy  # a key of SEED_POLICIES
    if run is not None:
        facts["run"] = run
    return facts


def run_facts(run_id: str, selection: str, shard: tuple[int, int] | None = None,
              plan: dict | None = None) -> dict:
    """Who a report belongs to. Shards of one run share `id` (ETSUITE_RUN_ID, the CI run,
    or "local") and `selection` (what was asked for: backends or flows, paths, -k, -m), so
    the report tools can put them together and name a missing one. `shard` is (K, N);
    `plan` (known once the items are collected) holds the whole selection's item count
    and digest, which shard plan was used and the predicted seconds of every shard."""
    return {"id": run_id, "selection": selection,
            "shard": shard[0] if shard else None, "shards": shard[1] if shard else None,
            "plan": plan}


# ---------------------------------------------------------------- recorded durations

# `backends/<name>/durations.json`: seconds per node id from earlier reports, written by
# the report tools (`make update-durations`), read by the harness to balance shards.
DURATIONS_FILE = "durations.json"
DURATIONS_VERSION = 1


def durations_document(backend: str, durations: dict[str, float], sources: list[str]) -> dict:
    return {"version": DURATIONS_VERSION, "backend": backend, "sources": sources,
            "durations": {nodeid: round(durations[nodeid], 3) for nodeid in sorted(durations)}}


def durations_of(document) -> dict[str, float]:
    """The seconds per node id of a durations document; ValueError when it is not one."""
    if not isinstance(document, dict) or document.get("version") != DURATIONS_VERSION:
        raise ValueError(f"not a durations file of version {DURATIONS_VERSION}")
    durations = document.get("durations")
    if not isinstance(durations, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            for v in durations.values()):
        raise ValueError("'durations' must map node ids to seconds (non-negative numbers)")
    return {str(k): float(v) for k, v in durations.items()}


# ---------------------------------------------------------------- results stream

# Next to `reports/X.json` a running session appends one JSON object per line to
# `reports/X.partial.jsonl`. Line kinds, each an object with one of these keys:
REPORT_SUFFIX = ".json"
STREAM_SUFFIX = ".partial.jsonl"
STREAM_HEADER = "etsuite_stream"   # first line: {STREAM_HEADER: version, "facts", "started", "args"}
STREAM_START = "start"             # {"start": nodeid} when a test starts
STREAM_REPORT = "report"           # {"report": {nodeid, when, outcome, duration, wasxfail, longrepr, records}}
STREAM_COLLECT_ERROR = "collect_error"  # {"collect_error": {nodeid, longrepr}}
STREAM_FINISHED = "finished"       # {"finished": exitstatus} at a clean end


def phase_category(when: str, phase: dict) -> str:
    """pytest's category of one phase report (setup, call or teardown), as
    pytest_report_teststatus says it: passed, failed, error, skipped, xfailed, xpassed."""
    outcome, wasxfail = phase.get("outcome"), phase.get("wasxfail")
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if wasxfail is not None:
        return "xfailed" if outcome == "skipped" else "xpassed"
    return outcome


def outcome_of_phases(phases: dict) -> str:
    """A test's outcome from its phase reports ({when: report}): the last phase that did
    not pass decides, as in pytest-json-report."""
    outcome = "passed"
    for when in ("setup", "call", "teardown"):
        if when in phases:
            category = phase_category(when, phases[when])
            if category != "passed":
                outcome = category
    return outcome


def test_ended(phases: dict) -> bool:
    """Whether a test's phase reports ({when: report}) show it ended: pytest reported its
    teardown, or the isolation reported its lost child (a crash or a timeout: one call
    report, no setup). A test that was running when the session died has neither."""
    return "teardown" in phases or ("call" in phases and "setup" not in phases)


def stream_entries(text: str) -> list:
    """The JSON objects of a results stream's lines. The last line may be cut short (the
    writer was killed mid-line) and is dropped; any other bad line is a ValueError."""
    lines, entries = text.splitlines(), []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number == len(lines):
                break
            raise ValueError(f"line {number} is not valid JSON: {error.msg}") from None
    return entries


def ended_tests(entries: list) -> dict[str, dict]:
    """{node id: {when: report}} of the tests a stream shows ended (`test_ended`)."""
    phases: dict[str, dict] = {}
    for entry in entries:
        report = entry.get(STREAM_REPORT) if isinstance(entry, dict) else None
        if isinstance(report, dict) and isinstance(report.get("nodeid"), str):
            phases.setdefault(report["nodeid"], {})[report.get("when")] = report
    return {nodeid: by_when for nodeid, by_when in phases.items() if test_ended(by_when)}


def records_of_phases(phases: dict) -> list:
    """A test's record dicts: those of the phase report that carries the most."""
    return max((phase.get("records") or [] for phase in phases.values()), key=len, default=[])


def stream_path_for(json_report_path: str) -> str:
    base = json_report_path[:-len(REPORT_SUFFIX)] if json_report_path.endswith(REPORT_SUFFIX) \
        else json_report_path
    return base + STREAM_SUFFIX
