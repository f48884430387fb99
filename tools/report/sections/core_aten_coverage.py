"""Core ATen coverage: per flow, how many of the core ATen overloads the lowered graphs of
operator tests held, how many a delegate took, which only model tests hold and which no
test holds. In the summary and on the page; mapping record ops to core overloads, and
the list of core overloads, are `tools/report/core_aten.py`."""

from __future__ import annotations

from dataclasses import dataclass, field

from etsuite.tools.report import core_aten as core_aten_ops
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, table
from etsuite.tools.report.loading import Merged
from etsuite.tools.report.sections.common import flow_label
from etsuite.tools.report.size_limit import Section


@dataclass
class CoreAtenRow:
    """Per flow, which of the `total` core ATen overloads its lowered graphs held: per
    overload, the op-level test cases that held it (operators and generated suites),
    those of them where a delegate took it, and the cases of other suites (models,
    examples, ...)."""

    backend: str | None
    flow: str | None
    core: frozenset
    operator_cases: dict = field(default_factory=dict)   # overload -> {test case}
    delegated_cases: dict = field(default_factory=dict)  # overload -> {test case}
    other_cases: dict = field(default_factory=dict)      # overload -> {test case}

    @property
    def total(self) -> int:
        return len(self.core)

    @property
    def covered(self) -> list[str]:
        return sorted(self.operator_cases)

    @property
    def only_in_models(self) -> list[str]:
        return sorted(set(self.other_cases) - set(self.operator_cases))

    @property
    def uncovered(self) -> list[str]:
        return sorted(self.core - set(self.operator_cases) - set(self.other_cases))

    @property
    def delegated(self) -> list[str]:
        """Covered overloads a delegate took in at least one operator test case."""
        return sorted(self.delegated_cases)


def core_aten(merged: Merged, order: list[tally.FlowKey]) -> list[CoreAtenRow]:
    """Core ATen coverage per flow, over the subtests that got as far as lowering; empty
    when no run's facts name the core overloads (reports older than the key)."""
    core = core_aten_ops.denominator(merged.runs)
    if core is None:
        return []
    rows = {key: CoreAtenRow(key[0], key[1], core) for key in order}
    lowered: set = set()
    for result in merged.results:
        row = rows[tally.flow_key(result)]
        for record in result.records:
            if record.delegated_nodes is None:
                continue
            lowered.add(tally.flow_key(result))
            held, delegated = core_aten_ops.ops_of_record(record, core)
            operators = record.suite in core_aten_ops.OPERATOR_SUITES
            for op in held:
                table = row.operator_cases if operators else row.other_cases
                table.setdefault(op, set()).add(record.test_case)
            for op in delegated if operators else ():
                row.delegated_cases.setdefault(op, set()).add(record.test_case)
    return [row for key, row in rows.items() if key in lowered]


def markdown(merged: Merged, order: list[tally.FlowKey]) -> list[Section]:
    """Per flow, N of M core ATen overloads held by the lowered graphs of operator tests
    (`core_aten`), then each overload some flow's operator tests miss, cuttable.
    Absent when no report names the core overloads (an older harness wrote them)."""
    rows = core_aten(merged, order)
    if not rows:
        return []
    total = rows[0].total
    portable_only = tally.non_delegating(merged)

    def figures(items: list) -> tuple[str, list[str]]:
        return table(["backend", "flow", "core ATen ops covered", "delegated in a case",
                      "only in model tests", "not covered"], [
            [row.backend, flow_label(row.flow), f"{len(row.covered)} of {row.total}",
             "–" if row.flow in portable_only else len(row.delegated),
             len(row.only_in_models), len(row.uncovered)]
            for row in items])

    def missing_in(op: str) -> tuple[list[str], list[str]]:
        nowhere = [flow_label(r.flow) for r in rows if op not in r.operator_cases
                   and op not in r.other_cases]
        models = [flow_label(r.flow) for r in rows if op in r.other_cases
                  and op not in r.operator_cases]
        return nowhere, models

    def flows_words(names: list[str]) -> str:
        return "every flow" if len(names) == len(rows) and len(rows) > 1 else \
            ", ".join(names) or "–"

    missing = sorted({op for row in rows for op in (*row.uncovered, *row.only_in_models)})

    def listing(items: list) -> tuple[str, list[str]]:
        return table(["core ATen op", "no test holds it in", "only model tests hold it in"],
                     [[code(op), *(flows_words(names) for names in missing_in(op))]
                      for op in items])

    intro = (f"Of the {total} overloads the installed torch tags core ATen (`torch.Tag.core`, "
             "from the reports' facts), those the lowered graphs of operator tests held, "
             "per flow, counted after partitioning (a view's `_copy` and ExecuTorch's dim "
             "order ops count as the core op they replace); delegated in a case: a "
             "delegate took it in at least one operator test. `backends/suite/core_aten.toml` "
             "says why each one no operator test covers is left out.\n\n")
    return [Section(heading="## Core ATen coverage\n", intro=intro, items=rows,
                    render_items=figures, unit="flows"),
            Section(heading="## Core ATen ops no operator test covers\n", items=missing,
                    render_items=listing, unit="ops",
                    empty="Every core ATen op is held by an operator test in every flow.\n")]


def page(merged: Merged, order: list[tally.FlowKey],
         flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """Core ATen coverage per flow (`core_aten`, as the summary's section): its
    total, and per flow [flow, covered: [[overload, operator test cases, of them
    delegated]], delegated in a case (None: the flow delegates nothing), only in model
    tests, the uncovered overloads]. None when no report names the core overloads (the
    section is not shown)."""
    rows = core_aten(merged, order)
    if not rows:
        return None
    portable_only = tally.non_delegating(merged)
    return {"total": rows[0].total,
            "flows": [[flow_index[(row.backend, row.flow)],
                       [[op, len(row.operator_cases[op]), len(row.delegated_cases.get(op, ()))]
                        for op in row.covered],
                       None if row.flow in portable_only else len(row.delegated),
                       row.only_in_models, row.uncovered] for row in rows]}
