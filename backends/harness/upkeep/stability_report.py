"""`python -m etsuite.backends.harness.upkeep.stability_report REPORT... [--output FILE.md]` (the last step of
`make sweep`): which verdicts of a seed sweep's reports, one run per seed, depend on the
seed. Prints the markdown of `sweeps.markdown`; exit 1 when a verdict depends on the
seed (or a mismatch sits just beyond its bound) and no non-strict entry declares it so,
0 otherwise (those declared are listed apart), 2 on bad input."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from etsuite.backends.harness.flows.registry import builtin_flows
from etsuite.backends.harness.upkeep.sweeps import markdown, seed_dependent, seeds_of, sweep_of


def sqnr_floors() -> dict[str, float | None]:
    """Each known flow's least SQNR (None: a floating-point rule); flows are torch-free."""
    return {f.name: f.tolerance.min_sqnr_db for f in builtin_flows()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.backends.harness.upkeep.stability_report",
        description="Which verdicts of a seed sweep's reports depend on the seed.")
    parser.add_argument("reports", nargs="+",
                        help="JSON reports or results streams, one run per seed")
    parser.add_argument("--backend", default=None, help="only this backend's records")
    parser.add_argument("--output", default=None, help="also write the markdown here")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.reports]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no report {', '.join(missing)}")
    try:
        sweeps = sweep_of(paths, args.backend)
    except (json.JSONDecodeError, ValueError) as error:
        sys.stderr.write(f"sweep: error: {error}\n")
        return 2
    floors = sqnr_floors()
    text = markdown(sweeps, seeds_of(sweeps), floors)
    sys.stdout.write(text + "\n")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 1 if seed_dependent(sweeps, floors) else 0


if __name__ == "__main__":
    sys.exit(main())
