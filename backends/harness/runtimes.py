"""What executes a lowered program: part of a flow's data, not a special case in the
pipeline. The default is the ExecuTorch runtime of this host; a backend whose programs
this runtime cannot execute may bring its own (e.g. a reference executor), and the
record names the runtime that produced the outputs.

Torch-free at import: executorch is imported only when a program is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


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

    def load(self, program: LoweredProgram):
        from executorch.runtime import Runtime

        return Runtime.get().load_program(program.pte).load_method("forward")

    def load_methods(self, program: LoweredProgram, names: list[str]) -> dict:
        """Several methods of one loaded program (what a multi-method test executes):
        from one `Program`, so methods exported to share mutable buffers share them."""
        from executorch.runtime import Runtime

        loaded = Runtime.get().load_program(program.pte)
        return {name: loaded.load_method(name) for name in names}

    def execute(self, loaded, inputs: list) -> list:
        return list(loaded.execute(inputs))
