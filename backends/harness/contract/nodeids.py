"""A test's identity as its pytest node id says it (the case, its parameter ids, the case
across flows) and the command that reproduces it."""

from __future__ import annotations

import shlex
from typing import Sequence


def test_case_id(nodeid: str) -> str:
    """The node id without any parameters: the operator/model case across flows."""
    return nodeid.split("[", 1)[0]


def param_ids(nodeid: str) -> list[str]:
    """The parameter ids in a node id's brackets, split at "-" ([] when it has none).
    A flow name never contains "-", so finding the flow among them is exact."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return []
    return nodeid[nodeid.index("[") + 1:-1].split("-")


def case_id(nodeid: str, flow: str | None) -> str:
    """The node id without the flow among its parameter ids: the same for every flow."""
    rest = [p for p in param_ids(nodeid) if p != flow]
    base = test_case_id(nodeid)
    return f"{base}[{'-'.join(rest)}]" if rest else base


# Where a pasted repro command's own JSON report goes: apart from the run's reports (the
# summary reads `reports/` without its subfolders) and from the minimal repro folders of
# localized failures (`reports/repros/`). Not "rerun": that is the pipeline's running a
# failing subtest again (a record's `rerun`). Until issue 55 it was reports/repro/last.json,
# which records written before still say; nothing reads it back, so it needs no reader.
REPRO_COMMAND_REPORT = "reports/repro-command/last.json"


def repro_command(tox_env: str | None, nodeid: str, seed: int | None,
                  options: Sequence[str] = ()) -> str:
    """One command, pasted at the repository root, that reruns exactly this test: through
    the backend's tox environment when it has one, else plain pytest. `options` are
    further pytest arguments the run needs to be the same (`--runner PATTERN=SPEC`)."""
    target = shlex.quote(nodeid)
    seed_option = f" --seed {seed}" if seed is not None else ""
    seed_option += "".join(f" {shlex.quote(option)}" for option in options)
    if tox_env:
        return (f"tox -e {tox_env} -- {target}{seed_option} -n 0 "
                f"--json-report-file={REPRO_COMMAND_REPORT}")
    return f"pytest {target}{seed_option} -p no:xdist"
