"""Runners, for real: an OpenSSH server started here on 127.0.0.1 (its own port, host key,
client key and sshd_config in tmp_path) executes real XNNPACK and portable programs
through the device agent, and must give the verdicts and the output bytes the
in-process runtime gives; two such servers form a pool under xdist and one is stopped in
the middle of a test; a `process` runner contains an injected native abort; a `cmd:`
runner calls the agent as a user's command would. Nothing is mocked: the sessions are
real pytest sessions (conftest.run_suite) and the devices real processes.

Needs Debian's openssh-server (`.ci/run` installs it); without sshd these tests fail
with the install command, they do not skip.
"""

import json
import multiprocessing
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from etsuite.backends.harness.remote import agent, exchange
from etsuite.backends.harness.remote.kinds import adb_commands, parse_spec, split_specs
from etsuite.backends.harness.remote.pool import (
    LOCKS_ENV,
    DevicePool,
    PoolExhausted,
    device_lock_folder,
)
from etsuite.backends.harness.remote.spec import SpecError
from etsuite.tools.report import summary

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
NEEDS_SSHD = ("the runner tests need OpenSSH's server: apt-get install -y openssh-server "
              "(.ci/run installs it)")

PROGRAMS = """
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 5)

    def forward(self, x):
        return torch.relu(self.linear(x))


class TwoOutputs(torch.nn.Module):
    def forward(self, x):
        return x.argmax(dim=-1), x * 2.0


def test_add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4, 3), torch.randn(4, 3)))


def test_linear_relu(test_runner):
    test_runner.lower_and_run_model(LinearRelu(), (torch.randn(2, 8),))


def test_two_outputs(test_runner):
    test_runner.lower_and_run_model(TwoOutputs(), (torch.randn(3, 6),))
"""

