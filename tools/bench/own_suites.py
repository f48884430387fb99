"""The benchmark's optional parts, on our own operator modules: the XNNPACK flows one by
one and together, what localization costs, what a runner adds (`make bench` runs them
unless `--skip` names them)."""

from __future__ import annotations

import argparse
import os
from collections import Counter

from tabulate import tabulate

from etsuite.backends.harness.contract.report import records_of_test
from etsuite.tools.bench.inner_loop import XNNPACK_FLOWS
from etsuite.tools.bench.measured_run import MeasuredRun, median, run_pytest
from etsuite.tools.bench.measured_run import progress as _progress

LOCALIZE_MODES = ("off", "undeclared", "all")


def localization_table(modules: list[str], flows: list[str], options: argparse.Namespace,
                       scratch: str) -> str:
    """Our modules under each --localize mode, alternating (`--repeat`): wall time, and
    per localized failure its seconds. `off` against `undeclared` (the default) is the
    cost of a run whose failures are all declared (the backend's expectations name them),
    which should be none; `all` localizes the declared failures too, which is what one
    failure costs."""
    if not modules:
        return "- none of the selected modules exists in backends/suite/operators"
    args = [*modules, *(a for flow in flows for a in ("--flow", flow)), "-n", options.workers]
    runs: dict[str, list[MeasuredRun]] = {mode: [] for mode in LOCALIZE_MODES}
    for repeat in range(max(options.repeat, 1)):
        for mode in LOCALIZE_MODES:
            _progress(f"localize {mode}, run {repeat + 1}")
            runs[mode].append(run_pytest(f"localize-{mode}-{repeat}",
                                         [*args, "--localize", mode], scratch))
    rows = []
    for mode, done in runs.items():
        found = [record["localization"] for test in done[-1].tests
                 for record in records_of_test(test) if record.get("localization")]
        seconds = [f.get("seconds", 0.0) for f in found]
        localized = sum(1 for f in found if f.get("localized"))
        rows.append([mode, len(done[-1].tests), median([r.wall_s for r in done]),
                     f"{localized} of {len(found)}",
                     f"{median(seconds):.2f}" if seconds else "",
                     f"{max(seconds):.2f}" if seconds else ""])
    off, default = (median([r.wall_s for r in runs[m]]) for m in ("off", "undeclared"))
    table = tabulate(rows, headers=["--localize", "tests", "wall s (median)",
                                    "failures localized", "s per failure (median)",
                                    "s per failure (max)"],
                     floatfmt=".1f", tablefmt="github")
    return (f"{table}\n\n- default (undeclared) over off: {default / off:.3f} "
            f"(failures localized by default: only those no entry declares)")


# The runners timed against in-process execution: each kind with its resident agent
# (remote/resident.py) and without (a new agent per program).
RUNNER_SPECS = ("process?resident=no", "process", "native?resident=no", "native")
RUNNER_TARGET_MS = {"process": 50, "native": 50, "ssh": 150}


def runner_table(modules: list[str], options: argparse.Namespace, scratch: str) -> str:
    """Our modules on the xnnpack flow in process, then through each runner: wall time,
    and per subtest what the runner added, from the records: the exchange's time beyond
    the program's own load and run (`transfer`, plus the agent's `startup`)."""
    if not modules:
        return "- none of the selected modules exists in backends/suite/operators"
    specs = ["", *RUNNER_SPECS,
             *(f"{spec}{'&' if '?' in spec else '?'}{extra}" for spec in options.ssh
               for extra in ("resident=no", "resident=yes"))]
    rows: list[list] = []
    lines: list[str] = []
    for spec in specs:
        # (an ssh spec's config and python options would fill the table)
        label = (spec.partition("?")[0] + ("?resident=no" if "resident=no" in spec else "")) \
            if spec else "in process"
        _progress(f"runner {label}")
        run = run_pytest(f"runner-{len(rows)}", [*modules, "--flow", "xnnpack", "-n",
                                                 options.workers,
                                                 *(["--runner", f"xnnpack={spec}"] if spec else [])],
                         scratch)
        records = [r for test in run.tests for r in records_of_test(test)]
        added = sorted(1000 * (r["timings"].get("transfer", 0.0) + r["timings"].get("startup", 0.0))
                       for r in records if spec and "transfer" in (r.get("timings") or {}))
        statuses = Counter(r["status"] for r in records)
        p90 = added[min(len(added) - 1, int(0.9 * len(added)))] if added else None
        rows.append([label, len(records), f"{run.wall_s:.1f}",
                     f"{median(added):.1f}" if added else "", f"{p90:.1f}" if p90 else "",
                     ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))])
        kind = spec.split(":", 1)[0].partition("?")[0]
        if added and "resident=no" not in spec and kind in RUNNER_TARGET_MS:
            target = RUNNER_TARGET_MS[kind]
            verdict = "within" if median(added) <= target else "over"
            lines.append(f"- {label}: {median(added):.1f} ms added per subtest (median), "
                         f"{verdict} the target of {target} ms")
    table = tabulate(rows, headers=["runner", "subtests", "wall s", "added ms (median)",
                                    "added ms (p90)", "statuses"], tablefmt="github")
    return table + ("\n\n" + "\n".join(lines) if lines else "")


def own_modules(names: list[str], options: argparse.Namespace) -> list[str]:
    """Our operator modules of the same names (the folder with --full)."""
    if options.full:
        return ["backends/suite/operators"]
    return [os.path.join("backends", "suite", "operators", name) for name in names
            if os.path.exists(os.path.join("backends", "suite", "operators", name))]


def own_suites_table(names: list[str], options: argparse.Namespace, scratch: str) -> str:
    """Our modules of the same names (every module with --full), timed per XNNPACK flow."""
    modules = own_modules(names, options)
    if not modules:
        return "- none of the selected modules exists in backends/suite/operators"
    rows, walls = [], []
    for flow in XNNPACK_FLOWS:
        run = run_pytest(f"own-{flow}", [*modules, "--flow", flow, "-n", options.workers], scratch)
        rows.append([flow, len(run.tests), run.wall_s])
        walls.append(run.wall_s)
        _progress(f"own modules, {flow}: {run.wall_s:.0f} s")
    # The four flows in one run, as `make test-xnnpack` runs them: start-up, collection
    # and warm-up are paid once, not once per flow as in the sum of the rows above.
    flow_options = [option for flow in XNNPACK_FLOWS for option in ("--flow", flow)]
    together = run_pytest("own-all", [*modules, *flow_options, "-n", options.workers], scratch)
    _progress(f"own modules, four flows in one run: {together.wall_s:.0f} s")
    fp32, total = walls[0], sum(walls)
    table = tabulate(rows, headers=["flow", "tests", "wall s"], floatfmt=".1f", tablefmt="github")
    return (f"{table}\n\n- modules: {', '.join(os.path.basename(m) for m in modules)}\n"
            f"- the four flows in one run: {len(together.tests)} tests, {together.wall_s:.0f} s = "
            f"{together.wall_s / fp32:.2f}x the fp32 flow alone (target < 2x); run one by one "
            f"they took {total:.0f} s = {total / fp32:.2f}x")
