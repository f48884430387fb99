"""The typed subtest record, what the harness found for one `lower_and_run_model` call
and the report tools read, with its typed payloads (each output's error statistics, the
rerun of a failure) and the trimming of its error text. On disk the keys are the field
names, as `to_dict` writes them; `from_dict` reads records of every earlier version."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from etsuite.backends.harness.contract import shapes as sh
from etsuite.backends.harness.contract.statuses import TEST_ONLY, Status

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


@functools.lru_cache(maxsize=8192)  # a report names a few hundred ops, 100,000s of times
def is_quantize_bookkeeping(op_name: str) -> bool:
    """A quantize or dequantize node: it moves values between the float and the integer
    domain and computes nothing of the model's."""
    return op_name.startswith("quantized_decomposed.") or "quantize_per_" in op_name


def computing_ops(histogram: dict) -> int:
    """Nodes that compute, leaving out quantize/dequantize: a delegate holding only q/dq
    nodes has not taken the operator under test."""
    return sum(n for op, n in histogram.items() if not is_quantize_bookkeeping(op))


def _computing(histogram: dict) -> tuple[int, set]:
    """A histogram's computing nodes and the ops they are (q/dq left out), in one pass:
    a report asks this 100,000s of times."""
    nodes, ops = 0, set()
    for op, n in histogram.items():
        if n and not is_quantize_bookkeeping(op):
            nodes += n
            ops.add(op)
    return nodes, ops


def delegation_share(delegated_ops: dict, undelegated_ops: dict) -> tuple[float, float] | None:
    """The share of a lowered program's computing nodes that a delegate took, and of its
    distinct computing ops that a delegate took (an op some of whose nodes stayed outside
    counts as delegated); quantize/dequantize nodes are left out of both (bookkeeping, not
    compute). None when the program computes nothing."""
    inside, ops_in = _computing(delegated_ops)
    outside, ops_out = _computing(undelegated_ops)
    if inside + outside == 0:
        return None
    ops_all = ops_in | ops_out
    return inside / (inside + outside), len(ops_in) / len(ops_all)


def where_it_breaks(localization: dict | None) -> str | None:
    """A localized failure in a few words for the console, e.g. `aten.sin.default
    (model.py:12)`, the same with `inside delegate XnnpackBackend`, or, when no node was
    named, `inside delegate XnnpackBackend (sin..relu)`; None when it was not localized."""
    if not localization or not localization.get("localized"):
        return None
    delegate = localization.get("delegate")
    if localization.get("added"):  # a runtime op no exported node made
        follows = (localization.get("after") or {}).get("node")
        return f"{localization.get('target')} (added by the lowering, after {follows})"
    if localization.get("node"):
        where = localization.get("source") or localization.get("module")
        return f"{localization.get('target')}" + (f" ({where})" if where else "") \
            + (f" inside delegate {delegate}" if delegate else "")
    boundary = localization.get("boundary") or {}
    return f"inside delegate {delegate} ({boundary.get('first')}..{boundary.get('last')})"


