"""Core ATen coverage: how a record's op names map onto the installed torch's core ATen
overloads, and the data file that keeps the suite honest about the ones it misses.

The denominator is the list of overloads the session facts carry (`core_aten_ops`,
written by the harness from the installed torch), so nothing here imports torch. A record
names the edge ops left after partitioning, and ExecuTorch's edge dialect spells some
core ops differently (a view becomes its `_copy` variant, `_to_copy` becomes
`dim_order_ops._to_dim_order_copy`): `core_overload` is the one place that maps them back.

`backends/suite/core_aten.toml` holds, under `[explained]`, every core overload no
operator test covers with the reason, and under `[covered]` a snapshot of the operator
tests that cover each of the others, regenerated from a portable run's report by
`make core-aten` (`python -m etsuite.tools.report.core_aten REPORT`). `test/test_core_aten.py`
checks the file against the installed torch.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from etsuite.backends.harness.contract.record import SubtestRecord
    from etsuite.tools.report.loading import Merged, Run

DATA_FILE = Path(__file__).resolve().parents[2] / "backends" / "suite" / "core_aten.toml"
# The suites whose cases each test one op (the hand-written operator tests and the
# generated OpInfo samples): what "covered" counts; other suites' cases are models.
OPERATOR_SUITES = frozenset({"operators", "generated"})

# ExecuTorch's edge replacements of core ops (dim order instead of memory format).
_EDGE_SPELLINGS = {
    "dim_order_ops._to_dim_order_copy.default": "aten._to_copy.default",
    "dim_order_ops._clone_dim_order.default": "aten.clone.default",
    "dim_order_ops._empty_dim_order.default": "aten.empty.memory_format",
}
_COPY = "_copy"


def core_overload(name: str, core: frozenset[str] | set[str]) -> str | None:
    """The core overload a record's op name stands for, or None when it is not one.
    Accepts the older "aten::add.Tensor" spelling, a name without overload
    ("aten::convolution" is "aten.convolution.default") and one without namespace (the
    harness names a node whose target is a plain aten overload, not an edge op, by the
    overload's `__name__`: "sym_size.int")."""
    name = name.replace("::", ".", 1)
    name = _EDGE_SPELLINGS.get(name, name)
    parts = name.split(".")
    if len(parts) == 2:  # "aten.convolution", or an aten overload outside the edge
        # dialect named without its namespace ("sym_size.int", "scalar_tensor.default")
        found = core_overload(f"aten.{name}", core)
        return found or core_overload(f"{name}.default", core)
    if len(parts) != 3:
        return None
    if name in core:
        return name
    namespace, op, overload = parts
    if op.endswith(_COPY):  # the edge dialect's copy of a view op
        view = f"{namespace}.{op[:-len(_COPY)]}.{overload}"
        if view in core:
            return view
    return None


def ops_of_record(record: SubtestRecord, core: frozenset[str]) -> tuple[set[str], set[str]]:
    """The core overloads a record's lowered graph holds: (all of them, those a delegate
    took)."""
    delegated = {c for c in (core_overload(op, core) for op, n in
                             (record.delegated_ops or {}).items() if n) if c}
    outside = {c for c in (core_overload(op, core) for op, n in
                           (record.undelegated_ops or {}).items() if n) if c}
    return delegated | outside, delegated


def denominator(runs: Iterable[Run]) -> frozenset[str] | None:
    """The core overloads the runs' facts name (their union: merged runs of different
    torch versions count every op either tagged); None when no run carries them."""
    found: set[str] = set()
    said = False
    for run in runs:
        ops = run.facts.core_aten_ops if run.facts is not None else None
        if ops is not None:
            said = True
            found.update(ops)
    return frozenset(found) if said else None


# ---------------------------------------------------------------- the data file

@dataclass
class CoreAtenFile:
    """`explained`: {overload: why no operator test covers it}; `covered`: {overload:
    operator test cases covering it}, as last regenerated; `source`: where from."""

    explained: dict[str, str] = field(default_factory=dict)
    covered: dict[str, list[str]] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)


def load(path: Path = DATA_FILE) -> CoreAtenFile:
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    return CoreAtenFile(explained=dict(data.get("explained", {})),
                        covered={op: list(cases) for op, cases in data.get("covered", {}).items()},
                        source=dict(data.get("snapshot", {})))


