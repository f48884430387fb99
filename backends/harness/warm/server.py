"""The warm process: one per checkout, environment and user, holding torch, executorch,
pytest's plugins and the flows' modules imported and its memos primed (for the flows each
backend's flows.py lists in `PRIMING`), so that a run pays start-up once instead of
every time (docs/how-to/use-the-warm-process.md).

    python -m etsuite.backends.harness.warm.server SOCKET ROOTDIR   (started by warm_client)

Each run (warm_client.run_warm) sends its argv, cwd, sys.path and environment and its
stdin/stdout/stderr file descriptors; the server forks a child that takes them over and
runs `pytest.main(argv)`, as test/conftest.py's `run_forked` runs the project's own
sessions. The child is its own process group: a crash, an abort or a kill ends it and its
test children only, and the server reports its exit status to the client (128 + signal,
as a shell would). The per-test isolation (isolation.py) forks inside that session as it
does in any other.

The server never runs old code: before each run it checks that every file it imported is
unchanged (its contents; a file only touched is no change) and that no module was added
to or removed from their folders (`Watch`); if anything changed it tells the client, stops
listening and exits once its running sessions end, and the client starts a new one. A
different interpreter, site folder or import-time environment variable is another server
(warm_client.environment_key).
It exits after ETSUITE_WARM_IDLE seconds without a run (default 900).

A request is read as it arrives and checked before it is served (warm/request.py): a
slow or silent client holds up no other, and a malformed one is logged and dropped with
the file descriptors it sent.

Single-threaded on purpose: it forks, and a fork of a threaded process may inherit locks
held by threads that do not exist in the child.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from etsuite.backends.harness.warm import client as warm_client
from etsuite.backends.harness.warm.request import TIMEOUT_S as REQUEST_TIMEOUT_S
from etsuite.backends.harness.warm.request import BadRequest, PendingRequest, close_fds

IDLE_ENV = "ETSUITE_WARM_IDLE"
DEFAULT_IDLE_S = 900.0
# Extra modules to hold imported (comma-separated): a vendor's backend package, say.
PRELOAD_ENV = "ETSUITE_WARM_PRELOAD"
INTERRUPT_GRACE_S = 10.0  # a session whose client left: SIGINT, then SIGKILL after this


class Watch:
    """The files a process imported and the folders they came from, as they were: asked
    later, says what changed (a file's contents, a module added to a folder).

    A file whose mtime moved but whose contents did not (tox reinstalls the editable
    package's finder module on every run) is not a change: files up to HASHED_BYTES are
    hashed when watching starts, and a larger one counts as changed when its mtime does."""

    HASHED_BYTES = 1 << 20

    def __init__(self, modules: dict[str, Any] | None = None) -> None:
        files = set()
        for module in list((modules if modules is not None else sys.modules).values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and os.path.isfile(path):
                files.add(os.path.realpath(path))
        self.files = {path: self._stat(path) for path in sorted(files)}
        self.digests = {path: self._digest(path) for path, seen in self.files.items()
                        if seen is not None and seen[1] <= self.HASHED_BYTES}
        self.folders = {folder: self._listing(folder)
                        for folder in sorted({os.path.dirname(p) for p in files})}

    @staticmethod
    def _stat(path: str) -> tuple[int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    @staticmethod
    def _digest(path: str) -> str | None:
        try:
            with open(path, "rb") as handle:
                return hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            return None

    @staticmethod
    def _listing(folder: str) -> list[str] | None:
        """Entries that can be imported from (or shadow) a module of the folder."""
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        return sorted(n for n in names if n != "__pycache__" and not n.endswith((".pyc", ".lock")))

    def changed(self) -> str | None:
        """The first change seen, in words; None when everything is as it was."""
        for path, before in self.files.items():
            now = self._stat(path)
            if now == before:
                continue
            same = (now is not None and before is not None and now[1] == before[1]
                    and path in self.digests and self._digest(path) == self.digests[path])
            if not same:
                return f"{path} changed"
            self.files[path] = now  # touched, not changed
        for folder, listed in self.folders.items():
            now_listed = self._listing(folder)
            if now_listed != listed:
                added = sorted(set(now_listed or ()) - set(listed or ()))
                removed = sorted(set(listed or ()) - set(now_listed or ()))
                return f"{folder}: added {added}, removed {removed}"
        return None


def warm(rootdir: str) -> list[str]:
    """Import what every run imports and fill the memos, in this (the server) process.

    pytest is configured once in `rootdir` (`--version`: plugins load, no session runs) so
    that the plugins are imported the way a run imports them, with pytest's assertion
    rewriting of the modules it rewrites. Conftests and test modules are not imported
    (`--noconftest`): each session imports them afresh, so editing a test costs no restart.
    Returns the priming problems, for the log."""
    import pytest

    os.chdir(rootdir)
    pytest.main(["--noconftest", "--version"])
    import torch  # noqa: F401 - the point: imported once here

    from etsuite.backends.harness.case import speedups
    from etsuite.backends.harness.case.priming import prime
    from etsuite.backends.harness.flows import registry

    groups = registry.priming_groups()  # imports every backend's flows module (no SDK)
    for name in filter(None, os.environ.get(PRELOAD_ENV, "").split(",")):
        __import__(name.strip())
    speedups.apply()
    # The backends' PRIMING groups, one priming each (a group holds one floating-point and
    # one quantizing flow at most: quantizers keep their pattern graphs per backend).
    return [problem for group in groups for problem in prime(group)]


def run_session(request: dict, fds: list[int], where: Path) -> None:
    """In the forked child: become the client's pytest run (op "run"), or an xdist worker
    of such a run (op "worker": execnet's bootstrap code), then exit with its code."""
    code = 70
    try:
        os.setpgid(0, 0)
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT
                          else signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[warm_client.IN_CHILD] = "1"
        os.environ[warm_client.SOCKET_ENV] = str(where)
        os.chdir(request["cwd"])
        if request["op"] == "run":
            sys.path[:] = request["path"]  # a worker gets its controller's from xdist
        sys.argv = list(request["argv"]) if request["op"] == "run" else ["-c"]
        # What an interpreter takes from these variables at start-up, from the client's.
        encoding = (os.environ.get("PYTHONIOENCODING") or "").split(":")[0] or None
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115 - own streams
        sys.stdout = open(1, "w", buffering=1, encoding=encoding, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, encoding=encoding, closefd=False)  # noqa: SIM115
        if "torch" in sys.modules:  # the parent's intra-op thread pool does not survive fork
            sys.modules["torch"].set_num_threads(1)
        if request["op"] == "worker":
            exec(compile(request["code"], "<execnet bootstrap>", "exec"),  # noqa: S102
                 {"__name__": "__main__"})
            code = 0
        else:
            import pytest

            code = int(pytest.main(sys.argv[1:]))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - say what broke, then leave
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def peer_uid(conn: socket.socket) -> int:
    """The connecting process's user (SO_PEERCRED: pid, uid, gid)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class Server:
    """Accepts runs on a unix socket, forks one session per run, reports exit codes."""

    def __init__(self, path: Path, watch: Watch, idle_s: float):
        self.path = path
        self.watch = watch
        self.idle_s = idle_s
        self.selector = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self.sessions: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> pid, conn
        self.interrupted: dict[int, float] = {}  # pid -> when SIGINT was sent
        self.pending: set[PendingRequest] = set()  # connections whose request is coming
        self.last_active = time.monotonic()

    def listen(self) -> None:
        """Bind with a umask that leaves the socket to this user only (0600), then rename
        into place, so a client never meets a socket with wider permissions."""
        temporary = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError, KeyError, ValueError):
            temporary.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            listener.bind(str(temporary))
        finally:
            os.umask(old_umask)
        os.chmod(temporary, 0o600)
        listener.listen(16)
        os.rename(temporary, self.path)
        listener.setblocking(False)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ, "accept")

    def stop_listening(self) -> None:
        """No new runs: the socket goes at once (the next client starts a new server);
        running sessions finish."""
        if self.listener is None:
            return
        self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.path.unlink()

    def serve(self) -> None:
        while self.listener is not None or self.sessions:
            if self.listener is not None and not self.sessions and not self.pending \
                    and time.monotonic() - self.last_active > self.idle_s:
                log(f"idle for {self.idle_s:.0f} s: exiting")
                self.stop_listening()
                break
            for key, _events in self.selector.select(timeout=0.5):
                if key.data == "accept":
                    self.accept()
                elif key.data == "session":
                    self.session_ended(key.fileobj)  # type: ignore[arg-type]
                elif isinstance(key.data, PendingRequest):
                    self.read_request(key.data)
                else:
                    self.client_closed(key.data)
            self.drop_late_requests()
            self.escalate_interrupts()

    def accept(self) -> None:
        """A new connection, from this user only; its request is read as it arrives
        (`read_request`), so a slow client holds up no other."""
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        self.last_active = time.monotonic()
        try:
            if peer_uid(conn) != os.getuid():
                conn.settimeout(1)
                warm_client.send_message(conn, {"error": "another user's process"})
                conn.close()
                return
        except OSError as error:
            log(f"refused a connection: {error}")
            conn.close()
            return
        pending = PendingRequest(conn)
        self.pending.add(pending)
        self.selector.register(conn, selectors.EVENT_READ, pending)

    def read_request(self, pending: PendingRequest) -> None:
        try:
            received = pending.read()
        except BadRequest as error:
            log(f"bad request: {error}")
            self.forget(pending)
            pending.close()
            return
        if received is None:
            return
        self.forget(pending)
        self.serve_request(pending.conn, *received)

    def drop_late_requests(self) -> None:
        for pending in [p for p in self.pending if time.monotonic() > p.deadline]:
            log(f"bad request: not complete within {REQUEST_TIMEOUT_S:.0f} s")
            self.forget(pending)
            pending.close()

    def forget(self, pending: PendingRequest) -> None:
        self.pending.discard(pending)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(pending.conn)

    def serve_request(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        self.last_active = time.monotonic()
        if request["op"] == "stop":
            log("asked to stop")
            close_fds(fds)
            self.stop_listening()
            conn.close()
            return
        # A worker belongs to a run this server already checked and started.
        changed = self.watch.changed() if request["op"] == "run" else None
        if changed is not None:
            log(f"out of date: {changed}")
            self.stop_listening()
            with contextlib.suppress(OSError, KeyError, ValueError):
                warm_client.send_message(conn, {"stale": changed, "server": os.getpid()})
            conn.close()
            close_fds(fds)
            return
        self.fork_session(conn, request, fds)

    def fork_session(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            if self.listener is not None:
                self.listener.close()
            conn.close()
            for _pid, other in self.sessions.values():
                other.close()
            for pending in self.pending:  # other clients' connections and descriptors
                pending.close()
            run_session(request, fds, self.path)  # never returns
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.sessions[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ, "session")
        self.selector.register(conn, selectors.EVENT_READ, pid)
        warm_client.send_message(conn, {"server": os.getpid(), "child": pid})
        log(f"session {pid}: " + (' '.join(request['argv'][1:]) if request["op"] == "run"
                                  else "an xdist worker"))

    def session_ended(self, pidfd: int) -> None:
        pid, conn = self.sessions.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        self.interrupted.pop(pid, None)
        code = os.waitstatus_to_exitcode(status)
        exit_code = 128 - code if code < 0 else code  # killed by a signal: 128 + signal
        log(f"session {pid}: exit {exit_code}")
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.selector.unregister(conn)
        try:
            warm_client.send_message(conn, {"exit": exit_code,
                                            "cpu_s": usage.ru_utime + usage.ru_stime})
        except OSError:
            pass
        conn.close()
        self.last_active = time.monotonic()

    def client_closed(self, pid: int) -> None:
        """A client's connection became readable while its session runs: it left (Ctrl-C
        or killed), so the session is interrupted as pytest would be."""
        conn = next(c for p, c in self.sessions.values() if p == pid)
        self.selector.unregister(conn)
        if pid not in self.interrupted:
            log(f"session {pid}: client left, interrupting it")
            with contextlib.suppress(OSError, KeyError, ValueError):
                os.killpg(pid, signal.SIGINT)
            self.interrupted[pid] = time.monotonic()

    def escalate_interrupts(self) -> None:
        for pid, when in list(self.interrupted.items()):
            if time.monotonic() - when > INTERRUPT_GRACE_S:
                with contextlib.suppress(OSError, KeyError, ValueError):
                    os.killpg(pid, signal.SIGKILL)
                del self.interrupted[pid]


def log(line: str) -> None:
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} warm process {os.getpid()}: {line}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    path_text, rootdir = (argv if argv is not None else sys.argv[1:])[:2]
    path = Path(path_text)
    if warm_client.socket_path(warm_client.environment_key(rootdir)) != path:
        log(f"refusing {path}: it is not this environment's socket")
        return 2
    started = time.monotonic()
    problems = warm(rootdir)
    for problem in problems:
        log(f"priming: {problem}")
    watch = Watch()
    idle_s = float(os.environ.get(IDLE_ENV, DEFAULT_IDLE_S))
    server = Server(path, watch, idle_s)
    server.listen()
    log(f"listening on {path} after {time.monotonic() - started:.1f} s "
        f"({len(watch.files)} files watched, idle exit after {idle_s:.0f} s)")
    signal.signal(signal.SIGTERM, lambda *_: server.stop_listening())
    server.serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
