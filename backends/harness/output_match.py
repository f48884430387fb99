"""Whether a program's outputs match eager PyTorch within the flow's tolerance, with
per-output error statistics (max/mean abs error, SQNR)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

from etsuite.backends.harness.flow import Tolerance


@dataclass
class Comparison:
    matched: bool
    message: str
    statistics: list  # one dict per output


def flatten_tensors(value) -> list:
    leaves, _ = pytree.tree_flatten(value)
    return leaves


def _statistics(expected: torch.Tensor, actual: torch.Tensor) -> dict:
    ref = expected.detach().to(torch.float64)
    got = actual.detach().to(torch.float64)
    finite = torch.isfinite(ref) & torch.isfinite(got)
    error = (got - ref)[finite].abs()
    if error.numel() == 0:
        return {"max_abs_error": 0.0, "mean_abs_error": 0.0, "sqnr_db": None}
    noise = float((error**2).sum())
    signal = float((ref[finite] ** 2).sum())
    # None means undefined (zero error, or a zero reference): JSON has no infinity.
    sqnr = 10 * math.log10(signal / noise) if noise > 0 and signal > 0 else None
    return {
        "max_abs_error": float(error.max()),
        "mean_abs_error": float(error.mean()),
        "sqnr_db": None if sqnr is None else round(sqnr, 3),
    }


def _within(expected: torch.Tensor, actual: torch.Tensor, tolerance: Tolerance) -> bool:
    ref = expected.detach().to(torch.float64)
    got = actual.detach().to(torch.float64)
    finite = ref[torch.isfinite(ref)]
    value_range = float(finite.max() - finite.min()) if finite.numel() else 0.0
    bound = tolerance.atol + tolerance.range_fraction * value_range + tolerance.rtol * ref.abs()
    close = (got - ref).abs() <= bound
    same_special = (torch.isnan(ref) & torch.isnan(got)) | ((ref == got) & ~torch.isfinite(ref))
    return bool((close | same_special).all())


def compare_outputs(expected, actual: list, tolerance: Tolerance) -> Comparison:
    expected_leaves = [t for t in flatten_tensors(expected) if isinstance(t, torch.Tensor)]
    actual = [t for t in actual if isinstance(t, torch.Tensor)]
    if len(expected_leaves) != len(actual):
        return Comparison(
            False, f"expected {len(expected_leaves)} outputs, runtime returned {len(actual)}", []
        )
    statistics, problems = [], []
    for index, (ref, got) in enumerate(zip(expected_leaves, actual)):
        if ref.shape != got.shape:
            statistics.append({"max_abs_error": None, "mean_abs_error": None, "sqnr_db": None})
            problems.append(f"output {index}: shape {tuple(got.shape)} != expected {tuple(ref.shape)}")
            continue
        stats = _statistics(ref, got)
        statistics.append(stats)
        if not _within(ref, got, tolerance):
            problems.append(
                f"output {index}: max abs error {stats['max_abs_error']:.6g}, "
                f"mean {stats['mean_abs_error']:.6g}, SQNR {stats['sqnr_db']} dB "
                f"(atol={tolerance.atol}, rtol={tolerance.rtol}, "
                f"range_fraction={tolerance.range_fraction})"
            )
    return Comparison(not problems, "; ".join(problems), statistics)
