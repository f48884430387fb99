"""The native runner (remote/cpp/, built by remote/native.py, run by the `native` kind):
built for real against this environment's executorch wheel with PyPI's CMake, then given
real programs. It must give the in-process verdicts and the same output bytes, measure
what the calls cost, answer "missing" for a delegate it lacks and "error" at load for a
program that is not one."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.runtimes import RuntimeStatus
from etsuite.backends.harness.remote import agent, exchange, native
from etsuite.backends.harness.remote.kinds import parse_spec
from etsuite.backends.harness.remote.runtime import Job, RunnerRuntime
from etsuite.backends.harness.remote.spec import SpecError
from test_runners import SshServer, actual_outputs, stateful_runs_as_in_process

pytestmark = pytest.mark.slow

PROGRAMS = """
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.linear(x)


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def test_add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4, 3), torch.randn(4, 3)))


def test_linear(test_runner):
    test_runner.lower_and_run_model(Linear(), (torch.randn(2, 8),))


def test_conv(test_runner):
    test_runner.lower_and_run_model(Conv(), (torch.randn(1, 3, 8, 8),))
"""


@pytest.fixture(scope="session")
def binary() -> Path:
    """The runner of the shared build cache (built once for every test that needs it)."""
    return native.ensure_binary()


@pytest.fixture
def programs(pytester):
    pytester.makepyfile(test_programs=PROGRAMS)
    return pytester


def add_program() -> bytes:
    """A real portable program: x + y."""
    from executorch.exir import to_edge

    class Add(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    exported = torch.export.export(Add(), (torch.randn(2, 3), torch.randn(2, 3)))
    return bytes(to_edge(exported).to_executorch().buffer)


def native_runtime(tmp_path, spec: str = "native") -> RunnerRuntime:
    return RunnerRuntime((parse_spec(spec),), str(tmp_path / "pool"), option=f"*={spec}")


def test_the_runner_builds_from_the_wheel_and_rebuilds_only_on_change(tmp_path, monkeypatch):
    """A fresh build folder: CMake (>= 3.28) configures against the wheel's package and
    the binary lists the delegates the wheel ships; asked again it is reused, and a
    changed source gets a build of its own."""
    monkeypatch.setenv("ETSUITE_NATIVE_BUILD", str(tmp_path / "build"))
    built = native.ensure_binary()
    assert built.is_relative_to(tmp_path / "build") and os.access(built, os.X_OK)
    probe = json.loads(subprocess.run([str(built), "--probe"], capture_output=True, text=True,
                                      check=True).stdout)
    assert "XnnpackBackend" in probe["backends"], probe
    assert probe["runtime"].startswith("ExecuTorch 1.") and "native runner" in probe["runtime"]
    stamp = built.stat().st_mtime_ns
    assert native.ensure_binary() == built and built.stat().st_mtime_ns == stamp

    source = tmp_path / "cpp"
    shutil.copytree(native.SOURCE, source)
    package, version = native.executorch_package()
    before = native.build_key(package, version)
    monkeypatch.setattr(native, "SOURCE", source)
    assert native.build_key(package, version) == before
    with open(source / "runner.cpp", "a", encoding="utf-8") as handle:
        handle.write("\n// changed\n")
    assert native.build_key(package, version) != before


def test_no_cmake_new_enough_is_a_build_error_naming_the_install(tmp_path, monkeypatch):
    old = tmp_path / "cmake"
    old.write_text("#!/bin/sh\necho 'cmake version 3.25.1'\n")
    old.chmod(0o755)
    monkeypatch.setenv("ETSUITE_CMAKE", str(old))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(native.sys, "executable", str(tmp_path / "python"))
    with pytest.raises(native.BuildError, match=r"needs CMake 3\.28 or newer .*pip install"):
        native.find_cmake()


def test_native_gives_the_in_process_verdicts_bytes_and_a_cost(programs, run_suite, binary):
    flows = ["--flow", "xnnpack", "--flow", "portable", "-p", "no:xdist", "--seed", "11",
             "--artifacts-all"]
    local = run_suite(*flows, f"--artifacts={programs.path / 'local'}")
    there = run_suite(*flows, f"--artifacts={programs.path / 'native'}",
                      "--runner", "*=native?iterations=7")
    assert local.report is not None and there.report is not None, there.stdout + there.stderr
    here = {r["test_id"]: r for r in local.records()}
    remote = {r["test_id"]: r for r in there.records()}
    assert len(here) == 6 and set(here) == set(remote)
    assert {i: r["status"] for i, r in remote.items()} == {i: r["status"] for i, r in here.items()}
    assert {r["status"] for r in remote.values()} == {"pass"}
    assert {r["runtime"] for r in remote.values()} == {"native"}
    assert {r["cost"] for r in here.values()} == {None}
    outputs_here = actual_outputs(programs.path / "local")
    assert len(outputs_here) == 6
    assert actual_outputs(programs.path / "native") == outputs_here  # the same bytes
    for record in remote.values():
        timings, cost = record["timings"], record["cost"]
        assert {"transfer", "startup", "load", "run", "repeat"} <= set(timings), timings
        assert all(timings[stage] > 0 for stage in ("load", "run", "repeat")), timings
        (call,) = cost["calls"]
        assert call["method"] == "forward" and call["iterations"] == 7
        assert call["p90"] >= call["median"] >= call["min"] > 0, call
        assert call["min"] * 7 <= timings["repeat"], (call, timings)  # the 7 calls in it
        assert 1 << 20 < cost["peak_rss_bytes"] < 1 << 30, cost  # the runner's, not pytest's
        (planned,) = cost["planned_memory"]["forward"]
        assert isinstance(planned, int) and planned > 0, cost
        assert f"--runner {shlex.quote('*=native?iterations=7')}" in record["repro"]

    # The summary's cost view: one row per flow, for the native runner.
    from etsuite.tools.report import summary

    summary.main([str(there.report_path), "--output", str(programs.path / "native.md")])
    text = (programs.path / "native.md").read_text()
    view = text[text.index("## What running cost"):].split("\n## ", 1)[0]
    rows = [line for line in view.splitlines() if "`native`" in line]
    assert len(rows) == 2 and all("| 3 " in row for row in rows), view  # 3 subtests a flow


def test_a_delegate_the_runner_lacks_is_lowered_not_run(programs, run_suite, binary):
    """Vulkan lowers here and the wheel ships no Vulkan delegate: the runner says so."""
    run = run_suite("--flow", "vulkan", "-p", "no:xdist", "-k", "test_add",
                    "--runner", "vulkan*=native")
    (record,) = run.records()
    assert record["status"] == "lowered_not_run", record
    assert record["runtime"] == "native" and record["cost"] is None
    assert record["error"].startswith("runner native: ExecuTorch 1.")
    assert "native runner on" in record["error"] and "has no 'VulkanBackend'" in record["error"]
    assert "XnnpackBackend" in record["error"]  # what it has instead
    assert run.outcome("test_add[vulkan]") == "skipped"


def test_a_manifest_naming_a_fake_delegate_answers_missing(tmp_path, binary):
    runtime = native_runtime(tmp_path)
    job = Job(add_program(), ["NoSuchBackend"])
    with pytest.raises(RuntimeStatus) as raised:
        runtime.execute(job, [torch.ones(2, 3), torch.ones(2, 3)])
    assert raised.value.status is Status.LOWERED_NOT_RUN
    assert "has no 'NoSuchBackend'" in str(raised.value)
    assert job.execution is not None and job.execution.runtime == "native"


def test_a_broken_program_answers_an_error_at_load(tmp_path, binary):
    runtime = native_runtime(tmp_path)
    pte = add_program()
    job = Job(pte[:len(pte) // 3], [])
    with pytest.raises(RuntimeStatus) as raised:
        runtime.execute(job, [torch.ones(2, 3), torch.ones(2, 3)])
    assert raised.value.status is Status.FAIL_LOAD and raised.value.stage == "load"
    assert "runner native: loading the program failed: Error::" in str(raised.value)


def test_a_program_runs_through_the_runtime_object(tmp_path, binary):
    """The runtime object alone: outputs equal eager's and the cost counts the calls."""
    runtime = native_runtime(tmp_path, "native?iterations=3")
    job = Job(add_program(), [])
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    (out,) = runtime.execute(job, [x, y])
    assert torch.equal(out, x + y)
    assert job.execution is not None and job.execution.cost is not None
    assert job.execution.cost["calls"][0]["iterations"] == 3


