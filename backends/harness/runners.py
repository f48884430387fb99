"""Runners: a flow's runtime that executes the program somewhere else and brings the
outputs back, so that the host lowers and judges while the machine with the backend's
runtime executes. A runner is chosen by a spec (docs/how-to/run-programs-elsewhere.md):

    process                          a fresh local process with this host's runtime
    ssh://[user@]host[:port][?opts]  a host over ssh, running device_agent.py there
    adb://SERIAL?runner=PATH[&opts]  an Android device: push, run a runner binary, pull
    cmd:TEMPLATE                     any command with {pte} {inputs} {outputs} ({job})

Every kind exchanges the same files (exchange.py). `RunnerRuntime` is the Runtime
(runtimes.py) over one or more specs; several specs are a pool (runner_pool.py).
What a device answers decides the subtest: "missing" -> lowered_not_run naming the
runner, a process killed by a signal -> fail_crash, a device that does not answer ->
fail_infra "runner lost: <spec>" and the device leaves the pool, an answer the exchange
format cannot read (a runner that cannot start) -> fail_infra. fail_infra is about the
machinery, not the program: no expectations entry absorbs it. Torch-free at import.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from etsuite.backends.harness import exchange
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.runner_pool import DevicePool, PoolExhausted
from etsuite.backends.harness.runtimes import Execution, RuntimeVerdict, delegate_ids

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device_agent.py")
DEFAULT_TIMEOUT = 240.0        # seconds one exchange may take before the device is lost
DEFAULT_CONNECT_TIMEOUT = 10   # ssh's ConnectTimeout
# The remote shell prints the agent's exit status after this, on stderr: ssh's own exit
# status cannot tell a dropped connection (255) from an agent that exited 255.
EXIT_MARK = "etsuite-agent-exit:"
# Run by the remote Python: reads the agent's source (its length on the first line),
# then runs it as __main__; the job's tar follows on the same stdin.
BOOTSTRAP = ("import sys;n=int(sys.stdin.buffer.readline());"
             "exec(compile(sys.stdin.buffer.read(n),'device_agent.py','exec'),"
             "{'__name__':'__main__','__file__':'device_agent.py'})")
SCHEMES = ("process", "ssh://", "adb://", "cmd:")
OPTIONS = {
    "process": {"timeout", "python"},
    "ssh": {"timeout", "python", "connect_timeout", "identity", "config"},
    "adb": {"timeout", "runner", "dir", "args", "adb"},
    "cmd": set(),
}


class SpecError(ValueError):
    """A malformed runner spec; the message names it and says what is expected."""


@dataclass(frozen=True)
class RunnerSpec:
    """One device: how to reach it (`kind`, `user`, `host`, `port`, `command`) and its
    options (`?key=value&...`). `text` is the spec as given (for the repro command);
    `name` is what records show (no options: they may hold paths to keys)."""

    text: str
    kind: str                  # process | ssh | adb | cmd
    host: str = ""             # ssh host, adb serial
    user: str = ""
    port: int | None = None
    command: str = ""          # cmd: the template
    options: tuple = ()        # sorted (key, value) pairs

    @property
    def name(self) -> str:
        if self.kind == "process":
            return "process"
        if self.kind == "cmd":
            return f"cmd:{self.command}"
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.kind}://{user}{self.host}{port}"

    def option(self, key: str, default=None):
        return dict(self.options).get(key, default)

    @property
    def timeout(self) -> float:
        return float(self.option("timeout", DEFAULT_TIMEOUT))

    @property
    def exclusive(self) -> bool:
        """One program at a time: every device but a fresh local process."""
        return self.kind != "process"


def parse_spec(text: str) -> RunnerSpec:
    text = text.strip()
    if text.startswith("cmd:"):
        template = text[len("cmd:"):].strip()
        if "{pte}" not in template and "{job}" not in template:
            raise SpecError(f"runner {text!r}: a cmd: template needs {{pte}} (or {{job}}), "
                            f"e.g. cmd:my_runner {{pte}} {{inputs}} {{outputs}}")
        return RunnerSpec(text, "cmd", command=template)
    base, _, query = text.partition("?")
    try:
        options = tuple(sorted(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))))
    except ValueError:
        raise SpecError(f"runner {text!r}: options go as ?key=value&key=value") from None
    if base == "process":
        kind, host, user, port = "process", "", "", None
    else:
        match = re.fullmatch(r"(ssh|adb)://(?:([^@/:]+)@)?([^@/:]+)(?::(\d+))?/?", base)
        if not match:
            raise SpecError(f"runner {text!r} is none of: process, ssh://[user@]host[:port], "
                            f"adb://SERIAL?runner=PATH, cmd:TEMPLATE")
        kind, user, host, port_text = match.groups()
        user = user or ""
        port = int(port_text) if port_text else None
        if kind == "adb" and (user or port):
            raise SpecError(f"runner {text!r}: adb://SERIAL takes no user or port")
    unknown = sorted({key for key, _ in options} - OPTIONS[kind])
    if unknown:
        raise SpecError(f"runner {text!r}: unknown option(s) {', '.join(unknown)}; "
                        f"{kind} takes {', '.join(sorted(OPTIONS[kind]))}")
    spec = RunnerSpec(text, kind, host=host, user=user, port=port, options=options)
    for key in ("timeout", "connect_timeout"):
        value = spec.option(key)
        if value is not None:
            try:
                ok = float(value) > 0
            except ValueError:
                ok = False
            if not ok:
                raise SpecError(f"runner {text!r}: {key} wants a positive number of seconds, "
                                f"got {value!r}")
    if kind == "adb" and not spec.option("runner"):
        raise SpecError(f"runner {text!r}: adb:// needs ?runner=PATH, the runner binary on "
                        f"the device")
    return spec


def split_specs(text: str) -> list[RunnerSpec]:
    """A pool: specs separated by commas (a cmd: template, which may hold commas, must
    be the only one)."""
    if text.strip().startswith("cmd:"):
        return [parse_spec(text)]
    return [parse_spec(part) for part in text.split(",") if part.strip()]


class DeviceLost(RuntimeError):
    """The device did not answer (connection refused or dropped, no answer in time)."""


@dataclass
class Reply:
    """What came back from one exchange: the output folder (a local temp folder) and
    how long the exchange took on the host's clock."""

    folder: str
    seconds: float
    exit_detail: str = ""       # how the executing process ended, when not cleanly
    crashed_by: str | None = None  # the signal that killed it, if one did


