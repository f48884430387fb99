"""Benchmark: the same test cases through ExecuTorch's own suite and through ours, on the
same machine in one run, so that the printed ratios compare like with like.

    make bench                                  # default selection, a few minutes
    make bench ARGS="--full"                    # every operator module of the wheel's suite
    python -m etsuite.tools.bench.benchmark --ops add,linear --flows xnnpack --repeat 3

- reference: operator modules of the suite in the installed `executorch` wheel
  (`executorch/backends/test/suite/operators`), run under that suite's own conftest;
- ours: the very same files, copied into a temporary folder with only their import lines
  pointed at our shim (`etsuite.backends.harness.case.shim`), run under our plugin, cold (a new
  interpreter per run, as the reference) and, unless `--no-warm`, through a private warm
  process started before the timed runs (`--warm`, backends/harness/warm/server.py).
The two runs must collect the same test ids (else the benchmark stops), and the verdicts
are compared case by case, so a speed-up cannot come from running less or judging
differently. The runs alternate (`--repeat`), and medians of wall and CPU time are
printed with the peak memory per pytest worker. Then, for ours: the time per pipeline
stage, collection of one backend against `import torch`, parallel efficiency
T(-n 1) / (2 T(-n 2)), and our own operator modules of the same names timed per XNNPACK
flow (every module with --full), with the four flows' cost over the fp32 flow's.
Exit status 1 when the test ids differ; the ratios are reported, never asserted.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

from tabulate import tabulate

from etsuite.backends.harness.contract.record import SubtestRecord
from etsuite.backends.harness.contract.report import records_of_test
from etsuite.backends.harness.contract.statuses import STAGES
from etsuite.tools.bench.figures import LOG as FIGURES_LOG
from etsuite.tools.bench.figures import OUTPUT as FIGURES_OUTPUT
from etsuite.tools.bench.figures import Figures, LogError
from etsuite.tools.bench.figures import check as compare_figures
from etsuite.tools.bench.inner_loop import PrivateWarm, inner_loop
from etsuite.tools.bench.measured_run import MeasuredRun, case_key, median, run_pytest
from etsuite.tools.bench.measured_run import progress as _progress
from etsuite.tools.bench.own_suites import localization_table, own_modules, own_suites_table, runner_table
from etsuite.tools.bench.phases import phase_table

DEFAULT_OPS = ("add", "linear", "conv2d", "relu", "cat")
DEFAULT_FLOWS = ("xnnpack", "xnnpack_static_int8_per_tensor")
SHIM = "etsuite.backends.harness.case.shim"
# The import lines of the wheel's operator modules and what they become for ours.
IMPORT_REWRITES = (
    (re.compile(r"^from executorch\.backends\.test\.suite\.operators import", re.M),
     f"from {SHIM} import"),
    (re.compile(r"^from executorch\.backends\.test\.suite\.flow import", re.M),
     f"from {SHIM} import"),
)


def upstream_operators_dir() -> str:
    """Where the executorch wheel keeps its own operator suite (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("benchmark: executorch is not installed in this environment "
                 "(run it through `make bench`, which uses a tox env that has it)")
    folder = os.path.join(list(spec.submodule_search_locations)[0], "backends", "test", "suite",
                          "operators")
    if not os.path.isdir(folder):
        sys.exit(f"benchmark: this executorch wheel has no operator suite at {folder}")
    return folder


def copy_with_our_imports(sources: list[str], folder: str) -> list[str]:
    """Copy the wheel's modules, changing only their import lines; refuse a module that
    imports anything else of the wheel's suite (it would not be the same test here)."""
    os.makedirs(folder, exist_ok=True)
    copies = []
    for source in sources:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
        for pattern, replacement in IMPORT_REWRITES:
            text = pattern.sub(replacement, text)
        leftover = re.search(r"^\s*(from|import) executorch\.backends\.test\.suite.*$", text, re.M)
        if leftover:
            sys.exit(f"benchmark: {source} imports {leftover.group(0).strip()!r}, "
                     f"which the shim does not provide")
        target = os.path.join(folder, os.path.basename(source))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        copies.append(target)
    return copies


def stage_fractions(run: MeasuredRun) -> dict[str, float]:
    """Share of the pipeline's time per stage over all of our records."""
    totals = {stage: 0.0 for stage in STAGES}
    for test in run.tests:
        for raw in records_of_test(test):
            record = SubtestRecord.from_dict(raw)
            for stage, seconds in (record.timings or {}).items():
                totals[stage] = totals.get(stage, 0.0) + seconds
    whole = sum(totals.values()) or 1.0
    return {stage: seconds / whole for stage, seconds in totals.items() if seconds}


def compare_flow(flow: str, upstream: list[str], ours: list[str], workers: str, repeat: int,
                 scratch: str, warm: PrivateWarm | None
                 ) -> tuple[list[MeasuredRun], list[MeasuredRun], list[MeasuredRun]]:
    """Alternate the reference, ours and (with `warm`) ours through the warm process
    `repeat` times on the same modules and flow."""
    reference_runs, our_runs, warm_runs = [], [], []
    for attempt in range(repeat):
        reference_runs.append(run_pytest(
            f"reference-{flow}-{attempt}",
            # The wheel's suite brings its own conftest and fixture; ours stays out.
            [*upstream, "-m", f"flow_{flow}", "-p", "no:etsuite", "-o", "addopts=", "-n", workers],
            scratch))
        our_runs.append(run_pytest(f"ours-{flow}-{attempt}",
                                   [*ours, "--flow", flow, "-n", workers], scratch))
        if warm:
            warm_runs.append(run_pytest(f"warm-{flow}-{attempt}",
                                        [*ours, "--flow", flow, "-n", workers], scratch, warm))
        _progress(f"{flow}: run {attempt + 1}/{repeat}: reference {reference_runs[-1].wall_s:.0f} s, "
                  f"ours {our_runs[-1].wall_s:.0f} s"
                  + (f", ours warm {warm_runs[-1].wall_s:.0f} s" if warm else ""))
    return reference_runs, our_runs, warm_runs


def start_warm(ours: list[str], flows: list[str], scratch: str) -> PrivateWarm:
    """A private warm process, started and warmed by an untimed collection, so that the
    timed warm runs measure a warm process (its start is the inner-loop benchmark's
    subject, not this one's)."""
    warm = PrivateWarm()
    flow_options = [option for flow in flows for option in ("--flow", flow)]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--collect-only", *ours, *flow_options, "--warm"],
                          capture_output=True, text=True, env=warm.env)
    warm.note_run()
    if warm.server is None:
        warm.stop()
        sys.exit(f"benchmark: the warm process did not start (exit {done.returncode}):\n"
                 f"{done.stderr[-3000:]}")
    _progress(f"warm process {warm.server} started and warmed in {time.monotonic() - started:.0f} s")
    return warm