# Four tiny tests for the pool: enough that both devices get work after one is lost.
POOL_PROGRAMS = """
import pytest
import torch


class Scale(torch.nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor + 1.0


@pytest.mark.parametrize("factor", [1, 2, 3, 4])
def test_scale(test_runner, factor):
    test_runner.lower_and_run_model(Scale(float(factor)), (torch.randn(5),))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (sshd forks one per connection, which runs the agent)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class SshServer:
    """One sshd on 127.0.0.1 with everything of its own under `folder`. `environment`
    becomes sshd_config SetEnv lines: what the agent sees in its sessions."""

    def __init__(self, folder: Path, environment: dict | None = None):
        if not os.path.exists(SSHD):
            pytest.fail(NEEDS_SSHD, pytrace=False)
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = free_port()
        for name in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(folder / name)], check=True)
        (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
        lines = [f"Port {self.port}", "ListenAddress 127.0.0.1",
                 f"HostKey {folder / 'host_key'}", f"PidFile {folder / 'sshd.pid'}",
                 f"AuthorizedKeysFile {folder / 'authorized_keys'}", "UsePAM no",
                 "StrictModes no", "PasswordAuthentication no",
                 "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password",
                 "LogLevel ERROR"]
        lines += [f"SetEnv {key}={value}" for key, value in (environment or {}).items()]
        (folder / "sshd_config").write_text("\n".join(lines) + "\n")
        (folder / "ssh_config").write_text(
            f"Host *\n  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n"
            f"  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n")
        try:
            os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation folder
        except PermissionError:
            pass  # not root: it must exist already (sshd says so if it does not)
        self.log = open(folder / "sshd.log", "wb")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"sshd exited {self.process.returncode}: "
                            f"{(folder / 'sshd.log').read_text()}", pytrace=False)
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.05)
        else:
            pytest.fail(f"sshd did not listen on port {self.port} within 20 s", pytrace=False)

    @property
    def name(self) -> str:
        return f"ssh://127.0.0.1:{self.port}"

    @property
    def spec(self) -> str:
        return f"{self.name}?config={self.folder / 'ssh_config'}&python={sys.executable}"

    def stop(self) -> None:
        """sshd, its per-connection children and whatever they run (the agent)."""
        if self.process.poll() is None:
            for pid in [*descendants(self.process.pid), self.process.pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.process.wait()
        self.log.close()


@pytest.fixture
def ssh_servers(tmp_path):
    """ssh_servers(count, environment=None) -> [SshServer]; stopped at teardown."""
    started = []

    def start(count=1, environment=None):
        for _ in range(count):
            started.append(SshServer(tmp_path / f"sshd{len(started)}", environment))
        return started[-count:]

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def programs(pytester):
    pytester.makepyfile(test_programs=PROGRAMS)
    return pytester


def by_test(run) -> dict:
    return {r["test_id"]: r for r in run.records()}


def actual_outputs(artifacts: Path) -> dict:
    """{test id folder: the runtime's outputs as bytes, dtype and shape} from artifacts."""
    found = {}
    for path in sorted(artifacts.glob("*/subtest0/actual.pt")):
        tensors = torch.load(path)
        found[path.parent.parent.name] = [
            (t.dtype, tuple(t.shape), exchange.tensor_bytes(t)) for t in tensors]
    return found


def test_ssh_runner_gives_the_in_process_verdicts_and_bytes(programs, run_suite, ssh_servers):
    (server,) = ssh_servers(1)
    flows = ["--flow", "xnnpack", "--flow", "portable", "-p", "no:xdist", "--seed", "11",
             "--artifacts-all"]
    local = run_suite(*flows, f"--artifacts={programs.path / 'local'}")
    remote = run_suite(*flows, f"--artifacts={programs.path / 'remote'}",
                       "--runner", f"xnnpack={server.spec}", "--runner", f"portable={server.spec}")
    assert local.report is not None and remote.report is not None, remote.stdout + remote.stderr
    here, there = by_test(local), by_test(remote)
    assert len(here) == 6 and set(here) == set(there)
    assert {i: r["status"] for i, r in there.items()} == {i: r["status"] for i, r in here.items()}
    assert {r["status"] for r in there.values()} == {"pass"}
    assert {r["runtime"] for r in here.values()} == {"executorch"}
    assert {r["runtime"] for r in there.values()} == {server.name}
    for record in there.values():
        assert {"transfer", "startup", "load", "run"} <= set(record["timings"]), record["timings"]
        assert record["timings"]["transfer"] > 0
        assert f"--runner {shlex.quote(record['flow'] + '=' + server.spec)}" in record["repro"]
    outputs_here = actual_outputs(programs.path / "local")
    assert len(outputs_here) == 6
    assert actual_outputs(programs.path / "remote") == outputs_here  # the same bytes
    assert f"execute on runner {server.name}" in remote.stdout


def test_a_remote_without_the_delegate_answers_lowered_not_run(programs, run_suite, ssh_servers):
    """The Core ML path a Mac would take, with Vulkan (which lowers here and which this
    host's runtime lacks): the remote is reached and says why it cannot run it."""
    (server,) = ssh_servers(1)
    run = run_suite("--flow", "vulkan", "-p", "no:xdist", "-k", "test_add",
                    "--runner", f"vulkan*={server.spec}")
    (record,) = run.records()
    assert record["status"] == "lowered_not_run", record
    assert record["runtime"] == server.name
    assert record["error"].startswith(f"runner {server.name}: ExecuTorch ")
    assert "has no 'VulkanBackend' (its backends: " in record["error"]
    assert "transfer" in record["timings"] and "run" not in record["timings"]
    assert run.outcome("test_add[vulkan]") == "skipped"


def test_a_pool_loses_a_stopped_device_and_finishes_on_the_other(pytester, run_suite,
                                                                 ssh_servers, tmp_path):
    """Two servers as a pool under -n 2. The first device's agent signals that it runs
    and then hangs; that server is then killed (daemon, connection, agent): its test is
    `runner lost`, the device leaves the pool, every other test runs on the second."""
    pytester.makepyfile(test_pool=POOL_PROGRAMS)
    mark = tmp_path / "doomed-started"
    doomed = ssh_servers(1, {"ETSUITE_AGENT_FAULT": f"hang:{mark}"})[0]
    (healthy,) = ssh_servers(1)

    def stop_when_running():
        deadline = time.monotonic() + 300
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        doomed.stop()

    watcher = threading.Thread(target=stop_when_running, daemon=True)
    watcher.start()
    run = run_suite("--flow", "xnnpack", "-n", "2", "--seed", "5",
                    "--runner", f"xnnpack={doomed.spec},{healthy.spec}")
    watcher.join(timeout=5)
    assert mark.exists(), run.stdout + run.stderr
    records = run.records()
    assert len(records) == 4, run.stdout + run.stderr
    lost = [r for r in records if r["status"] != "pass"]
    assert len(lost) == 1, [(r["test_id"], r["status"], r["error"]) for r in records]
    assert lost[0]["status"] == "fail_infra"
    assert lost[0]["error"].startswith(f"runner lost: {doomed.name} (ssh exited 255")
    assert lost[0]["runtime"] == doomed.name
    assert lost[0]["rerun"] is None and not lost[0]["flaky"]  # not the program's fault
    assert {r["runtime"] for r in records if r["status"] == "pass"} == {healthy.name}
    assert f"runner {doomed.name} was lost during the run" in run.stdout
    assert "(a pool of 2, one program per device at a time)" in run.stdout
    assert run.ret == 1


# A flow of the portable program that is declared to fail at run, for a runner that
# fails: the entry must not absorb what the runner's failure is.
DECLARED_RUN_CONFTEST = """
import dataclasses
from pathlib import Path

from etsuite.backends.harness.flows.expectations import load
from etsuite.backends.portable.flows import PORTABLE


def pytest_etsuite_flows(config):
    data = load(Path(__file__).parent / "expectations.toml", "expectations.toml")
    return [dataclasses.replace(PORTABLE, name="declared_run", backend="selftest",
                                expectations=data)]
"""
DECLARED_RUN = """\
[[fail]]
flows = ["declared_run"]
case = "*::test_scale*"
status = "fail_run"
reason = "declared to fail at run on the device"
"""


def test_a_lost_device_is_fail_infra_which_no_entry_absorbs(pytester, run_suite, tmp_path):
    """A device nobody answers on (ssh to a closed port) and a command that answers
    nothing the exchange format reads: both fail_infra, never rerun, and a declared
    fail_run entry on the same cases does not turn them into xfail. The summary counts
    them apart from the program's failures and out of every rate."""
    pytester.makeconftest(DECLARED_RUN_CONFTEST)
    (pytester.path / "expectations.toml").write_text(DECLARED_RUN)
    pytester.makepyfile(test_pool=POOL_PROGRAMS)
    closed = f"ssh://127.0.0.1:{free_port()}?connect_timeout=3"
    for runner, error in ((closed, "runner lost: ssh://127.0.0.1:"),
                          ("cmd:exit 3 {pte}", "runner cmd:exit 3 {pte} gave no answer: "
                                               "the command exited 3")):
        run = run_suite("--flow", "declared_run", "-p", "no:xdist", "-k", "test_scale and 1",
                        "--runner", f"declared_run={runner}")
        (record,) = run.records()
        assert (record["status"], record["stage"]) == ("fail_infra", "run"), record
        assert record["error"].startswith(error), record
        assert record["rerun"] is None and record["declared_by"] == "expectations.toml:1"
        assert run.outcome("test_scale[declared_run-1]") == "failed"
        assert "but subtest 0 ended fail_infra: that entry does not cover it" in run.stdout
    summary_md = tmp_path / "s.md"
    assert summary.main([str(run.report_path), "--output", str(summary_md)]) == 0
    text = summary_md.read_text()
    assert "0 passing, 0 failing, 1 failed for the runner's device or connection" in text
    assert "no test reached a verdict; 1 without one: 1 infrastructure failures" in text


def test_device_locks_are_shared_by_every_session_of_the_user(tmp_path, monkeypatch):
    """Two runs (two pool folders, as two sessions in two checkouts have) take turns on
    one device, while a device lost in one run is still live in the other."""
    monkeypatch.setenv(LOCKS_ENV, str(tmp_path / "locks"))
    assert device_lock_folder() == str(tmp_path / "locks")
    context = multiprocessing.get_context("fork")
    started, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(tmp_path / "run1"), "ssh://d1",
                                                 started, release))
    holder.start()
    try:
        assert started.wait(30)
        other_run = DevicePool(str(tmp_path / "run2"))
        with other_run.acquire(["ssh://d1", "ssh://d2"]) as (name, _):
            assert name == "ssh://d2"  # d1 is busy in the other session
    finally:
        release.set()
        holder.join(30)
    DevicePool(str(tmp_path / "run1")).mark_lost("ssh://d1", "no answer")
    with other_run.acquire(["ssh://d1"]) as (name, _):
        assert name == "ssh://d1"
    monkeypatch.delenv(LOCKS_ENV)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert device_lock_folder().endswith(f"etsuite-devices-{os.getuid()}")


