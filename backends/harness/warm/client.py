"""The thin side of the warm process (warm/server.py): where a checkout's server listens,
and handing a pytest run over to it.

A run opts in with `--warm` or `ETSUITE_WARM=1`. The plugin calls `forward` from
`pytest_cmdline_main`, before any test is collected: it connects to the server of this
checkout and environment (starting one if there is none), passes its stdin, stdout and
stderr file descriptors and its argv, cwd, sys.path and environment, and waits for the exit
code of the session the server forks. Anything that keeps the warm path from working
returns None with one line saying why, and the run goes on in this process as usual: the
warm process is never required.

This module is imported by every pytest process, so it uses the standard library only
(no torch): its cost is milliseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    import pytest

import contextlib
import fcntl
import hashlib
import json
import os
import site
import socket
import subprocess
import sys
import time
from pathlib import Path

ENV_FLAG = "ETSUITE_WARM"  # "1": runs go through the warm process
IN_CHILD = "ETSUITE_WARM_CHILD"  # set in the sessions the server forks: never forward again
SOCKET_ENV = "ETSUITE_WARM_SOCKET"  # in forked sessions: their server's socket, for xdist workers
# Environment variables read when torch, executorch or the plugin are imported, or that
# change what imports resolve to: a server started under other values is another server.
KEY_PREFIXES = ("PYTHON", "TORCH", "PYTORCH", "EXECUTORCH", "OMP_", "MKL_", "KMP_", "LD_")
KEY_NAMES = ("ETSUITE_NO_SPEEDUPS", "ETSUITE_WARM_PRELOAD", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
             "CUDA_VISIBLE_DEVICES")
# Not in the key: tox sets a new PYTHONHASHSEED for every run (in the key, every `make
# test-<backend>` would start a server of its own; a session takes the server's hash seed),
# and sets PYTHONIOENCODING where a shell may set PYTHONUNBUFFERED or
# PYTHONDONTWRITEBYTECODE: a session takes these three from its client's environment.
KEY_EXCLUDED = ("PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUNBUFFERED",
                "PYTHONDONTWRITEBYTECODE")
START_TIMEOUT_S = 600.0  # a cold server imports torch and lowers a few models first


class WarmUnavailable(RuntimeError):
    """The warm path cannot serve this run; the run goes on in its own process."""


def runtime_dir() -> Path:
    """A folder only this user can enter: $XDG_RUNTIME_DIR/etsuite-warm, else
    /tmp/etsuite-warm-<uid>. Refuses one that another user owns or others can open, since
    whoever can reach the socket can run code as this user."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(base) / "etsuite-warm" if base else Path(f"/tmp/etsuite-warm-{os.getuid()}")
    # imported here: worker_main runs this file without site, where etsuite is not found
    from etsuite.backends.harness.private_paths import NotPrivate, private_folder

    try:
        return Path(private_folder(str(folder)))
    except NotPrivate as error:
        raise WarmUnavailable(str(error)) from None


def environment_key(rootdir: str) -> dict:
    """What a server must share with a run to serve it: the checkout, the interpreter and
    its site folders, and the environment variables that matter at import time. Files are
    not in it: the server watches those itself (warm_server.Watch)."""
    env = {name: value for name, value in os.environ.items()
           if (name.startswith(KEY_PREFIXES) or name in KEY_NAMES) and name not in KEY_EXCLUDED}
    return {"rootdir": os.path.realpath(rootdir), "executable": sys.executable,
            "prefix": sys.prefix, "version": sys.version,
            "site": site.getsitepackages(),
            "env": dict(sorted(env.items()))}


