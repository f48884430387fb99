"""Priming: lower a small model once in the parent process, so that forked
test children inherit the one-time costs already paid (lazy imports, dispatcher and
export caches, the speed-ups' memos). When it runs is decided by
`fixture.prime`; it lowers through the pipeline's own stages, so it fills the
same memos the tests use."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from typing import Iterator

import torch

from etsuite.backends.harness.case.pipeline import lower, quantize, run_pipeline
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.flow import Flow

# The flows this process has lowered already (by name; "" for the portable path). A
# session forked by the warm process (warm/server.py) inherits it and lowers only for the
# flows of its selection that the server did not warm. By name, not by backend: two flows
# of one backend may differ in what priming would find broken.
_WARMED: set[str] = set()


class PrimingModel(torch.nn.Module):
    """Conv, relu, mean and linear: enough to reach the quantizers' conv patterns."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3)
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def prime(flows: list[Flow]) -> list[str]:
    """Pay the one-time costs once in the parent, so forked test children inherit a warm
    process.

    Lowers (never executes) with one floating-point and one quantizing flow of each
    selected backend, since quantizers keep their pattern graphs per backend: a backend's
    runtime threads must not be started before fork. Runs the portable path end to end
    (it also warms the runtime's loader) only when a portable flow is selected, as it
    costs each worker seconds. A failure costs only speed, so it does not stop the
    session: returns one line per part that failed, saying why, for the caller to show."""
    model, inputs = PrimingModel().eval(), (torch.randn(1, 2, 6, 6),)
    logging.disable(logging.INFO)  # partitioners log INFO lines outside any test's capture
    try:
        return _prime(model, inputs, flows)
    finally:
        logging.disable(logging.NOTSET)


def _prime(model: torch.nn.Module, inputs: tuple, flows: list[Flow]) -> list[str]:
    problems: list[str] = []
    if not flows:
        return problems  # no test of this run uses a flow: nothing to warm
    picked: dict[tuple, Flow] = {}
    for flow in flows:
        if flow.delegates and flow.unavailable_reason() is None:
            picked.setdefault((flow.backend, flow.quantizes), flow)
    if (any(not flow.delegates for flow in flows) or not picked) and "" not in _WARMED:
        _WARMED.add("")
        with _runtime_chatter_kept_off_the_console():
            portable = run_pipeline(model, inputs, Flow(name="priming", backend="portable"))
        if portable.status is not Status.PASS:
            problems.append(f"portable path: {portable.status} at {portable.stage}: "
                            f"{portable.error.splitlines()[0] if portable.error else ''}")
    for flow in picked.values():
        if flow.name in _WARMED:
            continue
        _WARMED.add(flow.name)
        try:
            exported = torch.export.export(model, inputs)
            if flow.quantizes:
                exported = quantize(exported, inputs, flow, None)
            lower(exported, flow).to_executorch()
        except Exception as error:  # noqa: BLE001 - reported to the caller, never raised
            problems.append(f"flow {flow.name}: {type(error).__name__}: {error}".splitlines()[0])
    return problems


# What the ExecuTorch runtime prints to the C-level stderr when its thread pool first
# probes the CPU (on hosts without Arm's midr files): five lines per process, no news.
RUNTIME_CHATTER = ("[cpuinfo_utils.cpp:",)


@contextlib.contextmanager
def _runtime_chatter_kept_off_the_console() -> Iterator[None]:
    """The portable run is where this process first executes a program, so where the
    runtime's CPU probe prints. Native stderr goes to a file meanwhile; afterwards every
    line but that chatter is written to stderr as it was."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept = [line for line in caught.read().decode("utf-8", "replace").splitlines(True)
                    if not line.startswith(RUNTIME_CHATTER)]
            sys.stderr.write("".join(kept))
            sys.stderr.flush()