def test_process_runner_contains_a_native_abort(programs, run_suite, monkeypatch):
    """Isolation off: the abort must end only the runner's process, not pytest's."""
    monkeypatch.setenv("ETSUITE_AGENT_FAULT", "abort")
    run = run_suite("--flow", "portable", "--flow", "xnnpack", "-p", "no:xdist",
                    "--isolation", "none", "-k", "test_add or test_linear_relu",
                    "--runner", "portable=process")
    records = by_test(run)
    assert len(records) == 4, run.stdout + run.stderr
    for test_id, record in records.items():
        if record["flow"] == "portable":
            assert record["status"] == "fail_crash", record
            assert record["stage"] == "run" and record["runtime"] == "process"
            assert record["error"].startswith(
                "runner process: the process executing the program was killed by SIGABRT (6)")
        else:
            assert (record["status"], record["runtime"]) == ("pass", "executorch"), test_id
    assert run.outcome("test_linear_relu[xnnpack]") == "passed"  # ran after the aborts


def test_cmd_runner_calls_a_command_of_the_users(programs, run_suite):
    template = (f"cmd:{shlex.quote(sys.executable)} {shlex.quote(agent.__file__)} "
                f"--pte {{pte}} --inputs {{inputs}} --outputs {{outputs}}")
    run = run_suite("--flow", "xnnpack", "-p", "no:xdist", "-k", "two_outputs",
                    "--runner", f"xnnpack={template}")
    (record,) = run.records()
    assert record["status"] == "pass", record
    assert record["runtime"] == template
    assert record["timings"]["run"] > 0 and "transfer" in record["timings"]


