"""`python -m etsuite.tools.report.summary INPUTS... --output FILE`: merge JSON reports and results
streams into one markdown summary; with `--page FILE`, also (or only) the HTML page of the
support matrix (`tools/report/page.py`), with its history from `--baseline` and `--history`.

Exit codes say what a CI job needs to know: 0 done, 1 the `--fail-on` condition holds
(so a job is a gate or a scoreboard on purpose, never by accident), 2 bad input or
usage. On bad input nothing is written; outputs are written to a temporary file and
renamed, so a reader never sees half a summary.

Runs in a light environment (tabulate only): nothing here imports torch or executorch.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from etsuite.tools.files import write_atomically
from etsuite.tools.report import classify, loading, markdown, page
from etsuite.tools.report.baseline_diff import Changes, compare
from etsuite.tools.report.drift import METRIC_NAMES
from etsuite.tools.report.formatting import plural
from etsuite.tools.report.sections.baseline import HistoryPoint, started
from etsuite.tools.report.sharded_runs import missing_shards
from etsuite.tools.report.size_limit import Section, assemble, fit, parse_size

DEFAULT_INPUT = "reports"
DEFAULT_SIZE_LIMIT = 900 * 1024
# GitHub refuses a step summary over 1 MiB; what the step already wrote counts too.
STEP_SUMMARY_LIMIT = 1024 * 1024
EXIT_OK, EXIT_FAIL_ON, EXIT_BAD_INPUT = 0, 1, 2
# What --fail-on can name: the run's own failures, the status regressions since the
# baseline (with lost delegation), and each metric whose drift gates (drift.METRICS).
GATES = ("never", "failures", "regressions", *METRIC_NAMES)
NEEDS_BASELINE = frozenset(GATES) - {"never", "failures"}
NAMED_IN_FAILURE = 10    # node ids a failed gate names on stderr


def _gates_arg(text: str) -> list[str]:
    """A comma list of gates, each known; `never` only alone."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in GATES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown gate {', '.join(map(repr, unknown)) or repr(text)}; "
            f"choose from {', '.join(GATES)} (a comma list, e.g. regressions,size,runtime)")
    if "never" in names and len(names) > 1:
        raise argparse.ArgumentTypeError("'never' gates nothing: it cannot be combined")
    return list(dict.fromkeys(names))


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class _OldName(argparse.Action):
    """An option's old name, kept for one release: it does what the new name does and
    says on stderr that it is going."""

    def __init__(self, option_strings: Sequence[str], dest: str, new_name: str,
                 **kwargs: Any) -> None:
        self.new_name = new_name
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        sys.stderr.write(f"summary: {option_string} is deprecated and goes in the next "
                         f"release: use {self.new_name}\n")
        setattr(namespace, self.dest, values)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.tools.report.summary",
        description="Merge pytest-json-report files and results streams (*.partial.jsonl) "
                    "into one markdown summary.")
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help=f"report files, globs or folders (default: {DEFAULT_INPUT}/)")
    parser.add_argument("--output", metavar="FILE",
                        help="write the summary here (default: standard output); when it is "
                             "cut to the size limit, the full version goes beside it "
                             "(summary.md -> summary.full.md)")
    parser.add_argument("--baseline", nargs="+", action="extend", default=[], metavar="OLD",
                        help="reports of an earlier run (files, globs, folders), given "
                             "after the inputs: adds regressions, lost delegation, fixes, new and "
                             "removed tests, and each subtest's metric drift")
    parser.add_argument("--fail-on", type=_gates_arg, default=["never"], metavar="GATES",
                        help="exit 1 when any of these comma-separated gates holds: never "
                             "(a scoreboard; default); failures (any failing test, an "
                             "incomplete run or a missing shard); regressions (a test that "
                             "passed in the baseline fails now, or lost its delegation); "
                             f"{', '.join(METRIC_NAMES)} (that metric of a subtest got "
                             "1.25x worse or more beyond its noise floor). All but never "
                             "and failures need --baseline")
    parser.add_argument("--size-limit", type=_size_arg, default=DEFAULT_SIZE_LIMIT,
                        metavar="SIZE", help="largest summary, e.g. 900KiB (default), 1MiB, "
                                             "50000; long sections are cut beyond it")
    # "budget" is a backend's cost limit (budgets.toml); the size's old name, for one release
    parser.add_argument("--budget", dest="size_limit", type=_size_arg, action=_OldName,
                        new_name="--size-limit", metavar="SIZE", help=argparse.SUPPRESS)
    parser.add_argument("--page", metavar="HTML",
                        help="also write the support matrix as one self-contained HTML page "
                             "(e.g. reports/index.html); without --output, only the page")
    parser.add_argument("--history", metavar="FOLDER",
                        help="earlier runs for the page's history: one subfolder of reports, "
                             "or one report file, per run (the baseline, if given, is one more)")
    parser.add_argument("--title", default=markdown.DEFAULT_TITLE, help="the summary's heading")
    parser.add_argument("--slowest", type=int, default=10, metavar="N",
                        help="how many of the slowest tests to list (default 10)")
    return parser


def full_path_for(output: str) -> str:
    base, extension = os.path.splitext(output)
    return f"{base}.full{extension or '.md'}"


