"""Which flows exist and which this run selected (`--backend` / `--flow`), the
per-test seed, and the repro command. One place for the identity of a test."""

from __future__ import annotations

import hashlib

from etsuite.backends.harness.contract.nodeids import repro_command as contract_repro
from etsuite.backends.harness.flow import Flow
from etsuite.backends.harness.registry import backend_folders


class UnknownNameError(ValueError):
    pass


def select_flows(flows: dict[str, Flow], backends: list[str], flow_names: list[str]) -> list[Flow]:
    """Flows named by --backend/--flow; all flows when neither is given.

    A --flow narrows its own backend: `--backend xnnpack --flow xnnpack` (what
    `make test-xnnpack ARGS="--flow xnnpack"` passes) is the fp32 flow alone, while a
    --flow of another backend is added: `--backend portable --flow xnnpack` is both."""
    known_backends = sorted({f.backend for f in flows.values()})
    unknown_backends = [b for b in backends if b not in known_backends]
    if unknown_backends:
        raise UnknownNameError(
            f"unknown backend {', '.join(map(repr, unknown_backends))}; "
            f"known backends: {', '.join(known_backends)}"
        )
    unknown_flows = [f for f in flow_names if f not in flows]
    if unknown_flows:
        raise UnknownNameError(
            f"unknown flow {', '.join(map(repr, unknown_flows))}; "
            f"known flows: {', '.join(sorted(flows))}"
        )
    if not backends and not flow_names:
        return list(flows.values())
    narrowed = {flows[name].backend for name in flow_names}
    return [f for f in flows.values()
            if f.name in flow_names or (f.backend in backends and f.backend not in narrowed)]


def derive_seed(session_seed: int, case: str) -> int:
    """Stable across processes and machines (unlike hash()), distinct per case."""
    digest = hashlib.md5(case.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "little") + session_seed) % (2**31 - 1)


def suite_of(nodeid: str) -> str:
    parts = nodeid.split("::", 1)[0].split("/")
    if "suite" in parts and parts.index("suite") + 1 < len(parts) - 1:
        return parts[parts.index("suite") + 1]
    if len(parts) >= 3 and parts[0] == "backends":
        return f"{parts[1]}/{parts[2]}"
    return parts[0] if len(parts) > 1 else "."


def repro_command(backend: str | None, nodeid: str, seed: int) -> str:
    """The record's repro: through `tox -e <backend>` for this repository's backends
    (each has a tox environment of its name), else plain pytest."""
    return contract_repro(backend if backend in backend_folders() else None, nodeid, seed)
