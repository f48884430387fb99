"""Runner kinds: how a program reaches a device and its outputs come back. A runner is
chosen by a spec (remote/spec.py; docs/how-to/run-programs-elsewhere.md) and each spec
belongs to one kind:

    process                          a fresh local process with this host's runtime
    ssh://[user@]host[:port][?opts]  a host over ssh, running agent.py there
    adb://SERIAL?runner=PATH[&opts]  an Android device: push, run a runner binary, pull
    cmd:TEMPLATE                     any command with {pte} {inputs} {outputs} ({job})
    native[?iterations=N]            a fresh local process of the native C++ runner

A kind is an object with the `RunnerKind` shape. The five above are `BUILTIN_KINDS`; a
plugin or conftest adds its own through the `pytest_etsuite_runner_kinds` hook, the way
pytest-xdist takes a scheduler from `pytest_xdist_make_scheduler`, so a new transport
is a class of its own, not an edit of this module. Every kind exchanges the same files
(remote/exchange.py); what the answer decides is remote/runtime.py's. Torch-free.
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from etsuite.backends.harness.private_paths import NotPrivate
from etsuite.backends.harness.remote import agent, exchange, native, resident
from etsuite.backends.harness.remote.resident import Resident
from etsuite.backends.harness.remote.spec import (  # RunnerKind and Reply: for plugins
    Reply,
    RunnerKind,
    RunnerSpec,
    SpecError,
    parse_address,
    parse_options,
)

if TYPE_CHECKING:
    import pytest

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")
DEFAULT_CONNECT_TIMEOUT = 10   # ssh's ConnectTimeout
# The remote shell prints the agent's exit status after this, on stderr: ssh's own exit
# status cannot tell a dropped connection (255) from an agent that exited 255.
EXIT_MARK = "etsuite-agent-exit:"
# Run by the remote Python: reads the agent's source (its length on the first line),
# then runs it as __main__; the job's tar follows on the same stdin.
BOOTSTRAP = ("import sys;n=int(sys.stdin.buffer.readline());"
             "exec(compile(sys.stdin.buffer.read(n),'agent.py','exec'),"
             "{'__name__':'__main__','__file__':'agent.py'})")


class DeviceLost(RuntimeError):
    """The device did not answer (connection refused or dropped, no answer in time)."""


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


def _tar(files: dict[str, bytes], ustar: bool = False) -> bytes:
    """`ustar`: the plain form the native runner reads."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w",
                      format=tarfile.USTAR_FORMAT if ustar else tarfile.DEFAULT_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _untar(data: bytes, folder: str) -> None:
    """An answer's tar into `folder` (agent.extract_flat: plain regular files only, under
    the exchange's byte limit); ArchiveError when it is not such a tar."""
    agent.extract_flat(io.BytesIO(data), folder)


def _run(argv: str | list[str], spec: RunnerSpec, data: bytes = b"", shell: bool = False,
         env: dict[str, str] | None = None, tied: bool = False
         ) -> subprocess.CompletedProcess[bytes]:
    """One command with the spec's time limit; no answer in time is a lost device.
    `tied`: the command ties its life to ours itself (the native runner's
    --die-with-parent), so it starts without a preexec function, which would force a fork
    of this large process (40 ms here, against 4 ms for the spawn Python uses without)."""
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=spec.timeout,
                              shell=shell, env=env,
                              preexec_fn=None if tied else _die_with_parent)
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
    return [*argv, "--", spec.host, remote_command]  # "--": the host is never an option


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
    except agent.ArchiveError as error:
        return Reply(folder, seconds, f"the agent's answer is refused ({error}): {_tail(stderr)}")
    return Reply(folder, seconds)


def _keeps_agent(spec: RunnerSpec) -> bool:
    """Whether the spec's device keeps one agent for all its jobs (remote/resident.py):
    yes unless `resident=no`."""
    value = spec.option("resident", "yes")
    if value not in ("yes", "no"):
        raise SpecError(f"runner {spec.text!r}: resident takes yes or no, got {value!r}")
    return value == "yes"


