"""Where the known flows come from: every backend folder of this repository
(`backends/<name>/flows.py`, discovered, nothing to register), plus flows that other
packages (a vendor's repository) register through the `etsuite.flows` entry-point group or
the `pytest_etsuite_flows` hook in a conftest.py.

Each backend module exposes `FLOWS`, a list of `Flow`. Importing it must stay cheap (no
torch, no SDK): the flows' factories import what they need when a pipeline runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest
    from pluggy import HookImpl

import functools
import importlib
import os
import reprlib
from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path

import etsuite.backends
from etsuite.backends.harness.flows.budgets import load_backend as budgets_of_backend
from etsuite.backends.harness.flows.expectations import load, load_backend
from etsuite.backends.harness.flows.flow import Flow

# The undelegated baseline comes first in reports; the other backends follow by name.
BASELINE_BACKEND = "portable"


class FlowDefinitionError(ValueError):
    """Flows defined wrongly (a flows.py without FLOWS, an entry point that fails to load,
    a hook returning something else than Flows): the plugin makes it a usage error naming
    the culprit, instead of an INTERNALERROR from deep inside collection."""


class BackendError(FlowDefinitionError):
    """A backend folder that cannot be loaded; the plugin makes it a usage error."""


def backends_dir() -> Path:
    """The folder holding this repository's backends (`backends/`)."""
    return Path(next(iter(etsuite.backends.__path__)))


def backend_folders() -> list[str]:
    """Names of the folders with a flows.py, baseline first."""
    names = sorted(p.parent.name for p in backends_dir().glob("*/flows.py"))
    return sorted(names, key=lambda name: name != BASELINE_BACKEND)


def builtin_flows() -> list[Flow]:
    """Every backend folder's FLOWS, each with the folder's expectations.toml added (and
    the host's own files its flows.py names in `host_expectation_files()`)."""
    flows: list[Flow] = []
    root = backends_dir().parent
    for backend in backend_folders():
        data = load_backend(backends_dir() / backend, root)
        budgets = budgets_of_backend(backends_dir() / backend, root)
        try:
            module = importlib.import_module(f"etsuite.backends.{backend}.flows")
        except Exception as error:  # noqa: BLE001 - any error here is the folder's
            raise BackendError(f"backends/{backend}/flows.py cannot be imported: "
                               f"{type(error).__name__}: {error}") from error
        if not hasattr(module, "FLOWS"):
            raise BackendError(f"backends/{backend}/flows.py defines no FLOWS (a list of Flow)")
        # Expectations that hold on this host only (e.g. OpenVINO's on native-bf16 CPUs):
        # read here, each session, like expectations.toml, never at the module's import.
        for path in getattr(module, "host_expectation_files", list)():
            data = data + load(path, path.relative_to(root).as_posix()
                               if path.is_relative_to(root) else str(path))
        for flow in checked_flows(module.FLOWS, f"FLOWS in backends/{backend}/flows.py is"):
            flows.append(replace(flow, expectations=flow.expectations + data,
                                 budgets=flow.budgets + budgets))
    flows.extend(entry_point_flows())
    return flows


def priming_groups() -> list[list[Flow]]:
    """The flows the warm process lowers before it serves runs: each backend folder's
    `PRIMING` (groups of flow names, each group lowered in one priming), as Flows. Data of
    the backends, so the warm process names none of them."""
    by_name = {flow.name: flow for flow in builtin_flows()}
    groups = []
    for backend in backend_folders():
        module = importlib.import_module(f"etsuite.backends.{backend}.flows")
        for group in getattr(module, "PRIMING", []):
            unknown = [name for name in group if name not in by_name]
            if unknown:
                raise BackendError(f"PRIMING in backends/{backend}/flows.py names "
                                   f"{', '.join(unknown)}, not a known flow")
            groups.append([by_name[name] for name in group])
    return groups


def entry_point_flows() -> list[Flow]:
    """The flows other packages list under the `etsuite.flows` entry-point group, each
    entry named in the error when it cannot be loaded or holds something else."""
    flows: list[Flow] = []
    for entry in entry_points(group="etsuite.flows"):
        where = f"the etsuite.flows entry point '{entry.name} = {entry.value}'"
        dist = getattr(entry, "dist", None)
        if dist is not None:
            where += f" (from {dist.name})"
        try:
            value = entry.load()
        except Exception as error:  # noqa: BLE001 - any error here is the entry point's
            raise FlowDefinitionError(f"{where} cannot be loaded: {one_line(error)}") from error
        flows.extend(checked_flows(value, f"{where} loads"))
    return flows


def checked_flows(value: Any, where: str) -> list[Flow]:
    """`value` as a list of Flow, or a FlowDefinitionError naming its source and what it
    held: a wrong value would otherwise fail later, far from where it was made. `where`
    names the source with its verb ("FLOWS in backends/x/flows.py is")."""
    if isinstance(value, (str, bytes, Flow)) or not _iterable(value):
        raise FlowDefinitionError(f"{where} {_shown(value)} instead of a list of Flow")
    flows = list(value)
    for index, flow in enumerate(flows):
        if not isinstance(flow, Flow):
            raise FlowDefinitionError(f"{where} {_shown(value)}, whose item {index}, "
                                      f"{_shown(flow)}, is not a Flow")
    return flows


def one_line(error: BaseException) -> str:
    """An exception as `Type: first line of its message`, for one-line usage errors."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def _shown(value: Any) -> str:
    """A short repr and the type: enough to find the value, never pages of it."""
    return f"{_SHORT.repr(value)} ({type(value).__name__})"


class _ShortRepr(reprlib.Repr):
    """reprlib's short reprs, with a Flow as its name (its full repr runs to pages)."""

    def repr_Flow(self, flow: Flow, level: int) -> str:  # noqa: N802 - reprlib looks it up by type name
        return f"Flow(name={flow.name!r}, ...)"


_SHORT = _ShortRepr()


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
    """Per folder, since every collected item asks, and resolving the paths again for
    each of a backend's thousands of items slows collection
    (docs/explanation/start-up-and-speed.md)."""
    try:
        parts = Path(folder).resolve().relative_to(backends_dir().resolve()).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[1] == "test" else None


def hook_flows(config: pytest.Config) -> list:
    """The flows of every `pytest_etsuite_flows` implementation, each result checked and
    named by the conftest or plugin that returned it: pluggy's call hands back the results
    without saying whose they are. The implementations are called in pluggy's order
    (tryfirst first, then the last registered first); with a wrapper among them, which may
    change what the others return, pluggy makes the call and a bad result goes unnamed."""
    hook = config.hook.pytest_etsuite_flows
    impls = hook.get_hookimpls()
    if any(impl.wrapper or impl.hookwrapper for impl in impls):
        return [flow for result in hook(config=config)
                for flow in checked_flows(result, "a pytest_etsuite_flows hook returned")]
    flows = []
    for impl in reversed(impls):
        result = impl.function(*[config for _ in impl.argnames])
        if result is not None:  # pluggy drops None results too
            where = f"pytest_etsuite_flows in {_plugin_name(impl)} returned"
            flows.extend(checked_flows(result, where))
    return flows


def _plugin_name(impl: HookImpl) -> str:
    """A conftest by its path (relative to the working folder when inside it), another
    plugin by its module or registered name."""
    path = getattr(impl.plugin, "__file__", None)
    if path:
        relative = os.path.relpath(path)
        return relative if not relative.startswith("..") else path
    return impl.plugin_name

