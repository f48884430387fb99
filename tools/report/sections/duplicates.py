"""Duplicates: tests seen in more than one run (each counted once, from the newest run),
and those whose runs disagree."""

from __future__ import annotations

from etsuite.tools.report.formatting import code, plural, table
from etsuite.tools.report.loading import Merged
from etsuite.tools.report.size_limit import Section


def markdown(merged: Merged) -> list[Section]:
    if not merged.duplicates:
        return []
    conflicts = [d for d in merged.duplicates if d.conflict]

    def render(items: list) -> tuple[str, list[str]]:
        return table(["test", "kept (newest run)", "also seen"], [
            [code(d.nodeid), f"{d.kept.status} in {code(d.kept.run.path)}",
             "; ".join(f"{o.status} in {code(o.run.path)}" for o in d.others)] for d in items])

    intro = (f"{plural(len(merged.duplicates), 'test')} appear in more than one run; each is "
             f"counted once, from the run that started last. "
             + (f"{len(conflicts)} of them disagree:" if conflicts else "They all agree."))
    return [Section(heading="## Duplicates\n", intro=intro, items=conflicts,
                    render_items=render, unit="conflicts")]
