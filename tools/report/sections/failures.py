"""Failures: one block per failing test, each failing subtest with its status, stage,
where it breaks and its error, the artifact folders, the minimal repros, and the command
that reproduces it."""

from __future__ import annotations

import os

from etsuite.backends.harness.contract.record import trim_error, where_it_breaks
from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, fenced, plural
from etsuite.tools.report.loading import TestResult
from etsuite.tools.report.sections import where
from etsuite.tools.report.sections.common import NO_FLOW
from etsuite.tools.report.size_limit import Section

ERROR_SHOWN = 800        # characters of an error shown in a failure block


def markdown(failing: list[tuple[TestResult, list[tally.Failure]]], link_from: str = ".",
             places: where.Places | None = None) -> list[Section]:
    def render(items: list) -> tuple[str, list[str]]:
        return "", [failure_block(number, result, found, link_from, places)
                    for number, (result, found) in enumerate(items, 1)]

    intro = (f"{plural(len(failing), 'failing test')}, each with the command that reproduces "
             f"it (paste it at the repository root).") if failing else ""
    return [Section(heading="## Failures\n", intro=intro, items=failing, render_items=render,
                   empty="No failures.\n", unit="failing tests")]


def artifact_links(result: TestResult, link_from: str) -> str:
    """Links to the subtests' artifact folders, relative to the summary's folder."""
    links = [f"[subtest {r.subtest}]({os.path.relpath(r.artifacts, link_from)})"
             for r in result.records if r.artifacts]
    return f"\nArtifacts (.pte, inputs, eager and runtime outputs): {', '.join(links)}\n" \
        if links else ""


def repro_lines(result: TestResult) -> str:
    """The minimal repros of a test's localized failures (case/repro.py), if any."""
    lines = []
    for record in result.records:
        repro = (record.localization or {}).get("repro") or {}
        if repro.get("folder"):
            reproduces = repro.get("reproduces")
            alone = "still fails alone" if reproduces is True else \
                f"passes alone ({repro.get('status')}): it fails only in its context" \
                if reproduces is False else f"could not be run alone ({repro.get('status')})"
            lines.append(f"\nMinimal repro of subtest {record.subtest}, {code(repro['op'])} "
                         f"{alone}:\n" + fenced(f"{repro['folder']}/repro.py", "text"))
            window = repro.get("subgraph") or {}
            if window.get("folder"):
                lines.append(f"\nThe smallest window of the graph that still fails: "
                             f"{window['nodes']} nodes, {code(window['first'])} to "
                             f"{code(window['last'])}:\n"
                             + fenced(f"{window['folder']}/subgraph.py", "text"))
    return "".join(lines)


def failure_block(number: int, result: TestResult, found: list[tally.Failure], link_from: str = ".",
                  places: where.Places | None = None) -> str:
    where = f"flow {code(result.flow)} ({result.backend})" if result.flow else NO_FLOW
    flaky = " · **flaky** (passed when run again)" if tally.is_flaky(result) else ""
    lines = [f"**{number}. {code(result.nodeid)}** · {where} · {result.status}{flaky} · "
             f"run {code(result.run.path)}\n"]
    for failure in found:
        subtest = f"subtest {failure.subtest}: " if failure.subtest is not None else ""
        stage = f" at {failure.stage}" if failure.stage else ""
        place = where_it_breaks(failure.localization)
        at = f", breaks at {code(place)}" if place else ""
        also = places.also_as_operator_test(failure) if places else []
        at += f"; also fails as an operator test: {_tests(also)}" if also else ""
        lines.append(f"\n{subtest}{failure.status}{stage}{at}\n")
        lines.append(fenced(trim_error(failure.error or "(no error text)", ERROR_SHOWN), "text"))
    lines.append(artifact_links(result, link_from))
    lines.append(repro_lines(result))
    lines.append("\nRepro:\n" + fenced(tally.repro(result), "sh") + "\n")
    return "".join(lines)


def _tests(results: list[TestResult]) -> str:
    return ", ".join(code(tally.test_name(r)) for r in results)
