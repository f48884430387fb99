"""What the plugin reads off a pytest item and keeps on it: its flow (the `test_runner`
param), its case (the node id without the flow), the identity its records carry (suite,
seed, repro command), and its records so far. Collection, the fixture and the verdicts
all ask the same questions, so the answers live here once.
"""

from __future__ import annotations

from typing import Any

import pytest

from etsuite.backends.harness.case.runner import TestContext, TestRunner, new_record
from etsuite.backends.harness.case.seeds import derive_seed
from etsuite.backends.harness.contract.nodeids import case_id, test_case_id
from etsuite.backends.harness.contract.nodeids import repro_command as contract_repro
from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.registry import backend_folders
from etsuite.backends.harness.state import SessionState

RUNNER_KEY = pytest.StashKey[TestRunner]()
# Status given at collection time (skip_unsupported, unavailable) with its reason.
COLLECTION_STATUS_KEY = pytest.StashKey[tuple]()


def flow_of(item: pytest.Item, state: SessionState) -> Flow | None:
    """The item's flow, or None for a test that takes no `test_runner`."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("test_runner") if callspec else None
    return state.flows.get(name) if isinstance(name, str) else None


def case_of(item: pytest.Item, flow: Flow | None) -> str:
    return case_id(item.nodeid, flow.name if flow else None)


def suite_of(nodeid: str) -> str:
    """The record's suite: the folder under backends/suite/ (operators, models), a
    backend's own tests as `<backend>/test`, else the test's top folder."""
    parts = nodeid.split("::", 1)[0].split("/")
    if "suite" in parts and parts.index("suite") + 1 < len(parts) - 1:
        return parts[parts.index("suite") + 1]
    if len(parts) >= 3 and parts[0] == "backends":
        return f"{parts[1]}/{parts[2]}"
    return parts[0] if len(parts) > 1 else "."


def repro_command(flow: Flow | None, nodeid: str, seed: int) -> str:
    """The record's repro: through `tox -e <backend>` for this repository's backends
    (each has a tox environment of its name), else plain pytest; with the `--runner`
    option that chose the flow's runner, if one did."""
    backend = flow.backend if flow else None
    option = getattr(flow.runtime, "repro_option", "") if flow else ""
    return contract_repro(backend if backend in backend_folders() else None, nodeid, seed,
                          ["--runner", option] if option else [])


def context_of(item: pytest.Item, flow: Flow | None,
               state: SessionState) -> tuple[TestContext, int]:
    """(the identity every record of the item carries, the seed of its inputs)."""
    callspec = getattr(item, "callspec", None)
    params = {}
    if callspec is not None:
        names = [n for n in callspec.params if n != "test_runner"]
        params = {n: str(callspec.params[n]) for n in names}
    return TestContext(
        test_id=item.nodeid,
        test_case=test_case_id(item.nodeid),
        suite=suite_of(item.nodeid),
        params=params,
        seed=state.seed,
        repro=repro_command(flow, item.nodeid, state.seed),
    ), derive_seed(state.seed, case_of(item, flow))


def record_for_item(item: pytest.Item, state: SessionState, subtest: int,
                    **found: Any) -> SubtestRecord:
    """A record with the item's identity (test id, flow, seed, repro) and what was
    found, for results no subtest produced: collection-time skips, crashes, timeouts."""
    flow = flow_of(item, state)
    context, _ = context_of(item, flow, state)
    return new_record(flow, context, subtest, **found)


def records_for(item: pytest.Item, state: SessionState) -> list[SubtestRecord]:
    """Records of this item: the runner's, or the status the item got at collection
    (skip_unsupported / unavailable)."""
    runner = item.stash.get(RUNNER_KEY, None)
    if runner is not None:
        return list(runner.records)
    collected = item.stash.get(COLLECTION_STATUS_KEY, None)
    if collected is None:
        return []
    record = record_for_item(item, state, 0, status=collected[0], error=collected[1])
    flow = flow_of(item, state)
    declared = flow.expectations.failure(flow.name, case_of(item, flow)) if flow else None
    if declared is not None:  # an unavailable flow's entry: counted as not checkable here
        record.declared_by, record.declared_strict = declared.source, declared.strict
    return [record]
