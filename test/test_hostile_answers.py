"""What a device, its agent or another user of the host sends is read through one checked
reader per format and changes nothing it should not: an answer names files only inside its
folder, an archive holds plain regular files under a byte limit, the relay survives an
agent that breaks the protocol, and shared folders, sockets and locks are checked for their
owner. Everything runs for real: files, tar archives made by GNU tar, fake agents as real
processes, unix sockets, and (as root) another uid."""

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from etsuite.backends.harness.confinement import session_tmp
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.runtimes import RuntimeStatus
from etsuite.backends.harness.remote import agent, exchange, resident
from etsuite.backends.harness.remote.kinds import _untar, adb_commands, parse_spec, ssh_argv
from etsuite.backends.harness.remote.pool import DevicePool
from etsuite.backends.harness.remote.runtime import Job, RunnerRuntime
from etsuite.backends.harness.remote.spec import SpecError

OTHER_UID = 65534  # nobody: a co-user of the host, in the tests that need root


def write_answer(folder, outputs=(), **fields) -> None:
    folder.mkdir(exist_ok=True)
    manifest = {"format": exchange.FORMAT, "version": 1, "status": "ok", "outputs": list(outputs),
                **fields}
    (folder / exchange.MANIFEST).write_text(json.dumps(manifest))


def read_answer(folder) -> list:
    return exchange.read_values(str(folder), exchange.read_manifest(str(folder))["outputs"])


@pytest.mark.parametrize("name", ["/etc/hostname", "../../../../../../etc/hostname",
                                  "sub/output_0.bin", ".."])
def test_an_answer_names_no_file_outside_its_folder(tmp_path, name):
    size = os.path.getsize("/etc/hostname")
    write_answer(tmp_path / "out", [{"file": name, "shape": [size], "dtype": "uint8"}])
    with pytest.raises(exchange.ExchangeError, match="is not a plain file name"):
        read_answer(tmp_path / "out")


def test_an_answer_file_that_links_out_or_is_no_regular_file_is_refused(tmp_path):
    out = tmp_path / "out"
    size = os.path.getsize("/etc/hostname")
    write_answer(out, [{"file": "output_0.bin", "shape": [size], "dtype": "uint8"}])
    (out / "output_0.bin").symlink_to("/etc/hostname")
    with pytest.raises(exchange.ExchangeError, match="cannot open .*output_0.bin"):
        read_answer(out)
    (out / "output_0.bin").unlink()
    os.mkfifo(out / "output_0.bin")  # opened without blocking, then refused
    with pytest.raises(exchange.ExchangeError, match="is not a regular file"):
        read_answer(out)


def test_an_answer_file_of_another_size_than_declared_is_refused(tmp_path):
    out = tmp_path / "out"
    write_answer(out, [{"file": "output_0.bin", "shape": [1 << 40, 1 << 40], "dtype": "float32"}])
    (out / "output_0.bin").write_bytes(b"\0" * 16)
    with pytest.raises(exchange.ExchangeError, match="more than the .* an answer may hold"):
        read_answer(out)
    write_answer(out, [{"file": "output_0.bin", "shape": [3], "dtype": "float32"}])
    with pytest.raises(exchange.ExchangeError, match="holds 16 bytes, not 12"):
        read_answer(out)


@pytest.mark.parametrize("fields, message", [
    ({"timings": {"run": float("nan")}}, "NaN is not a number JSON allows"),
    ({"timings": {"run": "fast"}}, '"timings" is not an object of seconds'),
    ({"cost": [1]}, '"cost" is not an object'),
    ({"error": {"x": 1}}, "'error' is not a string"),
    ({"outputs": [{"file": "o", "dtype": "float32", "shape": [-1]}]}, "sizes >= 0"),
    ({"outputs": [{"file": "o", "dtype": "__class__", "shape": []}]}, "unknown dtype"),
    ({"outputs": "x"}, "'outputs' is not a list of objects"),
])
def test_a_malformed_answer_is_one_clear_error(tmp_path, fields, message):
    write_answer(tmp_path / "out", **{"outputs": [], **fields})
    with pytest.raises(exchange.ExchangeError, match=message):
        read_answer(tmp_path / "out")


