"""The device-side agent: executes one job of the exchange format
(docs/reference/exchange-format.md) with the ExecuTorch runtime where it runs, and writes the outputs
in the same format: one call (version 1), or a list of calls on one loaded program
(version 2).

It is one file that needs only the Python standard library, `torch` and `executorch` (no
etsuite), because it runs where etsuite is not installed: the ssh runner sends this
file's source with every job and runs it with the remote's Python, so the remote never
runs a stale copy. The host's side of the format is exchange.py; a runner written in C++
implements the same files instead of this agent.

    python agent.py --job DIR --outputs OUT        a job folder (or an artifact folder)
    python agent.py --pte P --inputs M --outputs OUT   the same, file by file
    python agent.py --stream                       job as a tar on stdin, outputs
                                                          as a tar on stdout (ssh, process)
    python agent.py --serve                        many jobs on one pipe, the runtime
                                                          imported once (a resident agent)
    python agent.py --probe                        this runtime's backends, as JSON

Test-only fault injection, as test/test_fault_injection.py does for the pipeline:
ETSUITE_AGENT_FAULT=abort aborts the process (a native crash of the runtime) after
loading; ETSUITE_AGENT_FAULT=hang:PATH creates PATH and sleeps (a device that stops
answering). Nothing else reads the environment.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import time
from typing import Any, BinaryIO

FORMAT = "etsuite-exchange"
VERSIONS = (1, 2)  # one call (`method`, `inputs`); a list of `calls` on one loaded program
MANIFEST = "manifest.json"


def import_runtime() -> Any:
    """`executorch.runtime.Runtime`, without importing executorch's compiler: the
    runtime's bindings import one small module of `executorch.exir`, whose package
    imports the whole exporter (about 12 s here, against 1 s for the runtime alone).
    That module is loaded on its own under a bare package; if anything about that fails,
    the ordinary import runs."""
    import importlib.util
    import types

    stubbed = []
    try:
        spec = importlib.util.find_spec("executorch")
        locations = list(spec.submodule_search_locations or []) if spec else []
        exir = os.path.join(locations[0], "exir") if locations else ""
        if exir and "executorch.exir" not in sys.modules \
                and os.path.isfile(os.path.join(exir, "_warnings.py")):
            package = types.ModuleType("executorch.exir")
            package.__path__ = [exir]
            sys.modules["executorch.exir"] = package
            stubbed.append("executorch.exir")
            warnings_spec = importlib.util.spec_from_file_location(
                "executorch.exir._warnings", os.path.join(exir, "_warnings.py"))
            if warnings_spec is None or warnings_spec.loader is None:
                raise ImportError("executorch/exir/_warnings.py cannot be loaded on its own")
            module = importlib.util.module_from_spec(warnings_spec)
            sys.modules["executorch.exir._warnings"] = module
            stubbed.append("executorch.exir._warnings")
            warnings_spec.loader.exec_module(module)
        from executorch.runtime import Runtime

        return Runtime
    except Exception:  # noqa: BLE001 - the lean import is only a shortcut
        for name in stubbed:
            sys.modules.pop(name, None)
        for name in [n for n in sys.modules if n.startswith("executorch.runtime")
                     or n.startswith("executorch.extension.pybindings")]:
            sys.modules.pop(name, None)
        from executorch.runtime import Runtime

        return Runtime


def where() -> str:
    try:
        from importlib.metadata import version

        release = version("executorch")
    except Exception:  # noqa: BLE001
        release = "unknown"
    return f"ExecuTorch {release} on {socket.gethostname()}"


def decode_inputs(folder: str, entries: list) -> list:
    import torch

    values = []
    for entry in entries:
        if "file" not in entry:
            kind = {"int": int, "float": float, "bool": bool}.get(entry.get("type"))
            values.append(kind(entry["value"]) if kind else entry.get("value"))
            continue
        dtype = getattr(torch, entry["dtype"])
        with open(os.path.join(folder, entry["file"]), "rb") as handle:
            data = handle.read()
        shape = [int(n) for n in entry["shape"]]
        if data:
            tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype)
        else:
            tensor = torch.empty(0, dtype=dtype)
        values.append(tensor.reshape(shape))
    return values


def encode_outputs(values: list, prefix: str = "output") -> tuple[list, dict]:
    import torch

    entries: list[dict] = []
    files: dict[str, bytes] = {}
    for index, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            name = f"{prefix}_{index}.bin"
            flat = value.detach().contiguous().reshape(-1)
            files[name] = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
            entries.append({"file": name, "shape": list(value.shape),
                            "dtype": str(value.dtype).rsplit(".", 1)[-1]})
        else:
            entries.append({"value": value if isinstance(value, (bool, int, float)) else repr(value),
                            "type": type(value).__name__})
    return entries, files


def inject_fault(moment: str) -> None:
    fault = os.environ.get("ETSUITE_AGENT_FAULT", "")
    if moment == "run" and fault == "abort":
        os.abort()
    if moment == "start" and fault.startswith("hang:"):
        with open(fault.split(":", 1)[1], "w", encoding="utf-8") as mark:
            mark.write(str(os.getpid()))
        time.sleep(3600)


class CallFailed(Exception):
    """One call of a version 2 job raised: the answer's error names the call."""


