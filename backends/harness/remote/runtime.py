"""`RunnerRuntime`: a flow's runtime that executes the program on a runner (one device or
a pool of them, remote/pool.py) and brings the outputs back, so that the host lowers and
judges while the machine with the backend's runtime executes. The kind of each device
(remote/kinds.py) moves the files; this module decides what an answer means:

"missing" -> lowered_not_run naming the runner; a process killed by a signal ->
fail_crash; a device that does not answer -> fail_infra "runner lost: <spec>" and the
device leaves the pool; an answer the exchange format cannot read (a runner that cannot
start) -> fail_infra. fail_infra is about the machinery, not the program: no
expectations entry absorbs it. Torch-free at import.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any, Callable

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.runtimes import (
    Execution,
    LoweredProgram,
    RuntimeStatus,
    delegate_ids,
)
from etsuite.backends.harness.private_paths import NotPrivate
from etsuite.backends.harness.remote import exchange
from etsuite.backends.harness.remote.kinds import DeviceLost, resident_exchange
from etsuite.backends.harness.remote.pool import DevicePool, PoolExhausted
from etsuite.backends.harness.remote.spec import Reply, RunnerSpec


def _lost(what: str) -> RuntimeStatus:
    """The test's device stopped answering: fail_infra, the device named."""
    return RuntimeStatus(Status.FAIL_INFRA, f"runner lost: {what}", stage="run", rerun=False)



@dataclass
class Job:
    """What `RunnerRuntime.load` returns: the program as it travels, and after an
    execute, where and how long it ran (runtimes.Execution)."""

    pte: bytes
    delegates: list
    execution: Execution | None = None