def parallel_bound_line(single: MeasuredRun, parallel: MeasuredRun) -> str:
    """What start-up allows: the one-process run spends F1 before its first test and
    W = T1 - F1 on tests; under -n 2 each worker pays its own start-up F2 before sharing
    W, so T2 >= F2 + W / 2 and T1 / (2 T2) <= T1 / (2 F2 + W), however well the tests are
    spread."""
    if not single.startup_s or not parallel.startup_s:
        return "- start-up not measured (no /proc): no bound given"
    work = max(single.wall_s - single.startup_s[0], 0.0)
    worker_startup = median(parallel.startup_s)
    bound = single.wall_s / (2 * worker_startup + work)
    line = (f"- of T(-n 0), {single.startup_s[0]:.1f} s is start-up before the first test and "
            f"{work:.1f} s the tests; under -n 2 each worker starts in {worker_startup:.1f} s "
            f"before sharing the tests, so T1 / (2 T2) can reach at most {bound:.2f} on this "
            f"selection (derived from these figures, not a measurement)")
    if single.wall_s / (2 * parallel.wall_s) > bound:
        line += ("; the measured value is above it, so the tests themselves took less time "
                 "under -n 2 than in the -n 0 run: single runs vary (about 15 % here)")
    return line


def verdict_agreement(reference: MeasuredRun, ours: MeasuredRun) -> tuple[int, list[str]]:
    theirs, mine = reference.verdicts, ours.verdicts
    differing = [f"{'::'.join(key[:2])}[{'-'.join(key[2])}]: "
                 f"reference {theirs[key]}, ours {mine.get(key, 'absent')}"
                 for key in sorted(theirs) if theirs[key] != mine.get(key)]
    return len(theirs) - len(differing), differing


