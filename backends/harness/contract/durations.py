"""`backends/<name>/durations.json`: seconds per node id from earlier reports, written by
the report tools (`make update-durations`), read by the harness to balance shards."""

from __future__ import annotations

from typing import Any

DURATIONS_FILE = "durations.json"
DURATIONS_VERSION = 1


def durations_document(backend: str, durations: dict[str, float], sources: list[str]) -> dict:
    return {"version": DURATIONS_VERSION, "backend": backend, "sources": sources,
            "durations": {nodeid: round(durations[nodeid], 3) for nodeid in sorted(durations)}}


def durations_of(document: Any) -> dict[str, float]:
    """The seconds per node id of a durations document; ValueError when it is not one."""
    if not isinstance(document, dict) or document.get("version") != DURATIONS_VERSION:
        raise ValueError(f"not a durations file of version {DURATIONS_VERSION}")
    durations = document.get("durations")
    if not isinstance(durations, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            for v in durations.values()):
        raise ValueError("'durations' must map node ids to seconds (non-negative numbers)")
    return {str(k): float(v) for k, v in durations.items()}