@dataclass(frozen=True)
class RunnerRuntime:
    """A flow's runtime that executes on one device or on a pool of them. `option` is the
    `--runner` value it came from (for the repro command); `pool_folder` is the run's
    shared folder of device locks and lost marks."""

    specs: tuple
    pool_folder: str
    option: str = ""
    name: str = field(default="")
    # Each `execute` is one exchange, the program loaded afresh; a stateful or
    # multi-method subtest sends all its calls at once through `execute_calls`.
    carries_state = False

    def __post_init__(self) -> None:
        if not self.name:
            names = [spec.name for spec in self.specs]
            object.__setattr__(self, "name", names[0] if len(names) == 1
                               else f"pool({', '.join(names)})")

    @property
    def repro_option(self) -> str:
        return self.option

    def missing(self, program: LoweredProgram) -> str | None:
        return None  # only the device can tell: it answers "missing" (lowered_not_run)

    def load(self, program: LoweredProgram) -> Job:
        return Job(bytes(program.pte), delegate_ids(program))

    def load_methods(self, program: LoweredProgram, names: list[str]) -> dict:
        """Several methods of one program: the same Job for each name, since the device
        loads the program once per job (`execute_calls` sends all calls in one)."""
        job = self.load(program)
        return {name: job for name in names}

    def execution(self, job: Job | dict | None) -> Execution | None:
        if isinstance(job, dict):  # load_methods' Jobs, all one
            job = next(iter(job.values()), None)
        return job.execution if isinstance(job, Job) else None

    def execute(self, job: Job, inputs: list) -> list:
        files = exchange.job_files(job.pte, list(inputs), job.delegates)
        return self._exchange(job, files, lambda folder, manifest: exchange.read_values(
            folder, manifest.get("outputs", [])))

    def execute_calls(self, loaded: dict, calls: list[tuple[str, list]]
                      ) -> tuple[list[list], list[float | None]]:
        """Every call (method name, flat inputs) in one job of format version 2: the
        device loads the program once and executes the calls in order, so the program's
        state carries from one to the next. Returns each call's outputs and the device's
        time for it in milliseconds (steps.execute_calls)."""
        jobs = {id(loaded[name]): loaded[name] for name, _ in calls}
        if len(jobs) != 1:
            raise ValueError("the calls of one job must share one loaded program")
        (job,) = jobs.values()
        files = exchange.calls_job_files(job.pte, [(name, list(inputs)) for name, inputs in calls],
                                         job.delegates)
        found = self._exchange(job, files, lambda folder, manifest: exchange.read_calls(
            folder, manifest, len(calls)))
        return ([outputs for outputs, _ in found],
                [None if s is None else round(s * 1000, 3) for _, s in found])

    def _exchange(self, job: Job, files: dict, read: Callable[[str, dict], Any]) -> Any:
        """One job on a free device; `read(folder, manifest)` takes an "ok" answer's
        outputs."""
        pool = DevicePool(self.pool_folder)
        by_name = {spec.name: spec for spec in self.specs}
        exclusive = any(spec.exclusive for spec in self.specs)
        try:
            with pool.acquire(list(by_name), exclusive) as (name, waited):
                spec = by_name[name]
                kind = spec.runner_kind
                assert kind is not None, "every spec is made by its kind's parse"
                job.execution = Execution(name, {"wait": waited} if waited else {})
                try:
                    reply = resident_exchange(kind, spec, files, self.pool_folder) \
                        or kind.exchange(spec, files)
                except DeviceLost as lost:
                    if not spec.exclusive:  # a local process: the program hung, not a device
                        raise RuntimeStatus(Status.FAIL_TIMEOUT, f"runner {name}: {lost}",
                                             stage="run") from None
                    pool.mark_lost(name, str(lost))
                    raise _lost(f"{name} ({lost})") from None
        except PoolExhausted as error:
            raise _lost(str(error)) from None
        except NotPrivate as error:  # a lock, folder or relay another user holds
            raise RuntimeStatus(Status.FAIL_INFRA, f"runner {self.name}: {error}", stage="run",
                                rerun=False) from None
        try:
            manifest = self._answer(spec, reply, job.execution)
            try:
                return read(reply.folder, manifest)
            except exchange.ExchangeError as error:
                raise RuntimeStatus(Status.FAIL_INFRA, f"runner {spec.name} gave no answer: "
                                     f"{error}", stage="run", rerun=False) from None
        finally:
            shutil.rmtree(reply.scratch or reply.folder, ignore_errors=True)

    def _answer(self, spec: RunnerSpec, reply: Reply, execution: Execution) -> dict:
        """An "ok" answer's manifest, or the status the device's answer decides."""
        name = spec.name
        execution.timings["transfer"] = round(reply.seconds, 4)
        if reply.crashed_by:
            detail = f": {reply.exit_detail}" if reply.exit_detail else ""
            raise RuntimeStatus(Status.FAIL_CRASH,
                                 f"runner {name}: the process executing the program was killed "
                                 f"by {reply.crashed_by}{detail}", stage="run")
        try:
            manifest = exchange.read_manifest(reply.folder)
        except exchange.ExchangeError as error:
            raise RuntimeStatus(Status.FAIL_INFRA, f"runner {name} gave no answer: "
                                 f"{reply.exit_detail or error}", stage="run",
                                 rerun=False) from None
        spent = {k: float(v) for k, v in (manifest.get("timings") or {}).items()
                 if k in exchange.TIMINGS and isinstance(v, (int, float))}
        execution.timings.update(spent)
        if isinstance(manifest.get("cost"), dict):
            execution.cost = manifest["cost"]
        execution.timings["transfer"] = round(max(reply.seconds - sum(spent.values()), 0.0), 4)
        if manifest["status"] == "missing":
            raise RuntimeStatus(Status.LOWERED_NOT_RUN,
                                 f"runner {name}: {manifest.get('reason') or 'cannot run it'}")
        if manifest["status"] == "error":
            stage = "load" if manifest.get("stage") == "load" else "run"
            raise RuntimeStatus(Status.FAIL_LOAD if stage == "load" else Status.FAIL_RUN,
                                 f"runner {name}: {manifest.get('error') or 'failed'}", stage=stage)
        return manifest
