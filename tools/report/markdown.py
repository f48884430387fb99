"""The markdown summary, assembled: `build` calls the sections (`sections/`, one module
each, holding its numbers and its markdown) in the order a backend author reads them, one
list below. Tables by tabulate.

A new section is a module in `sections/` with a `markdown(...)` that returns its
`Section`s (none when it has nothing to say), and one line in `build`. Output is
deterministic (no clock, sorted where order is not meaningful) so it can be checked line
by line and diffed between runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from etsuite.tools.report import tally
from etsuite.tools.report.baseline_diff import Changes
from etsuite.tools.report.loading import Merged
from etsuite.tools.report.sections import (
    baseline,
    borderline,
    budget_breaches,
    by_signature,
    by_stage,
    core_aten_coverage,
    coverage,
    duplicates,
    failures,
    flaky,
    header,
    matrix,
    non_strict,
    quality,
    quantized,
    results,
    running_cost,
    slowest,
    stateful,
    where,
)
from etsuite.tools.report.size_limit import Section

DEFAULT_TITLE = "ExecuTorch backend test report"


@dataclass
class Options:
    title: str = DEFAULT_TITLE
    slowest: int = 10
    # Folder the summary is written to: artifact links are made relative to it.
    link_from: str = "."


def build(merged: Merged, changes: Changes | None = None, options: Options | None = None
          ) -> list[Section]:
    """All sections of the summary, in reading order."""
    options = options or Options()
    order = tally.flow_order(merged)
    failing = tally.failing_tests(merged, order)
    each_failure = [f for _, found in failing for f in found]
    places = where.places(each_failure)
    return [
        *header.markdown(merged, options.title, changes),   # the headline, the runs
        *results.markdown(merged, order),                    # results by backend and flow
        *baseline.markdown(changes),                         # changes since the baseline, drift
        *quantized.markdown(merged, order),
        *matrix.markdown(merged, order),
        *by_stage.markdown(each_failure),
        *by_signature.markdown(each_failure),
        *where.markdown(places),
        *flaky.markdown(failing),
        *non_strict.markdown(merged, order),
        *budget_breaches.markdown(merged, order),
        *failures.markdown(failing, options.link_from, places),
        *borderline.markdown(merged, order),
        *stateful.markdown(merged, order),
        *running_cost.markdown(merged, order),
        *slowest.markdown(merged, options.slowest),
        *coverage.markdown(merged, order),
        *core_aten_coverage.markdown(merged, order),
        *quality.markdown(merged, order),
        *duplicates.markdown(merged),
    ]