def test_a_hostile_answer_through_a_runner_is_fail_infra_naming_why(tmp_path):
    """A real `cmd:` runner answering with a manifest that points at a host file: the
    subtest ends fail_infra, no host file is read as an output."""
    script = tmp_path / "runner.py"
    script.write_text(
        "import json, sys\n"
        "json.dump({'status': 'ok', 'outputs': [{'file': '/etc/hostname', 'shape': [1],"
        " 'dtype': 'uint8'}]}, open(sys.argv[1] + '/manifest.json', 'w'))\n")
    runtime = RunnerRuntime((parse_spec(f"cmd:python3 {script} {{outputs}} {{pte}}"),),
                            str(tmp_path / "pool"))
    assert "'/etc/hostname' is not a plain file name" in fail_infra_of(runtime)


def fail_infra_of(runtime: RunnerRuntime) -> str:
    """The message of the fail_infra one job on `runtime` ends with."""
    with pytest.raises(RuntimeStatus) as raised:
        runtime.execute(Job(b"pte", []), [torch.ones(2)])
    assert raised.value.status is Status.FAIL_INFRA, raised.value
    return str(raised.value)


# ---------------------------------------------------------------- archives

def gnu_tar(folder, *arguments) -> bytes:
    subprocess.run(["tar", *arguments, "-cf", "archive.tar", "member"], cwd=folder, check=True)
    return (folder / "archive.tar").read_bytes()


@pytest.mark.parametrize("form", ["gnu", "pax"])
def test_a_sparse_tar_writes_nothing(tmp_path, form):
    """10 KiB of GNU tar that declare 64 MiB: refused before a byte is written."""
    (tmp_path / "member").write_bytes(b"")
    os.truncate(tmp_path / "member", 64 << 20)
    data = gnu_tar(tmp_path, "--sparse", f"--format={form}")
    assert len(data) <= 10240
    (tmp_path / "out").mkdir()
    with pytest.raises(agent.ArchiveError, match="is not a regular file"):
        _untar(data, str(tmp_path / "out"))
    assert os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_tar_of_links_is_refused(tmp_path, link):
    if link == "symbolic":
        (tmp_path / "member").symlink_to("/etc/hostname")
    else:
        (tmp_path / "target").write_text("x")
        os.link(tmp_path / "target", tmp_path / "member")
    subprocess.run(["tar", "-cf", "archive.tar", "target", "member"] if link == "hard"
                   else ["tar", "-cf", "archive.tar", "member"], cwd=tmp_path, check=True)
    (tmp_path / "out").mkdir()
    with pytest.raises(agent.ArchiveError):
        _untar((tmp_path / "archive.tar").read_bytes(), str(tmp_path / "out"))
    assert not (tmp_path / "out" / "member").exists()


def tar_of(members: dict[str, bytes], kind=tarfile.REGTYPE) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.type = len(data), kind
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["/tmp/etsuite-absolute", "../escaped", "a/../../b", "dir/x"])
def test_a_tar_member_with_a_path_is_refused(tmp_path, name):
    (tmp_path / "out").mkdir()
    with pytest.raises(agent.ArchiveError, match="is not a plain file name"):
        _untar(tar_of({name: b"x"}), str(tmp_path / "out"))
    assert os.listdir(tmp_path / "out") == [] and not os.path.exists("/tmp/etsuite-absolute")


def test_a_tar_over_the_byte_limit_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(agent.ArchiveError, match="more than 1000 bytes"):
        agent.extract_flat(io.BytesIO(tar_of({"a": b"x" * 600, "b": b"y" * 600})),
                           str(tmp_path / "out"), max_bytes=1000)
    assert os.path.getsize(tmp_path / "out" / "a") == 600
    assert not (tmp_path / "out" / "b").exists()
    with pytest.raises(agent.ArchiveError, match="not a regular file"):
        _untar(tar_of({"dev": b""}, tarfile.CHRTYPE), str(tmp_path / "out"))


