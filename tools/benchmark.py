"""Benchmark: seconds per subtest of this suite against the suite in the executorch wheel,
and of fork isolation against none, measured in one run on the same machine.

    python -m etsuite.tools.benchmark [--ops add,linear,conv2d,relu,cat] [--flow xnnpack] [-n 0]

Each configuration runs the operator modules of the same names in a fresh pytest
process (so every run pays its own imports), reads the subtest count from the JSON
report, and prints wall time per subtest and its ratio to the upstream suite. The case
sets differ between the suites, hence the per-subtest normalization.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from tabulate import tabulate

DEFAULT_OPS = "add,linear,conv2d,relu,cat"


def upstream_suite_dir() -> str:
    """Where the executorch wheel keeps its own operator suite (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("benchmark: executorch is not installed in this environment")
    return os.path.join(list(spec.submodule_search_locations)[0], "backends", "test", "suite",
                        "operators")


def run(label: str, args: list[str], report: str) -> dict:
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                "--json-report", f"--json-report-file={report}", *args],
                               capture_output=True, text=True)
    wall = time.monotonic() - started
    if not os.path.exists(report):
        sys.exit(f"benchmark: {label} wrote no report (exit {completed.returncode}):\n"
                 f"{completed.stdout[-2000:]}{completed.stderr[-2000:]}")
    with open(report, encoding="utf-8") as handle:
        tests = json.load(handle)["tests"]
    subtests = sum(len(t.get("metadata", {}).get("subtests", [])) or 1 for t in tests)
    return {"run": label, "tests": len(tests), "subtests": subtests, "wall_s": wall,
            "s_per_subtest": wall / max(subtests, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=DEFAULT_OPS, help=f"comma-separated (default {DEFAULT_OPS})")
    parser.add_argument("--flow", default="xnnpack")
    parser.add_argument("-n", "--workers", default="0", help="xdist workers for every run")
    options = parser.parse_args(argv)

    ops = [op.strip() for op in options.ops.split(",") if op.strip()]
    upstream = [os.path.join(upstream_suite_dir(), f"test_{op}.py") for op in ops]
    ours = [os.path.join("backends", "suite", "operators", f"test_{op}.py") for op in ops]
    missing = [path for path in upstream + ours if not os.path.exists(path)]
    if missing:
        sys.exit(f"benchmark: no such operator module: {', '.join(missing)}")
    workers = ["-n", options.workers]
    with tempfile.TemporaryDirectory() as scratch:
        rows = [
            # The upstream suite brings its own conftest; our plugin and our strict
            # markers stay out of its way.
            run("executorch wheel suite", [*upstream, "-m", f"flow_{options.flow}", "-p", "no:etsuite",
                                           "-o", "addopts=", *workers], f"{scratch}/upstream.json"),
            run("etsuite, isolation fork", [*ours, "--flow", options.flow, *workers],
                f"{scratch}/fork.json"),
            run("etsuite, isolation none", [*ours, "--flow", options.flow, "--isolation", "none",
                                            *workers], f"{scratch}/none.json"),
        ]
    base = rows[0]["s_per_subtest"]
    for row in rows:
        row["ratio_vs_upstream"] = row["s_per_subtest"] / base
    print(f"flow {options.flow}, operators {', '.join(ops)}, -n {options.workers}")
    print(tabulate(rows, headers="keys", floatfmt=".2f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