def resident_exchange(kind: RunnerKind, spec: RunnerSpec, files: dict[str, bytes],
                      folder: str) -> Reply | None:
    """The job through the device's resident agent (remote/resident.py), when its kind
    keeps one (`kind.resident(spec)`); None when it does not (the kind's own exchange
    runs). `folder`: the run's pool folder, where the relay's socket lives."""
    keeping = getattr(kind, "resident", None)
    keeper = keeping(spec) if keeping is not None else None
    if keeper is None:
        return None
    try:
        answer = resident.exchange(folder, spec.name, keeper, spec.exclusive,
                                   _tar(files, ustar=True), spec.timeout)
    except NotPrivate:
        raise  # another user's folder or relay: not the device's fault (runtime.py)
    except (OSError, ValueError) as error:
        raise DeviceLost(f"its resident agent: {error}") from None
    if answer["status"] == "lost":
        raise DeviceLost(answer.get("detail") or "its resident agent is lost")
    folder_out = tempfile.mkdtemp(prefix="etsuite-out-")
    if answer["status"] == "broken":  # no manifest: the runtime says fail_infra, with why
        return Reply(folder_out, answer["seconds"], answer.get("detail") or "a broken answer")
    if answer["status"] == "crashed":
        signalled = answer.get("signal")
        return Reply(folder_out, answer["seconds"], answer.get("detail", ""),
                     crashed_by=_signal_name(signalled) if signalled else None)
    try:
        _untar(answer["tar"], folder_out)
    except agent.ArchiveError as error:
        return Reply(folder_out, answer["seconds"], f"the agent's answer is refused ({error})")
    return Reply(folder_out, answer["seconds"])


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


def _exchange_in_folders(spec: RunnerSpec, files: dict[str, bytes],
                         command: Callable[[str, str, list[str]], str | list[str]],
                         tied: bool = False) -> Reply:
    """cmd and native: the job written to a local folder, `command(job, out, input names)`
    run (a shell string, or an argv list run directly; `tied` as for _run), the answer
    read from `out`."""
    scratch = tempfile.mkdtemp(prefix=f"etsuite-{spec.kind}-")
    job, out = os.path.join(scratch, "job"), os.path.join(scratch, "out")
    exchange.write_folder(job, files)
    os.makedirs(out)
    argv = command(job, out, sorted(n for n in files if n.startswith("input_")))
    started = time.perf_counter()
    done = _run(argv, spec, shell=isinstance(argv, str), tied=tied)
    seconds = time.perf_counter() - started
    shutil.rmtree(job, ignore_errors=True)
    code = done.returncode
    # sh reports a command killed by signal N as 128+N; a direct child as -N
    signalled = -code if code < 0 else code - 128 if code > 128 else None
    if signalled and not os.path.exists(os.path.join(out, exchange.MANIFEST)):
        return Reply(out, seconds, _tail(done.stderr), crashed_by=_signal_name(signalled),
                     scratch=scratch)
    if not os.path.exists(os.path.join(out, exchange.MANIFEST)):
        return Reply(out, seconds, f"the command exited {code}: {_tail(done.stderr)}",
                     scratch=scratch)
    return Reply(out, seconds, scratch=scratch)


