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


def dtype_name(dtype) -> str:
    """torch.float32 -> "float32": the names the manifests use (torch's own)."""
    return str(dtype).rsplit(".", 1)[-1]


def tensor_bytes(tensor) -> bytes:
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
              **extra) -> dict[str, bytes]:
    """Every file of a job folder, by name. `delegates` are the backend ids the program's
    delegates need from the executing runtime (it answers "missing" without one);
    `extra` keys go into the manifest (artifacts add the test id and status)."""
    entries, files = value_entries(inputs, "input")
    manifest = {"format": FORMAT, "version": VERSION, "program": PROGRAM, "method": method,
                "byte_order": "little", "delegates": sorted(delegates), "inputs": entries,
                **extra}
    return {PROGRAM: bytes(pte), **files, MANIFEST: json.dumps(manifest, indent=1).encode()}


def calls_job_files(pte: bytes, calls: list[tuple[str, list]], delegates: list[str],
                    **extra) -> dict[str, bytes]:
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


def read_manifest(folder: str) -> dict:
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except FileNotFoundError:
        raise ExchangeError(f"the runner wrote no {MANIFEST} into its output folder") from None
    except (OSError, ValueError) as error:
        raise ExchangeError(f"unreadable {path}: {error}") from None
    if manifest.get("status") not in STATUSES:
        raise ExchangeError(f"{path}: status {manifest.get('status')!r} is none of {STATUSES}")
    return manifest


def read_values(folder: str, entries: list[dict]) -> list:
    """The outputs an output manifest lists, as tensors (and scalars)."""
    import torch

    values = []
    for entry in entries:
        if "file" not in entry:
            values.append(entry.get("value"))
            continue
        dtype = getattr(torch, str(entry.get("dtype")), None)
        if not isinstance(dtype, torch.dtype):
            raise ExchangeError(f"output {entry.get('file')}: unknown dtype {entry.get('dtype')!r}")
        with open(os.path.join(folder, entry["file"]), "rb") as handle:
            data = handle.read()
        shape = [int(n) for n in entry.get("shape", [])]
        count = 1
        for n in shape:
            count *= n
        if len(data) != count * dtype.itemsize:
            raise ExchangeError(f"output {entry['file']}: {len(data)} bytes, but shape {shape} "
                                f"of {entry['dtype']} needs {count * dtype.itemsize}")
        tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data \
            else torch.empty(0, dtype=torch.uint8)
        values.append(tensor.view(dtype).reshape(shape))
    return values


def read_calls(folder: str, manifest: dict, count: int) -> list[tuple[list, float | None]]:
    """Each call's outputs and its `run` time in seconds (None if not given) from a
    version 2 answer of `count` calls."""
    calls = manifest.get("calls")
    if manifest.get("version") != CALLS_VERSION or not isinstance(calls, list) \
            or len(calls) != count or not all(isinstance(c, dict) for c in calls):
        raise ExchangeError(f"the answer to a job of {count} calls (version {CALLS_VERSION}) "
                            f"lists no \"calls\" of {count} entries")
    found = []
    for call in calls:
        seconds = (call.get("timings") or {}).get("run")
        found.append((read_values(folder, call.get("outputs", [])),
                      float(seconds) if isinstance(seconds, (int, float)) else None))
    return found