def append_step_summary(path: str, sections: list[Section], size_limit: int, text: str) -> None:
    """Append to $GITHUB_STEP_SUMMARY, re-fitted to the room the step has left."""
    used = os.path.getsize(path) if os.path.exists(path) else 0
    room = STEP_SUMMARY_LIMIT - used - 1
    if room < 1024:
        sys.stderr.write(f"summary: {path} is full; the summary was not appended\n")
        return
    if room < size_limit:
        text, _ = fit(sections, room, None)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text + "\n")


def gate_failures(gate: str, merged: loading.Merged, changes: Changes | None) -> list[str]:
    """What makes one gate hold: the node ids (or runs) it names; empty when it passes."""
    if gate == "failures":
        found = [r.nodeid for r in merged.results if r.status in classify.FAILING]
        found += [f"{run.path} (incomplete)" for run in merged.incomplete]
        return found + missing_shards(merged.runs)
    if changes is None or gate == "never":
        return []
    if gate == "regressions":
        return [c.nodeid for c in changes.regressions] + changes.delegation_regressions()
    return list(dict.fromkeys(f"{d.result.nodeid} (subtest {d.subtest})"
                              for d in changes.drift if d.metric == gate and d.worse))


def exit_code(fail_on: list[str], merged: loading.Merged, changes: Changes | None) -> int:
    """1 when any gate holds, each holding gate said on stderr with what it found."""
    code = EXIT_OK
    for gate in fail_on:
        found = gate_failures(gate, merged, changes)
        if found:
            code = EXIT_FAIL_ON
            more = f", +{len(found) - NAMED_IN_FAILURE} more" if len(found) > NAMED_IN_FAILURE else ""
            sys.stderr.write(f"summary: --fail-on {gate}: {plural(len(found), 'finding')}: "
                             f"{', '.join(found[:NAMED_IN_FAILURE])}{more}\n")
    return code


def load_history(folder: str | None, baseline: loading.Merged | None) -> list[HistoryPoint]:
    """The earlier runs of the page's history, oldest first: each entry of the folder
    in the order the runs started, then the baseline (the run this one is compared with)."""
    points = [HistoryPoint(name, loading.load_all(paths))
              for name, paths in (loading.history_inputs(folder) if folder else [])]
    points.sort(key=lambda point: (started(point.merged) is None,
                                   started(point.merged) or 0.0))
    if baseline is not None:
        points.append(HistoryPoint("baseline", baseline))
    return points


def write_markdown(args: argparse.Namespace, merged: loading.Merged,
                   changes: Changes | None) -> str:
    """Write the summary where --output says (or print it); returns what the closing
    line says about where it went."""
    link_from = os.path.dirname(os.path.abspath(args.output)) if args.output else os.getcwd()
    sections = markdown.build(merged, changes,
                              markdown.Options(args.title, args.slowest, link_from))
    full_path = full_path_for(args.output) if args.output else None
    text, cut = fit(sections, args.size_limit, os.path.basename(full_path) if full_path else None)
    if full_path is not None:  # there is an --output
        write_atomically(args.output, text)
        if cut:
            write_atomically(full_path, assemble(sections))
        elif os.path.exists(full_path):
            os.remove(full_path)  # a stale full version would contradict this summary
    else:
        sys.stdout.write(text)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        append_step_summary(step_summary, sections, args.size_limit, text)
    return f" -> {args.output}" + (f" (cut; full: {full_path})" if cut else "") if args.output else ""


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    needing = [gate for gate in args.fail_on if gate in NEEDS_BASELINE]
    if needing and not (args.baseline or args.history):
        parser.error(f"--fail-on {','.join(needing)} needs --baseline (or --history)")
    if args.history and not args.page:
        parser.error("--history is shown on the page: it needs --page")
    try:
        merged = loading.load_all(loading.expand_inputs(args.inputs or [DEFAULT_INPUT]))
        baseline = loading.load_all(loading.expand_inputs(args.baseline)) if args.baseline else None
        history = load_history(args.history, baseline)
    except loading.BadInput as error:
        sys.stderr.write(f"summary: error: {error}\n")
        return EXIT_BAD_INPUT
    if baseline is None and history:
        baseline = history[-1].merged  # the changes are those since the last run
    changes = compare(merged, baseline) if baseline is not None else None
    where = ""
    try:
        if args.page:
            title = page.DEFAULT_TITLE if args.title == markdown.DEFAULT_TITLE else args.title
            write_atomically(args.page, page.build(merged, changes, history, title))
            where += f" -> {args.page}"
        if args.output or not args.page:
            where += write_markdown(args, merged, changes)
    except OSError as error:
        sys.stderr.write(f"summary: error: cannot write {error.filename}: {error.strerror}\n")
        return EXIT_BAD_INPUT
    for line in missing_shards(merged.runs):
        sys.stderr.write(f"summary: {line}\n")
    failing = sum(1 for r in merged.results if r.status in classify.FAILING)
    sys.stderr.write(f"summary: {plural(len(merged.results), 'test')}, {failing} failing, "
                     f"{plural(len(merged.runs), 'run')}{where}\n")
    return exit_code(args.fail_on, merged, changes)


if __name__ == "__main__":
    sys.exit(main())
