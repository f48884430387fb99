"""The warm process (backends/harness/warm/server.py, warm/client.py): the same results
with and without it, a stale server restarts and runs the new code, an idle one exits,
only its user can reach it, and a session that aborts ends only itself.

Most tests fork the server from this (already warm) test process, so they cost seconds;
one starts real servers (`python -m ...warm_server`) to cover start-up and the restart.
Clients are real `pytest --warm` subprocesses. Every server listens in a runtime folder
under tmp_path, never in the user's own."""

import contextlib
import json
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import TEST_FLOWS_CONFTEST, _warm_this_process, run_forked
from etsuite.backends.harness.contract.report import records_of_test
from etsuite.backends.harness.warm import client as warm_client
from etsuite.backends.harness.warm import server as warm_server

ROOT = Path(__file__).resolve().parent.parent
TIMING_FIELDS = {"timings", "step_ms"}


def client_env(runtime: Path, **extra) -> dict:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("ETSUITE_WARM", "PYTEST_XDIST", "PYTEST_CURRENT"))}
    return {**env, "XDG_RUNTIME_DIR": str(runtime), **extra}


def socket_for(root: Path, env: dict) -> Path:
    """The socket a client started with `env` in `root` looks for."""
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        return warm_client.socket_path(warm_client.environment_key(str(root)))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def fork_server(root: Path, env: dict, idle_s: float = 120, warm: bool = True) -> tuple[int, Path]:
    """A server forked from this warm process, serving `root` for clients with `env`
    (`warm=False`: this process is not warmed first, for a server that runs no pytest)."""
    if warm:
        _warm_this_process()
    path = socket_for(root, env)
    watch = warm_server.Watch()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            server = warm_server.Server(path, watch, idle_s)
            server.listen()
            server.serve()
        finally:
            os._exit(0)
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, "the forked server did not listen"
        time.sleep(0.05)
    return pid, path


def stop_server(pid: int) -> None:
    os.kill(pid, 15)
    os.waitpid(pid, 0)