def test_the_job_folder_runs_by_hand(tmp_path, binary):
    """What a person does with an artifact folder: the binary on the folder, no Python."""
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    exchange.write_folder(str(tmp_path / "job"), exchange.job_files(add_program(), [x, y], []))
    done = subprocess.run([str(binary), str(tmp_path / "job" / "program.pte"),
                           str(tmp_path / "job" / "manifest.json"), str(tmp_path / "out"),
                           "--iterations", "0"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer = exchange.read_manifest(str(tmp_path / "out"))
    assert answer["status"] == "ok" and answer["cost"]["calls"][0]["iterations"] == 0
    (out,) = exchange.read_values(str(tmp_path / "out"), answer["outputs"])
    assert torch.equal(out, x + y)


def test_stateful_and_multi_method_programs_run_on_the_native_runner(pytester, run_suite,
                                                                     binary):
    remote = stateful_runs_as_in_process(pytester, run_suite, "native")
    for record in remote.values():  # a v2 answer's cost: no timed repeats, the memory
        assert "calls" not in record["cost"] and record["cost"]["peak_rss_bytes"] > 0
        assert set(record["cost"]["planned_memory"]) >= set(record["step_methods"] or
                                                            ["forward"])


def run_agent(which: str, binary: Path, job: Path, out: Path) -> dict:
    argv = [str(binary)] if which == "native" else [sys.executable, agent.__file__]
    done = subprocess.run(argv + ["--job", str(job), "--outputs", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return exchange.read_manifest(str(out))


@pytest.mark.parametrize("which", ["python", "native"])
def test_both_agents_run_v1_and_v2_jobs_and_reject_a_malformed_one(which, tmp_path, binary):
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    exchange.write_folder(str(tmp_path / "v1"), exchange.job_files(add_program(), [x, y], []))
    answer = run_agent(which, binary, tmp_path / "v1", tmp_path / "out1")
    assert answer["status"] == "ok" and answer["version"] == 1 and "calls" not in answer
    (out,) = exchange.read_values(str(tmp_path / "out1"), answer["outputs"])
    assert torch.equal(out, x + y)

    calls = [("forward", [x, y]), ("forward", [y, y]), ("forward", [x, x])]
    exchange.write_folder(str(tmp_path / "v2"),
                          exchange.calls_job_files(add_program(), calls, []))
    answer = run_agent(which, binary, tmp_path / "v2", tmp_path / "out2")
    assert answer["status"] == "ok" and answer["version"] == 2, answer
    found = exchange.read_calls(str(tmp_path / "out2"), answer, 3)
    for (outs, seconds), (_, (a, b)) in zip(found, calls, strict=True):
        assert torch.equal(outs[0], a + b) and seconds is not None and seconds >= 0
    assert [c["outputs"][0]["file"] for c in answer["calls"]] == [
        "output_0_0.bin", "output_1_0.bin", "output_2_0.bin"]

    manifest = json.loads((tmp_path / "v2" / "manifest.json").read_text())
    for broken, message in [({**manifest, "calls": []}, 'needs "calls": a non-empty list'),
                            ({**manifest, "calls": [{"inputs": []}]},
                             'call 0 of the manifest needs "method"'),
                            ({**manifest, "version": 7}, "manifest version 7 is none")]:
        (tmp_path / "v2" / "manifest.json").write_text(json.dumps(broken))
        shutil.rmtree(tmp_path / "out3", ignore_errors=True)
        answer = run_agent(which, binary, tmp_path / "v2", tmp_path / "out3")
        assert (answer["status"], answer["stage"]) == ("error", "load"), answer
        assert answer["error"].startswith("malformed manifest: ") and message in answer["error"]


def test_the_runtime_sends_calls_as_one_job_and_checks_the_answer(tmp_path, binary):
    runtime = native_runtime(tmp_path)
    job = Job(add_program(), [])
    x = torch.ones(2, 3)
    outputs, milliseconds = runtime.execute_calls({"forward": job},
                                                  [("forward", [x, x]), ("forward", [x, -x])])
    assert [o[0].tolist() for o in outputs] == [(x + x).tolist(), torch.zeros(2, 3).tolist()]
    assert len(milliseconds) == 2 and job.execution is not None
    with pytest.raises(exchange.ExchangeError, match="lists no \"calls\" of 3 entries"):
        exchange.read_calls(str(tmp_path), {"version": 2, "calls": [{}, {}]}, 3)


@pytest.mark.parametrize("spec, message", [
    ("native?iterations=many", "iterations wants a count >= 0"),
    ("native?speed=1", "unknown option(s) speed"),
    ("native?resident=maybe", "resident takes yes or no, got 'maybe'"),
    ("ssh://h?native=/bin/runner&resident=no", "native=PATH runs as a resident agent"),
])
def test_a_malformed_native_spec_says_what_is_expected(spec, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_spec(spec)


def test_an_operator_the_runner_lacks_answers_missing(tmp_path, binary):
    """A program calling an LLM custom op (registered in Python by
    executorch.extension.llm.custom_ops, not linked into the binary) is lowered_not_run on
    the native runner, saying why, not a failure of the program; in process it runs."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - llama::update_cache
    from executorch.exir import to_edge

    class Update(torch.nn.Module):
        def forward(self, value, cache):
            torch.ops.llama.update_cache(value, cache, 0)
            return cache + 1

    inputs = (torch.randn(1, 2, 3, 4), torch.zeros(1, 8, 3, 4))
    pte = to_edge(torch.export.export(Update(), inputs)).to_executorch().buffer
    runtime = native_runtime(tmp_path)
    with pytest.raises(RuntimeStatus) as raised:
        runtime.execute(Job(pte, []), list(inputs))
    assert raised.value.status is Status.LOWERED_NOT_RUN, raised.value
    assert "has no kernel for an operator of method 'forward'" in str(raised.value)
    assert "OperatorMissing" in str(raised.value)

    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    assert method.execute(list(inputs))[0].shape == inputs[1].shape


def _job_tar(x: torch.Tensor, y: torch.Tensor) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in exchange.job_files(add_program(), [x, y], []).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _outputs(answer: dict, folder: Path) -> list:
    from etsuite.backends.harness.remote.kinds import _untar

    folder.mkdir()
    _untar(answer["tar"], str(folder))
    return exchange.read_values(str(folder), exchange.read_manifest(str(folder))["outputs"])


@pytest.mark.parametrize("which", ["python", "native"])
def test_a_resident_agent_serves_many_jobs_and_is_restarted_once_killed(which, tmp_path,
                                                                       binary):
    """One agent answers job after job (started once); killed between jobs, the next job
    starts another; its relay goes when asked to (the end of the run)."""
    from etsuite.backends.harness.remote import resident

    argv = (sys.executable, agent.__file__, "--serve") if which == "python" \
        else (str(binary), "--serve")
    keeper = resident.Resident(argv)
    folder = str(tmp_path / "pool")
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    answers = [resident.exchange(folder, which, keeper, False, _job_tar(x, y), 120)
               for _ in range(3)]
    assert [a["status"] for a in answers] == ["done"] * 3, answers[0].get("detail")
    assert [a["started"] for a in answers] == [True, False, False]
    assert len({a["agent"] for a in answers}) == 1  # one process served them all
    for index, answer in enumerate(answers):
        (out,) = _outputs(answer, tmp_path / f"out{index}")
        assert torch.equal(out, x + y)

    os.kill(answers[0]["agent"], 9)
    again = resident.exchange(folder, which, keeper, False, _job_tar(x, y), 120)
    assert again["status"] == "done" and again["started"], again.get("detail")
    assert again["agent"] != answers[0]["agent"]

    socket_file = Path(resident.socket_path(folder, which, keeper, False))
    assert socket_file.exists()
    resident.stop_relays(folder)
    for _ in range(100):
        if not socket_file.exists():
            break
        import time

        time.sleep(0.05)
    assert not socket_file.exists()


def test_an_agent_that_does_not_start_twice_is_a_lost_device(tmp_path):
    from etsuite.backends.harness.remote import resident

    keeper = resident.Resident(("sh", "-c", "echo no runtime here >&2; exit 3"))
    answer = resident.exchange(str(tmp_path / "pool"), "ssh://d", keeper, True, b"", 30)
    assert answer["status"] == "lost"
    assert answer["detail"].startswith("the agent did not start (the agent exited 3)")
    assert "no runtime here" in answer["detail"]
    resident.stop_relays(str(tmp_path / "pool"))


def test_a_crash_inside_the_resident_native_runner_is_fail_crash(programs, run_suite, binary,
                                                                 monkeypatch):
    """Every program aborts the runner while it runs: each test is fail_crash with the
    signal, and the runner started again for the next one."""
    monkeypatch.setenv("ETSUITE_AGENT_FAULT", "abort")
    run = run_suite("--flow", "xnnpack", "-p", "no:xdist", "--runner", "xnnpack=native")
    records = run.records()
    assert len(records) == 3, run.stdout + run.stderr
    for record in records:
        assert (record["status"], record["stage"]) == ("fail_crash", "run"), record
        assert record["error"].startswith(
            "runner native: the process executing the program was killed by SIGABRT (6)"), record


@pytest.fixture
def ssh_server(tmp_path):
    """An OpenSSH server on 127.0.0.1 (test_runners.SshServer), stopped at teardown."""
    server = SshServer(tmp_path / "sshd")
    yield server
    server.stop()


def test_the_ssh_runner_runs_a_native_binary_on_the_host(programs, run_suite, ssh_server,
                                                        binary):
    """ssh://...?native=PATH: the native runner on the far side of the connection, one
    resident process for every program, the program's cost measured there."""
    server = ssh_server
    spec = f"{server.spec}{'&' if '?' in server.spec else '?'}native={binary}"
    run = run_suite("--flow", "xnnpack", "-p", "no:xdist", "--runner", f"xnnpack={spec}")
    records = run.records()
    assert [r["status"] for r in records] == ["pass"] * 3, run.stdout + run.stderr
    for record in records:
        assert record["runtime"] == server.name
        assert record["cost"]["calls"][0]["iterations"] == 5, record["cost"]  # the default
    assert run.ret == 0