def socket_path(key: dict) -> Path:
    """One socket per checkout and environment, named by a hash of the key (short, so it
    stays within a unix socket path's 108 bytes wherever the checkout is)."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return runtime_dir() / f"{digest}.sock"


def connect(path: Path) -> socket.socket | None:
    """A connection to the server at `path`, None when none listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def send_message(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:  # type: ignore[assignment]
    """One JSON line; file descriptors ride along with its first bytes (SCM_RIGHTS)."""
    data = json.dumps(message).encode() + b"\n"
    sent = socket.send_fds(sock, [data[:4096]], list(fds)) if fds else 0
    if sent < len(data):  # (an empty send to a server that already answered fails: EPIPE)
        sock.sendall(data[sent:])


def read_messages(sock: socket.socket) -> Iterator[Any]:
    """The JSON lines the server sends, until it closes the connection."""
    buffer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield json.loads(line)


def start_server(path: Path, rootdir: str) -> socket.socket:
    """Start a server for this checkout and environment, detached from this run, and wait
    until it listens (it imports and warms up first). Its output goes to a log beside the
    socket."""
    log_path = path.with_suffix(".log")
    env = {name: value for name, value in os.environ.items() if name != IN_CHILD}
    with open(log_path, "ab") as log:
        os.chmod(log_path, 0o600)
        server = subprocess.Popen(
            [sys.executable, "-m", "etsuite.backends.harness.warm.server", str(path), rootdir],
            cwd=rootdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        sock = connect(path)
        if sock is not None:
            return sock
        if server.poll() is not None:
            raise WarmUnavailable(f"the warm process exited ({server.returncode}) before it "
                                  f"listened; see {log_path}")
        time.sleep(0.1)
    raise WarmUnavailable(f"the warm process did not listen within {START_TIMEOUT_S:.0f} s")


@contextlib.contextmanager
def start_lock(path: Path) -> Iterator[None]:
    """One starter at a time per socket: two runs started together share one server."""
    with open(os.open(path.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def say(line: str) -> None:
    sys.stderr.write(f"etsuite: {line}\n")
    sys.stderr.flush()


def run_warm(rootdir: str, argv: list[str]) -> int:
    """Run pytest with `argv` in a session forked by the warm server; its exit code."""
    path = socket_path(environment_key(rootdir))
    request = {"op": "run", "argv": argv, "cwd": os.getcwd(), "path": sys.path,
               "env": dict(os.environ)}
    for _attempt in range(3):
        sock = connect(path)
        started = False
        if sock is None:
            with start_lock(path):
                sock = connect(path)
                if sock is None:
                    say("starting the warm process of this checkout (imports torch and "
                        "executorch once; `pytest --warm-stop` stops it)")
                    sock = start_server(path, rootdir)
                    started = True
        with sock:
            send_message(sock, request, [0, 1, 2])
            messages = read_messages(sock)
            first = next(messages, None)
            if first is None:
                raise WarmUnavailable("the warm process closed the connection")
            if "stale" in first:
                say(f"warm process {first['server']} is out of date ({first['stale']}): "
                    f"restarting it")
                continue
            if "error" in first:
                raise WarmUnavailable(first["error"])
            if not started:
                say(f"run in warm process {first['server']} (session {first['child']})")
            try:
                last = next(messages, None)
            except KeyboardInterrupt:
                return 2  # closing the connection interrupts the session
            if last is None:
                raise WarmUnavailable("the warm process ended during the run")
            return int(last["exit"])
    raise WarmUnavailable("the warm process stayed out of date after two restarts")


def stop(rootdir: str) -> bool:
    """Ask this checkout's server (of this environment) to exit; False if none ran."""
    path = socket_path(environment_key(rootdir))
    sock = connect(path)
    if sock is None:
        return False
    with sock:
        send_message(sock, {"op": "stop"})
        for _message in read_messages(sock):
            pass
    return True


def xdist_workers_from_server(config: pytest.Config) -> None:
    """In a session the server forked: xdist's workers are forked by the server too,
    instead of each starting an interpreter and importing torch again. execnet starts a
    popen worker as `<python> -u -c <bootstrap>`; its `python` becomes this file run
    without site (`worker_main`), which hands the bootstrap and its pipes to the server."""
    where = os.environ.get(SOCKET_ENV)
    tx = getattr(config.option, "tx", None)
    if os.environ.get(IN_CHILD) != "1" or not where or not tx:
        return
    launcher = f"{sys.executable} -S {os.path.abspath(__file__)} {where}"
    config.option.tx = [f"{spec}//python={launcher}" if spec == "popen" else spec for spec in tx]


def worker_main(argv: list[str]) -> int:
    """`python -S warm/client.py SOCKET -u -c CODE`: an xdist worker forked by the server,
    with this process's stdin/stdout (execnet's pipes); exits with the worker's code."""
    where, rest = Path(argv[0]), argv[1:]
    code = rest[rest.index("-c") + 1]
    sock = connect(where)
    if sock is None:
        sys.stderr.write(f"etsuite: no warm process at {where} to fork an xdist worker\n")
        return 1
    with sock:
        send_message(sock, {"op": "worker", "code": code, "cwd": os.getcwd(),
                            "env": dict(os.environ)}, [0, 1, 2])
        exit_code = 1
        for message in read_messages(sock):
            exit_code = int(message.get("exit", exit_code))
    return exit_code


def forward(config: pytest.Config) -> int | None:
    """From `pytest_cmdline_main`: the exit code of the run done by the warm process, or
    None to run here (not asked for, inside a forked session, or unavailable)."""
    if os.environ.get(IN_CHILD) == "1":
        return None
    rootdir = str(config.rootpath)
    if config.option.warm_stop:
        say("warm process stopped" if stop(rootdir) else "no warm process was running")
        return 0
    if not (config.option.warm or os.environ.get(ENV_FLAG) == "1"):
        return None
    argv = [sys.argv[0], *config.invocation_params.args]
    try:
        return run_warm(rootdir, argv)
    except (WarmUnavailable, OSError) as error:
        say(f"warm process unavailable, running here: {error}")
        return None


if __name__ == "__main__":
    raise SystemExit(worker_main(sys.argv[1:]))
