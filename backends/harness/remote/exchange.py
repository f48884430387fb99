"""The exchange format: how a program, its inputs and its outputs travel as files between
the host that lowers and judges and whatever executes (another process, a host over ssh,
a device over adb, a simulator command). One format, so that a runner written in C++
needs no Python: raw little-endian tensor files plus a JSON manifest.

A job folder holds `program.pte`, one `input_<i>.bin` per tensor input and
`manifest.json`; an output folder holds one `output_<i>.bin` per tensor output and its
own `manifest.json` with the status (docs/reference/exchange-format.md). A version 2 job
lists several calls (method and inputs each, files `input_<call>_<i>.bin`) executed in
order on one loaded program, so state carries from call to call; its answer lists each
call's outputs (`output_<call>_<i>.bin`). An artifact
folder (`--artifacts`) is a job folder with more keys, so it replays as one.
`agent.py` implements the executing side on its own (it runs where etsuite is not
installed); this module is the host's side. Torch-free at import.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any, NoReturn

from etsuite.backends.harness.remote import agent

FORMAT = "etsuite-exchange"
VERSION = 1        # a job of one call (`method`, `inputs`)
CALLS_VERSION = 2  # a job of a list of calls on one loaded program (`calls`)
MANIFEST = "manifest.json"
PROGRAM = "program.pte"
# What an output manifest's `status` may say: ran ("ok"), could not run here ("missing":
# the runtime lacks a delegate; the subtest ends lowered_not_run with `reason`), or
# raised at `stage` "load" or "run" (`error`).
STATUSES = ("ok", "missing", "error")
# The stages an answer's `timings` may name (seconds each; the rest of the exchange's wall
# time is `transfer`): the first call is `run`, the native runner's timed calls after it
# `repeat`. Its `cost` says what those calls took each (docs/reference/exchange-format.md).
TIMINGS = ("startup", "load", "run", "repeat")


def dtype_name(dtype: Any) -> str:
    """torch.float32 -> "float32": the names the manifests use (torch's own)."""
    return str(dtype).rsplit(".", 1)[-1]


def tensor_bytes(tensor: Any) -> bytes:
    """A tensor's elements, contiguous, in this (little-endian) host's byte order."""
    import torch

    flat = tensor.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def value_entries(values: list, prefix: str) -> tuple[list[dict], dict[str, bytes]]:
    """(manifest entries, files) for flat inputs or outputs: a tensor becomes a raw file
    `<prefix>_<i>.bin` with its shape and dtype; a Python scalar is kept in the manifest
    (`value`, `type`)."""
    import torch

    entries: list[dict] = []
    files: dict[str, bytes] = {}
    for index, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            name = f"{prefix}_{index}.bin"
            files[name] = tensor_bytes(value)
            entries.append({"file": name, "shape": list(value.shape),
                            "dtype": dtype_name(value.dtype)})
        elif isinstance(value, (bool, int, float)):
            entries.append({"value": value, "type": type(value).__name__})
        else:
            entries.append({"value": repr(value), "type": type(value).__name__})
    return entries, files


def job_files(pte: bytes, inputs: list, delegates: list[str], method: str = "forward",
              **extra: Any) -> dict[str, bytes]:
    """Every file of a job folder, by name. `delegates` are the backend ids the program's
    delegates need from the executing runtime (it answers "missing" without one);
    `extra` keys go into the manifest (artifacts add the test id and status)."""
    entries, files = value_entries(inputs, "input")
    manifest = {"format": FORMAT, "version": VERSION, "program": PROGRAM, "method": method,
                "byte_order": "little", "delegates": sorted(delegates), "inputs": entries,
                **extra}
    return {PROGRAM: bytes(pte), **files, MANIFEST: json.dumps(manifest, indent=1).encode()}


def calls_job_files(pte: bytes, calls: list[tuple[str, list]], delegates: list[str],
                    **extra: Any) -> dict[str, bytes]:
    """Every file of a version 2 job: `calls` are (method name, flat inputs), executed in
    order on one loaded program; call k's tensors are `input_<k>_<i>.bin`."""
    files: dict[str, bytes] = {}
    entries = []
    for index, (method, inputs) in enumerate(calls):
        values, data = value_entries(list(inputs), f"input_{index}")
        entries.append({"method": method, "inputs": values})
        files.update(data)
    manifest = {"format": FORMAT, "version": CALLS_VERSION, "program": PROGRAM,
                "byte_order": "little", "delegates": sorted(delegates), "calls": entries,
                **extra}
    return {PROGRAM: bytes(pte), **files, MANIFEST: json.dumps(manifest, indent=1).encode()}


def write_folder(folder: str, files: dict[str, bytes]) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(data)


class ExchangeError(ValueError):
    """An output folder that does not follow the format: the runner is broken."""


# What an answer may hold: its manifest at most MAX_MANIFEST_BYTES, its tensor files at
# most agent.MAX_ARCHIVE_BYTES together (the bound its tar had), a tensor at most
# MAX_DIMS dimensions; its texts are cut at MAX_TEXT characters.
MAX_MANIFEST_BYTES = 16 << 20
MAX_DIMS = 64
MAX_TEXT = 4000
# The dtypes an answer's tensors may have: what an ExecuTorch program returns.
DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128")


def _read_plain(folder: str, name: Any, size: int | None, what: str) -> bytes:
    """The bytes of `name`, a regular file directly inside `folder` (no link followed, no
    device or fifo read), which must hold exactly `size` bytes (or at most
    MAX_MANIFEST_BYTES when `size` is None)."""
    if not agent.plain_name(name):
        raise ExchangeError(f"{what}: {name!r} is not a plain file name inside the output folder")
    path = os.path.join(folder, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ExchangeError(f"{what}: the runner wrote no {name} into its output folder") from None
    except OSError as error:
        raise ExchangeError(f"{what}: cannot open {path}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ExchangeError(f"{what}: {path} is not a regular file")
        limit = MAX_MANIFEST_BYTES if size is None else size
        if info.st_size > limit or (size is not None and info.st_size != size):
            raise ExchangeError(f"{what}: {path} holds {info.st_size} bytes, "
                                f"{'at most' if size is None else 'not'} {limit}")
        data = handle.read(limit + 1)
    if len(data) != info.st_size:
        raise ExchangeError(f"{what}: {path} changed while it was read")
    return data


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")


def _text(manifest: dict, key: str, path: str) -> None:
    """A free-text field: a string, cut to MAX_TEXT characters."""
    if key in manifest:
        if not isinstance(manifest[key], str):
            raise ExchangeError(f"{path}: {key!r} is not a string")
        manifest[key] = manifest[key][:MAX_TEXT]


def _seconds(timings: Any, path: str) -> dict:
    """A `timings` object: stage name -> a finite number of seconds >= 0."""
    if timings is None:
        return {}
    if not isinstance(timings, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf")
            for v in timings.values()):
        raise ExchangeError(f"{path}: \"timings\" is not an object of seconds")
    return timings


def read_manifest(folder: str) -> dict:
    """The one reader of an answer's manifest.json: a JSON object of at most
    MAX_MANIFEST_BYTES (no NaN or Infinity) whose `status` is one of STATUSES, texts
    strings, `timings` seconds, `cost` an object and `outputs` and `calls` lists of
    objects. The tensor files it lists are read_values'."""
    path = os.path.join(folder, MANIFEST)
    data = _read_plain(folder, MANIFEST, None, "the answer")
    try:
        manifest = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise ExchangeError(f"unreadable {path}: {str(error)[:200]}") from None
    if not isinstance(manifest, dict):
        raise ExchangeError(f"{path}: not a JSON object")
    if manifest.get("status") not in STATUSES:
        raise ExchangeError(f"{path}: status {str(manifest.get('status'))[:80]!r} is none of "
                            f"{STATUSES}")
    for key in ("reason", "error", "stage", "runtime"):
        _text(manifest, key, path)
    manifest["timings"] = _seconds(manifest.get("timings"), path)
    if not isinstance(manifest.get("cost", {}), dict):
        raise ExchangeError(f"{path}: \"cost\" is not an object")
    for key in ("outputs", "calls"):
        listed = manifest.get(key, [])
        if not isinstance(listed, list) or not all(isinstance(e, dict) for e in listed):
            raise ExchangeError(f"{path}: {key!r} is not a list of objects")
    return manifest


def _shape(entry: dict, what: str) -> list[int]:
    shape = entry.get("shape", [])
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape):
        raise ExchangeError(f"{what}: shape {str(shape)[:80]} is not a list of at most "
                            f"{MAX_DIMS} sizes >= 0")
    return shape


def read_values(folder: str, entries: list, room: int = agent.MAX_ARCHIVE_BYTES) -> list:
    """The outputs an output manifest lists, as tensors (and scalars). Each tensor is a
    file inside `folder` of exactly the bytes its dtype and shape need; together at most
    `room` bytes."""
    import torch

    if not isinstance(entries, list):
        raise ExchangeError("the answer's outputs are not a list")
    values = []
    for index, entry in enumerate(entries):
        what = f"output {index}"
        if not isinstance(entry, dict):
            raise ExchangeError(f"{what} is not an object")
        if "file" not in entry:
            value = entry.get("value")
            if not isinstance(value, (type(None), bool, int, float, str)):
                raise ExchangeError(f"{what}: a value that is not a number or a string")
            values.append(value)
            continue
        name = entry.get("dtype")
        if name not in DTYPES:
            raise ExchangeError(f"{what}: unknown dtype {str(name)[:40]!r}")
        dtype = getattr(torch, name)
        shape = _shape(entry, what)
        size = dtype.itemsize
        for n in shape:
            size *= n
        if size > room:
            raise ExchangeError(f"{what}: shape {shape} of {name} needs {size} bytes, more "
                                f"than the {room} an answer may hold")
        room -= size
        data = _read_plain(folder, entry["file"], size, what)
        tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data \
            else torch.empty(0, dtype=torch.uint8)
        values.append(tensor.view(dtype).reshape(shape))
    return values


def read_calls(folder: str, manifest: dict, count: int) -> list[tuple[list, float | None]]:
    """Each call's outputs and its `run` time in seconds (None if not given) from a
    version 2 answer of `count` calls (its manifest from read_manifest)."""
    calls = manifest.get("calls")
    if manifest.get("version") != CALLS_VERSION or not isinstance(calls, list) \
            or len(calls) != count or not all(isinstance(c, dict) for c in calls):
        raise ExchangeError(f"the answer to a job of {count} calls (version {CALLS_VERSION}) "
                            f"lists no \"calls\" of {count} entries")
    found = []
    room = agent.MAX_ARCHIVE_BYTES
    for call in calls:
        seconds = _seconds(call.get("timings"), "a call").get("run")
        values = read_values(folder, call.get("outputs", []), room)
        room -= sum(v.numel() * v.element_size() for v in values if hasattr(v, "numel"))
        found.append((values, float(seconds) if seconds is not None else None))
    return found