def trim_error(text: str, limit: int = ERROR_LIMIT) -> str:
    """Keep the head and the tail of long errors: the tail usually names the cause."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n[...]\n" + text[-half:]


class RecordError(ValueError):
    """A record that does not follow the contract (unknown status or field type)."""


def _object(data: Any, what: str) -> dict:
    if not isinstance(data, dict):
        raise RecordError(f"{what} must be an object, got {type(data).__name__}")
    return data


@dataclass(frozen=True)
class OutputStatistics:
    """One output's error against eager PyTorch, measured where the program's outputs
    are compared (output_match.py). `judged` is False for an output no rule judged (its
    shape differs, or a report older than error ratios): its JSON has no `error_ratio`
    and no `rule`."""

    max_abs_error: float | None = None
    mean_abs_error: float | None = None
    sqnr_db: float | None = None       # None: no error at all (JSON has no infinity)
    # The max error in units of its rule's bound (1 is the bound); None when an exact
    # rule found elements that differ (a bound of zero has no ratio).
    error_ratio: float | None = None
    rule: str | None = None            # the name of the rule that judged it
    judged: bool = True

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"max_abs_error": self.max_abs_error,
                                "mean_abs_error": self.mean_abs_error, "sqnr_db": self.sqnr_db}
        if self.judged:
            data.update(error_ratio=self.error_ratio, rule=self.rule)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "OutputStatistics":
        data = _checked(data, _OUTPUT_SHAPE, "an output's statistics")
        return cls(max_abs_error=data.get("max_abs_error"),
                   mean_abs_error=data.get("mean_abs_error"), sqnr_db=data.get("sqnr_db"),
                   error_ratio=data.get("error_ratio"), rule=data.get("rule"),
                   judged="error_ratio" in data)


@dataclass(frozen=True)
class RerunResult:
    """How a failing subtest's program ended when run again in the same process: on the
    same inputs, and on other inputs of the same shapes drawn from `other_seed`."""

    same_inputs: Status
    other_inputs: Status
    other_seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"same_inputs": self.same_inputs.value, "other_inputs": self.other_inputs.value,
                "other_seed": self.other_seed}

    @classmethod
    def from_dict(cls, data: Any) -> "RerunResult":
        data = _checked(data, _RERUN_SHAPE, "a rerun")
        try:
            same, other, seed = data["same_inputs"], data["other_inputs"], data["other_seed"]
        except KeyError as missing:
            raise RecordError(f"a rerun without {missing}") from None
        try:
            return cls(Status(same), Status(other), seed)
        except ValueError:
            raise RecordError(f"a rerun with an unknown status ({same!r}, {other!r})") from None


@dataclass
class Subtest:
    """Which subtest a record is about, and its status."""

    test_id: str                       # pytest node id
    test_case: str                     # node id without any parameters
    subtest: int                       # index of the call within the test
    suite: str                         # operators, models, or the backend's own folder
    backend: str | None                # None only for a lost test that has no flow
    flow: str | None
    status: Status
    params: dict = field(default_factory=dict)           # the test's other parameters
    seed: int | None = None            # the session seed that reproduces the inputs


@dataclass
class Findings:
    """What running a case found, whoever ran it. The pipeline fills these fields
    (`case.pipeline.PipelineOutcome` is Findings with a status and a replay) and the record
    carries them, so a new finding is one field here and reaches both."""

    stage: str | None = None           # failing stage (None when it did not fail)
    error: str | None = None           # trimmed error text
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
    outputs: list[OutputStatistics] = field(default_factory=list)  # one per output
    verdict_rule: str | None = None    # the deciding output's rule, e.g. "int8: SQNR >= 20 dB, ..."
    margin: str | None = None          # by how much it passed or failed, "SQNR 31.2 dB, needs 20; ..."
    runtime: str | None = None         # what executed the program (None: nothing did)
    # What the outputs were judged against (case/fidelity.py): for a quantizing flow "quantized
    # program (...) run eagerly" beside fp32 eager, else "fp32 eager" with why no quantized
    # reference judged; None when nothing was compared.
    reference: str | None = None
    # Backend fidelity per flat output (None: not judged): {unit ("steps" of the output's
    # own quantization, the reference's rms error for a float tail, or "exact"), elements,
    # max, bias, gain, scale, zero_point, passed, problems}.
    fidelity: list | None = None
    # What executing the program cost where it ran, as the runner measured it (the native
    # runner, docs/reference/exchange-format.md; None: the runtime measured nothing): after
    # a first call whose outputs were judged, `calls`: [{method, iterations, median, p90,
    # min}] in seconds over that many timed calls; `peak_rss_bytes` of the executing
    # process; `planned_memory`: {method: [bytes of each memory-planned buffer]}.
    cost: dict | None = None
    # Stateful subtests only (`lower_and_run_steps`; None otherwise): how many steps ran
    # on the one loaded method, each step's max abs error per output, the first step that
    # failed (0-based; None: none did), the runtime's milliseconds per step (the first is
    # a prefill's, the rest per token for decode steps), and where the program updates its
    # mutable buffers: "delegate", "portable" (ops outside any delegate) or "mixed".
    # `step_sqnr_db`: each step's SQNR per output in dB (None: not comparable; a quantizing
    # recipe's floor is set from these).
    steps: int | None = None
    step_errors: list | None = None
    step_sqnr_db: list | None = None
    # A decoder's steps (`lower_and_run_steps(next_token_logits=k)`): per step, the share
    # of positions whose most likely next token is eager's (`step_top1`) and the mean KL
    # divergence of the program's next-token distribution from eager's, in nats
    # (`step_kl`): the task-level answer an LLM user reads, judged by the rule's
    # `min_top1_agreement` and `max_next_token_kl` where it sets them.
    step_top1: list | None = None
    step_kl: list | None = None
    failed_step: int | None = None
    step_ms: list | None = None
    state: str | None = None
    # A program of several methods (`lower_and_run_methods`): the method each step called.
    step_methods: list | None = None
    # Where a failure starts (None: not asked for, see --localize). A fail_mismatch
    # (case/localize.py): `method` ("intermediates"), `localized` (bool), `compared` (nodes
    # judged), `seconds`, `reference` (what each node was judged against: the exported
    # program, or for a quantized flow the fake-quantized one, run eagerly). A fail_lower,
    # fail_serialize, fail_load, fail_run or fail_crash (case/bisection.py; a crash by a
    # second process, isolation.localize_crash): `method` ("bisection over graph prefixes"),
    # `attempts` (prefixes tried), once localized `prefix` and `of` (the smallest failing
    # prefix's length, of the graph's computing nodes), and the node keys below without
    # `error`. When localized, `node` (the exported graph's node name; None for a delegate),
    # `target` (its op), `inputs` ([{shape, dtype}]), `source` ("file:line" of the user's
    # code, or None), `module` (its module path, or None), `error` (that node's output
    # statistics against its bound, as in `outputs`, plus `margin`); for a delegate call,
    # `delegate` (its backend id) and `boundary` ({first, last, nodes}: the exported nodes
    # it took), and, once the program lowered one node per delegate call named the node,
    # `within` (the first call's boundary) or else `inside` (why not), and `split_calls`
    # (the delegate calls of that lowering: only the culprit call's partition is split,
    # one call per node, the other partitions stay whole); when not localized,
    # `reason` ("not localized: <why>", or "could not compare: <why>" when the
    # intermediates covered too little to decide: nothing compared, the first node off the
    # rule depending on nodes never compared, or `uncovered` computing nodes the outputs
    # depend on; a mismatch is then bisected, its record keeping the intermediates' in
    # `tried`). When every compared node is within the rule, covering every computing
    # node, yet the program's outputs are off, the first runtime op with no debug handle
    # logged after the last compared value (one the lowering added, no exported node's):
    # `added` (True), `node` None, `target` (the runtime's name of the op), `after`
    # ({node, delegate}: the compared value it follows), `error` (the program's outputs').
    # When the run's ETDump could not be read (executorch 1.5.1 writes a malformed one
    # once it logs a float16 value), the intermediates' "could not compare" has
    # `unreadable` ([{op, node, why}]: each exported op with a float16 or bfloat16 output,
    # "its float16 value was unreadable: <why>"), and bisection goes on.
    # The intermediates' records say how nodes were tied to the exported program:
    # `matched_by` ("name" along the provenance chain, or "source": source line and module
    # path) for the named node, `matches` ({how: [nodes]}) for every compared one, and
    # `lowerings` (the program or its prefixes lowered to localize it, the minimal repro
    # aside: 1, 2 with the split, one more per halving of a culprit partition of more than
    # 8 nodes, plus the bisection's attempts). With a node named,
    # `repro`: that op lowered alone on its captured inputs (case/repro.py): {op, status,
    # reproduces (None: the op alone could not be exported or lowered), folder
    # (reports/repros/..., None past the cap)};
    # when it passes alone, `repro.subgraph`: the smallest failing window of the graph
    # ending at it (case/bisection.py `minimize`): {nodes, first, last, attempts, seconds,
    # folder} or {reason}.
    localization: dict | None = None


FINDINGS_FIELDS = tuple(f.name for f in fields(Findings))


@dataclass
class SubtestRecord(Findings, Subtest):
    """One `lower_and_run_model` call (or a crash, timeout or collection-time verdict that
    stands in for one), as the report tools read it: which subtest (`Subtest`), what was
    found (`Findings`), and what the harness made of it (below)."""

    # A fail_mismatch or fail_run is run again in the same process, once on the same
    # inputs and once on other inputs. None when it was not rerun.
    rerun: RerunResult | None = None
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
    # A fail_budget's breaches, one per limit it broke (flows/budgets.py): [{limit (e.g.
    # "max_pte_bytes"), measured, value (the limit), source ("budgets.toml:12")}], the
    # figures the error states, kept as data so a summary can rank them; None otherwise.
    budget_breaches: list | None = None

    def __post_init__(self) -> None:
        """A status, outputs and rerun given as their JSON values (a record read back by
        `from_dict`) become typed."""
        try:
            self.status = Status(self.status)
        except ValueError:
            raise RecordError(f"unknown status {self.status!r}") from None
        if self.status in TEST_ONLY:
            raise RecordError(f"status {self.status.value!r} is not a subtest status")
        if not isinstance(self.outputs, list):
            raise RecordError(f"outputs must be a list, got {type(self.outputs).__name__}")
        self.outputs = [o if isinstance(o, OutputStatistics) else OutputStatistics.from_dict(o)
                        for o in self.outputs]
        if self.rerun is not None and not isinstance(self.rerun, RerunResult):
            self.rerun = RerunResult.from_dict(self.rerun)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["outputs"] = [output.to_dict() for output in self.outputs]
        data["rerun"] = self.rerun.to_dict() if self.rerun is not None else None
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "SubtestRecord":
        """Read a record written by `to_dict`; unknown keys (a newer writer) are ignored,
        a missing identity or an unknown status raises RecordError."""
        data = _checked(data, _RECORD_SHAPE, "a record")
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as error:
            raise RecordError(str(error)) from None


RECORD_FIELDS = tuple(f.name for f in fields(SubtestRecord))

_NAMES, _COUNTS, _FLAG = sh.Maybe(sh.TEXT), sh.MapOf(sh.INTEGER), sh.Maybe(sh.BOOLEAN)
_INTEGER, _SECONDS = sh.Maybe(sh.INTEGER), sh.Maybe(sh.FINITE)
_STEP_VALUES = sh.Maybe(sh.ListOf(sh.ListOf(sh.Maybe(sh.NUMBER))))  # per step, per output
# What each field of a record read from a file must be: every value a tool computes with
# or shows is typed here, once (`SubtestRecord.from_dict`); `status`, `outputs` and
# `rerun` are typed by their own readers.
RECORD_SHAPES = {
    "test_id": sh.TEXT, "test_case": sh.TEXT, "subtest": sh.INTEGER, "suite": sh.TEXT,
    "backend": _NAMES, "flow": _NAMES, "params": sh.MapOf(sh.ANYTHING), "seed": _INTEGER,
    "stage": _NAMES, "error": _NAMES, "timings": sh.MapOf(sh.FINITE),
    "delegated_nodes": _INTEGER, "undelegated_nodes": _INTEGER,
    "delegated_ops": _COUNTS, "undelegated_ops": _COUNTS, "delegated_precision": _NAMES,
    "pte_size": _INTEGER, "verdict_rule": _NAMES, "margin": _NAMES, "runtime": _NAMES,
    "cost": sh.Maybe(sh.Fields({
        "calls": sh.Maybe(sh.ListOf(sh.Fields({
            "method": sh.ANYTHING, "iterations": _INTEGER, "median": _SECONDS, "p90": _SECONDS,
            "min": _SECONDS}))),
        "peak_rss_bytes": _INTEGER, "planned_memory": sh.Maybe(sh.MapOf(sh.ListOf(sh.INTEGER)))})),
    "steps": _INTEGER, "step_errors": _STEP_VALUES, "step_sqnr_db": _STEP_VALUES,
    "step_top1": sh.Maybe(sh.ListOf(sh.Maybe(sh.FINITE))),
    "step_kl": sh.Maybe(sh.ListOf(sh.Maybe(sh.FINITE))),
    "failed_step": _INTEGER, "step_ms": sh.Maybe(sh.ListOf(_SECONDS)), "state": _NAMES,
    "step_methods": sh.Maybe(sh.ListOf(sh.ANYTHING)),
    "localization": sh.Maybe(sh.Fields({
        "localized": _FLAG, "reason": _NAMES, "boundary": sh.Maybe(sh.OBJECT), "added": _FLAG,
        "repro": sh.Maybe(sh.Fields({
            "op": sh.TEXT, "folder": _NAMES, "reproduces": _FLAG,
            "subgraph": sh.Maybe(sh.Fields({"folder": _NAMES, "first": sh.TEXT,
                                            "last": sh.TEXT}))}))})),
    "flaky": _FLAG, "artifacts": _NAMES, "repro": _NAMES, "observed_status": _NAMES,
    "declared_by": _NAMES, "declared_strict": _FLAG, "crash_dump": _NAMES,
    "budget_breaches": sh.Maybe(sh.ListOf(sh.Fields({
        "limit": sh.TEXT, "measured": sh.FINITE, "value": sh.FINITE, "source": _NAMES}))),
}
_RECORD_SHAPE = sh.Fields(RECORD_SHAPES)
_RERUN_SHAPE = sh.Fields({"other_seed": sh.INTEGER})
_OUTPUT_SHAPE = sh.Fields({
    "max_abs_error": sh.Maybe(sh.NUMBER), "mean_abs_error": sh.Maybe(sh.NUMBER),
    "sqnr_db": sh.Maybe(sh.NUMBER), "error_ratio": sh.Maybe(sh.NUMBER), "rule": _NAMES})


def _checked(data: Any, shape: sh.Fields, what: str) -> dict:
    """`data` as an object whose known fields have their shapes (RecordError otherwise)."""
    data = _object(data, what)
    if sh.surely_holds(data, shape):
        return data  # the common case, in one call; the loop below decides the others
    for name, inner in shape.fields.items():
        if name in data:
            try:
                sh.check(data[name], inner, repr(name))
            except sh.ShapeError as error:
                raise RecordError(f"field {error}") from None
    return data
