"""Whether a program's outputs match eager PyTorch under the flow's rule (tolerance.py):
the same number, shapes and dtypes first, then the values, with per-output error
statistics (max/mean abs error, SQNR, error in units of the bound) and one line that says
which rule judged and by how much it passed or failed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

from etsuite.backends.harness.contract.record import OutputStatistics
from etsuite.backends.harness.flows.tolerance import RuleBook, Tolerance


@dataclass
class Comparison:
    matched: bool
    message: str
    statistics: list[OutputStatistics]  # one per output
    rule: str | None = None    # the rule that judged the deciding output
    margin: str | None = None  # by how much it passed or failed, e.g. "SQNR 31.2 dB, needs 25"


def flatten_tensors(value: Any) -> list:
    leaves, _ = pytree.tree_flatten(value)
    return leaves


def flat_inputs(inputs: Any) -> list:
    """A program's inputs as the runtime takes them: flat, contiguous tensors."""
    return [t.contiguous() if isinstance(t, torch.Tensor) else t for t in flatten_tensors(inputs)]


def _sqnr(signal: float, noise: float) -> float | None:
    """None means undefined (no error at all): JSON has no infinity. A zero reference
    with an error is -inf, reported as a very low number."""
    if noise <= 0:
        return None
    if signal <= 0:
        return -999.0
    return 10 * math.log10(signal / noise)


@dataclass
class _Judged:
    statistics: OutputStatistics
    passed: bool
    sqnr_short: bool    # the SQNR is under the rule's least
    text: str           # the margin, e.g. "SQNR 31.2 dB, needs 20; max error 0.4 of bound"


def _judge(expected: torch.Tensor, actual: torch.Tensor, rule: Tolerance) -> _Judged:
    ref = expected.detach().to(torch.float64)
    got = actual.detach().to(torch.float64)
    finite = torch.isfinite(ref) & torch.isfinite(got)
    same_special = (torch.isnan(ref) & torch.isnan(got)) | ((ref == got) & ~torch.isfinite(ref))
    values = ref[torch.isfinite(ref)]
    if rule.quantized:  # a PT2E quantization range always holds zero
        low, high = (min(float(values.min()), 0.0), max(float(values.max()), 0.0)) \
            if values.numel() else (0.0, 0.0)
        bound = rule.atol + (rule.steps or 0.0) * (high - low) / (2 ** rule.bits - 1) \
            + torch.zeros_like(ref)
    else:
        value_range = float(values.max() - values.min()) if values.numel() else 0.0
        bound = rule.atol + rule.range_fraction * value_range + rule.rtol * ref.abs()
    error = (got - ref).abs()
    within = (error <= bound) | same_special
    ratio = (error / bound.clamp_min(1e-30))[finite]
    error = error[finite]
    sqnr = _sqnr(float((ref[finite] ** 2).sum()), float((error ** 2).sum())) \
        if error.numel() else None
    measured = round(float(ratio.max()), 4) if ratio.numel() else 0.0
    error_ratio: float | None = measured  # None below for an exact rule that failed
    min_sqnr_db = rule.min_sqnr_db if expected.is_floating_point() else None
    checks_sqnr = min_sqnr_db is not None
    sqnr_short = min_sqnr_db is not None and sqnr is not None and sqnr < min_sqnr_db
    if rule.exact:  # a bound of zero has no ratio: count the elements that differ
        differ = int((~within).sum())
        error_ratio = 0.0 if differ == 0 else None
        text = f"{differ} of {ref.numel()} elements differ"
    elif rule.steps is not None:
        text = f"max error {measured * rule.steps:.3g} steps, bound {rule.steps:g}"
    else:
        text = f"max error {measured:.3g}x its bound"
    if checks_sqnr:
        shown = "no error" if sqnr is None else f"{sqnr:.1f} dB"
        text = f"SQNR {shown}, needs {rule.min_sqnr_db:g}; " + text
    # The statistics cover finite elements only: say when nan/inf ones differ too.
    special = int((~within & ~finite).sum())
    if special:
        text += f"; {special} nan/inf elements differ"
    statistics = OutputStatistics(
        max_abs_error=float(error.max()) if error.numel() else 0.0,
        mean_abs_error=float(error.mean()) if error.numel() else 0.0,
        sqnr_db=None if sqnr is None else round(sqnr, 3),
        error_ratio=error_ratio, rule=rule.name)
    return _Judged(statistics, bool(within.all()) and not sqnr_short, sqnr_short, text)


def _ratio(judged: _Judged) -> float:
    """Error in units of the bound; a failed exact comparison has none and ranks worst."""
    ratio = judged.statistics.error_ratio
    return math.inf if ratio is None else ratio


def _dtype_name(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def compare_outputs(expected: Any, actual: list, rules: RuleBook | Tolerance) -> Comparison:
    """Judge each output by the rule for its dtype; the margin named is the worst
    output's (the first failing one, else the one nearest its bound)."""
    book = rules if isinstance(rules, RuleBook) else RuleBook(rules)
    expected_leaves = [t for t in flatten_tensors(expected) if isinstance(t, torch.Tensor)]
    actual = [t for t in actual if isinstance(t, torch.Tensor)]
    if len(expected_leaves) != len(actual):
        return Comparison(
            False, f"expected {len(expected_leaves)} outputs, runtime returned {len(actual)}", []
        )
    statistics, problems, deciding = [], [], None
    for index, (ref, got) in enumerate(zip(expected_leaves, actual, strict=True)):
        if ref.shape != got.shape:
            statistics.append(OutputStatistics(judged=False))
            problems.append(f"output {index}: shape {tuple(got.shape)} != expected {tuple(ref.shape)}")
            continue
        if ref.dtype != got.dtype and ref.is_floating_point() \
                and _dtype_name(got) == book.recipe_float_dtype:
            got = got.to(ref.dtype)  # the recipe's own precision: its rule judges the values
        if ref.dtype != got.dtype:  # equal values in another dtype are still a wrong answer
            statistics.append(OutputStatistics(judged=False))
            problems.append(f"output {index}: dtype {_dtype_name(got)} != expected "
                            f"{_dtype_name(ref)}")
            continue
        rule = book.for_dtype(ref.dtype)
        judged = _judge(ref, got, rule)
        statistics.append(judged.statistics)
        worse = deciding is None or (deciding[1].passed and not judged.passed) or (
            deciding[1].passed == judged.passed
            and _ratio(judged) > _ratio(deciding[1]))
        if worse:
            deciding = (rule, judged, index)
        if not judged.passed:
            stats = judged.statistics
            problems.append(
                f"output {index}: {judged.text} ({rule.describe()}); max abs error "
                f"{stats.max_abs_error:.6g}, mean {stats.mean_abs_error:.6g}, "
                f"SQNR {stats.sqnr_db} dB")
    if deciding is None:
        return Comparison(not problems, "; ".join(problems), statistics)
    rule, judged, index = deciding
    margin = judged.text if len(statistics) == 1 else f"output {index}: {judged.text}"
    return Comparison(not problems, "; ".join(problems), statistics,
                      rule=rule.describe(), margin=margin)
