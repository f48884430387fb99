"""Which declared entries no sweep has yet shown to hold at any seed.

A verdict that depends on the drawn input values must come from a sweep: a strict
[[fail]] that names `fail_mismatch` (or names no status, so covers a mismatch too) and
every [[tolerance]] judge the outputs' values, which change with the seed. A strict
entry naming only stage failures (quantize, lower, serialize, load, run) is decided by
the graph, its shapes and dtypes, which the test fixes: the seed draws values only, so
one run tells. (A stage that reads values, such as a kernel indexing with drawn indices,
shows up in a sweep as a status that moves, and the scheduled sweep job looks for it.)
Non-strict entries never fail a run, so they need no sweep to be safe.

Torch-free: it reads expectations files only.
"""

from __future__ import annotations

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import SWEEP_SEEDS, Expectation, Expectations

# The statuses that a comparison with the eager outputs gives (the values decide them).
VALUE_STATUSES = frozenset({Status.FAIL_MISMATCH, Status.FAIL_RECIPE_ACCURACY})


def depends_on_values(entry: Expectation) -> bool:
    """Whether the entry's verdict can change with the input values (see the top)."""
    if entry.kind == "tolerance":
        return True
    if entry.kind != "fail" or not entry.strict:
        return False
    return not entry.statuses or not VALUE_STATUSES.isdisjoint(entry.statuses)


def unswept(expectations: Expectations, seeds: int = SWEEP_SEEDS) -> list[Expectation]:
    """The entries that depend on values and record no sweep of at least `seeds` seeds."""
    return [e for e in expectations.entries
            if depends_on_values(e) and (e.seeds_swept or 0) < seeds]


def label(backend: str, entry: Expectation) -> str:
    """One line that names an entry without its line number (which moves with edits)."""
    return f"{backend} | {entry.kind} | {','.join(entry.flows)} | {entry.case}"
