"""Where the known flows come from: every backend folder of this repository
(`backends/<name>/flows.py`, discovered, nothing to register), plus flows that other
packages (a vendor's repository) register through the `etsuite.flows` entry-point group or
the `pytest_etsuite_flows` hook in a conftest.py.

Each backend module exposes `FLOWS`, a list of `Flow`. Importing it must stay cheap (no
torch, no SDK): the flows' factories import what they need when a pipeline runs.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path

import etsuite.backends
from etsuite.backends.harness.expectations import load_backend
from etsuite.backends.harness.flow import Flow

# The undelegated baseline comes first in reports; the other backends follow by name.
BASELINE_BACKEND = "portable"


class BackendError(ValueError):
    """A backend folder that cannot be loaded; the plugin makes it a usage error."""


def backends_dir() -> Path:
    """The folder holding this repository's backends (`backends/`)."""
    return Path(next(iter(etsuite.backends.__path__)))


def backend_folders() -> list[str]:
    """Names of the folders with a flows.py, baseline first."""
    names = sorted(p.parent.name for p in backends_dir().glob("*/flows.py"))
    return sorted(names, key=lambda name: name != BASELINE_BACKEND)


def builtin_flows() -> list[Flow]:
    """Every backend folder's FLOWS, each with the folder's expectations.toml added."""
    flows: list[Flow] = []
    root = backends_dir().parent
    for backend in backend_folders():
        data = load_backend(backends_dir() / backend, root)
        try:
            module = importlib.import_module(f"etsuite.backends.{backend}.flows")
        except Exception as error:  # noqa: BLE001 - any error here is the folder's
            raise BackendError(f"backends/{backend}/flows.py cannot be imported: "
                               f"{type(error).__name__}: {error}") from error
        for flow in module.FLOWS:
            flows.append(replace(flow, expectations=flow.expectations + data))
    for entry in entry_points(group="etsuite.flows"):
        flows.extend(entry.load())
    return flows


def index_flows(flows: list[Flow]) -> dict[str, Flow]:
    by_name: dict[str, Flow] = {}
    for flow in flows:
        if flow.name in by_name:
            raise ValueError(f"flow '{flow.name}' is defined twice")
        by_name[flow.name] = flow
    return by_name


def backend_of_test_folder(path: Path) -> str | None:
    """`backends/<name>/test/...` belongs to backend <name>: its tests run only there."""
    return _backend_of_folder(os.path.dirname(path))


@functools.lru_cache(maxsize=None)
def _backend_of_folder(folder: str) -> str | None:
    """Per folder, since every collected item asks (resolving paths was 1.5 s of
    collecting one backend's 4,400 items)."""
    try:
        parts = Path(folder).resolve().relative_to(backends_dir().resolve()).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[1] == "test" else None