def disagreement_groups(reference: MeasuredRun, ours: MeasuredRun) -> list[str]:
    """The differing verdicts counted by (reference, ours), with the statuses our records
    give them, so a difference in judging (the reference skips what failed for reasons it
    does not blame on the backend, and passes an undelegated program without running it)
    reads apart from a difference in running."""
    theirs, mine = reference.verdicts, ours.verdicts
    our_tests = {case_key(test["nodeid"]): test for test in ours.tests}
    tests_per_pair: Counter = Counter()
    statuses_per_pair: dict[tuple, Counter] = {}
    for key, their_verdict in theirs.items():
        pair = (their_verdict, mine.get(key, "absent"))
        if pair[0] != pair[1]:
            tests_per_pair[pair] += 1
            statuses_per_pair.setdefault(pair, Counter()).update(
                our_statuses(our_tests[key]) if key in our_tests else ["absent"])
    lines = []
    for (their_verdict, my_verdict), tests in tests_per_pair.most_common():
        detail = ", ".join(f"{status} {count}" for status, count
                           in statuses_per_pair[(their_verdict, my_verdict)].most_common())
        lines.append(f"reference {their_verdict}, ours {my_verdict}: {tests} tests "
                     f"(our subtests: {detail})")
    return lines


def our_statuses(test: dict) -> list[str]:
    """The status of each of our subtest records in a test's report entry."""
    return [record.get("status", "?") for record in records_of_test(test)] or [test["outcome"]]


def collection_times(repeat: int) -> tuple[float, float]:
    """Median seconds of `import torch` and of collecting one backend's suites."""
    torch_times, collect_times = [], []
    for _ in range(repeat):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        torch_times.append(time.monotonic() - started)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--collect-only", "--backend", "xnnpack", "-o",
                        "testpaths=backends/suite backends/xnnpack"],
                       check=True, capture_output=True)
        collect_times.append(time.monotonic() - started)
    return median(torch_times), median(collect_times)


def selection(options: argparse.Namespace, names: list[str], flows: list[str]) -> dict:
    """What a run measured, so that `--check` compares like with like."""
    return {"modules": names, "flows": flows, "workers": options.workers,
            "warm": not options.no_warm, "skip": sorted(
                part.strip() for part in options.skip.split(",") if part.strip())}


