"""What the report says once per backend about the flows that could not run here: which
flows are unavailable and why, how to enable them, and how many tests lowered but found no
runtime on this host (lowered_not_run), with the runtime's reason.

A merge of many backends repeats these reasons once per flow (six QNN flows, one reason of
200 characters) and buried the counts under them; said once per backend, in one line, they
stay readable. The markdown prints `line()`; the page shows `short()` with `line()` behind a
click. The numbers come from `tally.flow_rows`; only the words are made here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from etsuite.backends.harness.contract.statuses import Status
from etsuite.tools.report.formatting import plural, shorten
from etsuite.tools.report.loading import Merged
from etsuite.tools.report.tally import FlowRow

SHORT_NOTE = 150        # characters of the page's one-line note
NOT_RUN_REASONS = 3     # distinct lowered_not_run reasons named per backend


@dataclass
class Unavailable:
    """The flows of one backend that share one unavailable reason, with how to enable
    each (flows that share a hint are named together)."""

    reason: str
    flows: list[str] = field(default_factory=list)
    tests: int = 0
    hints: dict[str, list[str]] = field(default_factory=dict)   # hint -> its flows


@dataclass
class BackendNote:
    backend: str
    flows: int                       # the backend's flows in the report
    tests: int                       # the backend's tests in the report
    unavailable: list[Unavailable] = field(default_factory=list)
    not_run: int = 0                 # lowered_not_run tests
    not_run_reasons: Counter = field(default_factory=Counter)

    @property
    def ran(self) -> bool:
        """False when none of the backend's flows could run here."""
        return sum(len(u.flows) for u in self.unavailable) < self.flows

    def _unavailable_words(self) -> str:
        whole = not self.ran
        parts = []
        for group in self.unavailable:
            named = "" if whole and len(self.unavailable) == 1 else \
                f" ({_flows(group.flows)})"
            hints = [hint if len(self.unavailable) == 1 and len(group.hints) == 1 and whole
                     else f"{_flows(flows)}: {hint}" for hint, flows in group.hints.items()]
            enable = f"; to enable it: {'; '.join(hints)}" if hints else ""
            parts.append(f"{group.reason}{named}{enable}")
        if whole:
            lead = (f"did not run here ({plural(self.flows, 'flow')}, "
                    f"{plural(self.tests, 'test')} unavailable): ")
        else:
            count = sum(len(u.flows) for u in self.unavailable)
            lead = f"{count} of its {self.flows} flows did not run here: "
        return lead + " · ".join(parts)

    def _not_run_words(self) -> str:
        reasons = [reason for reason, _ in self.not_run_reasons.most_common(NOT_RUN_REASONS)]
        more = len(self.not_run_reasons) - len(reasons)
        said = "; ".join(reasons) + (f"; {more} more" if more else "")
        return (f"{self.not_run} of its {plural(self.tests, 'test')} lowered but did not run "
                f"here (lowered_not_run)" + (f": {said}" if said else ""))

    def line(self) -> str:
        """The whole note in one line (no markup): what did not run, why, how to enable."""
        parts = []
        if self.unavailable:
            parts.append(self._unavailable_words())
        if self.not_run:
            parts.append(self._not_run_words())
        return " · ".join(parts)

    def short(self, limit: int = SHORT_NOTE) -> str:
        return shorten(self.line(), limit)


def _flows(names: list[str]) -> str:
    return ", ".join(names)


def backend_notes(merged: Merged, rows: list[FlowRow]) -> list[BackendNote]:
    """One note per backend that has something to say, in the rows' order."""
    notes: dict[str, BackendNote] = {}
    for row in rows:
        if row.backend is None:
            continue
        note = notes.setdefault(row.backend, BackendNote(row.backend, 0, 0))
        note.flows += 1
        note.tests += row.total
        note.not_run += row.counts[Status.LOWERED_NOT_RUN]
        if row.unavailable:
            reason = "; ".join(row.unavailable)
            group = next((u for u in note.unavailable if u.reason == reason), None)
            if group is None:
                group = Unavailable(reason)
                note.unavailable.append(group)
            group.flows.append(row.flow or "(no flow)")
            group.tests += row.total
            if row.enable_hint:
                group.hints.setdefault(row.enable_hint, []).append(row.flow or "(no flow)")
    for result in merged.results:
        if result.status is Status.LOWERED_NOT_RUN and result.backend in notes:
            reasons = {r.error for r in result.records
                       if r.status is Status.LOWERED_NOT_RUN and r.error}
            notes[result.backend].not_run_reasons.update(reasons)
    return [note for note in notes.values() if note.unavailable or note.not_run]
