"""What executes a lowered program: part of a flow's data, not a special case in the
pipeline. The default is the ExecuTorch runtime of this host; a backend whose programs
this runtime cannot execute may bring its own (e.g. a reference executor), and the
record names the runtime that produced the outputs.

Torch-free at import: executorch is imported only when a program is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from etsuite.backends.harness.contract.statuses import Status


@dataclass(frozen=True)
class LoweredProgram:
    """What the pipeline hands a runtime: the serialized .pte, the lowered edge program
    manager it came from (for runtimes that execute a delegate's payload themselves),
    and the node counts of the delegated and undelegated parts."""

    pte: bytes
    edge_program: object
    delegated_nodes: int
    undelegated_nodes: int


@runtime_checkable
class Runtime(Protocol):
    """What a flow's `runtime` provides, by shape: any class with these members is one
    (runners that execute a program elsewhere need not import this module). `name` goes
    into each record it produced."""

    @property
    def name(self) -> str:
        """Read only, so that a frozen dataclass's field or a class attribute is one."""

    def missing(self, program: LoweredProgram) -> str | None:
        """Why this host cannot execute `program` (the subtest ends `lowered_not_run`
        with this reason), or None."""

    def load(self, program: LoweredProgram) -> Any:
        """Prepare to execute (the `load` stage); returns what `execute` takes."""

    def execute(self, loaded: Any, inputs: list) -> list:
        """Run on flat tensor inputs (the `run` stage); returns the flat outputs."""


# Optional members a runtime may add (the pipeline asks with getattr):
#   load_methods(program, names) -> {name: loaded}: it executes programs of several
#       methods (ExecuTorchRuntime); without it such tests end lowered_not_run.
#   carries_state: False when every `execute` loads the program afresh (a runner that
#       ships each call elsewhere), so a stateful test cannot run on it, unless it has
#   execute_calls(loaded, calls) -> (outputs per call, milliseconds per call or None):
#       all calls (method name, flat inputs) of a stateful or multi-method subtest at
#       once, on one loaded program (`loaded`: name -> what load/load_methods gave);
#       RunnerRuntime sends them as one job (exchange format version 2).
#   execution(loaded) -> Execution | None: where and how long the last `execute` of
#       `loaded` ran, for runtimes that execute elsewhere (remote/kinds.py).


@dataclass
class Execution:
    """What a runtime that executes elsewhere says about one execution: the runner that
    ran it (the record's `runtime`: one device of a pool) and its time split into stages
    (`wait` for a free device, `transfer`, `startup`, `load`, `run`, `repeat`), which
    replace the pipeline's own `load` and `run` wall times in the record."""

    runtime: str
    timings: dict = field(default_factory=dict)
    cost: dict | None = None   # what the runner measured the calls cost (record's `cost`)


class RuntimeStatus(Exception):
    """Raised by a runtime's `load` or `execute` when what it found decides the subtest's
    status by itself, not as a failure of the stage: a remote runtime that lacks the
    delegate answers `lowered_not_run` (found out only by asking it), a runner's process
    killed by a signal is `fail_crash`. The message is the record's error.
    `rerun`: False when running the program again says nothing about it (its device was
    lost), so a failing status is not rerun to tell a flaky program."""

    def __init__(self, status: Status, message: str, stage: str | None = None,
                 rerun: bool = True):
        super().__init__(message)
        self.status = status
        self.stage = stage
        self.rerun = rerun


def delegate_ids(program: LoweredProgram) -> list[str]:
    """The backend ids the program's delegates need from the executing runtime (e.g.
    "XnnpackBackend"), from the lowered modules of every method; [] when nothing is
    delegated or the edge program cannot tell."""
    edge = program.edge_program
    names = sorted(getattr(edge, "methods", None) or ["forward"])
    found: set[str] = set()
    for name in names:
        try:
            module = edge.exported_program(name).graph_module  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a program without that method tells nothing
            continue
        for _, sub in module.named_modules():
            backend = getattr(sub, "backend_id", None)
            if isinstance(backend, str):
                found.add(backend)
    return sorted(found)


@dataclass(frozen=True)
class ExecuTorchRuntime:
    """The ExecuTorch runtime in this Python environment (`executorch.runtime`).

    `backend` is the delegate the program needs from the runtime's registry; None for
    flows that delegate nothing. `where` says where such programs do run (a device, a
    simulator), appended to the reason when this runtime lacks the delegate."""

    backend: str | None = None
    name: str = "executorch"
    where: str = ""

    def missing(self, program: LoweredProgram) -> str | None:
        if not program.delegated_nodes or self.backend is None:
            return None
        from executorch.runtime import Runtime

        if Runtime.get().backend_registry.is_available(self.backend):
            return None
        reason = f"this host's ExecuTorch runtime has no '{self.backend}'"
        return f"{reason}: {self.where}" if self.where else reason

    def load(self, program: LoweredProgram) -> Any:
        from executorch.runtime import Runtime

        return Runtime.get().load_program(program.pte).load_method("forward")

    def load_methods(self, program: LoweredProgram, names: list[str]) -> dict:
        """Several methods of one loaded program (what a multi-method test executes):
        from one `Program`, so methods exported to share mutable buffers share them."""
        from executorch.runtime import Runtime

        loaded = Runtime.get().load_program(program.pte)
        return {name: loaded.load_method(name) for name in names}

    def execute(self, loaded: Any, inputs: list) -> list:
        return list(loaded.execute(inputs))
