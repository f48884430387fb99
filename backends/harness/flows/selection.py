"""Which flows this run selected (`--backend` / `--flow`), and the error that lists the
known names when one is unknown."""

from __future__ import annotations

from etsuite.backends.harness.flows.flow import Flow


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