# ---------------------------------------------------------------- the relay

FAKE_AGENT = r'''#!/usr/bin/env python3
"""A resident agent that breaks the protocol as its `modes` file says: one mode per
start (the last one repeats); "ok" serves every job with an empty "ok" answer."""
import io, json, os, sys, tarfile, time

here = os.path.dirname(os.path.abspath(__file__))
modes = open(os.path.join(here, "modes")).read().split()
count_file = os.path.join(here, "starts")
starts = int(open(count_file).read()) if os.path.exists(count_file) else 0
open(count_file, "w").write(str(starts + 1))
mode = modes[min(starts, len(modes) - 1)]
out = sys.stdout.buffer
if mode == "ready-list":
    out.write(b"ready [1, 2]\n")
    out.flush()
    time.sleep(60)
out.write(b'ready {"versions": [1, 2]}\n')
out.flush()
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
    data = json.dumps({"status": "ok", "outputs": []}).encode()
    info = tarfile.TarInfo("manifest.json")
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))
answer = buffer.getvalue()
for line in sys.stdin.buffer:
    sys.stdin.buffer.read(int(line.split()[1]))
    if mode == "ok":
        out.write(b"done %d\n" % len(answer) + answer)
    elif mode == "done-abc":
        out.write(b"done abc\n")
    elif mode == "done-huge":
        out.write(b"done 1000000000000\n")
    elif mode == "cut-short":
        out.write(b"done %d\n" % len(answer) + answer[:100])
    elif mode == "no-newline":
        out.write(b"done 5")
    out.flush()
    if mode != "ok":
        time.sleep(60)
'''


@pytest.fixture
def fake_agent(tmp_path, monkeypatch):
    """fake_agent(*modes) -> the path of a fake agent that starts in those modes; the
    relay's socket folder is under tmp_path (not the host's shared one)."""
    short = tempfile.mkdtemp(prefix="etsuite-t-", dir="/tmp")  # a socket path stays short
    monkeypatch.setattr(tempfile, "tempdir", short)
    folder = tmp_path / "agent"
    folder.mkdir()
    script = folder / "fake_agent.py"
    script.write_text(FAKE_AGENT)
    script.chmod(0o755)

    def make(*modes):
        (folder / "modes").write_text(" ".join(modes))
        return str(script)

    yield make
    resident.stop_relays(str(tmp_path / "pool"))
    shutil.rmtree(short)


@pytest.mark.parametrize("modes, status, detail", [
    (("ready-list", "ready-list", "ok"), "lost", "its first line is not `ready"),
    (("done-abc", "ok"), "broken", "its answer is not `done SIZE`"),
    (("done-huge", "ok"), "broken", "its answer is not `done SIZE`"),
    (("cut-short", "ok"), "broken", "the answer stopped after 100 of its"),
    (("no-newline", "ok"), "lost", "no answer within 2 s"),
])
def test_a_relay_survives_an_agent_that_breaks_the_protocol(tmp_path, fake_agent, modes,
                                                            status, detail):
    """A bad line, a size that is no count or over the byte limit, an answer cut short or
    never finished: that job ends within its time limit with the reason, and the same
    relay serves the next job with a new agent."""
    keeper = resident.Resident((fake_agent(*modes),))
    pool = str(tmp_path / "pool")
    begun = time.monotonic()
    first = resident.exchange(pool, "ssh://d", keeper, True, b"job", 2)
    assert time.monotonic() - begun < 20
    assert first["status"] == status and detail in first["detail"], first
    relay_socket = resident.socket_path(pool, "ssh://d", keeper, True)
    inode = os.stat(relay_socket).st_ino
    second = resident.exchange(pool, "ssh://d", keeper, True, b"job", 2)
    assert second["status"] == "done" and second["started"], second
    assert os.stat(relay_socket).st_ino == inode  # the relay that answered first