def warm_run(cwd: Path, env: dict, *args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "--warm", "-p", "no:cacheprovider",
                           *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def served_by(run: subprocess.CompletedProcess) -> str:
    """The server pid the client named ('run in warm process N ...'), '' if none."""
    for line in run.stderr.splitlines():
        if line.startswith("etsuite: run in warm process "):
            return line.split()[5]
    return ""


def comparable(report: dict) -> dict:
    """Outcome and records of each test, without what depends on timing."""
    return {test["nodeid"]: (test["outcome"],
                             [{k: v for k, v in record.items() if k not in TIMING_FIELDS}
                              for record in records_of_test(test)])
            for test in report["tests"]}


@pytest.fixture
def runtime():
    """A short folder (a unix socket's path has at most 108 bytes; tmp_path can be longer)."""
    folder = Path(tempfile.mkdtemp(prefix="ew", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_watch_sees_a_changed_file_and_a_new_module_not_a_touched_file(tmp_path):
    module = tmp_path / "helper.py"
    module.write_text("VALUE = 1\n")

    class Loaded:
        __file__ = str(module)

    watch = warm_server.Watch({"helper": Loaded()})
    assert watch.changed() is None
    (tmp_path / "shadow.py").write_text("")
    assert "added ['shadow.py']" in watch.changed()
    (tmp_path / "shadow.py").unlink()
    assert watch.changed() is None
    os.utime(module, ns=(1, 10**18))  # touched: same contents, another mtime
    assert watch.changed() is None
    module.write_text("VALUE = 2\n")  # same size, other contents
    assert watch.changed() == f"{os.path.realpath(module)} changed"


def test_runtime_folder_is_refused_when_others_can_enter_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    folder = warm_client.runtime_dir()
    assert folder == tmp_path / "etsuite-warm"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)
    with pytest.raises(warm_client.WarmUnavailable, match="this user's only"):
        warm_client.runtime_dir()


def test_socket_is_the_users_only_and_the_same_results_come_back(runtime, tmp_path):
    """The equivalence check: test_add.py over portable and XNNPACK, in a session of its
    own process and in one forked by the warm process: same outcomes and records."""
    env = client_env(runtime)
    pid, path = fork_server(ROOT, env)
    try:
        info = path.stat()
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert info.st_uid == os.getuid()
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        args = ["backends/suite/operators/test_add.py", "--flow", "portable", "--flow",
                "xnnpack", "--seed", "1234", "-n", "0", "--json-report"]
        warm = warm_run(ROOT, env, *args, f"--json-report-file={tmp_path / 'warm.json'}")
        assert served_by(warm) == str(pid), warm.stderr
        cold = run_forked(ROOT, *args, "-p", "no:cacheprovider",
                          f"--json-report-file={tmp_path / 'cold.json'}", scratch=tmp_path)
        assert (warm.returncode, cold.ret) == (0, 0), warm.stdout + warm.stderr
        warm_report = json.loads((tmp_path / "warm.json").read_text())
        cold_report = json.loads((tmp_path / "cold.json").read_text())
        assert len(cold_report["tests"]) >= 8
        assert comparable(warm_report) == comparable(cold_report)
        assert "passed" in warm.stdout  # the session wrote to the client's own stdout
    finally:
        stop_server(pid)


def test_an_aborting_session_ends_only_itself(runtime, pytester):
    pytester.makeconftest(TEST_FLOWS_CONFTEST)
    pytester.makepyfile(test_faults="""
        import os
        import torch

        class Add(torch.nn.Module):
            def forward(self, x, y):
                return x + y

        def test_add_then_crash(test_runner):
            test_runner.lower_and_run_model(Add(), (torch.randn(4), torch.randn(4)))

        def test_abort_session():
            os.abort()
    """)
    env = client_env(runtime)
    pid, _path = fork_server(pytester.path, env)
    try:
        # Per-test isolation inside a forked session: the aborting runtime is fail_crash.
        isolated = warm_run(pytester.path, env, "test_faults.py::test_add_then_crash",
                            "--flow", "portable_aborting", "-n", "0", "--json-report",
                            "--json-report-file=report.json")
        assert served_by(isolated) == str(pid), isolated.stderr
        assert isolated.returncode == 1
        report = json.loads((pytester.path / "report.json").read_text())
        assert [r["status"] for t in report["tests"] for r in records_of_test(t)] == ["fail_crash"]
        # Without isolation the abort takes the whole session: 128 + SIGABRT, as a shell says.
        aborted = warm_run(pytester.path, env, "test_faults.py::test_abort_session",
                           "--isolation", "none", "-n", "0")
        assert aborted.returncode == 134, aborted.stderr
        after = warm_run(pytester.path, env, "test_faults.py::test_add_then_crash",
                         "--flow", "portable", "-n", "0")
        assert (after.returncode, served_by(after)) == (0, str(pid)), after.stderr
    finally:
        stop_server(pid)


def test_idle_server_exits_and_takes_its_socket(runtime, pytester):
    """The idle time is long enough for a client to start on a loaded machine (at 1.5 s a
    busy `make test` once saw the server leave before its client connected)."""
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    env = client_env(runtime)
    pid, path = fork_server(pytester.path, env, idle_s=10)
    exited = False
    try:
        run = warm_run(pytester.path, env, "test_one.py")
        assert (run.returncode, served_by(run)) == (0, str(pid)), run.stderr
        deadline = time.monotonic() + 60
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            assert time.monotonic() < deadline, "the idle server did not exit"
            time.sleep(0.1)
        exited = True
        assert not path.exists()
    finally:
        if not exited:
            stop_server(pid)
        # A server the client had to start itself, had this one left early.
        subprocess.run([sys.executable, "-m", "pytest", "--warm-stop", "-p", "no:cacheprovider"],
                       cwd=pytester.path, env=env, capture_output=True)


def test_xdist_workers_are_forked_by_the_server(runtime, pytester):
    pytester.makepyfile(test_workers="""
        import os, pathlib, sys

        def parent_of(pid):
            return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]

        def record(name):
            # The test runs in its isolation child; its parent is the xdist worker.
            worker = os.getppid()
            pathlib.Path(name).write_text(f"{parent_of(worker)} {'torch' in sys.modules}")

        def test_a():
            record("a.txt")

        def test_b():
            record("b.txt")
    """)
    env = client_env(runtime)
    pid, _path = fork_server(pytester.path, env)
    try:
        run = warm_run(pytester.path, env, "-n", "2")
        assert run.returncode == 0 and "2 workers" in run.stdout, run.stdout + run.stderr
        # Each worker's parent is the server, and torch (which this test file never
        # imports) is already there.
        for name in ("a.txt", "b.txt"):
            assert (pytester.path / name).read_text() == f"{pid} True"
    finally:
        stop_server(pid)


@pytest.mark.slow
def test_changed_module_restarts_the_server_which_runs_the_new_code(runtime, pytester):
    """Real servers (`python -m ...warm_server`): the first run starts one, the second
    reuses it, and after the module the server holds imported changes, the next run
    restarts it and sees the new value; `--warm-stop` stops it."""
    library = pytester.path / "lib"
    library.mkdir()
    (library / "helper_mod.py").write_text("VALUE = 1\n")
    pytester.makepyfile(test_value="""
        import helper_mod

        def test_value():
            print("VALUE", helper_mod.VALUE)
    """)
    env = client_env(runtime, PYTHONPATH=str(library), ETSUITE_WARM_PRELOAD="helper_mod",
                     ETSUITE_WARM_IDLE="300")
    path = socket_for(pytester.path, env)
    first = warm_run(pytester.path, env, "-s", "-n", "0")
    try:
        assert first.returncode == 0 and "VALUE 1" in first.stdout, first.stdout + first.stderr
        assert "starting the warm process" in first.stderr
        second = warm_run(pytester.path, env, "-s", "-n", "0")
        server = served_by(second)
        assert server and "VALUE 1" in second.stdout, second.stderr
        (library / "helper_mod.py").write_text("VALUE = 2  # changed\n")
        third = warm_run(pytester.path, env, "-s", "-n", "0")
        logs = "".join(p.read_text() for p in runtime.glob("*/*.log"))
        assert "is out of date" in third.stderr and "helper_mod.py changed" in third.stderr, \
            third.stderr + logs[-3000:]
        assert third.returncode == 0 and "VALUE 2" in third.stdout, third.stdout + third.stderr
        fourth = warm_run(pytester.path, env, "-s", "-n", "0")
        assert served_by(fourth) not in ("", server), fourth.stderr
    finally:
        stopped = subprocess.run([sys.executable, "-m", "pytest", "--warm-stop"],
                                 cwd=pytester.path, env=env, capture_output=True, text=True)
    assert "warm process stopped" in stopped.stderr, stopped.stderr
    deadline = time.monotonic() + 30
    while path.exists():
        assert time.monotonic() < deadline, "the stopped server kept its socket"
        time.sleep(0.1)


def test_benchmark_runs_through_its_private_warm_process(pytester, tmp_path):
    """`make bench` times ours through a warm process of its own: the run is served by
    that server, the probe still reports, and the CPU the test burns in the server's
    children is counted (the client alone spends about 0.4-2 s)."""
    from etsuite.tools.bench.benchmark import run_pytest
    from etsuite.tools.bench.inner_loop import PrivateWarm

    pytester.makepyfile(test_busy="""
        import time

        def test_busy():
            started = time.process_time()
            while time.process_time() - started < 4:
                pass
    """)
    warm = PrivateWarm()
    warm.env = client_env(Path(warm.runtime))
    pid, _path = fork_server(pytester.path, warm.env)
    try:
        run = run_pytest("warm", ["test_busy.py", "-n", "0"], str(tmp_path), warm)
        assert warm.server == pid
        assert [test["outcome"] for test in run.tests] == ["passed"]
        assert run.cpu_s >= 4, run.cpu_s
        assert run.startup_s, "the probe did not report from the forked session"
    finally:
        warm.stop()
        stop_server(pid)
    assert not Path(warm.runtime).exists()


def test_the_warm_process_lowers_the_groups_each_backend_lists(monkeypatch):
    """What is warmed is the backends' data (PRIMING in flows.py), checked against FLOWS."""
    from etsuite.backends.harness.flows import registry
    from etsuite.backends.xnnpack import flows as xnnpack
    groups = [[flow.name for flow in group] for group in registry.priming_groups()]
    assert ["portable"] in groups and ["xnnpack", "xnnpack_static_int8_per_tensor"] in groups
    monkeypatch.setattr(xnnpack, "PRIMING", [["xnnpack", "no_such_flow"]])
    with pytest.raises(registry.BackendError, match="names no_such_flow, not a known flow"):
        registry.priming_groups()


def answered_and_closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (after any answer) within a few seconds."""
    sock.settimeout(10)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    return True


def closed_by_server(read_end: int) -> bool:
    """Whether the pipe's last write end (which the server received) is closed: EOF."""
    ready, _, _ = select.select([read_end], [], [], 5)
    return bool(ready) and os.read(read_end, 1) == b""


def send_with_pipe(path: Path, payload: bytes, fd_count: int = 1) -> tuple[socket.socket, int]:
    """A connection that sent `payload` with `fd_count` copies of a pipe's write end;
    the read end (this process keeps no write end)."""
    read_end, write_end = os.pipe()
    sock = warm_client.connect(path)
    socket.send_fds(sock, [payload], [write_end] * fd_count)
    os.close(write_end)
    return sock, read_end


def test_a_bad_request_is_dropped_with_its_descriptors_and_the_server_serves_on(runtime,
                                                                              tmp_path):
    """A JSON list, text that is not JSON, an unknown op, a field of the wrong type and a
    run with too few descriptors: each is refused, the descriptors sent with it closed,
    and the server goes on; a stop's descriptors are closed too, while a session runs."""
    env = client_env(runtime)
    pid, path = fork_server(tmp_path, env, warm=False)
    try:
        for payload, fds in ((b"[1, 2]\n", 3), (b"{not json\n", 3), (b'{"op": "nonsense"}\n', 3),
                             (b'{"op": "run", "argv": "x", "cwd": "/", "path": [], "env": {}}\n', 3),
                             (b'{"op": "run", "argv": [], "cwd": "/", "path": [], "env": {}}\n', 1)):
            sock, read_end = send_with_pipe(path, payload, fds)
            with sock:
                assert answered_and_closed(sock), payload
            assert os.waitpid(pid, os.WNOHANG) == (0, 0), f"the server died of {payload!r}"
            assert closed_by_server(read_end), f"descriptors kept after {payload!r}"
            os.close(read_end)
        # A session that runs until `go` exists keeps the server alive after a stop.
        go = tmp_path / "go"
        code = f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\n"
        null = os.open(os.devnull, os.O_RDWR)
        session = warm_client.connect(path)
        warm_client.send_message(session, {"op": "worker", "code": code, "cwd": "/",
                                           "env": {}}, [null, null, null])
        os.close(null)
        started = next(warm_client.read_messages(session))
        assert "child" in started, started
        sock, read_end = send_with_pipe(path, b'{"op": "stop"}\n')
        with sock:
            assert answered_and_closed(sock)
        assert closed_by_server(read_end), "descriptors kept after a stop"
        os.close(read_end)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the server left before its session"
        go.touch()
        with session:
            assert [m.get("exit") for m in warm_client.read_messages(session)] == [0]
        os.waitpid(pid, 0)
    finally:
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            stop_server(pid)


def test_a_slow_client_holds_up_no_other(runtime, pytester, monkeypatch):
    """A client that connects and sends half a request: another's run is served at once,
    and the slow one is dropped after the request time limit."""
    from etsuite.backends.harness.warm import request as warm_request

    monkeypatch.setattr(warm_request, "TIMEOUT_S", 5.0)  # the forked server inherits it
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    env = client_env(runtime)
    pid, path = fork_server(pytester.path, env)
    try:
        with warm_client.connect(path) as slow:
            slow.sendall(b'{"op": ')
            started = time.monotonic()
            run = warm_run(pytester.path, env, "test_one.py", "-n", "0", timeout=120)
            took = time.monotonic() - started
            assert (run.returncode, served_by(run)) == (0, str(pid)), run.stderr
            assert took < 20, f"the run waited {took:.1f} s for the slow client"
            assert answered_and_closed(slow), "the slow client was never dropped"
    finally:
        stop_server(pid)