LOOP_KIND_CONFTEST = """
import dataclasses
from pathlib import Path

from etsuite.backends.harness.remote.kinds import ProcessKind
from etsuite.backends.harness.remote.spec import RunnerSpec

LOG = Path(__file__).parent / "loop.log"


@dataclasses.dataclass(frozen=True)
class LoopKind:
    name: str = "loop"
    form: str = "loop:LABEL"
    exclusive: bool = True
    takes_rest: bool = False

    def claims(self, text):
        return text.startswith("loop:")

    def parse(self, text):
        return RunnerSpec(text, self.name, text, runner_kind=self)

    def exchange(self, spec, files):
        with LOG.open("a") as log:
            log.write(spec.name + " " + ",".join(sorted(files)) + "\\n")
        return ProcessKind().exchange(spec, files)


def pytest_etsuite_runner_kinds(config):
    return [LoopKind()]
"""


def test_a_plugin_adds_a_runner_kind_through_the_hook(programs, run_suite):
    """A kind of the user's (here: a conftest's, which logs each job and hands it to a
    local process) is chosen by its spec like a built-in one, and judged the same."""
    programs.makeconftest(LOOP_KIND_CONFTEST)
    run = run_suite("--flow", "xnnpack", "-p", "no:xdist", "-k", "two_outputs or test_add",
                    "--runner", "xnnpack=loop:bench1")
    records = by_test(run)
    assert sorted(records) == ["test_programs.py::test_add[xnnpack]",
                               "test_programs.py::test_two_outputs[xnnpack]"], run.stdout
    for record in records.values():
        assert (record["status"], record["runtime"]) == ("pass", "loop:bench1"), record
        assert "transfer" in record["timings"]
    log = (programs.path / "loop.log").read_text().splitlines()
    assert len(log) == 2 and all(line.startswith("loop:bench1 ") for line in log)
    assert "manifest.json" in log[0] and "program.pte" in log[0]