def report_figures(figures: Figures, check: bool) -> None:
    """The figures as a block for the measurements log and in reports/bench/; with
    `check`, against the last logged block of the same selection."""
    figures.write()
    print(f"\n## Figures (for docs/measurements.md; also in {FIGURES_OUTPUT})\n")
    print(figures.block())
    if check:
        print("\n## Against the last logged figures\n")
        try:
            print("\n".join(compare_figures(figures, FIGURES_LOG.read_text(encoding="utf-8"))))
        except (OSError, LogError) as error:
            print(f"- cannot compare: {error}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(DEFAULT_OPS),
                        help=f"operator modules (test_<op>.py), comma-separated "
                             f"(default {','.join(DEFAULT_OPS)})")
    parser.add_argument("--full", action="store_true", help="every operator module of the wheel's suite")
    parser.add_argument("--flows", default=",".join(DEFAULT_FLOWS),
                        help=f"flows compared with the reference (default {','.join(DEFAULT_FLOWS)})")
    parser.add_argument("-n", "--workers", default="2", help="xdist workers for every run (default 2)")
    parser.add_argument("--repeat", type=int, default=1, help="alternating runs per flow (default 1)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch folder (copied modules, JSON reports) and print its path")
    parser.add_argument("--inner-loop", action="store_true",
                        help="instead: a backend author's inner loop, cold and with the warm "
                             "process (tools/bench/inner_loop.py)")
    parser.add_argument("--inner-module", default="test_add.py", metavar="FILE",
                        help="the operator module of --inner-loop (default test_add.py)")
    parser.add_argument("--no-warm", action="store_true",
                        help="leave out the runs of ours through the warm process")
    parser.add_argument("--skip", default="",
                        help="parts to leave out: comma-separated of "
                             "collection,parallel,own,localize,runners")
    parser.add_argument("--check", action="store_true",
                        help="compare this run's figures with the last ones of the same selection "
                             "in docs/measurements.md and name what moved (tools/bench/figures.py)")
    parser.add_argument("--ssh", action="append", default=[], metavar="SPEC",
                        help="also time this ssh runner (e.g. ssh://127.0.0.1:2222) in the "
                             "runners part, resident and not")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    if options.inner_loop:
        print(f"# Inner loop: cold and warm, -n {options.workers} for the module runs\n")
        print(inner_loop(options.inner_module, options.workers, _progress))
        return 0
    upstream_dir = upstream_operators_dir()
    if options.full:
        upstream = sorted(glob.glob(os.path.join(upstream_dir, "test_*.py")))
    else:
        ops = [op.strip() for op in options.ops.split(",") if op.strip()]
        upstream = [os.path.join(upstream_dir, f"test_{op}.py") for op in ops]
        missing = [path for path in upstream if not os.path.exists(path)]
        if missing:
            sys.exit(f"benchmark: the wheel's suite has no module {', '.join(missing)}")
    flows = [flow.strip() for flow in options.flows.split(",") if flow.strip()]
    skip = {part.strip() for part in options.skip.split(",") if part.strip()}
    names = [os.path.basename(path) for path in upstream]
    print(f"# Benchmark: {len(names)} operator modules of the executorch wheel's suite, "
          f"-n {options.workers}, {options.repeat} alternating run(s) per flow\n")
    status = 0
    scratch = tempfile.mkdtemp(prefix="etsuite-bench-")
    warm = None
    try:
        ours = copy_with_our_imports(upstream, os.path.join(scratch, "operators"))
        warm = None if options.no_warm else start_warm(ours, flows, scratch)
        rows, agreement_lines, stage_rows, last_ours, last_warm = [], [], [], {}, {}
        values: dict[str, float] = {}  # the figures (tools/bench/figures.py)
        last_runs: list[tuple[str, list[MeasuredRun]]] = []
        for flow in flows:
            reference_runs, our_runs, warm_runs = compare_flow(
                flow, upstream, ours, options.workers, options.repeat, scratch, warm)
            theirs_ids = set(reference_runs[0].verdicts)
            mine_ids = set(our_runs[0].verdicts)
            if theirs_ids != mine_ids:
                status = 1
                agreement_lines.append(
                    f"- {flow}: DIFFERENT TEST IDS: only in the reference "
                    f"{sorted(theirs_ids - mine_ids)[:5]}, only in ours {sorted(mine_ids - theirs_ids)[:5]}")
            agreeing, differing = verdict_agreement(reference_runs[0], our_runs[0])
            agreement_lines.append(f"- {flow}: {len(theirs_ids)} tests; verdicts agree on {agreeing}, "
                                   f"differ on {len(differing)}")
            agreement_lines.extend(f"  - {line}" for line in
                                   disagreement_groups(reference_runs[0], our_runs[0]))
            agreement_lines.extend(f"  - e.g. {line}" for line in differing[:15])
            if warm_runs:
                same = warm_runs[0].verdicts == our_runs[0].verdicts
                agreement_lines.append(f"  - ours through the warm process: verdicts "
                                       f"{'identical to' if same else 'DIFFER from'} ours cold")
                if not same:
                    status = 1
            # (short name for the ratio rows, full label, runs)
            labelled = [("reference", "reference (executorch wheel suite)", reference_runs),
                        ("ours, cold", "ours, cold (a new interpreter, as the reference)", our_runs)]
            if warm_runs:
                labelled.append(("ours, warm process", "ours, warm process (`--warm`)", warm_runs))
            last_runs.extend((flow, runs) for _short, _label, runs in labelled)
            for _short, label, runs in labelled:
                rows.append([flow, label, len(runs[0].tests), median([r.wall_s for r in runs]),
                             median([r.cpu_s for r in runs]),
                             median([s for r in runs for s in r.startup_s]),
                             max((max(r.peak_rss_mb, default=0) for r in runs), default=0)])
            for short, _label, runs in labelled[1:]:
                wall, cpu = (median([getattr(r, name) for r in runs])
                             / median([getattr(r, name) for r in reference_runs])
                             for name in ("wall_s", "cpu_s"))
                rows.append([flow, f"ratio {short} / reference", "", wall, cpu, "", ""])
                values[f"{flow}: wall, {short} / reference"] = round(wall, 3)
            for short, _label, runs in labelled:
                values |= {f"{flow}, {short}: {phase} s": round(seconds, 2)
                           for phase, seconds in runs[-1].phases.items()}
            fractions = stage_fractions(our_runs[-1])
            stage_rows.append([flow] + [f"{100 * fractions.get(stage, 0):.0f}%" for stage in STAGES])
            last_ours[flow] = our_runs[-1]
            if warm_runs:
                last_warm[flow] = warm_runs[-1]
        print("## Identical cases\n")
        print(tabulate(rows, headers=["flow", "harness", "tests", "wall s (median)",
                                      "CPU s (median)", "start-up s per worker",
                                      "peak RSS per worker MB"],
                       floatfmt=".2f", tablefmt="github"))
        print("\n(start-up: from a worker process's start to its first test: interpreter, "
              "imports, collection and, for ours, the warm-up its forked test children inherit; "
              "through the warm process a worker is forked from it with torch, executorch and "
              "the warm-up already in memory, and its CPU includes the server's share; the "
              "reference has no such mode and always starts cold)")
        print("\n" + "\n".join(agreement_lines))
        print("\n## Where the wall time goes (seconds per phase, the last run of each)\n")
        print(phase_table([runs[-1].phase_row for _flow, runs in last_runs]))
        print("\n(start-up: the controller's start to the first test anywhere; controller "
              "ready: its imports and configuration; worker start: a worker's own start to its "
              "first test, median, collection part of it; tests: first start to last end; idle "
              "in tests: worker-seconds in that span without a test; session end: the last "
              "test's end to the controller's exit: reports, workers stopped)")
        print("\n## Where our time goes (share of pipeline time per stage)\n")
        print(tabulate(stage_rows, headers=["flow", *STAGES], tablefmt="github"))
        print("\n## Memory per worker (MB after the first and the last tenth of its tests)\n")
        for flow, run in last_ours.items():
            for samples in run.rss_samples:
                tenth = max(len(samples) // 10, 1)
                print(f"- {flow}: {max(samples[:tenth]):.0f} -> {max(samples[-tenth:]):.0f} "
                      f"over {len(samples)} tests")
        if "collection" not in skip:
            torch_s, collect_s = collection_times(2)
            print("\n## Collection of one backend\n")
            values["collection over import torch s"] = round(collect_s - torch_s, 2)
            print(f"- `import torch`: {torch_s:.2f} s; `pytest --backend xnnpack --collect-only`: "
                  f"{collect_s:.2f} s; difference {collect_s - torch_s:.2f} s (target: within 1.5 s)")
        if "parallel" not in skip and flows:
            one = run_pytest("ours-n1", [*ours, "--flow", flows[0], "-n", "0"], scratch)
            two = last_ours[flows[0]].wall_s
            values["parallel efficiency"] = round(one.wall_s / (2 * two), 3)
            print("\n## Parallel efficiency (ours)\n")
            print(f"- {flows[0]}: T(-n 0) {one.wall_s:.1f} s, T(-n 2) {two:.1f} s: "
                  f"T1 / (2 T2) = {one.wall_s / (2 * two):.2f} (target >= 0.85)")
            print(parallel_bound_line(one, last_ours[flows[0]]))
            print("\n" + phase_table([one.phase_row, last_ours[flows[0]].phase_row]))
            if warm and flows[0] in last_warm:
                one_warm = run_pytest("warm-n1", [*ours, "--flow", flows[0], "-n", "0"], scratch, warm)
                two_warm = last_warm[flows[0]].wall_s
                print(f"- {flows[0]} through the warm process: T(-n 0) {one_warm.wall_s:.1f} s, "
                      f"T(-n 2) {two_warm:.1f} s: T1 / (2 T2) = {one_warm.wall_s / (2 * two_warm):.2f}")
        if "own" not in skip:
            print("\n## Our own operator modules per XNNPACK flow\n")
            print(own_suites_table(names, options, scratch))
        if "localize" not in skip and flows:
            print("\n## What localization costs (our own operator modules, cold)\n")
            print(localization_table(own_modules(names, options), flows, options, scratch))
        if "runners" not in skip:
            print("\n## What a runner adds (our own operator modules, xnnpack flow)\n")
            print(runner_table(own_modules(names, options), options, scratch))
        report_figures(Figures(selection(options, names, flows), values), options.check)
    finally:
        if warm:
            warm.stop()
        if options.keep:
            _progress(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
