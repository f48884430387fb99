"""Resident agents: one long-lived agent per device that serves every job of a run over
one connection, so a job pays no start-up (a Python agent's imports: 1.6 s over ssh).

A kind that can keep its agent running says how to start it (`Resident`: the agent's
argv, in `--serve` mode, and what to write to it first). The agent belongs to a relay:
a small process of its own (this file, run as a script: standard library only) that
holds the agent's pipes, listens on a Unix socket and serves one job per connection.
Test processes come and go (each test runs in a forked child) while the relay and its
agent stay. The relay's socket is in the run's pool folder (remote/pool.py): one relay
per device (per device and xdist worker for a local kind, which is not exclusive), and
the relay exits when that folder goes (the end of the run) or after `IDLE` seconds
without a job. (The socket itself is in a short folder of the user's: `socket_path`.)

What a job's answer means, on the host's side (`exchange` returns a kinds.Reply):
- the agent answers: its output tar, as any kind's exchange;
- the agent dies while it runs the job: a crash of the program (the signal, or the
  exit status and the end of its stderr); the next job starts a new agent;
- the agent was found dead before the job (killed between jobs, a dropped connection)
  or does not start: it is started again, once; a second failure is a lost device
  (kinds.DeviceLost), as is no answer within the spec's time limit.

Protocol between agent and relay (agent.py --serve, the native runner's --serve): a line
`ready {json}` (the exchange format versions it reads), then `job SIZE` + a job tar for
`done SIZE` + the output tar, until end of input. Between a test process and the relay:
one line of JSON (`timeout`, `size`), the job tar; one line of JSON (`status`: done,
crashed, lost; `detail`, `signal`, `started`: the agent was started for this job,
`agent`: its process id), the output tar.
"""

from __future__ import annotations

import collections
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

IDLE = 600.0            # seconds without a job before a relay exits
START_TIMEOUT = 120.0   # seconds for an agent to say it is ready (a cold Python import)
CONNECT_TIMEOUT = 10.0  # seconds for a relay just started to listen
EXIT_MARK = "etsuite-agent-exit:"  # as kinds.EXIT_MARK: a remote shell's exit status
NEEDED_VERSION = 2      # the exchange format version the host sends lists of calls in


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
    folder = os.path.join(base, f"etsuite-resident-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


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
        connection.settimeout(timeout + START_TIMEOUT + 30)  # the relay keeps the time
        header = json.dumps({"timeout": timeout, "size": len(job_tar)}).encode()
        connection.sendall(header + b"\n" + job_tar)
        reader = connection.makefile("rb")
        line = reader.readline()
        if not line:
            raise OSError(f"the relay at {path} closed the connection without an answer")
        answer = json.loads(line)
        answer["tar"] = reader.read(int(answer.get("size", 0)))
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
    with open(_named(folder, path, ".start"), "a") as lock:
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

class _Agent:
    """The agent process and the end of its stderr (read by a thread, so that a chatty
    runtime never blocks on a full pipe)."""

    def __init__(self, argv: list, preamble: bytes, marked: bool):
        self.marked = marked
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=True)
        self.program = os.path.basename(str(argv[0]))
        self.stderr: collections.deque = collections.deque(maxlen=40)
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        if preamble:
            self.stdin.write(preamble)
            self.stdin.flush()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def tail(self, lines: int = 6) -> str:
        kept = [line for line in list(self.stderr) if EXIT_MARK not in line]
        return "\n".join(kept[-lines:])

    def read_line(self, deadline: float) -> bytes | None:
        """A line of the agent's stdout, b"" at its end, None past the deadline."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.stdout], [], [], left)[0]:
            return None
        return self.stdout.readline()

    def ended(self) -> tuple[int | None, str]:
        """How the agent ended: (the signal that killed it or None, a sentence)."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.wait()
        self.drain.join(timeout=2)  # the end of stderr: the mark, the last messages
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


class Relay:
    def __init__(self, spec: dict):
        self.argv, self.marked = spec["argv"], spec["marked"]
        self.preamble = spec["preamble"].encode("latin-1")
        self.agent: _Agent | None = None

    def start_agent(self, timeout: float) -> str | None:
        """A new agent, ready: None, or why it is not."""
        if self.agent is not None:
            self.agent.kill()
        try:
            self.agent = _Agent(self.argv, self.preamble, self.marked)
        except OSError as error:
            self.agent = None
            return f"cannot start {self.argv[0]}: {error}"
        line = self.agent.read_line(time.monotonic() + max(timeout, START_TIMEOUT))
        if not line or not line.startswith(b"ready "):
            agent, self.agent = self.agent, None
            if line is None:
                agent.kill()
                return f"the agent did not say it was ready within {max(timeout, START_TIMEOUT):g} s"
            _, how = agent.ended()
            return f"the agent did not start ({how}): {agent.tail(3) or 'no message'}"
        try:
            versions = json.loads(line[len(b"ready "):]).get("versions", [])
        except ValueError:
            versions = []
        if NEEDED_VERSION not in versions:
            self.agent.kill()
            self.agent = None
            return (f"the agent reads exchange format versions {versions}, not "
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
        try:
            self.agent.stdin.write(f"job {len(job_tar)}\n".encode() + job_tar)
            self.agent.stdin.flush()
        except OSError:  # it died just before the job: restart once
            why = self.start_agent(timeout)
            if why is not None:
                return {"status": "lost", "detail": why}, b""
            started = True
            self.agent.stdin.write(f"job {len(job_tar)}\n".encode() + job_tar)
            self.agent.stdin.flush()
        line = self.agent.read_line(time.monotonic() + timeout)
        if line is None:
            self.agent.kill()
            self.agent = None
            return {"status": "lost", "detail": f"no answer within {timeout:g} s"}, b""
        if not line.startswith(b"done "):
            agent, self.agent = self.agent, None
            signalled, how = agent.ended()
            if signalled is None and self.marked and how.startswith("the connection"):
                return {"status": "lost", "detail": how[len("the connection ended: "):]}, b""
            return {"status": "crashed", "signal": signalled, "started": started,
                    "detail": f"{how}: {agent.tail()}" if agent.tail() else how}, b""
        answer = self.agent.stdout.read(int(line.split()[1]))
        return {"status": "done", "started": started, "agent": self.agent.process.pid}, answer


def _read_request(connection: socket.socket) -> tuple[dict, bytes]:
    reader = connection.makefile("rb")
    header = json.loads(reader.readline() or b"{}")
    return header, reader.read(int(header.get("size", 0)))


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
                    header, job_tar = _read_request(connection)
                    if header.get("stop"):
                        return
                    answer, tar = relay.serve_job(job_tar, float(header.get("timeout", 300)))
                    answer["size"] = len(tar)
                    connection.sendall(json.dumps(answer).encode() + b"\n" + tar)
                except (OSError, ValueError) as error:  # the test process went away
                    sys.stderr.write(f"relay: a job's connection failed: {error}\n")
            last = time.monotonic()
    finally:
        if relay.agent is not None:
            relay.agent.kill()
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
