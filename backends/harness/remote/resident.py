"""Resident agents: one long-lived agent per device that serves every job of a run over
one connection, so a job pays no start-up (a Python agent's imports: 1.6 s over ssh).

A kind that can keep its agent running says how to start it (`Resident`: the agent's
argv, in `--serve` mode, and what to write to it first). The agent belongs to a relay:
a small process of its own (this file, run as a script: the standard library and two
torch-free etsuite modules) that
holds the agent's pipes, listens on a Unix socket and serves one job per connection.
Test processes come and go (each test runs in a forked child) while the relay and its
agent stay. The relay's socket is in the run's pool folder (remote/pool.py): one relay
per device (per device and xdist worker for a local kind, which is not exclusive), and
the relay exits when that folder goes (the end of the run) or after `IDLE` seconds
without a job. (The socket itself is in a short folder of the user's: `socket_path`.)

What a job's answer means, on the host's side (`exchange` returns a spec.Reply):
- the agent answers: its output tar, as any kind's exchange;
- the agent dies while it runs the job: a crash of the program (the signal, or the
  exit status and the end of its stderr); the next job starts a new agent;
- the agent was found dead before the job (killed between jobs, a dropped connection)
  or does not start: it is started again, once; a second failure is a lost device
  (kinds.DeviceLost), as is no answer within the spec's time limit;
- the agent answers outside the protocol (a `done` line without a size, a size over the
  exchange's byte limit, an answer cut short): "broken", the job's fail_infra with the
  reason; the agent is stopped and the next job starts another.
Every read from the agent and every write to it has the job's deadline, so one agent
that stops cannot hold the relay past it; the relay serves only this user's processes
(SO_PEERCRED) and its client talks only to this user's relay.

Protocol between agent and relay (agent.py --serve, the native runner's --serve): a line
`ready {json}` (the exchange format versions it reads), then `job SIZE` + a job tar for
`done SIZE` + the output tar, until end of input. Between a test process and the relay:
one line of JSON (`timeout`, `size`), the job tar; one line of JSON (`status`: done,
crashed, lost, broken; `detail`, `signal`, `started`: the agent was started for this job,
`agent`: its process id), the output tar.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from etsuite.backends.harness.private_paths import check_peer, open_lock, private_folder
from etsuite.backends.harness.remote.agent import MAX_ARCHIVE_BYTES

IDLE = 600.0            # seconds without a job before a relay exits
START_TIMEOUT = 120.0   # seconds for an agent to say it is ready (a cold Python import)
CONNECT_TIMEOUT = 10.0  # seconds for a relay just started to listen
EXIT_MARK = "etsuite-agent-exit:"  # as kinds.EXIT_MARK: a remote shell's exit status
NEEDED_VERSION = 2      # the exchange format version the host sends lists of calls in
MAX_LINE = 64 << 10     # bytes of a protocol line (`ready {...}`, `done SIZE`, a request)
MAX_TIMEOUT = 7 * 24 * 3600.0  # seconds a job may be given (spec.py bounds it too)
REQUEST_TIMEOUT = 30.0  # seconds a test process has to send its request
STATUSES = ("done", "crashed", "lost", "broken")


@dataclass(frozen=True)
class Resident:
    """How a kind starts its device's agent in --serve mode: `argv`, bytes written to
    its stdin first (the ssh runner sends the agent's source), and whether its exit status
    arrives after EXIT_MARK on stderr (a remote shell's, where ssh's own cannot tell a
    dropped connection from an agent that exited)."""

    argv: tuple
    preamble: bytes = b""
    marked: bool = False


# ---------------------------------------------------------------- the host's side

def socket_path(folder: str, device: str, resident: Resident, exclusive: bool) -> str:
    """The relay's socket for this run, device, agent and (for a local kind) worker. A
    Unix socket's path is short (108 bytes), so it is a digest in a short folder of the
    user's; the run's folder holds the relay's log (`<digest>.log`) beside its name."""
    worker = "" if exclusive else os.environ.get("PYTEST_XDIST_WORKER", "main")
    key = json.dumps([os.path.abspath(folder), device, list(resident.argv), worker,
                      resident.marked])
    digest = hashlib.sha256(key.encode() + resident.preamble).hexdigest()[:20]
    return os.path.join(_socket_folder(), f"{digest}.sock")


def _socket_folder() -> str:
    # The session's temporary folder: a test's own is removed when the test ends, and the
    # relay serves every test. (Imported here: the relay script stays standard library.)
    from etsuite.backends.harness.confinement import session_tmp

    base = session_tmp()
    if len(base) > 60:
        base = "/tmp"
    return private_folder(os.path.join(base, f"etsuite-resident-{os.getuid()}"))


def _named(folder: str, path: str, suffix: str) -> str:
    """A file of the run's folder named after the relay's socket."""
    return os.path.join(folder, f"resident-{os.path.basename(path)[:-len('.sock')]}{suffix}")


def exchange(folder: str, device: str, resident: Resident, exclusive: bool,
             job_tar: bytes, timeout: float) -> dict:
    """One job through the device's relay (started if it is not running): the relay's
    answer, {"status", "detail", "signal", "started", "seconds", "tar"}. OSError when the
    relay cannot be reached (the caller calls the device lost)."""
    path = socket_path(folder, device, resident, exclusive)
    started = time.perf_counter()
    connection = _connect(path)
    if connection is None:
        connection = _start_relay(folder, path, resident)
    with connection:
        check_peer(connection, f"the relay's socket {path}")
        connection.settimeout(timeout + START_TIMEOUT + 30)  # the relay keeps the time
        header = json.dumps({"timeout": timeout, "size": len(job_tar)}).encode()
        connection.sendall(header + b"\n" + job_tar)
        reader = connection.makefile("rb")
        line = reader.readline(MAX_LINE)
        if not line:
            raise OSError(f"the relay at {path} closed the connection without an answer")
        answer = json.loads(line)
        size = answer.get("size", 0) if isinstance(answer, dict) else None
        if not isinstance(size, int) or not 0 <= size <= MAX_ARCHIVE_BYTES \
                or answer.get("status") not in STATUSES:
            raise ValueError(f"the relay at {path} answered {line[:80]!r}")
        answer["tar"] = reader.read(size)
    answer["seconds"] = time.perf_counter() - started
    return answer


def _connect(path: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        return connection
    except OSError:
        connection.close()
        return None


def _start_relay(folder: str, path: str, resident: Resident) -> socket.socket:
    """Starts the relay under a lock (two test processes never start two), then
    connects; its log is `<socket>.log`."""
    os.makedirs(folder, exist_ok=True)
    with open(open_lock(_named(folder, path, ".start")), "r+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        connection = _connect(path)
        if connection is not None:
            return connection
        if os.path.exists(path):
            os.unlink(path)  # a relay that died left it
        spec = json.dumps({"argv": list(resident.argv), "marked": resident.marked,
                           "preamble": resident.preamble.decode("latin-1")})
        log_path = _named(folder, path, ".log")
        from etsuite.backends.harness.confinement import outliving_environment

        with open(log_path, "ab") as log:  # the relay outlives the test that starts it
            relay = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--socket", path, "--watch", folder],
                stdin=subprocess.PIPE, stdout=log, stderr=log, start_new_session=True,
                env=outliving_environment())
        assert relay.stdin is not None
        relay.stdin.write(spec.encode())
        relay.stdin.close()
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while time.monotonic() < deadline:
            connection = _connect(path)
            if connection is not None:
                return connection
            if relay.poll() is not None:
                break
            time.sleep(0.005)
        raise OSError(f"the relay for {path} did not start (exit {relay.poll()}; "
                      f"log: {log_path})")


def stop_relays(folder: str) -> None:
    """Ends every relay of a run at once (a relay also ends by itself when the folder
    goes, within a second)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith("resident-") and name.endswith(".start"):
            digest = name[len("resident-"):-len(".start")]
            connection = _connect(os.path.join(_socket_folder(), f"{digest}.sock"))
            if connection is not None:
                with connection:
                    try:
                        connection.sendall(b'{"stop": true}\n')
                    except OSError:
                        pass


# ---------------------------------------------------------------- the relay

class Broken(Exception):
    """The agent answered outside the protocol; the message says how."""


class _Agent:
    """The agent process and the end of its stderr (read by a thread, so that a chatty
    runtime never blocks on a full pipe). Its stdin and stdout are used raw, with a
    deadline on every read and write."""

    def __init__(self, argv: list, marked: bool):
        self.marked = marked
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=True)
        self.program = os.path.basename(str(argv[0]))
        self.stderr: collections.deque = collections.deque(maxlen=40)
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self.stdin, False)
        self.pending = bytearray()  # read from stdout, not yet taken

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def tail(self, lines: int = 6) -> str:
        kept = [line for line in list(self.stderr) if EXIT_MARK not in line]
        return "\n".join(kept[-lines:])

    def send(self, data: bytes, deadline: float) -> bool:
        """All of `data` to the agent's stdin: False past the deadline (it stopped
        reading); OSError when it has gone."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self.stdin], [], left)[1]:
                return False
            with contextlib.suppress(BlockingIOError):
                view = view[os.write(self.stdin, view):]
        return True

    def _more(self, deadline: float) -> bool | None:
        """More of stdout into `pending`: True, False at its end, None past the deadline."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.stdout], [], [], left)[0]:
            return None
        chunk = os.read(self.stdout, 1 << 20)
        self.pending += chunk
        return bool(chunk)

    def read_line(self, deadline: float) -> bytes | None:
        """A line of the agent's stdout (at most MAX_LINE bytes, its end kept), what is
        left of it at its end (b"" when nothing), None past the deadline."""
        while b"\n" not in self.pending and len(self.pending) < MAX_LINE:
            more = self._more(deadline)
            if more is None:
                return None
            if not more:
                break
        end = self.pending.find(b"\n") + 1 or min(len(self.pending), MAX_LINE)
        line = bytes(self.pending[:end])
        del self.pending[:end]
        return line

    def read_exactly(self, size: int, deadline: float) -> bytes:
        """`size` bytes of the agent's stdout; Broken when it ends first, None past the
        deadline."""
        while len(self.pending) < size:
            more = self._more(deadline)
            if not more:
                raise Broken(f"the answer stopped after {len(self.pending)} of its {size} bytes"
                             f"{' (no more within the time limit)' if more is None else ''}")
        data = bytes(self.pending[:size])
        del self.pending[:size]
        return data

    def ended(self) -> tuple[int | None, str]:
        """How the agent ended: (the signal that killed it or None, a sentence)."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.wait()
        self.drain.join(timeout=2)  # the end of stderr: the mark, the last messages
        self.close_pipes()
        if self.marked:  # the remote shell's status, when the connection held
            marks = [line.split(EXIT_MARK, 1)[1].strip() for line in list(self.stderr)
                     if EXIT_MARK in line]
            if not marks or not marks[-1].isdigit():
                return None, (f"the connection ended: {self.program} exited {code}: "
                              f"{self.tail(3) or 'no message'}")
            code = int(marks[-1])
            return (code - 128 if code > 128 else None), f"the agent exited {code}"
        return (-code if code < 0 else None), f"the agent exited {code}"

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.close_pipes()

    def close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]


