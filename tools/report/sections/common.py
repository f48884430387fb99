"""What several sections share beyond the numbers of `tally`: how the summary names a
flow and cuts an error in a table cell, and how the page's data points at a result and
writes a record's values as JSON."""

from __future__ import annotations

import enum
import math
import time
from typing import Any

from etsuite.tools.report.loading import Merged

NO_FLOW = "(no flow)"
NO_BACKEND = "(none)"
ERROR_IN_TABLE = 120     # characters of an error shown in a table cell


def flow_label(flow: str | None) -> str:
    return flow or NO_FLOW


def times(factor: float | None) -> str:
    """How many times worse or better (the bucket says which)."""
    if factor is None:
        return "–"
    ratio = max(factor, 1 / factor) if factor else float("inf")
    return "∞" if ratio == float("inf") else f"{ratio:.2f}x"


AS_JSON = frozenset({str, int, bool, type(None)})  # values that are their own JSON


def plain(value: Any) -> Any:
    """A record's value as its JSON (what the contract's to_dict writes): a status as its
    name, a nested statistic by its own to_dict. JSON has no NaN or infinity (a NaN
    output's error is one): they travel as text."""
    if type(value) in AS_JSON:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (str, int)) or value is None:
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    return value


def result_index(merged: Merged) -> dict[int, int]:
    """Position of each result in the grid (by identity): how a section points at a cell."""
    return {id(result): index for index, result in enumerate(merged.results)}


def when(epoch: float | None) -> str | None:
    """When a run started, as the page shows it."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch)) if epoch is not None else None
