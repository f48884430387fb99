"""How a flow judges its outputs: a small typed rule per precision, chosen by the flow's
recipe and refined per output dtype and per test case (expectations.toml `[[tolerance]]`).

- Floating point (fp32): every element within `atol + rtol*|ref| + range_fraction*range`,
  tight enough that an error of 1e-3 of the output's range fails.
- fp16 / bf16 outputs: the same bound with terms of the dtype's epsilon (2^-10, 2^-7),
  since eager itself computes in that dtype.
- Integer and bool outputs (indices, counts, masks): exact, in every flow, since
  any difference is a different answer rather than rounding.
- Quantized recipes (int8 and lower): the signal-to-quantization-noise ratio of the whole
  output against eager must reach `min_sqnr_db`, and every element must be within `steps`
  quantization steps, a step estimated as the output's range (zero included, as in any
  PT2E quantization range) over 2^bits - 1. SQNR catches a kernel that is wrong
  everywhere; the per-element bound catches one that is wrong in a few places (a flipped
  sign), and is wide enough for a healthy int8 result's outliers (about 18 steps for a
  Linear(1, 512) at SQNR 38 dB).

Torch-free (flows are built at collection time); the judging itself is in output_match.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable


@dataclass(frozen=True)
class Tolerance:
    """One output rule. `name` goes into the record (`verdict_rule`), so a reader knows
    which rule judged a subtest."""

    name: str = "fp32"
    atol: float = 1e-5
    rtol: float = 1e-4
    range_fraction: float = 2e-4
    # Quantized rules only (None for floating point): per-element bound in quantization
    # steps of `bits` bits, and the least SQNR in dB over each output.
    steps: float | None = None
    bits: int = 8
    min_sqnr_db: float | None = None
    # Backend fidelity (quantizing recipes only; case/fidelity.py): the backend's outputs
    # against its own quantized program run without it, in steps of each output's own
    # quantization (read from the graph's last dequantize). `fidelity_steps` (None: the
    # rule judges no fidelity) bounds every element; `fidelity_bias_steps` the mean
    # signed error (a zero point off); `fidelity_gain` the slope's distance from 1 (a
    # requantization multiplier off). An output computed in float after the last
    # dequantize (a dynamically quantized GEMM's) is judged in units of the reference's
    # own quantization error: every element within `fidelity_tail` times its largest,
    # the mean signed error within `fidelity_tail_bias` times its rms (a backend may
    # quantize activations more finely than the reference, e.g. per row).
    fidelity_steps: float | None = None
    fidelity_bias_steps: float = 0.25
    fidelity_gain: float = 0.01
    fidelity_tail: float = 1.5
    fidelity_tail_bias: float = 0.5
    # A decoder's next-token answer (steps whose logits the case names; None: not
    # judged): at every step, the least share of positions whose most likely token is
    # eager's, and the largest mean KL divergence from eager's distribution, in nats.
    min_top1_agreement: float | None = None
    max_next_token_kl: float | None = None

    @property
    def quantized(self) -> bool:
        return self.steps is not None or self.min_sqnr_db is not None

    @property
    def exact(self) -> bool:
        return not self.quantized and self.atol == self.rtol == self.range_fraction == 0

    def widened(self, other: "Tolerance", name: str) -> "Tolerance":
        """The looser of two rules in every term (a half-precision output of a quantized
        flow must hold the flow's rule and may use the dtype's epsilon)."""
        def looser(a: Any, b: Any, pick: Callable[[Any, Any], Any]) -> Any:
            return b if a is None else a if b is None else pick(a, b)

        return replace(
            self, name=name, atol=max(self.atol, other.atol), rtol=max(self.rtol, other.rtol),
            range_fraction=max(self.range_fraction, other.range_fraction),
            steps=looser(self.steps, other.steps, max), bits=min(self.bits, other.bits),
            min_sqnr_db=looser(self.min_sqnr_db, other.min_sqnr_db, min))

    def describe(self) -> str:
        """The rule in one line, e.g. `int8: SQNR >= 20 dB, |error| <= 32 steps`."""
        if self.exact:
            return f"{self.name}: equal elements"
        parts = []
        if self.min_sqnr_db is not None:
            parts.append(f"SQNR >= {self.min_sqnr_db:g} dB")
        if self.steps is not None:
            parts.append(f"|error| <= {self.steps:g} steps of range/{2**self.bits - 1}"
                         f" + {self.atol:g}")
        else:
            parts.append(f"|error| <= {self.atol:g} + {self.rtol:g}*|ref| + "
                         f"{self.range_fraction:g}*range")
        return f"{self.name}: " + ", ".join(parts)


RULE_FIELDS = tuple(f.name for f in fields(Tolerance) if f.name != "name")
# A [[tolerance]] entry may also scale the bound of whatever rule applies (atol, rtol,
# range_fraction and steps times `bound_scale`): what a seed sweep measures is the worst
# error in units of that bound (`error_ratio`), so the scale it writes is exact.
BOUND_SCALE = "bound_scale"
# The rule fields a bound is linear in: scaling a bound k times multiplies each by k.
LINEAR_BOUND_FIELDS = ("atol", "rtol", "range_fraction", "steps")
OVERRIDE_FIELDS = RULE_FIELDS + (BOUND_SCALE,)
# The widest a [[tolerance]] may make a bound: a worse error is a wrong answer on some
# inputs, not a precision gap (the expectations loader refuses more; the updater declares
# such a case non-strict instead).
MAX_BOUND_SCALE = 8.0

FP32 = Tolerance()
# Epsilon of the dtype (spacing of floats at 1.0): 1 eps absolute and of the range,
# 2 eps relative (one rounding in eager, one in the program).
FP16_EPS, BF16_EPS = 2.0 ** -10, 2.0 ** -7
FP16 = Tolerance("fp16", atol=FP16_EPS, rtol=2 * FP16_EPS, range_fraction=FP16_EPS)
BF16 = Tolerance("bf16", atol=BF16_EPS, rtol=2 * BF16_EPS, range_fraction=BF16_EPS)
DTYPE_RULES = {"float16": FP16, "bfloat16": BF16}
EXACT = Tolerance("exact", atol=0.0, rtol=0.0, range_fraction=0.0)
EXACT_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64",
                          "uint16", "uint32", "uint64"})


# A healthy XNNPACK int8 kernel is within one step of its quantized program (the
# measured distribution is in docs/measurements.md): two steps leave room for a rounding
# difference on each side of one requantization.
FIDELITY_STEPS = 2.0


def quantized_rule(name: str, *, min_sqnr_db: float, steps: float = 32, bits: int = 8,
                   atol: float = 1e-4, fidelity_steps: float | None = FIDELITY_STEPS
                   ) -> Tolerance:
    """A quantizing recipe's rule; rtol and range_fraction play no part (the step does).
    `steps` and `min_sqnr_db` judge the recipe's accuracy against fp32 eager;
    `fidelity_steps` the backend against its own quantized program (None: not judged, a
    recipe whose quantization happens outside PT2E)."""
    return Tolerance(name, atol=atol, rtol=0.0, range_fraction=0.0, steps=steps, bits=bits,
                     min_sqnr_db=min_sqnr_db, fidelity_steps=fidelity_steps)


INT8 = quantized_rule("int8", min_sqnr_db=20.0)


# Every dtype name the pinned torch has (test_expectations checks it against torch): what
# a [[tolerance]] entry's `dtype` may name, so a misspelt one is refused, not ignored.
DTYPE_NAMES = frozenset({
    "bool", "bfloat16", "float16", "float32", "float64", "complex32", "complex64",
    "complex128", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2", "int1", "int2", "int3", "int4", "int5", "int6",
    "int7", "int8", "int16", "int32", "int64", "uint1", "uint2", "uint3", "uint4", "uint5",
    "uint6", "uint7", "uint8", "uint16", "uint32", "uint64", "qint8", "qint32", "quint8",
    "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"})


def dtype_name(dtype: Any) -> str:
    """`torch.float16` -> `float16`, without importing torch."""
    return str(dtype).rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Override:
    """A `[[tolerance]]` entry of expectations.toml, already matched to a flow and case:
    the rule fields it sets, for one output dtype (None: every dtype)."""

    values: tuple            # ((field, value), ...)
    reason: str
    source: str              # "path:line"
    dtype: str | None = None


def judges_nothing(rule: Tolerance) -> str | None:
    """Why a rule's per-element bound is at least the output's own range (so no element
    can exceed it), or None. The range is what a quantization step and `range_fraction`
    are measured in; `atol` and `rtol` are not, so they cannot be compared here."""
    if rule.steps is not None and rule.steps >= 2 ** rule.bits - 1:
        return (f"an element bound of {rule.steps:g} steps is the whole output range "
                f"({2 ** rule.bits - 1} steps of {rule.bits} bits) or more")
    if rule.range_fraction >= 1:
        return (f"an element bound of {rule.range_fraction:g} x the output range is the "
                f"whole range or more")
    return None


@dataclass(frozen=True)
class RuleBook:
    """The rules one subtest is judged by: the flow's recipe rule, widened for a
    half-precision output (or exact for an integer or bool output), then the case's
    overrides (the first matching one wins)."""

    base: Tolerance = FP32
    overrides: tuple = ()
    # The float dtype the flow's recipe computes and returns in by design (a bf16 LLM
    # recipe: "bfloat16"), or None. A float output in it is the recipe's choice, not a
    # wrong answer: it is judged against the float reference by the rules above.
    recipe_float_dtype: str | None = None

    def for_dtype(self, dtype: Any) -> Tolerance:
        name = dtype_name(dtype)
        rule = EXACT if name in EXACT_DTYPES else self.base
        half = DTYPE_RULES.get(name)
        if half is not None:
            rule = rule.widened(half, f"{rule.name}/{half.name}" if rule.quantized else half.name)
        for override in self.overrides:
            if override.dtype in (None, name):
                values = dict(override.values)
                scale = values.pop(BOUND_SCALE, None)
                if scale is not None:
                    rule = replace(rule, **{
                        name: getattr(rule, name) * scale for name in LINEAR_BOUND_FIELDS
                        if getattr(rule, name) is not None})
                return replace(rule, name=f"{rule.name}, override {override.source}",
                               **values)
        return rule


def base_rule(rules: RuleBook | Tolerance) -> Tolerance:
    """The flow's recipe rule, whether the caller holds a whole RuleBook or one rule."""
    return rules.base if isinstance(rules, RuleBook) else rules
