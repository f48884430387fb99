"""Failures by stage: the failing subtests grouped by status and stage."""

from __future__ import annotations

from etsuite.backends.harness.contract.statuses import ORDER
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import listed, table
from etsuite.tools.report.size_limit import Section


def by_stage(failures: list[tally.Failure]) -> list[tally.Group]:
    """Groups keyed (status, stage), in the statuses' order (contract.ORDER)."""
    rank = ORDER
    groups = tally.grouped(failures, lambda f: (f.status, f.stage or ""))
    return sorted(groups, key=lambda g: (rank[g.key[0]], g.key[1]))


def markdown(failures: list[tally.Failure]) -> list[Section]:
    def render(groups: list) -> tuple[str, list[str]]:
        return table(["status", "stage", "failures", "tests", "flows"], [
            [g.key[0], g.key[1] or "–", g.count, g.tests, listed(g.flows())] for g in groups])

    return [Section(heading="## Failures by stage\n", items=by_stage(failures),
                   render_items=render, empty="No failures.\n", cuttable=False)]
