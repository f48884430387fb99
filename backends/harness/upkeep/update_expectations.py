"""`python -m etsuite.backends.harness.upkeep.update_expectations --backend NAME [REPORT...]`
(`make update-expectations BACKEND=NAME`, `REPORTS="reports/sweep/NAME-seed*.json"` for a
seed sweep): rewrite a backend's expectations.toml from its reports, one per seed,
keeping the reasons written by hand. What becomes strict, a tolerance or non-strict is
decided in entries_from_sweeps.py (`declaration`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable

from etsuite.backends.harness.contract.stream import stream_path_for
from etsuite.backends.harness.flows.expectations import (
    FILE_NAME,
    Expectation,
    Expectations,
    ExpectationsError,
    load,
)
from etsuite.backends.harness.flows.registry import backend_folders, backends_dir, builtin_flows
from etsuite.backends.harness.upkeep.entries_from_sweeps import dump, leading_comment, observe, updated
from etsuite.backends.harness.upkeep.sweeps import seeds_of


def declared_elsewhere(backend: str, path: Path) -> Expectations:
    """The entries the backend's flows carry besides its expectations.toml (flows.py
    adds, e.g., OpenVINO's entries for CPUs that run fp32 in bf16): their cases are
    declared already, so the rewrite must not copy them into the file."""
    own = str(path.relative_to(backends_dir().parent))  # how builtin_flows names its entries
    entries = {entry for flow in builtin_flows() if flow.backend == backend
               for entry in flow.expectations.entries if not entry.source.startswith(own)}
    return Expectations(tuple(sorted(entries, key=lambda e: e.source)))


def _default_report(backend: str) -> Path:
    """reports/<backend>.json, else the stream a killed run left (its finished tests)."""
    report = Path("reports") / f"{backend}.json"
    stream = Path(stream_path_for(str(report)))
    if not report.is_file() and stream.is_file():
        sys.stderr.write(f"update-expectations: no {report}; reading the finished tests of "
                         f"the killed run's {stream}\n")
        return stream
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.backends.harness.upkeep.update_expectations",
        description="Rewrite a backend's expectations.toml from its last reports.")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--file", default=FILE_NAME, metavar="NAME",
                        help=f"the file of backends/<backend>/ to rewrite (default {FILE_NAME}); "
                             "another one (e.g. a host-dependent file its flows.py loads) has "
                             "its own entries re-derived and gets no new ones")
    parser.add_argument("reports", nargs="*",
                        help="JSON reports or results streams (*.partial.jsonl, the finished "
                             "tests of a killed run); default: reports/<backend>.json")
    args = parser.parse_args(argv)
    if args.backend not in backend_folders():
        parser.error(f"unknown backend {args.backend!r}; known backends: {', '.join(backend_folders())}")
    paths = [Path(p) for p in args.reports] or [_default_report(args.backend)]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no report {', '.join(missing)}: run `make test-{args.backend}` first")
    folder = backends_dir() / args.backend
    target = folder / args.file
    if args.file != FILE_NAME and not target.is_file():
        parser.error(f"no {target}")
    try:
        current = load(target, str(target.relative_to(backends_dir().parent))) \
            if target.is_file() else Expectations()
        seen = observe(paths, args.backend)
    except (ExpectationsError, json.JSONDecodeError, ValueError) as error:
        sys.stderr.write(f"update-expectations: error: {error}\n")
        return 2
    floors = {f.name: f.tolerance.min_sqnr_db for f in builtin_flows() if f.backend == args.backend}
    result = updated(current, seen, declared_elsewhere(args.backend, target), floors,
                     add_new=args.file == FILE_NAME)
    header = leading_comment(target.read_text(encoding="utf-8")) if target.is_file() else None
    target.write_text(dump(result, args.backend, header), encoding="utf-8")
    seeds = seeds_of(seen)

    def count(entries: Iterable[Expectation], **wanted: Any) -> int:
        return sum(all(getattr(e, k) == v for k, v in wanted.items()) for e in entries)

    todo = sum(e.reason.startswith("TODO") for e in result.entries)
    sys.stderr.write(
        f"update-expectations: {target}: from {len(seen)} observed cases at "
        f"{len(seeds)} seed(s) ({', '.join(map(str, seeds))}): strict failures "
        f"{count(result.entries, kind='fail', strict=True)} (was "
        f"{count(current.entries, kind='fail', strict=True)}), non-strict "
        f"{count(result.entries, kind='fail', strict=False)} (was "
        f"{count(current.entries, kind='fail', strict=False)}), tolerances "
        f"{count(result.entries, kind='tolerance')} (was "
        f"{count(current.entries, kind='tolerance')}); {todo} without a reason yet\n")
    if len(seeds) < 2:
        sys.stderr.write("update-expectations: one seed only: a failure seen once is declared "
                         "strict; sweep several seeds (make sweep) to tell what depends on "
                         "the inputs\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