HEADER = """\
# Core ATen coverage of the operator suite (docs/reference/core-aten.md).
# [explained]: every core ATen overload of the installed torch that no operator test
#   covers, with the reason. Edited by hand; a reason is one string (no comments: the
#   file is rewritten).
# [covered]: the operator test cases that cover each other core overload on portable,
#   regenerated from a portable run's report by `make core-aten` (CORE_ATEN_FROM=<report>).
# test/test_core_aten.py fails when torch tags an overload that is in neither table, and
# when an entry names an overload torch no longer tags.
"""


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def dump(data: CoreAtenFile) -> str:
    lines = [HEADER, "[snapshot]"]
    lines += [f"{key} = {_string(value)}" for key, value in sorted(data.source.items())]
    lines += ["", "[explained]"]
    lines += [f"{_string(op)} = {_string(why)}" for op, why in sorted(data.explained.items())]
    lines += ["", "[covered]"]
    for op, cases in sorted(data.covered.items()):
        lines.append(f"{_string(op)} = [")
        lines += [f"    {_string(case)}," for case in sorted(cases)]
        lines.append("]")
    return "\n".join(lines) + "\n"


def _short_case(test_case: str) -> str:
    prefix = "backends/suite/operators/"
    return test_case[len(prefix):] if test_case.startswith(prefix) else test_case


def snapshot(merged: Merged) -> tuple[dict[str, list[str]], frozenset[str]]:
    """From loaded reports: {core overload: operator test cases whose lowered graph holds
    it, in any flow}, and the denominator. ValueError when no report names the core ops."""
    core = denominator(merged.runs)
    if core is None:
        raise ValueError("no report names the core ATen ops (written by an older harness?)")
    covered: dict[str, set[str]] = {}
    for result in merged.results:
        for record in result.records:
            if record.suite not in OPERATOR_SUITES:
                continue
            for op in ops_of_record(record, core)[0]:
                covered.setdefault(op, set()).add(_short_case(record.test_case))
    return {op: sorted(cases) for op, cases in covered.items()}, core


def regenerate(old: CoreAtenFile, covered: dict[str, list[str]], core: frozenset[str],
               source: dict[str, str]) -> tuple[CoreAtenFile, list[str], list[str]]:
    """The file with a new snapshot: reasons kept for the overloads still uncovered (an
    uncovered one without a reason gets an empty one, which the check refuses). Also
    returns the reasons dropped (now covered, or no longer core) and the new blanks."""
    uncovered = core - set(covered)
    explained = {op: why for op, why in old.explained.items() if op in uncovered}
    dropped = sorted(op for op, why in old.explained.items() if why and op not in explained)
    blank = sorted(uncovered - set(explained))
    explained.update({op: "" for op in blank})
    return CoreAtenFile(explained, dict(covered), source), dropped, blank


def main(argv: list[str] | None = None) -> int:
    from etsuite.tools.files import write_atomically
    from etsuite.tools.report.loading import expand_inputs, load_all

    parser = argparse.ArgumentParser(
        prog="python -m etsuite.tools.report.core_aten",
        description="Rewrite the core ATen snapshot from a run's reports (portable).")
    parser.add_argument("reports", nargs="+", help="JSON reports or folders")
    parser.add_argument("--data", type=Path, default=DATA_FILE, help=f"default: {DATA_FILE}")
    args = parser.parse_args(argv)
    merged = load_all(expand_inputs(args.reports))
    try:
        covered, core = snapshot(merged)
    except ValueError as error:
        print(f"core_aten: {error}", file=sys.stderr)
        return 2
    versions = {run.facts.versions.get("torch") for run in merged.runs if run.facts}
    source = {"torch": ", ".join(sorted(str(v) for v in versions)),
              "reports": ", ".join(args.reports)}
    old = load(args.data) if args.data.exists() else CoreAtenFile()
    new, dropped, blank = regenerate(old, covered, core, source)
    write_atomically(str(args.data), dump(new))
    print(f"core_aten: {len(covered)} of {len(core)} core ATen ops covered by operator "
          f"tests -> {args.data}")
    for op in dropped:
        print(f"core_aten: dropped the reason of {op} (covered now, or no longer core)")
    for op in blank:
        print(f"core_aten: {op} is not covered: write why under [explained]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
