"""`python -m etsuite.tools.upkeep.update_durations --backend NAME [REPORT...]` (`make update-durations
BACKEND=NAME`): record how long each of a backend's tests took in its reports, in
`backends/<name>/durations.json`, which `--shard K/N` balances shards by.

Tests the reports do not hold keep their recorded time (a partial or sharded run
refreshes what it ran); `--replace` starts from nothing. A test that a killed session was
running when it died has no real duration and is left out.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

from etsuite.backends.harness.contract.durations import (
    DURATIONS_FILE,
    durations_document,
    durations_of,
)
from etsuite.tools.files import write_atomically
from etsuite.tools.report import loading


def default_reports(backend: str) -> list[str]:
    """reports/<backend>.json and every reports/<backend>-*.json (shards, suites)."""
    found = glob.glob(f"reports/{backend}.json") + sorted(glob.glob(f"reports/{backend}-*.json"))
    return [path for path in found if not path.endswith(loading.STREAM_SUFFIX)]


def measured(merged: loading.Merged, backend: str) -> dict[str, float]:
    own_folder = f"backends/{backend}/"
    return {r.nodeid: r.duration for r in merged.results
            if (r.backend == backend or r.nodeid.startswith(own_folder))
            and r.longrepr != loading.SESSION_ENDED and r.duration > 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.tools.upkeep.update_durations",
        description="Record a backend's test durations from its reports, for --shard.")
    parser.add_argument("--backend", required=True)
    parser.add_argument("reports", nargs="*", metavar="REPORT",
                        help="JSON reports, streams or folders (default: reports/<backend>.json "
                             "and reports/<backend>-*.json)")
    parser.add_argument("--output", metavar="FILE",
                        help=f"default: backends/<backend>/{DURATIONS_FILE}")
    parser.add_argument("--replace", action="store_true",
                        help="drop recorded tests that these reports do not hold")
    args = parser.parse_args(argv)
    output = args.output or os.path.join("backends", args.backend, DURATIONS_FILE)
    if not os.path.isdir(os.path.dirname(output) or "."):
        parser.error(f"no folder for {output}: is {args.backend!r} a backend?")
    inputs = args.reports or default_reports(args.backend)
    if not inputs:
        parser.error(f"no reports/{args.backend}.json or reports/{args.backend}-*.json: "
                     f"run `make test-{args.backend}` first, or name the reports")
    try:
        merged = loading.load_all(loading.expand_inputs(inputs))
        before = {} if args.replace or not os.path.exists(output) else durations_of(
            json.loads(open(output, encoding="utf-8").read()))
    except (loading.BadInput, ValueError) as error:
        sys.stderr.write(f"update-durations: error: {error}\n")
        return 2
    now = measured(merged, args.backend)
    if not now:
        sys.stderr.write(f"update-durations: error: no test of backend {args.backend!r} "
                         f"with a duration in {', '.join(inputs)}\n")
        return 2
    durations = {**before, **now}
    sources = sorted({os.path.basename(run.path) for run in merged.runs})
    write_atomically(output, json.dumps(durations_document(args.backend, durations, sources),
                                        indent=1) + "\n")
    kept = len(set(before) - set(now))
    sys.stderr.write(f"update-durations: {output}: {len(durations)} tests ({len(now)} measured "
                     f"in {len(merged.runs)} reports, {kept} kept from before)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