def job_calls(job: dict) -> list[tuple[str, list]]:
    """(method name, input entries) of every call the manifest asks for; ValueError
    saying what is wrong with a manifest the format does not allow."""
    version = job.get("version", 1)
    if version == 1:
        return [(job.get("method", "forward"), job.get("inputs", []))]
    if version != 2:
        raise ValueError(f"manifest version {version!r} is none this agent reads "
                         f"({', '.join(map(str, VERSIONS))})")
    calls = job.get("calls")
    if not isinstance(calls, list) or not calls:
        raise ValueError('a version 2 manifest needs "calls": a non-empty list of '
                         '{"method": NAME, "inputs": [...]}')
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("method"), str) \
                or not isinstance(call.get("inputs"), list):
            raise ValueError(f'call {index} of the manifest needs "method" (a name) and '
                             f'"inputs" (a list)')
    return [(call["method"], call["inputs"]) for call in calls]


def execute_job(pte_path: str, manifest_path: str, out: str) -> dict:
    """Runs one job; writes `out` (its .bin files and manifest.json) and returns the
    output manifest. A failure to load or run is an answer (`status: error`), not a
    crash of the agent. A version 2 job's calls run in order on one loaded program
    (each method loaded once), and the answer lists each call's outputs."""
    started = time.perf_counter()
    with open(manifest_path, encoding="utf-8") as handle:
        job = json.load(handle)
    inject_fault("start")
    runtime = import_runtime().get()
    timings = {"startup": round(time.perf_counter() - started, 4)}
    listed = job.get("version", 1) != 1
    result: dict = {"format": FORMAT, "version": 2 if listed else 1, "byte_order": "little",
                    "runtime": where(), "timings": timings, "outputs": []}
    files: dict = {}
    registry = runtime.backend_registry
    try:
        calls = job_calls(job)
    except ValueError as error:
        calls = []
        result.update(status="error", stage="load", error=f"malformed manifest: {error}")
    lacking = [d for d in job.get("delegates", []) if not registry.is_available(d)]
    if not calls:
        pass
    elif lacking:
        have = ", ".join(registry.registered_backend_names) or "none"
        result.update(status="missing", reason=(
            f"{where()} has no {', '.join(repr(d) for d in lacking)} (its backends: {have})"))
    else:
        stage = "load"
        try:
            begin = time.perf_counter()
            with open(pte_path, "rb") as handle:
                program = runtime.load_program(handle.read())
            methods = {}
            for name, _ in calls:
                if name not in methods:
                    methods[name] = program.load_method(name)
            folder = os.path.dirname(manifest_path)
            inputs = [decode_inputs(folder, entries) for _, entries in calls]
            timings["load"] = round(time.perf_counter() - begin, 4)
            stage = "run"
            inject_fault("run")
            answers: list[dict] = []
            for index, (name, _) in enumerate(calls):
                begin = time.perf_counter()
                try:
                    outputs = list(methods[name].execute(inputs[index]))
                except Exception as error:  # noqa: BLE001 - named by its call below
                    if not listed:
                        raise
                    raise CallFailed(f"call {index} ({name}): {type(error).__name__}: "
                                     f"{error}") from None
                seconds = round(time.perf_counter() - begin, 6)
                entries, written = encode_outputs(
                    outputs, f"output_{index}" if listed else "output")
                files.update(written)
                answers.append({"method": name, "outputs": entries,
                                "timings": {"run": seconds}})
            timings["run"] = round(sum(a["timings"]["run"] for a in answers), 6)
            if listed:
                result["calls"] = answers
            else:
                result["outputs"] = answers[0]["outputs"]
            result["status"] = "ok"
        except Exception as error:  # noqa: BLE001 - the host decides what it means
            text = str(error) if isinstance(error, CallFailed) else f"{type(error).__name__}: {error}"
            result.update(status="error", stage=stage, error=text)
    os.makedirs(out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as handle:
            handle.write(data)
    with open(os.path.join(out, MANIFEST), "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    return result


# What one archive of the exchange (a job, or an answer) may hold, together: more is
# refused before it is written, so a hostile tar cannot fill the disk.
MAX_ARCHIVE_BYTES = 4 << 30
MAX_ARCHIVE_FILES = 4096
PLAIN_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)


class ArchiveError(ValueError):
    """An archive the exchange format does not allow; the message says what is wrong."""


def plain_name(name: Any) -> bool:
    """A file name that stays inside its folder: no separator, not `.` or `..`."""
    return isinstance(name, str) and name not in ("", ".", "..") \
        and not any(c in name for c in "/\\\0")


def extract_flat(source: Any, folder: str, max_bytes: int = MAX_ARCHIVE_BYTES) -> list:
    """The one reader of the exchange's tar archives (jobs on the device, answers on the
    host): each member into `folder`, which is fresh. Only regular files with plain
    names, each once, at most `max_bytes` bytes together; anything else (a link, a device, a
    sparse file, a folder, `..`) is an ArchiveError before a byte of it is written.
    Returns the names written."""
    written: list = []
    total = 0
    try:
        with tarfile.open(fileobj=source, mode="r|") as archive:
            for member in archive:
                if member.type not in PLAIN_TYPES or member.issparse():
                    raise ArchiveError(f"member {member.name!r} is not a regular file")
                if not plain_name(member.name) or member.name in written:
                    raise ArchiveError(f"member name {member.name!r} is not a plain file name "
                                       f"(or comes twice)")
                total += member.size
                if total > max_bytes or len(written) >= MAX_ARCHIVE_FILES:
                    raise ArchiveError(f"the archive holds more than {max_bytes} bytes or "
                                       f"{MAX_ARCHIVE_FILES} files")
                data = archive.extractfile(member)
                assert data is not None  # a regular member always has its data
                path = os.path.join(folder, member.name)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                with os.fdopen(os.open(path, flags, 0o600), "wb") as handle:
                    shutil.copyfileobj(data, handle)
                written.append(member.name)
    except (tarfile.TarError, EOFError, UnicodeError) as error:
        raise ArchiveError(f"not a tar: {error}") from None
    return written


def answer_tar(job_tar: Any, scratch_prefix: str = "etsuite-job-") -> bytes:
    """One job given as a tar (a file object) -> the tar of its output folder."""
    scratch = tempfile.mkdtemp(prefix=scratch_prefix)
    try:
        job, out = os.path.join(scratch, "job"), os.path.join(scratch, "out")
        os.makedirs(job)
        extract_flat(job_tar, job)
        with open(os.path.join(job, MANIFEST), encoding="utf-8") as handle:
            program = json.load(handle).get("program", "program.pte")
        execute_job(os.path.join(job, program), os.path.join(job, MANIFEST), out)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
            for name in sorted(os.listdir(out)):
                archive.add(os.path.join(out, name), arcname=name)
        return buffer.getvalue()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def serve_stream(stdin: BinaryIO, result_out: BinaryIO) -> None:
    """--stream: a tar of the job folder on stdin, a tar of the output folder to
    `result_out` (the original stdout; anything else printed goes to stderr)."""
    result_out.write(answer_tar(stdin))
    result_out.flush()


def serve_many(stdin: BinaryIO, result_out: BinaryIO) -> None:
    """--serve: many jobs, one after another, on one pipe (the resident agent of
    remote/resident.py). First a line `ready {"versions": [...], "runtime": ...}`; then
    for each `job SIZE` line and SIZE bytes of job tar, a line `done SIZE` and SIZE bytes
    of output tar. The runtime is imported once, for every job. Ends at end of input."""
    import_runtime().get()
    hello = {"versions": list(VERSIONS), "runtime": where(), "agent": "python"}
    result_out.write(f"ready {json.dumps(hello)}\n".encode())
    result_out.flush()
    while True:
        line = stdin.readline()
        if not line:
            return
        word, _, size = line.decode("ascii", "replace").strip().partition(" ")
        if word != "job" or not size.isdigit() or int(size) > MAX_ARCHIVE_BYTES:
            raise SystemExit(f"agent --serve: expected 'job SIZE' with SIZE at most "
                             f"{MAX_ARCHIVE_BYTES}, got {line[:80]!r}")
        answer = answer_tar(io.BytesIO(stdin.read(int(size))))
        result_out.write(f"done {len(answer)}\n".encode() + answer)
        result_out.flush()


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="agent", description=__doc__.split("\n\n")[0])
    parser.add_argument("--job", help="a job folder (program.pte + manifest.json + inputs)")
    parser.add_argument("--pte", help="the program")
    parser.add_argument("--inputs", help="the job's manifest.json (its .bin files beside it)")
    parser.add_argument("--outputs", help="the folder to write outputs and manifest.json to")
    parser.add_argument("--stream", action="store_true", help="job tar on stdin, outputs tar on stdout")
    parser.add_argument("--serve", action="store_true",
                        help="many jobs on stdin, their answers on stdout (a resident agent)")
    parser.add_argument("--probe", action="store_true", help="print this runtime's backends")
    args = parser.parse_args(argv)
    if args.probe:
        runtime = import_runtime().get()
        print(json.dumps({"runtime": where(),
                          "backends": list(runtime.backend_registry.registered_backend_names)}))
        return 0
    if args.stream or args.serve:
        result_out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)  # native and Python prints must not corrupt the tar on stdout
        sys.stdout = sys.stderr
        (serve_many if args.serve else serve_stream)(sys.stdin.buffer, result_out)
        return 0
    if args.job:
        manifest = os.path.join(args.job, MANIFEST)
        with open(manifest, encoding="utf-8") as handle:
            pte = os.path.join(args.job, json.load(handle).get("program", "program.pte"))
    else:
        pte, manifest = args.pte, args.inputs
    if not (pte and manifest and args.outputs):
        parser.error("give --job DIR (or --pte and --inputs) and --outputs, or --stream")
    result = execute_job(pte, manifest, args.outputs)
    return 0 if result["status"] in ("ok", "missing") else 1


def leave(code: int) -> None:
    """Exit without the interpreter's teardown, which with torch loaded takes most of a
    second that the host would count against the transfer."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main(sys.argv[1:]))