def ready_versions(line: bytes) -> list:
    """The exchange format versions an agent's `ready {json}` line names; Broken when the
    line is not that."""
    try:
        hello = json.loads(line[len(b"ready "):])
    except (ValueError, RecursionError):
        hello = None
    versions = hello.get("versions") if isinstance(hello, dict) else None
    if not isinstance(versions, list):
        raise Broken(f"its first line is not `ready {{\"versions\": [...]}}`: {line[:80]!r}")
    return versions


def done_size(line: bytes) -> int:
    """The SIZE of a `done SIZE` line; Broken unless it is a count within the byte limit."""
    word, _, size = line.strip().partition(b" ")
    if word != b"done" or not size.isdigit() or int(size) > MAX_ARCHIVE_BYTES:
        raise Broken(f"its answer is not `done SIZE` with SIZE at most {MAX_ARCHIVE_BYTES}: "
                     f"{line[:80]!r}")
    return int(size)


class Relay:
    def __init__(self, spec: dict):
        self.argv, self.marked = spec["argv"], spec["marked"]
        self.preamble = spec["preamble"].encode("latin-1")
        self.agent: _Agent | None = None

    def stop_agent(self) -> None:
        if self.agent is not None:
            self.agent.kill()
        self.agent = None

    def start_agent(self, timeout: float) -> str | None:
        """A new agent, ready: None, or why it is not."""
        self.stop_agent()
        deadline = time.monotonic() + max(timeout, START_TIMEOUT)
        try:
            self.agent = _Agent(self.argv, self.marked)
        except OSError as error:
            return f"cannot start {self.argv[0]}: {error}"
        try:
            line = self.agent.read_line(deadline) if self.agent.send(self.preamble, deadline) \
                else None
        except OSError:  # it ended before it read its preamble
            line = b""
        if not line or not line.startswith(b"ready "):
            agent, self.agent = self.agent, None
            if line is None:
                agent.kill()
                return f"the agent did not say it was ready within {max(timeout, START_TIMEOUT):g} s"
            _, how = agent.ended()
            return f"the agent did not start ({how}): {agent.tail(3) or 'no message'}"
        try:
            versions = ready_versions(line)
        except Broken as error:
            self.stop_agent()
            return f"the agent broke the protocol: {error}"
        if NEEDED_VERSION not in versions:
            self.stop_agent()
            return (f"the agent reads exchange format versions {str(versions)[:80]}, not "
                    f"{NEEDED_VERSION}: an older runner? (update it)")
        return None

    def serve_job(self, job_tar: bytes, timeout: float) -> tuple[dict, bytes]:
        started = False
        if self.agent is None or self.agent.process.poll() is not None:
            # not started yet, or dead since the last job: started again, once more if
            # that fails, then the device is lost
            why = self.start_agent(timeout)
            if why is not None:
                why = self.start_agent(timeout)
                if why is not None:
                    return {"status": "lost", "detail": why}, b""
            started = True
        assert self.agent is not None
        deadline = time.monotonic() + timeout
        job = f"job {len(job_tar)}\n".encode() + job_tar
        try:
            sent = self.agent.send(job, deadline)
        except OSError:  # it died just before the job: restart once
            why = self.start_agent(timeout)
            if why is not None:
                return {"status": "lost", "detail": why}, b""
            assert self.agent is not None
            started = True
            sent = self.agent.send(job, deadline)
        line = self.agent.read_line(deadline) if sent else None
        if line is None:
            self.stop_agent()
            return {"status": "lost", "detail": f"no answer within {timeout:g} s"}, b""
        if not line.startswith(b"done "):
            agent, self.agent = self.agent, None
            signalled, how = agent.ended()
            if signalled is None and self.marked and how.startswith("the connection"):
                return {"status": "lost", "detail": how[len("the connection ended: "):]}, b""
            return {"status": "crashed", "signal": signalled, "started": started,
                    "detail": f"{how}: {agent.tail()}" if agent.tail() else how}, b""
        try:
            answer = self.agent.read_exactly(done_size(line), deadline)
        except Broken as error:
            self.stop_agent()
            return {"status": "broken", "started": started,
                    "detail": f"the agent broke the protocol: {error}"}, b""
        return {"status": "done", "started": started, "agent": self.agent.process.pid}, answer


