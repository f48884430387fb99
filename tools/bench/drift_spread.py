"""`python -m etsuite.tools.bench.drift_spread A B`: how far each metric moves between two runs
of the same selection at the same seed, where nothing changed but the machine's noise.

The floors in `drift.py` are set from these figures (docs/explanation/metric-drift.md);
run it again on a new host, or after a change to how a stage is timed, before trusting
a drift gate there.
"""

from __future__ import annotations

import argparse
import sys

from etsuite.tools.report import loading
from etsuite.tools.report.drift import METRICS, bucket_of, factor_of
from etsuite.tools.report.formatting import table


def spread_rows(first: loading.Merged, second: loading.Merged) -> list[list]:
    """Per metric: subtests compared, the largest absolute change, the largest factor either
    way, and how many subtests would be bucketed on the ratio alone (no floor)."""
    before = {(r.nodeid, rec.subtest): rec for r in first.results for rec in r.records}
    pairs = [(before[(r.nodeid, rec.subtest)], rec) for r in second.results
             for rec in r.records if (r.nodeid, rec.subtest) in before]
    rows = []
    for metric in METRICS:
        readings = [(metric.read(a), metric.read(b)) for a, b in pairs]
        both = [(a, b) for a, b in readings if a is not None and b is not None and a.basis == b.basis]
        changes = [abs(b.value - a.value) for a, b in both]
        factors = [factor_of(metric, a.value, b.value) for a, b in both]
        widest = max((max(f, 1 / f) if f else float("inf") for f in factors), default=None)
        by_ratio = sum(1 for f in factors if bucket_of(f) is not None)
        rows.append([metric.name, len(both), f"{max(changes):.4g}" if changes else "–",
                     f"{widest:.3g}x" if widest is not None else "–", by_ratio])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m etsuite.tools.bench.drift_spread",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("first", help="a report of the selection")
    parser.add_argument("second", help="a report of the same selection run again")
    args = parser.parse_args(argv)
    try:
        first, second = (loading.load_all(loading.expand_inputs([p])) for p in (args.first, args.second))
    except loading.BadInput as error:
        sys.stderr.write(f"drift_spread: error: {error}\n")
        return 2
    head, rows = table(["metric", "subtests", "largest change", "largest factor",
                        "over 1.25x on the ratio alone"], spread_rows(first, second))
    sys.stdout.write(head + "".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
