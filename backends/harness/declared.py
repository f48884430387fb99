"""The declared-entries check (`--declared`, what `make check-declared` and CI run):
only the cases an expectations file names, so that a stale entry fails in the change
that made it stale instead of weeks later in someone's full run. Where running them all
costs too much, `--declared WHAT` runs the kinds that depend on the inputs and on the
judging rules (fail_mismatch, tolerance) every time and `--declared-sample K/N` a
rotating slice of the others (non-strict [[fail]] entries among them, whatever their
status: a pass cannot make one stale); `--passing-sample K/N` adds a rotating slice of the cases
no entry names, which catches a pass turning into a failure. Over N consecutive checks
with K = 1..N, a slice covers every case once.

Torch-free: applied at collection time.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import Expectations, matches
from etsuite.backends.harness.sharding import ShardError, parse_shard

if TYPE_CHECKING:
    import pytest

# The kinds whose verdicts a run can prove stale (a skip is not run, so it cannot).
CHECKED_KINDS = ("fail", "tolerance", "must_delegate")


def addoption(group: pytest.OptionGroup) -> None:
    group.addoption("--declared", nargs="?", const="all", default=None, type=_declared_arg,
                    metavar="WHAT",
                    help="run only the cases an expectations file names (known failures, "
                         "tolerances, must-delegate rules), to check that each still holds; "
                         "WHAT narrows it to some statuses and kinds, e.g. "
                         "fail_mismatch,tolerance (default: all)")
    group.addoption("--declared-sample", type=_sample_arg, default=None, metavar="K/N",
                    help="with --declared WHAT, also run the K-th of N slices of the other "
                         "declared cases (slices by a hash of the node id: N runs with "
                         "K = 1..N cover each once)")
    group.addoption("--passing-sample", type=_sample_arg, default=None, metavar="K/N",
                    help="with --declared, also run the K-th of N slices of the cases no "
                         "entry names (expected to pass): catches a pass turning into a "
                         "failure")


def check_options(option: argparse.Namespace) -> None:
    """A sample without --declared would run nothing extra: say so (ValueError)."""
    if not option.declared and (option.declared_sample or option.passing_sample):
        raise ValueError("--declared-sample and --passing-sample go with --declared")


def _sample_arg(text: str) -> tuple[int, int]:
    """K/N, as --shard takes it."""
    try:
        return parse_shard(text, "a sample")
    except ShardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _declared_arg(text: str) -> frozenset[str]:
    """`all`, or statuses of [[fail]] entries and the other checked kinds, comma-separated."""
    known = set(CHECKED_KINDS[1:]) | {s.value for s in Status if s.value.startswith("fail_")}
    wanted = frozenset(part.strip() for part in text.split(",") if part.strip())
    if wanted == {"all"}:
        return frozenset(known | {"fail"})
    unknown = sorted(wanted - known)
    if not wanted or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown {', '.join(unknown) or 'nothing'}; known: all, {', '.join(sorted(known))}")
    return wanted


def is_declared(expectations: Expectations, flow: str, case: str,
                wanted: frozenset[str], strict_only: bool = False) -> bool:
    """Whether an entry of a wanted kind (a [[fail]] entry: of a wanted status; with
    `strict_only`, a strict one) names this case of this flow. Only the first [[fail]]
    entry that matches counts: it is the one that decides."""
    failure = expectations.failure(flow, case)
    if failure is not None and (failure.strict or not strict_only) and \
            ("fail" in wanted or any(s.value in wanted for s in failure.statuses)):
        return True
    return any(e.kind in wanted and e.kind != "fail" and e.applies(flow, case)
               for e in expectations.entries)


def checked(expectations: Expectations, flow: str, case: str, nodeid: str,
            option: argparse.Namespace) -> bool:
    """Whether a `--declared` run (its pytest options in `option`) runs this item. A
    non-strict [[fail]] entry goes with the rotating sample even when WHAT names its
    status: a pass cannot make it stale, so running it every time checks little (only
    that it fails no other way) at the cost of a whole case (an example model's minutes)."""
    if is_declared(expectations, flow, case, option.declared, strict_only=option.declared != ALL_DECLARED):
        return True
    if is_declared(expectations, flow, case, ALL_DECLARED):
        return in_sample(nodeid, option.declared_sample)
    return in_sample(nodeid, option.passing_sample)


def in_sample(nodeid: str, sample: tuple[int, int] | None) -> bool:
    """Whether the node id falls in slice K of N (stable across machines, unlike hash())."""
    if sample is None:
        return False
    k, n = sample
    digest = hashlib.sha1(nodeid.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") % n == k - 1


ALL_DECLARED = _declared_arg("all")  # what --declared without WHAT selects


def entries_naming_nothing(expectations: Expectations, flow: str, cases: dict[str, set[str]],
                           narrowed: set[str], root: Path, folders: list[Path]) -> list[str]:
    """One line per entry of `flow` that names no test: its case pattern matches none of
    the cases this run collected for the flow from the files it names (`cases`: file ->
    case ids, whole files only: `narrowed` files were asked for by node id), or it names
    a file that does not exist under a folder the run collected (`folders`, under
    `root`). Such an entry is a claim about nothing, usually a renamed test."""
    lines = []
    for entry in expectations.entries:
        if not any(matches(p, flow) for p in entry.flows):
            continue
        file_pattern = entry.case.split("::", 1)[0]
        files = [f for f in cases if matches(file_pattern, f)]
        if files:
            whole = [f for f in files if f not in narrowed]
            if whole and not any(matches(entry.case, c) for f in whole for c in cases[f]):
                count = sum(len(cases[f]) for f in whole)
                lines.append(f"{entry.source}: [[{entry.kind}]] names {entry.case!r} on flow "
                             f"{flow}, which matches none of the {count} tests collected "
                             f"from {', '.join(whole)}: rename it to the test it means, or "
                             f"delete it")
        elif "*" not in file_pattern and "?" not in file_pattern \
                and any((root / file_pattern).is_relative_to(folder) for folder in folders) \
                and not (root / file_pattern).exists():
            lines.append(f"{entry.source}: [[{entry.kind}]] names {entry.case!r}, but "
                         f"{file_pattern} does not exist: rename it to the file it means, "
                         f"or delete it")
    return lines