def test_a_protocol_break_is_fail_infra_through_the_runtime(tmp_path, fake_agent):
    spec = parse_spec(f"process?python={fake_agent('done-abc', 'ok')}&timeout=5")
    runtime = RunnerRuntime((spec,), str(tmp_path / "pool"))
    assert "the agent broke the protocol: its answer is not `done SIZE`" in fail_infra_of(runtime)
    assert runtime.execute(Job(b"pte", []), [torch.ones(2)]) == []  # the next job runs


# ---------------------------------------------------------------- a co-user of the host

needs_root = pytest.mark.skipif(os.getuid() != 0, reason="makes files of another uid: root")


def as_other_user(folder) -> None:
    os.chown(folder, OTHER_UID, OTHER_UID)
    os.chmod(folder, 0o777)


@needs_root
def test_a_relay_socket_folder_another_user_made_is_refused(tmp_path, fake_agent):
    keeper = resident.Resident((fake_agent("ok"),))
    # Where the relay keeps its sockets: the run's temporary folder (confinement.py).
    base = session_tmp() if len(session_tmp()) <= 60 else "/tmp"
    planted = Path(base) / f"etsuite-resident-{os.getuid()}"
    kept = planted.with_name(planted.name + "-kept")
    if planted.exists():
        planted.rename(kept)
    planted.mkdir()
    try:
        as_other_user(planted)
        with pytest.raises(PermissionError, match="is not a folder of this user's only"):
            resident.exchange(str(tmp_path / "pool"), "ssh://d", keeper, True, b"job", 5)
        assert os.listdir(planted) == []
    finally:  # the relay tests that follow use this folder
        shutil.rmtree(planted)
        if kept.exists():
            kept.rename(planted)


FORGED_RELAY = r'''
import json, os, socket, sys
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
os.setresuid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
listener.listen(1)  # the kernel keeps the uid of this moment for the peer to see
print("listening", flush=True)
connection, _ = listener.accept()
connection.sendall(json.dumps({"status": "done", "size": 0}).encode() + b"\n")
connection.close()
'''


