"""Artifacts to debug with: for a failing subtest (or every subtest, on request) the
`.pte`, its inputs, the eager reference outputs and the runtime outputs, in one folder
per subtest under the run's artifact folder, with a size cap per run.

The .pte and the inputs replay without Python: the folder is a job folder of the
exchange format (exchange.py: each input a raw little-endian `.bin` file, `manifest.json`
with their shapes and dtypes), so a runner replays it as it is; torch.save files are
beside them for Python users. The cap is checked against what the folder already holds
(forked test children share it); beyond it nothing more is written, each skipped subtest
is noted in `CAP_REACHED`, and the session says so once at its end.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from etsuite.backends.harness.contract.statuses import FAILING, Status
from etsuite.backends.harness.flows.runtimes import delegate_ids
from etsuite.backends.harness.remote import exchange

if TYPE_CHECKING:
    import pytest

    from etsuite.backends.harness.case.pipeline import Replay

CAP_FILE = "CAP_REACHED"
DEFAULT_CAP_MB = 256


def addoption(group: pytest.OptionGroup) -> None:
    group.addoption("--artifacts", default=None, metavar="DIR",
                    help="write the .pte, inputs and eager/runtime outputs of each failing "
                         "subtest under DIR (default: $ETSUITE_ARTIFACTS; reports/artifacts "
                         "when $CI is set)")
    group.addoption("--artifacts-all", action="store_true", default=False,
                    help="with --artifacts: for passing subtests too")
    group.addoption("--artifacts-max-mb", type=float, default=DEFAULT_CAP_MB, metavar="MB",
                    help=f"stop writing artifacts once DIR holds this much "
                         f"(default {DEFAULT_CAP_MB})")


@dataclass(frozen=True)
class ArtifactPolicy:
    root: str
    every: bool = False
    cap_bytes: int = DEFAULT_CAP_MB * 2**20

    @classmethod
    def from_config(cls, config: pytest.Config) -> "ArtifactPolicy | None":
        root = config.getoption("artifacts", None) or os.environ.get("ETSUITE_ARTIFACTS") \
            or ("reports/artifacts" if os.environ.get("CI") else None)
        if not root:
            return None
        cap = int(config.getoption("artifacts_max_mb", DEFAULT_CAP_MB) * 2**20)
        return cls(root, bool(config.getoption("artifacts_all", False)), cap)

    def wants(self, status: Status) -> bool:
        return self.every or status in FAILING

    def write(self, test_id: str, subtest: int, replay: Replay, status: Status,
              seed: int | None) -> str | None:
        """Write one subtest's files (`replay` is the pipeline's `Replay`); returns their
        folder, or None past the cap."""
        files = exchange.job_files(
            replay.program.pte, list(replay.inputs), delegate_ids(replay.program),
            test_id=test_id, subtest=subtest, status=str(status), seed=seed,
            expected="expected.pt",
            actual="actual.pt" if replay.actual is not None else None)
        pickled = {"inputs.pt": replay.inputs, "expected.pt": replay.expected}
        if replay.actual is not None:
            pickled["actual.pt"] = list(replay.actual)
        for name, value in pickled.items():
            files[name] = _saved(value)
        size = sum(len(data) for data in files.values())
        if folder_size(self.root) + size > self.cap_bytes:
            os.makedirs(self.root, exist_ok=True)
            with open(os.path.join(self.root, CAP_FILE), "a", encoding="utf-8") as note:
                note.write(f"{test_id} subtest {subtest}: {size} bytes not written\n")
            return None
        folder = os.path.join(self.root, safe_name(test_id), f"subtest{subtest}")
        exchange.write_folder(folder, files)
        return folder


def _saved(value: Any) -> bytes:
    import io

    import torch

    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def safe_name(test_id: str) -> str:
    """A node id as one folder name: path separators and odd characters become _."""
    return re.sub(r"[^A-Za-z0-9._\[\]-]+", "_", test_id).strip("_")[:200]


def folder_size(root: str) -> int:
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def cap_message(policy: ArtifactPolicy | None) -> str | None:
    """One line for the end of the session when the cap stopped some artifacts."""
    if policy is None:
        return None
    path = os.path.join(policy.root, CAP_FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        skipped = sum(1 for _ in handle)
    return (f"etsuite: artifacts reached the cap of {policy.cap_bytes / 2**20:g} MB in "
            f"{policy.root}: {skipped} subtest(s) not written (listed in {path}; raise "
            f"--artifacts-max-mb to keep more)")
