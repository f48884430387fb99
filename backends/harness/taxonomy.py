"""The result vocabulary shared by the harness (which assigns statuses) and `tools/`
(which counts them). Torch-free on purpose: the summary tool imports it.

Every subtest ends as one record: a plain dict with the keys in `RECORD_FIELDS`.
"""

SCHEMA_VERSION = 1

# Key under which the plugin stores session facts (seed, versions, flows) in the JSON report.
REPORT_KEY = "etsuite"

PASS = "pass"
PASS_UNDELEGATED = "pass_undelegated"
LOWERED_NOT_RUN = "lowered_not_run"
FAIL_QUANTIZE = "fail_quantize"
FAIL_LOWER = "fail_lower"
FAIL_SERIALIZE = "fail_serialize"
FAIL_LOAD = "fail_load"
FAIL_RUN = "fail_run"
FAIL_MISMATCH = "fail_mismatch"
FAIL_CRASH = "fail_crash"
FAIL_TIMEOUT = "fail_timeout"
SKIP_INVALID = "skip_invalid"
SKIP_UNSUPPORTED = "skip_unsupported"
UNAVAILABLE = "unavailable"
XFAIL = "xfail"
XPASS = "xpass"

# Statuses in the order reports show them.
ALL_STATUSES = (
    PASS, PASS_UNDELEGATED, FAIL_QUANTIZE, FAIL_LOWER, FAIL_SERIALIZE, FAIL_LOAD,
    FAIL_RUN, FAIL_MISMATCH, FAIL_CRASH, FAIL_TIMEOUT, XFAIL, XPASS, LOWERED_NOT_RUN,
    SKIP_INVALID, SKIP_UNSUPPORTED, UNAVAILABLE,
)
PASSING = frozenset({PASS, PASS_UNDELEGATED})
FAILING = frozenset({
    FAIL_QUANTIZE, FAIL_LOWER, FAIL_SERIALIZE, FAIL_LOAD, FAIL_RUN, FAIL_MISMATCH,
    FAIL_CRASH, FAIL_TIMEOUT, XPASS,
})
SKIPPING = frozenset({LOWERED_NOT_RUN, SKIP_INVALID, SKIP_UNSUPPORTED, UNAVAILABLE})

# The pipeline stages, in order. A failing record names the stage that raised.
STAGES = ("eager", "quantize", "export", "lower", "serialize", "load", "run", "compare")
STAGE_FAILURE = {
    "quantize": FAIL_QUANTIZE,
    "lower": FAIL_LOWER,
    "serialize": FAIL_SERIALIZE,
    "load": FAIL_LOAD,
    "run": FAIL_RUN,
    "compare": FAIL_MISMATCH,
}

RECORD_FIELDS = (
    "test_id",        # pytest node id
    "test_case",      # node id without any parameters
    "subtest",        # index of the lower_and_run_model call within the test
    "suite",          # operators, models, or the backend's own folder
    "backend",
    "flow",
    "params",         # the test's other parameters, {name: id}
    "status",         # one of ALL_STATUSES
    "stage",          # failing stage (None when it did not fail)
    "error",          # trimmed error text
    "seed",           # the session seed (--seed) that reproduces the inputs
    "timings",        # {stage: seconds}
    "delegated_nodes",
    "undelegated_nodes",
    "delegated_ops",    # {op name: count}
    "undelegated_ops",  # {op name: count}
    "pte_size",       # bytes, None when not serialized
    "outputs",        # per output: {max_abs_error, mean_abs_error, sqnr_db}
    "repro",          # command that reproduces this record
)

ERROR_LIMIT = 1200


def trim_error(text: str, limit: int = ERROR_LIMIT) -> str:
    """Keep the head and the tail of long errors: the tail usually names the cause."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n[...]\n" + text[-half:]


def empty_record(**known) -> dict:
    record = {name: None for name in RECORD_FIELDS}
    record.update(params={}, timings={}, delegated_ops={}, undelegated_ops={}, outputs=[])
    unknown = set(known) - set(RECORD_FIELDS)
    if unknown:
        raise KeyError(f"not record fields: {sorted(unknown)}")
    record.update(known)
    return record
