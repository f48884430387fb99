"""Failures by error signature: the failing subtests grouped by their error with numbers,
addresses and paths normalized (`signature.py`), most frequent first."""

from __future__ import annotations

from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, listed, table
from etsuite.tools.report.size_limit import Section


def by_signature(failures: list[tally.Failure]) -> list[tally.Group]:
    """Groups keyed (signature,), most frequent first."""
    groups = tally.grouped(failures, lambda f: (f.signature,))
    return sorted(groups, key=lambda g: (-g.count, g.key))


def markdown(failures: list[tally.Failure]) -> list[Section]:
    def render(groups: list) -> tuple[str, list[str]]:
        return table(["failures", "status", "flows", "error signature", "example"], [
            [g.count, ", ".join(g.statuses()), listed(g.flows()), code(g.key[0]),
             code(g.failures[0].result.nodeid)] for g in groups])

    groups = by_signature(failures)
    intro = ("Numbers, addresses and paths are normalized so that similar errors group."
             if groups else "")
    return [Section(heading="## Failures by error signature\n", intro=intro,
                   items=groups, render_items=render,
                   empty="No failures.\n", unit="signatures")]