def _exchange_cmd(spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
    return _exchange_in_folders(spec, files, lambda job, out, inputs: fill_template(
        spec.command, _placeholders(job, out, inputs)))


DEFAULT_ADB_DIR = "/data/local/tmp/etsuite"


def adb_dir(spec: RunnerSpec) -> str:
    """The device folder a job's own subfolder goes in (`dir`): an absolute path without
    `.` or `..` and not the root; a SpecError otherwise."""
    folder = spec.option("dir", DEFAULT_ADB_DIR).rstrip("/")
    parts = folder.split("/")[1:]
    if not folder.startswith("/") or not parts or any(p in ("", ".", "..") for p in parts):
        raise SpecError(f"runner {spec.text!r}: dir wants an absolute folder on the device "
                        f"other than /, without . or .., got {spec.option('dir')!r}")
    return folder


def adb_commands(spec: RunnerSpec, local_job: str, names: list[str], local_out: str,
                 job_name: str) -> list:
    """The adb steps of one exchange, in order: (argv, what a failure means). Written
    as data so that they can be read and checked without a device. The job lives in a
    subfolder `job_name` of `dir` that this exchange makes, and only it is removed:
    nothing else in `dir` is touched."""
    adb = [spec.option("adb", "adb"), "-s", spec.host]
    if not agent.plain_name(job_name):
        raise ValueError(f"a job's folder on the device is a plain name, not {job_name!r}")
    remote = f"{adb_dir(spec)}/{job_name}"
    values = {"pte": f"{remote}/job/{exchange.PROGRAM}", "inputs": f"{remote}/job/{exchange.MANIFEST}",
              "outputs": f"{remote}/out", "job": f"{remote}/job",
              "input_files": ",".join(f"{remote}/job/{n}" for n in names if n.startswith("input_"))}
    run = fill_template(f"{shlex.quote(spec.option('runner'))} "
                        f"{spec.option('args', '{pte} {inputs} {outputs}')}", values)
    return [
        ([*adb, "shell", f"mkdir -p {shlex.quote(adb_dir(spec))} && mkdir {shlex.quote(remote)} "
                         f"{shlex.quote(remote)}/job {shlex.quote(remote)}/out"], "prepare"),
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
    for argv, step in adb_commands(spec, job, sorted(files), out, os.path.basename(scratch)):
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
    return Reply(out, time.perf_counter() - started, detail, crashed, scratch=scratch)


@dataclass(frozen=True)
class ProcessKind:
    """A fresh local Python process running the agent: this host's runtime, contained."""

    name: str = "process"
    form: str = "process"
    exclusive: bool = False
    takes_rest: bool = False
    options: frozenset[str] = frozenset({"timeout", "python", "resident"})

    def claims(self, text: str) -> bool:
        return text.partition("?")[0] == "process"

    def resident(self, spec: RunnerSpec) -> Resident | None:
        if not _keeps_agent(spec):
            return None
        return Resident((spec.option("python", sys.executable), AGENT, "--serve"))

    def parse(self, text: str) -> RunnerSpec:
        options = parse_options(text, text.partition("?")[2], self.options, self.name)
        spec = RunnerSpec(text, self.name, "process", options=options, runner_kind=self)
        _keeps_agent(spec)  # a bad value is a SpecError now, not at the first job
        return spec

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        argv = [spec.option("python", sys.executable), AGENT, "--stream"]
        return _stream_exchange(argv, spec, _tar(files), marked=False)


def _address_spec(kind: SshKind | AdbKind, text: str) -> RunnerSpec:
    user, host, port, query = parse_address(text, kind.name)
    options = parse_options(text, query, kind.options, kind.name)
    name = f"{kind.name}://{f'{user}@' if user else ''}{host}{f':{port}' if port else ''}"
    return RunnerSpec(text, kind.name, name, host=host, user=user, port=port,
                      options=options, runner_kind=kind)


@dataclass(frozen=True)
class SshKind:
    """A host over ssh: the agent's source and the job travel on one connection's stdin."""

    name: str = "ssh"
    form: str = "ssh://[user@]host[:port]"
    exclusive: bool = True
    takes_rest: bool = False
    options: frozenset[str] = frozenset({"timeout", "python", "connect_timeout", "identity",
                                         "config", "resident", "native"})

    def claims(self, text: str) -> bool:
        return text.startswith("ssh://")

    def parse(self, text: str) -> RunnerSpec:
        spec = _address_spec(self, text)
        keeps = _keeps_agent(spec)
        if spec.option("native") and not keeps:
            raise SpecError(f"runner {text!r}: native=PATH runs as a resident agent: "
                            f"leave out resident=no")
        return spec

    def resident(self, spec: RunnerSpec) -> Resident | None:
        """The agent's source on stdin, then jobs; or the native runner at `native=PATH`
        on the host (built for it: make native-runner there, or cross-compiled; its
        exchange format version is checked before the first job)."""
        if not _keeps_agent(spec):
            return None
        if spec.option("native"):
            remote = f"{shlex.quote(spec.option('native'))} --serve; echo {EXIT_MARK}$? >&2"
            return Resident(tuple(ssh_argv(spec, remote)), marked=True)
        python = spec.option("python", "python3")
        remote = f"{shlex.quote(python)} -c {shlex.quote(BOOTSTRAP)} --serve; echo {EXIT_MARK}$? >&2"
        with open(AGENT, "rb") as handle:
            source = handle.read()
        return Resident(tuple(ssh_argv(spec, remote)), f"{len(source)}\n".encode() + source,
                        marked=True)

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        python = spec.option("python", "python3")
        remote = f"{shlex.quote(python)} -c {shlex.quote(BOOTSTRAP)} --stream; echo {EXIT_MARK}$? >&2"
        with open(AGENT, "rb") as handle:
            source = handle.read()
        data = f"{len(source)}\n".encode() + source + _tar(files)
        return _stream_exchange(ssh_argv(spec, remote), spec, data, marked=True)


@dataclass(frozen=True)
class AdbKind:
    """An Android device: push the job, run a runner binary there, pull the outputs."""

    name: str = "adb"
    form: str = "adb://SERIAL?runner=PATH"
    exclusive: bool = True
    takes_rest: bool = False
    options: frozenset[str] = frozenset({"timeout", "runner", "dir", "args", "adb"})

    def claims(self, text: str) -> bool:
        return text.startswith("adb://")

    def parse(self, text: str) -> RunnerSpec:
        spec = _address_spec(self, text)
        if spec.user or spec.port:
            raise SpecError(f"runner {text!r}: adb://SERIAL takes no user or port")
        if not spec.option("runner"):
            raise SpecError(f"runner {text!r}: adb:// needs ?runner=PATH, the runner binary on "
                            f"the device")
        adb_dir(spec)
        return spec

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        return _exchange_adb(spec, files)


@dataclass(frozen=True)
class CmdKind:
    """Any command of the user's, given the job's paths through a template."""

    name: str = "cmd"
    form: str = "cmd:TEMPLATE"
    exclusive: bool = True
    takes_rest: bool = True

    def claims(self, text: str) -> bool:
        return text.startswith("cmd:")

    def parse(self, text: str) -> RunnerSpec:
        template = text[len("cmd:"):].strip()
        if "{pte}" not in template and "{job}" not in template:
            raise SpecError(f"runner {text!r}: a cmd: template needs {{pte}} (or {{job}}), "
                            f"e.g. cmd:my_runner {{pte}} {{inputs}} {{outputs}}")
        return RunnerSpec(text, self.name, f"cmd:{template}", command=template, runner_kind=self)

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        return _exchange_cmd(spec, files)


@dataclass(frozen=True)
class NativeKind:
    """A fresh local process of the native runner (remote/native.py builds it on first use
    from remote/cpp/ against this host's executorch wheel): the program as it ships, no
    Python. `iterations`: timed calls after the first (default 5); `binary`: a runner
    built elsewhere, instead of the cached build."""

    name: str = "native"
    form: str = "native[?iterations=N]"
    exclusive: bool = False
    takes_rest: bool = False
    options: frozenset[str] = frozenset({"timeout", "iterations", "binary", "resident"})

    def claims(self, text: str) -> bool:
        return text.partition("?")[0] == "native"

    def parse(self, text: str) -> RunnerSpec:
        options = parse_options(text, text.partition("?")[2], self.options, self.name)
        iterations = dict(options).get("iterations", "0")
        if not iterations.isdigit():
            raise SpecError(f"runner {text!r}: iterations wants a count >= 0, got {iterations!r}")
        spec = RunnerSpec(text, self.name, "native", options=options, runner_kind=self)
        _keeps_agent(spec)
        return spec

    def resident(self, spec: RunnerSpec) -> Resident | None:
        if not _keeps_agent(spec):
            return None
        iterations = ("--iterations", spec.option("iterations")) if spec.option("iterations") else ()
        return Resident((native.binary_path(spec.option("binary")), "--die-with-parent",
                         "--serve", *iterations))

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        try:
            binary = native.binary_path(spec.option("binary"))
        except native.BuildError as error:  # no manifest: the runtime says fail_infra
            return Reply(tempfile.mkdtemp(prefix="etsuite-native-"), 0.0, str(error))
        iterations = ["--iterations", spec.option("iterations")] if spec.option("iterations") else []
        return _exchange_in_folders(spec, files, lambda job, out, inputs: [
            binary, "--die-with-parent", "--job", job, "--outputs", out, *iterations], tied=True)


BUILTIN_KINDS: tuple[RunnerKind, ...] = (ProcessKind(), SshKind(), AdbKind(), CmdKind(),
                                         NativeKind())


def known_kinds(config: pytest.Config) -> tuple[RunnerKind, ...]:
    """The built-in kinds, then those plugins add (`pytest_etsuite_runner_kinds`); a name
    taken twice is a SpecError (the session makes it a usage error)."""
    added = [kind for kinds in config.hook.pytest_etsuite_runner_kinds(config=config)
             for kind in kinds or ()]
    kinds = (*BUILTIN_KINDS, *added)
    names = [kind.name for kind in kinds]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise SpecError(f"runner kind(s) {', '.join(twice)} defined twice "
                        f"(pytest_etsuite_runner_kinds)")
    return kinds


def kind_names(kinds: Sequence[RunnerKind]) -> str:
    return ", ".join(kind.name for kind in kinds)


def kind_of(text: str, kinds: Sequence[RunnerKind]) -> RunnerKind | None:
    """The first of `kinds` that claims the spec text."""
    return next((kind for kind in kinds if kind.claims(text.strip())), None)


def parse_spec(text: str, kinds: Sequence[RunnerKind] | None = None) -> RunnerSpec:
    """The spec parsed by the first of `kinds` that claims it (default: the built-in
    kinds); a text no kind claims is a SpecError listing the forms each kind takes."""
    kinds = BUILTIN_KINDS if kinds is None else kinds
    text = text.strip()
    kind = kind_of(text, kinds)
    if kind is None:
        raise SpecError(f"runner {text!r} is none of: {', '.join(k.form for k in kinds)}")
    return kind.parse(text)


def split_specs(text: str, kinds: Sequence[RunnerKind] | None = None) -> list[RunnerSpec]:
    """A pool: specs separated by commas. A spec whose kind takes the rest of the text
    (a cmd: template, which may hold commas) must be the only one."""
    kinds = BUILTIN_KINDS if kinds is None else kinds
    first = kind_of(text, kinds)
    if first is not None and first.takes_rest:
        return [first.parse(text.strip())]
    return [parse_spec(part, kinds) for part in text.split(",") if part.strip()]
