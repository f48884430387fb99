"""Where the known flows come from: one `flows.py` per backend folder, plus flows that
other packages (a vendor's repository) register through the `etsuite.flows` entry-point
group or the `pytest_etsuite_flows` hook in a conftest.py.

Each backend module exposes `FLOWS`, a list of `Flow`.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from backends.harness.flow import Flow

# The backends that ship with this repository, in report order. Each has
# backends/<name>/flows.py and a tox environment (and make target) of the same name.
BUILTIN_BACKENDS = ("portable", "xnnpack", "vulkan")


def builtin_flows() -> list[Flow]:
    flows: list[Flow] = []
    for backend in BUILTIN_BACKENDS:
        flows.extend(importlib.import_module(f"backends.{backend}.flows").FLOWS)
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
