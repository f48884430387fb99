"""The status vocabulary, in the order reports show it, and which stage's failure gives
which status. A status travels as a field of a record (or of a stream line), never as
text to parse."""

from __future__ import annotations

import enum


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
    # A quantizing flow's backend computes its quantized program faithfully, but that
    # program (the recipe's quantization) is too far from fp32 eager (case/fidelity.py).
    FAIL_RECIPE_ACCURACY = "fail_recipe_accuracy"
    FAIL_BUDGET = "fail_budget"      # correct, but it costs more than its budget allows
    FAIL_CRASH = "fail_crash"
    FAIL_TIMEOUT = "fail_timeout"
    FAIL_INFRA = "fail_infra"        # the machinery, not the program: a lost runner device
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
    Status.FAIL_RUN, Status.FAIL_MISMATCH, Status.FAIL_RECIPE_ACCURACY, Status.FAIL_BUDGET,
    Status.FAIL_CRASH, Status.FAIL_TIMEOUT, Status.FAIL_INFRA, Status.FAIL_TEST, Status.ERROR, Status.XPASS,
})
# Ran and compared, and an output left its rule: the statuses a [[tolerance]] can explain.
OUT_OF_RULE = frozenset({Status.FAIL_MISMATCH, Status.FAIL_RECIPE_ACCURACY})
SKIPPING = frozenset({
    Status.SKIP_INVALID, Status.SKIP_UNSUPPORTED, Status.SKIP, Status.LOWERED_NOT_RUN,
    Status.UNAVAILABLE,
})

# The pipeline stages in the order they run. A failing record names the stage that raised;
# eager and export failures are the test's own fault (skip_invalid). `transform` is a
# recipe's source transformation of the model before export (an LLM recipe's custom ops,
# weight-only or 8da4w quantization, its dtype): the recipe's own quantizing stage.
STAGES = ("eager", "transform", "export", "quantize", "lower", "serialize", "load", "run",
          "compare")
STAGE_FAILURE = {
    "eager": Status.SKIP_INVALID,
    "export": Status.SKIP_INVALID,
    "transform": Status.FAIL_QUANTIZE,
    "quantize": Status.FAIL_QUANTIZE,
    "lower": Status.FAIL_LOWER,
    "serialize": Status.FAIL_SERIALIZE,
    "load": Status.FAIL_LOAD,
    "run": Status.FAIL_RUN,
    "compare": Status.FAIL_MISMATCH,
}