def _die_with_parent() -> None:
    """In the child, before exec: be killed when the test's process dies (its time limit
    kills it with SIGKILL), so no ssh or runner process outlives the test on its device."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - Linux only; elsewhere the timeout still holds
        pass


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return f"signal {number}"


def _tail(text: bytes | str, lines: int = 6) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    kept = [line for line in text.strip().splitlines() if EXIT_MARK not in line]
    return "\n".join(kept[-lines:])


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _untar(data: bytes, folder: str) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        for member in archive.getmembers():
            name = os.path.basename(member.name)
            source = archive.extractfile(member) if member.isfile() else None
            if source is None or name in ("", ".", ".."):
                continue
            with open(os.path.join(folder, name), "wb") as handle:
                shutil.copyfileobj(source, handle)


def _run(argv, spec: RunnerSpec, data: bytes = b"", shell: bool = False, env=None):
    """One command with the spec's time limit; no answer in time is a lost device."""
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=spec.timeout,
                              shell=shell, env=env, preexec_fn=_die_with_parent)
    except subprocess.TimeoutExpired:
        raise DeviceLost(f"no answer within {spec.timeout:g} s") from None
    except OSError as error:
        raise DeviceLost(f"cannot start {argv if shell else argv[0]}: {error}") from None


def ssh_argv(spec: RunnerSpec, remote_command: str) -> list[str]:
    """ssh that never prompts (BatchMode), gives up connecting after ConnectTimeout and
    notices a dead connection within ServerAliveInterval x ServerAliveCountMax."""
    argv = ["ssh", "-o", "BatchMode=yes",
            "-o", f"ConnectTimeout={int(float(spec.option('connect_timeout', DEFAULT_CONNECT_TIMEOUT)))}",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"]
    if spec.option("config"):
        argv += ["-F", spec.option("config")]
    if spec.option("identity"):
        argv += ["-i", spec.option("identity"), "-o", "IdentitiesOnly=yes"]
    if spec.port is not None:
        argv += ["-p", str(spec.port)]
    if spec.user:
        argv += ["-l", spec.user]
    return [*argv, spec.host, remote_command]


def _stream_exchange(argv: list[str], spec: RunnerSpec, data: bytes, marked: bool) -> Reply:
    """process and ssh: the job's tar on the agent's stdin, the outputs' tar from its
    stdout. `marked`: the exit status comes after EXIT_MARK on stderr (ssh)."""
    started = time.perf_counter()
    done = _run(argv, spec, data)
    seconds = time.perf_counter() - started
    stderr = done.stderr.decode("utf-8", "replace")
    if marked:
        found = re.findall(re.escape(EXIT_MARK) + r"(\d+)", stderr)
        if not found:
            raise DeviceLost(f"ssh exited {done.returncode}: {_tail(stderr, 3) or 'no message'}")
        code = int(found[-1])
        signalled = code - 128 if code > 128 else None
    else:
        code = done.returncode
        signalled = -code if code < 0 else None
    folder = tempfile.mkdtemp(prefix="etsuite-out-")
    if signalled:
        return Reply(folder, seconds, _tail(stderr), crashed_by=_signal_name(signalled))
    if code != 0 or not done.stdout:
        return Reply(folder, seconds, f"the agent exited {code}: {_tail(stderr)}")
    try:
        _untar(done.stdout, folder)
    except tarfile.TarError as error:
        return Reply(folder, seconds, f"the agent's answer is not a tar ({error}): {_tail(stderr)}")
    return Reply(folder, seconds)


def _exchange_process(spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
    argv = [spec.option("python", sys.executable), AGENT, "--stream"]
    return _stream_exchange(argv, spec, _tar(files), marked=False)


def _exchange_ssh(spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
    python = spec.option("python", "python3")
    remote = f"{shlex.quote(python)} -c {shlex.quote(BOOTSTRAP)} --stream; echo {EXIT_MARK}$? >&2"
    with open(AGENT, "rb") as handle:
        source = handle.read()
    data = f"{len(source)}\n".encode() + source + _tar(files)
    return _stream_exchange(ssh_argv(spec, remote), spec, data, marked=True)


def _placeholders(job: str, out: str, input_names: list[str]) -> dict[str, str]:
    return {"pte": os.path.join(job, exchange.PROGRAM),
            "inputs": os.path.join(job, exchange.MANIFEST),
            "outputs": out, "job": job,
            "input_files": ",".join(os.path.join(job, n) for n in input_names)}


def fill_template(template: str, values: dict[str, str]) -> str:
    """The template with each {name} replaced by its shell-quoted value (an unknown
    name is left as it is: a shell's ${VAR} stays a shell variable)."""
    return re.sub(r"(?<!\$)\{(\w+)\}",
                  lambda m: shlex.quote(values[m.group(1)]) if m.group(1) in values else m.group(0),
                  template)


def _exchange_cmd(spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
    scratch = tempfile.mkdtemp(prefix="etsuite-cmd-")
    job, out = os.path.join(scratch, "job"), os.path.join(scratch, "out")
    exchange.write_folder(job, files)
    os.makedirs(out)
    inputs = sorted(n for n in files if n.startswith("input_"))
    command = fill_template(spec.command, _placeholders(job, out, inputs))
    started = time.perf_counter()
    done = _run(command, spec, shell=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(job, ignore_errors=True)
    code = done.returncode
    # sh reports a command killed by signal N as 128+N; a direct child as -N
    signalled = -code if code < 0 else code - 128 if code > 128 else None
    if signalled and not os.path.exists(os.path.join(out, exchange.MANIFEST)):
        return Reply(out, seconds, _tail(done.stderr), crashed_by=_signal_name(signalled))
    if not os.path.exists(os.path.join(out, exchange.MANIFEST)):
        return Reply(out, seconds, f"the command exited {code}: {_tail(done.stderr)}")
    return Reply(out, seconds)


def adb_commands(spec: RunnerSpec, local_job: str, names: list[str], local_out: str) -> list:
    """The adb steps of one exchange, in order: (argv, what a failure means). Written
    as data so that they can be read and checked without a device."""
    adb = [spec.option("adb", "adb"), "-s", spec.host]
    remote = spec.option("dir", "/data/local/tmp/etsuite").rstrip("/")
    values = {"pte": f"{remote}/job/{exchange.PROGRAM}", "inputs": f"{remote}/job/{exchange.MANIFEST}",
              "outputs": f"{remote}/out", "job": f"{remote}/job",
              "input_files": ",".join(f"{remote}/job/{n}" for n in names if n.startswith("input_"))}
    run = fill_template(f"{shlex.quote(spec.option('runner'))} "
                        f"{spec.option('args', '{pte} {inputs} {outputs}')}", values)
    return [
        ([*adb, "shell", f"rm -rf {shlex.quote(remote)} && mkdir -p {shlex.quote(remote)}/job "
                         f"{shlex.quote(remote)}/out"], "prepare"),
        ([*adb, "push", *(os.path.join(local_job, n) for n in names), f"{remote}/job/"], "push"),
        ([*adb, "shell", f"cd {shlex.quote(remote)} && {run}; echo {EXIT_MARK}$?"], "run"),
        ([*adb, "pull", f"{remote}/out/.", local_out], "pull"),
        ([*adb, "shell", f"rm -rf {shlex.quote(remote)}"], "clean"),
    ]


def _exchange_adb(spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
    """Not exercised on this project's machine (no device): see
    docs/how-to/run-programs-elsewhere.md."""
    scratch = tempfile.mkdtemp(prefix="etsuite-adb-")
    job, out = os.path.join(scratch, "job"), os.path.join(scratch, "out")
    exchange.write_folder(job, files)
    os.makedirs(out)
    started = time.perf_counter()
    detail, crashed = "", None
    for argv, step in adb_commands(spec, job, sorted(files), out):
        done = _run(argv, spec)
        text = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
        if step != "run" and done.returncode != 0:
            if step == "clean":
                continue
            raise DeviceLost(f"adb {step} exited {done.returncode}: {_tail(text, 3)}")
        if step == "run":
            found = re.findall(re.escape(EXIT_MARK) + r"(\d+)", text)
            if not found:
                raise DeviceLost(f"adb shell ended without the runner's exit status: {_tail(text, 3)}")
            code = int(found[-1])
            if code > 128:
                crashed = _signal_name(code - 128)
            if code:
                detail = f"the runner exited {code}: {_tail(text)}"
    shutil.rmtree(job, ignore_errors=True)
    return Reply(out, time.perf_counter() - started, detail, crashed)


def _lost(what: str) -> RuntimeVerdict:
    """The test's device stopped answering: fail_infra, the device named."""
    return RuntimeVerdict(Status.FAIL_INFRA, f"runner lost: {what}", stage="run", rerun=False)


EXCHANGES = {"process": _exchange_process, "ssh": _exchange_ssh, "cmd": _exchange_cmd,
             "adb": _exchange_adb}


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
    carries_state = False  # each execute is one exchange: the program is loaded afresh

    def __post_init__(self):
        if not self.name:
            names = [spec.name for spec in self.specs]
            object.__setattr__(self, "name", names[0] if len(names) == 1
                               else f"pool({', '.join(names)})")

    @property
    def repro_option(self) -> str:
        return self.option

    def missing(self, program) -> str | None:
        return None  # only the device can tell: it answers "missing" (lowered_not_run)

    def load(self, program) -> Job:
        return Job(bytes(program.pte), delegate_ids(program))

    def execution(self, job: Job) -> Execution | None:
        return job.execution

    def execute(self, job: Job, inputs: list) -> list:
        files = exchange.job_files(job.pte, list(inputs), job.delegates)
        pool = DevicePool(self.pool_folder)
        by_name = {spec.name: spec for spec in self.specs}
        exclusive = any(spec.exclusive for spec in self.specs)
        try:
            with pool.acquire(list(by_name), exclusive) as (name, waited):
                spec = by_name[name]
                job.execution = Execution(name, {"wait": waited} if waited else {})
                try:
                    reply = EXCHANGES[spec.kind](spec, files)
                except DeviceLost as lost:
                    if not spec.exclusive:  # a local process: the program hung, not a device
                        raise RuntimeVerdict(Status.FAIL_TIMEOUT, f"runner {name}: {lost}",
                                             stage="run") from None
                    pool.mark_lost(name, str(lost))
                    raise _lost(f"{name} ({lost})") from None
        except PoolExhausted as error:
            raise _lost(str(error)) from None
        try:
            return self._outputs(spec, reply, job.execution)
        finally:
            shutil.rmtree(os.path.dirname(reply.folder) if spec.kind in ("cmd", "adb")
                          else reply.folder, ignore_errors=True)

    def _outputs(self, spec: RunnerSpec, reply: Reply, execution: Execution) -> list:
        """The outputs, or the status the device's answer decides."""
        name = spec.name
        execution.timings["transfer"] = round(reply.seconds, 4)
        if reply.crashed_by:
            detail = f": {reply.exit_detail}" if reply.exit_detail else ""
            raise RuntimeVerdict(Status.FAIL_CRASH,
                                 f"runner {name}: the process executing the program was killed "
                                 f"by {reply.crashed_by}{detail}", stage="run")
        try:
            manifest = exchange.read_manifest(reply.folder)
        except exchange.ExchangeError as error:
            raise RuntimeVerdict(Status.FAIL_INFRA, f"runner {name} gave no answer: "
                                 f"{reply.exit_detail or error}", stage="run",
                                 rerun=False) from None
        spent = {k: float(v) for k, v in (manifest.get("timings") or {}).items()
                 if k in ("startup", "load", "run") and isinstance(v, (int, float))}
        execution.timings.update(spent)
        execution.timings["transfer"] = round(max(reply.seconds - sum(spent.values()), 0.0), 4)
        if manifest["status"] == "missing":
            raise RuntimeVerdict(Status.LOWERED_NOT_RUN,
                                 f"runner {name}: {manifest.get('reason') or 'cannot run it'}")
        if manifest["status"] == "error":
            stage = "load" if manifest.get("stage") == "load" else "run"
            raise RuntimeVerdict(Status.FAIL_LOAD if stage == "load" else Status.FAIL_RUN,
                                 f"runner {name}: {manifest.get('error') or 'failed'}", stage=stage)
        return exchange.read_values(reply.folder, manifest.get("outputs", []))