def test_a_spec_no_kind_claims_lists_the_plugin_kinds_too(pytester):
    pytester.makeconftest(LOOP_KIND_CONFTEST)
    pytester.makepyfile(test_x="def test_x(test_runner):\n    pass\n")
    result = pytester.runpytest("--collect-only", "--runner", "xnnpack=telnet://x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is none of: process, ssh://[user@]host[:port], adb://SERIAL?runner=PATH, " \
           "cmd:TEMPLATE, native[?iterations=N], loop:LABEL" in result.stderr.str()


def test_a_kind_name_taken_twice_is_a_usage_error(pytester):
    pytester.makeconftest(LOOP_KIND_CONFTEST.replace('name: str = "loop"', 'name: str = "ssh"'))
    pytester.makepyfile(test_x="def test_x(test_runner):\n    pass\n")
    result = pytester.runpytest("--collect-only", "--runner", "xnnpack=process")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "runner kind(s) ssh defined twice" in result.stderr.str()


STATEFUL = """
import torch


class Accumulator(torch.nn.Module):
    \"\"\"A buffer updated in place by every call: a runtime that loads the program
    afresh for each step gives the first step's answer again.\"\"\"

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2, 4))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 0.5


class Core(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 3))


class Writer(torch.nn.Module):
    \"\"\"One method of a program sharing `core`'s cache: a prefill writes rows 0 and 1, a
    decode the row at `position`; both read every row.\"\"\"

    def __init__(self, core, prefill):
        super().__init__()
        self.core, self.prefill = core, prefill

    def forward(self, x, position=None):
        if self.prefill:
            self.core.cache[0:2].copy_(x)
        else:
            self.core.cache.index_copy_(0, position, x)
        return self.core.cache.sum(dim=0, keepdim=True) + x[-1:]


def test_accumulator(test_runner):
    test_runner.lower_and_run_steps(Accumulator(), [(torch.randn(2, 4),) for _ in range(3)])


def test_prefill_decode(test_runner):
    core = Core()
    methods = {"prefill": (Writer(core, True), (torch.randn(2, 3),)),
               "decode": (Writer(core, False), (torch.randn(1, 3), torch.tensor([2])))}
    calls = [("prefill", (torch.randn(2, 3),)),
             ("decode", (torch.randn(1, 3), torch.tensor([2]))),
             ("decode", (torch.randn(1, 3), torch.tensor([3])))]
    test_runner.lower_and_run_methods(methods, calls)
"""


def stateful_runs_as_in_process(pytester, run_suite, runner: str, name: str = "") -> dict:
    """The stateful programs in process and on `runner`: the same statuses and the same
    per-step errors (so the same per-step outputs), the state carried across 3 steps
    (the accumulator's steps differ, which a program loaded afresh per step would not
    give). Returns the runner's records."""
    pytester.makepyfile(test_stateful_programs=STATEFUL)
    flows = ["--flow", "xnnpack", "--flow", "portable", "-p", "no:xdist", "--seed", "5"]
    local = run_suite(*flows)
    there = run_suite(*flows, "--runner", f"*={runner}")
    assert local.report is not None and there.report is not None, there.stdout + there.stderr
    here, remote = by_test(local), by_test(there)
    assert len(here) == 4 and set(here) == set(remote)
    assert {i: r["status"] for i, r in here.items()} == {i: r["status"] for i, r in remote.items()}
    assert {r["status"] for r in remote.values()} <= {"pass", "pass_undelegated"}, remote
    assert {r["runtime"] for r in remote.values()} == {name or runner}
    for test_id, record in remote.items():
        assert record["steps"] == 3 and record["failed_step"] is None, record
        assert record["step_errors"] == here[test_id]["step_errors"], test_id
        assert len(record["step_ms"]) == 3 and all(ms >= 0 for ms in record["step_ms"])
        assert {"transfer", "load", "run"} <= set(record["timings"]), record["timings"]
        if "prefill" in test_id:
            assert record["step_methods"] == ["prefill", "decode", "decode"]
    return remote


def test_stateful_and_multi_method_programs_run_on_the_process_runner(pytester, run_suite):
    stateful_runs_as_in_process(pytester, run_suite, "process")


def test_stateful_and_multi_method_programs_run_on_the_ssh_runner(pytester, run_suite,
                                                                  ssh_servers):
    (server,) = ssh_servers(1)
    stateful_runs_as_in_process(pytester, run_suite, server.spec, server.name)


def test_a_runtime_without_execute_calls_still_says_it_cannot_carry_state():
    from etsuite.backends.harness.case.pipeline import StepCalls

    class Afresh:
        name = "afresh"
        carries_state = False

    assert StepCalls([(torch.ones(1),)]).missing(Afresh()) == (
        "runtime afresh loads the program afresh for every call, so it cannot carry a "
        "stateful program's state from one step to the next")


def test_an_artifact_folder_replays_as_a_job(programs, run_suite, tmp_path):
    """--artifacts writes job folders of the exchange format: the agent runs one as it
    is, and gives the outputs the in-process run recorded."""
    run = run_suite("--flow", "xnnpack", "-p", "no:xdist", "-k", "linear_relu",
                    "--artifacts-all", f"--artifacts={tmp_path / 'art'}")
    assert run.records()[0]["status"] == "pass"
    (folder,) = (tmp_path / "art").glob("*/subtest0")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == exchange.FORMAT and manifest["delegates"] == ["XnnpackBackend"]
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, agent.__file__, "--job", str(folder),
                           "--outputs", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    answer = exchange.read_manifest(str(out))
    assert answer["status"] == "ok"
    (replayed,) = exchange.read_values(str(out), answer["outputs"])
    (recorded,) = torch.load(folder / "actual.pt")
    assert exchange.tensor_bytes(replayed) == exchange.tensor_bytes(recorded)


@pytest.mark.parametrize("spec, message", [
    ("ftp://host", "is none of: process, ssh://"),
    ("ssh://host?colour=red", "unknown option(s) colour; ssh takes"),
    ("ssh://host?timeout=soon", "timeout wants a positive number of seconds"),
    ("adb://SERIAL", "adb:// needs ?runner=PATH"),
    ("cmd:echo hello", "a cmd: template needs {pte}"),
])
def test_a_malformed_spec_says_what_is_expected(spec, message):
    with pytest.raises(SpecError) as raised:
        parse_spec(spec)
    assert message in str(raised.value) and spec in str(raised.value)


def test_specs_parse_to_devices():
    mac = parse_spec("ssh://me@mac1:2222?python=/usr/bin/python3")
    assert (mac.kind, mac.user, mac.host, mac.port, mac.name) == \
        ("ssh", "me", "mac1", 2222, "ssh://me@mac1:2222")
    assert mac.option("python") == "/usr/bin/python3" and mac.exclusive
    assert not parse_spec("process").exclusive
    assert [s.name for s in split_specs("ssh://mac1,ssh://mac2")] == ["ssh://mac1", "ssh://mac2"]
    (fvp,) = split_specs("cmd:run_fvp --a,b {pte} {inputs} {outputs}")  # commas stay
    assert fvp.command == "run_fvp --a,b {pte} {inputs} {outputs}"


@pytest.mark.parametrize("args, message", [
    (["--runner", "xnnpack"], "is not PATTERN=SPEC"),
    (["--runner", "nosuchflow*=process"], "pattern 'nosuchflow*' matches no flow; known flows:"),
    (["--runner", "xnnpack=ssh://a,ssh://a"], "names a device twice"),
    (["-o", "etsuite_runners=xnnpack=telnet://x"], "etsuite_runners in"),
])
def test_a_bad_runner_setting_is_a_usage_error(pytester, args, message):
    pytester.makepyfile(test_x="def test_x(test_runner):\n    pass\n")
    result = pytester.runpytest("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_the_ini_setting_chooses_a_runner_and_the_option_overrides_it(pytester):
    pytester.makeini("[pytest]\netsuite_runners =\n    xnnpack*=process\n")
    pytester.makepyfile(test_x="def test_x(test_runner):\n    pass\n")
    header = pytester.runpytest("--collect-only", "--backend", "xnnpack").stdout.str()
    assert "etsuite: flows xnnpack, xnnpack_dynamic_int8_per_channel" in header
    assert "execute on runner process (from etsuite_runners in" in header
    overridden = pytester.runpytest("--collect-only", "--flow", "xnnpack",
                                    "--runner", "xnnpack=ssh://mac1").stdout.str()
    assert "etsuite: flows xnnpack execute on runner ssh://mac1 (from --runner)" in overridden


def _hold(folder: str, name: str, started, release) -> None:
    with DevicePool(folder).acquire([name]):
        started.set()
        release.wait(30)


def test_a_device_runs_one_program_at_a_time_across_processes(tmp_path):
    folder = str(tmp_path / "pool")
    context = multiprocessing.get_context("fork")
    started, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(folder, "ssh://d1", started, release))
    holder.start()
    try:
        assert started.wait(30)
        pool = DevicePool(folder)
        with pool.acquire(["ssh://d1", "ssh://d2"]) as (name, _):
            assert name == "ssh://d2"  # d1 is busy in the other process
        threading.Timer(0.5, release.set).start()
        begun = time.monotonic()
        with pool.acquire(["ssh://d1"]) as (name, waited):
            assert name == "ssh://d1" and waited >= 0.3
        assert time.monotonic() - begun >= 0.3
    finally:
        release.set()
        holder.join(30)
    pool.mark_lost("ssh://d1", "no answer within 5 s")
    assert pool.lost_devices() == {"ssh://d1": "no answer within 5 s"}
    with pool.acquire(["ssh://d1", "ssh://d2"]) as (name, _):
        assert name == "ssh://d2"
    pool.mark_lost("ssh://d2", "connection refused")
    with pytest.raises(PoolExhausted, match="every runner of the pool is lost"):
        with pool.acquire(["ssh://d1", "ssh://d2"]):
            pass


def test_adb_exchange_pushes_runs_and_pulls():
    """Written for a device, not run here (no device): the commands it would run."""
    spec = parse_spec("adb://emulator-5554?runner=/data/local/tmp/etsuite_runner")
    steps = adb_commands(spec, "/tmp/job", ["input_0.bin", "manifest.json", "program.pte"],
                         "/tmp/out", "etsuite-adb-1")
    assert [step for _, step in steps] == ["prepare", "push", "run", "pull", "clean"]
    own = "/data/local/tmp/etsuite/etsuite-adb-1"  # the job's own folder: made, then removed
    assert steps[0][0][-1] == (f"mkdir -p /data/local/tmp/etsuite && mkdir {own} {own}/job "
                               f"{own}/out")
    push = steps[1][0]
    assert push[:4] == ["adb", "-s", "emulator-5554", "push"]
    assert push[-1] == f"{own}/job/" and "/tmp/job/program.pte" in push
    run = steps[2][0][-1]
    assert run.startswith(f"cd {own} && /data/local/tmp/etsuite_runner {own}/job/program.pte "
                          f"{own}/job/manifest.json {own}/out")
    assert steps[3][0][-2:] == [f"{own}/out/.", "/tmp/out"]
    assert steps[4][0][-1] == f"rm -rf {own}"