@needs_root
def test_a_relay_of_another_user_is_not_believed(tmp_path, fake_agent):
    """A socket whose listener runs as another uid: the client refuses its answer."""
    keeper = resident.Resident((fake_agent("ok"),))
    pool = str(tmp_path / "pool")
    path = resident.socket_path(pool, "ssh://d", keeper, True)
    forged = subprocess.Popen([sys.executable, "-c", FORGED_RELAY, path, str(OTHER_UID)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert forged.stdout is not None and forged.stdout.readline() == "listening\n"
        with pytest.raises(PermissionError, match=f"is held by uid {OTHER_UID}"):
            resident.exchange(pool, "ssh://d", keeper, True, b"job", 5)
    finally:
        forged.kill()
        forged.wait()


INTRUDER = r'''
import json, os, socket, sys
os.setresuid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(sys.argv[1])
try:
    connection.sendall(json.dumps({"timeout": 5, "size": 0}).encode() + b"\n")
    print(repr(connection.makefile("rb").read()[:80]))
except OSError as error:  # the relay closed the connection at once
    print(type(error).__name__)
'''


@needs_root
def test_a_relay_serves_no_other_user(tmp_path, fake_agent):
    """The relay's socket reachable by anyone (a careless folder): a connection from
    another uid gets nothing, and starts no agent."""
    script = fake_agent("ok")
    shared = tempfile.mkdtemp(prefix="etsuite-test-relay-", dir="/tmp")  # one the uid reaches
    os.chmod(shared, 0o755)
    path = os.path.join(shared, "relay.sock")
    spec = {"argv": [script], "marked": False, "preamble": ""}
    relay = threading.Thread(target=resident.serve, args=(path, shared, spec), daemon=True)
    relay.start()
    for _ in range(200):
        if os.path.exists(path):
            break
        time.sleep(0.01)
    os.chmod(path, 0o777)
    done = subprocess.run([sys.executable, "-c", INTRUDER, path, str(OTHER_UID)],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() in ("b''", "BrokenPipeError", "ConnectionResetError"), \
        done.stdout + done.stderr
    assert not (tmp_path / "agent" / "starts").exists()  # no agent was started for it
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as own:
        own.connect(path)
        own.sendall(b'{"stop": true}\n')
    relay.join(10)
    assert not relay.is_alive()
    shutil.rmtree(shared)


def test_a_device_lock_that_is_a_link_is_not_followed(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    (locks / "ssh_d1.lock").symlink_to(tmp_path / "victim")
    with pytest.raises(PermissionError, match="lock file .*ssh_d1.lock"):
        with DevicePool(str(tmp_path / "run"), str(locks)).acquire(["ssh://d1"]):
            pass
    assert not (tmp_path / "victim").exists()


@needs_root
def test_a_device_lock_folder_another_user_made_is_refused(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    as_other_user(locks)
    with pytest.raises(PermissionError, match="is not a folder of this user's only"):
        with DevicePool(str(tmp_path / "run"), str(locks)).acquire(["ssh://d1"]):
            pass
    assert os.listdir(locks) == []


# ---------------------------------------------------------------- specs an operator writes

@pytest.mark.parametrize("spec, message", [
    ("ssh://-oProxyCommand=touch", "a host or user cannot start with '-'"),
    ("ssh://-F@host", "a host or user cannot start with '-'"),
    ("adb://-e?runner=/r", "a host or user cannot start with '-'"),
    ("ssh://host?timeout=inf", "timeout wants a positive number of seconds, at most"),
    ("ssh://host?connect_timeout=1e308", "connect_timeout wants a positive number"),
    ("process?timeout=nan", "timeout wants a positive number of seconds"),
    ("adb://s?runner=/r&dir=/", "dir wants an absolute folder on the device other than /"),
    ("adb://s?runner=/r&dir=sdcard", "dir wants an absolute folder"),
    ("adb://s?runner=/r&dir=/sdcard/../data", "without . or .."),
])
def test_a_spec_that_would_misuse_a_tool_is_refused(spec, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_spec(spec)


def test_the_ssh_host_goes_after_the_end_of_options():
    argv = ssh_argv(parse_spec("ssh://me@mac1:2222"), "true")
    assert argv[-3:] == ["--", "mac1", "true"]


def test_adb_removes_only_the_jobs_own_folder():
    """`dir=/sdcard` is a folder the job's own subfolder goes in: nothing else of it is
    removed (before, `rm -rf /sdcard` ran at the start and end of every job)."""
    spec = parse_spec("adb://s?runner=/r&dir=/sdcard")
    steps = adb_commands(spec, "/tmp/job", ["program.pte"], "/tmp/out", "etsuite-adb-x1")
    removals = [argv[-1] for argv, _ in steps if "rm " in argv[-1]]
    assert removals == ["rm -rf /sdcard/etsuite-adb-x1"]


# ---------------------------------------------------------------- the agents' job sizes

def serve_one_line(argv: list, line: bytes) -> subprocess.CompletedProcess:
    """An agent in --serve mode given one `job` line after its `ready` line."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stdin is not None
    assert process.stdout.readline().startswith(b"ready ")
    stdout, stderr = process.communicate(line, timeout=60)
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


@pytest.mark.slow
@pytest.mark.parametrize("line", [b"job -1\n", b"job 99999999999999\n"])
def test_the_native_runner_refuses_a_job_size_out_of_range(line):
    from etsuite.backends.harness.remote import native

    done = serve_one_line([str(native.ensure_binary()), "--serve"], line)
    assert done.returncode == 2, done.stderr  # a usage error, not an abort
    assert b"expected 'job SIZE' with SIZE a count up to 4294967296" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("line", [b"job 99999999999999\n", b"job -1\n"])
def test_the_python_agent_refuses_a_job_size_out_of_range(line):
    done = serve_one_line([sys.executable, agent.__file__, "--serve"], line)
    assert done.returncode == 1
    assert b"expected 'job SIZE' with SIZE at most 4294967296" in done.stderr