def _read_request(connection: socket.socket) -> tuple[dict, bytes]:
    """A test process's request: a JSON object whose `size` (of the job tar that follows)
    is a count within the byte limit and `timeout` a positive number of seconds up to
    MAX_TIMEOUT; ValueError otherwise."""
    reader = connection.makefile("rb")
    header = json.loads(reader.readline(MAX_LINE) or b"{}")
    if not isinstance(header, dict):
        raise ValueError("a request is not a JSON object")
    size, timeout = header.get("size", 0), header.get("timeout", 300)
    if not isinstance(size, int) or not 0 <= size <= MAX_ARCHIVE_BYTES \
            or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"a request's size or timeout is out of range: {str(header)[:120]}")
    job_tar = reader.read(size)
    if len(job_tar) != size:
        raise ValueError("a request's job was cut short")
    return header, job_tar


def serve(path: str, watch: str, spec: dict) -> None:
    relay = Relay(spec)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    last = time.monotonic()
    try:
        while os.path.isdir(watch) and os.path.exists(path) and time.monotonic() - last < IDLE:
            if not select.select([listener], [], [], 1.0)[0]:
                continue
            connection, _ = listener.accept()
            with connection:
                try:
                    check_peer(connection, "a connection to the relay")
                    connection.settimeout(REQUEST_TIMEOUT)
                    header, job_tar = _read_request(connection)
                    if header.get("stop"):
                        return
                    answer, tar = relay.serve_job(job_tar, float(header.get("timeout", 300)))
                    answer["size"] = len(tar)
                    connection.sendall(json.dumps(answer).encode() + b"\n" + tar)
                except (OSError, ValueError, RecursionError) as error:
                    # the test process went away, sent what is not a request, or is
                    # another user's
                    sys.stderr.write(f"relay: a job's connection failed: {error}\n")
            last = time.monotonic()
    finally:
        relay.stop_agent()
        try:
            if os.path.exists(path):
                os.unlink(path)
        except OSError:
            pass


if __name__ == "__main__":
    arguments = sys.argv[1:]
    socket_at = arguments[arguments.index("--socket") + 1]
    watched = arguments[arguments.index("--watch") + 1]
    serve(socket_at, watched, json.loads(sys.stdin.read()))
