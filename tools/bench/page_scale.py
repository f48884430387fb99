"""`python -m etsuite.tools.bench.page_scale`: how the report tools cope with a `make test-all`-sized
merge (about 35 flows x 1,126 tests, 40,000 tests a night in a CI maintainer's merge job).

It writes a synthetic merge made of real reports: each input report is copied with its tests
repeated under renamed node ids (`test_add` -> `test_add_r7s1`, in the node id, the records'
ids and their repro commands), so every copy is a new test case with a real record. Then it
times what a merge job does with it: the markdown summary, the page, and the page opened in
headless Chromium at 1440x900 until its script says it is usable. It prints one line per
figure; docs/measurements.md logs them and issue 25 asked for them before and after.

The browser tests build their 40,000-test page with `repeat_reports` too, so what the docs
quote and what the tests check come from the same input.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from etsuite.backends.harness.contract.nodeids import test_case_id
from etsuite.backends.harness.contract.report import put_records, records_of_test

DEFAULT_TESTS = 40_000
DEFAULT_OUTPUT = "reports/scale"
# Real reports of this repository (see test/data/reports/README.md): nine backends and 30
# flows, every status, the newest and the older record formats.
DEFAULT_SOURCES = ("test/data/reports/six/six-backends.json",
                   "test/data/reports/xnnpack-shard1.json", "test/data/reports/xnnpack-shard2.json",
                   "test/data/reports/pipeline.json", "test/data/reports/outcomes.json",
                   "test/data/reports/portable.json")


def renamed(nodeid: str, suffix: str) -> str:
    """The node id of a copy: the test function's name gets a suffix, the parameters (the
    flow among them) stay, so the copy is a new case of the same flow."""
    base, bracket, params = nodeid.partition("[")
    return f"{base}_{suffix}{bracket}{params}"


def repeated_test(test: dict, new: str, distinct_text: bool = False) -> dict:
    """One test entry of a pytest-json-report, copied under a new node id. With
    `distinct_text`, its error texts name the copy too, so that no copy's text repeats
    another's: the worst case for interning and compression."""
    old = test["nodeid"]
    entry = copy.deepcopy(test)
    entry["nodeid"] = new
    records = []
    for record in records_of_test(entry):
        record = dict(record)
        record["test_id"] = new
        record["test_case"] = test_case_id(new)
        if isinstance(record.get("repro"), str):
            record["repro"] = record["repro"].replace(old, new)
        if distinct_text and isinstance(record.get("error"), str):
            record["error"] = f"{record['error']} [{new}]"
        records.append(record)
    if distinct_text:
        for when in ("setup", "call", "teardown"):
            phase = entry.get(when)
            if isinstance(phase, dict) and isinstance(phase.get("longrepr"), str):
                phase["longrepr"] = f"{phase['longrepr']} [{new}]"
    if records:
        put_records(entry, records)
    return entry


def repeat_reports(sources: list[str], tests: int, folder: str | os.PathLike,
                   distinct_text: bool = False) -> list[Path]:
    """Write one report per source into `folder`, together holding `tests` tests: every
    source's tests are repeated in turn (copy 0 is the original) until the count is reached.
    Returns the files written."""
    loaded = []
    for source in sources:
        with open(source, encoding="utf-8") as handle:
            loaded.append(json.load(handle))
    each = [report["tests"] for report in loaded]
    per_round = sum(len(t) for t in each)
    if not per_round:
        raise ValueError("the sources hold no test")
    out: list[list[dict]] = [[] for _ in loaded]
    seen: set[str] = set()  # node ids are unique across the merge: no copy is a duplicate
    made, copy_index = 0, 0
    while made < tests:
        for index, source_tests in enumerate(each):
            for test in source_tests:
                if made == tests:
                    break
                nodeid = test["nodeid"]
                if copy_index or nodeid in seen:
                    nodeid = renamed(nodeid, f"r{copy_index}s{index}")
                seen.add(nodeid)
                out[index].append(test if nodeid == test["nodeid"] else
                                  repeated_test(test, nodeid, distinct_text))
                made += 1
        copy_index += 1
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source, report, entries in zip(sources, loaded, out, strict=True):
        report = {**report, "tests": entries}
        report.pop("collectors", None)  # a collection error is not repeated: counted by tests
        path = folder / Path(source).name
        path.write_text(json.dumps(report), encoding="utf-8")
        written.append(path)
    return written


@dataclass
class Figures:
    tests: int
    markdown_seconds: float
    page_seconds: float
    page_bytes: int
    markdown_cpu: float = 0.0    # CPU seconds: what a shared machine's load does not inflate
    page_cpu: float = 0.0
    # Both from one command (`--output` and `--page`): what a merge job runs, reading and
    # merging once.
    both_seconds: float = 0.0
    both_cpu: float = 0.0
    usable_seconds: float | None = None    # navigation start to first render (the page says)
    browser_wall: float | None = None      # including the browser's own work

    def lines(self) -> list[str]:
        said = [f"tests: {self.tests}",
                f"summary (markdown, read and merge included): {self.markdown_seconds:.2f} s "
                f"({self.markdown_cpu:.2f} s CPU)",
                f"page written (read and merge included): {self.page_seconds:.2f} s "
                f"({self.page_cpu:.2f} s CPU)",
                f"summary and page from one command: {self.both_seconds:.2f} s "
                f"({self.both_cpu:.2f} s CPU)",
                f"page size: {self.page_bytes / 2**20:.1f} MiB ({self.page_bytes} bytes)"]
        if self.usable_seconds is not None:
            said.append(f"page usable in headless Chromium at 1440x900: {self.usable_seconds:.2f} s "
                        f"after navigation start ({self.browser_wall:.2f} s wall)")
        return said


def measure(folder: Path, browser: bool = True) -> Figures:
    """Time the summary CLI on `folder` (markdown, then page, then both in one command),
    and open the page."""
    from etsuite.tools.report import summary

    markdown_file, page_file = folder / "out" / "summary.md", folder / "out" / "index.html"
    inputs = sorted(str(p) for p in folder.glob("*.json"))
    begun, cpu = time.perf_counter(), time.process_time()
    summary.main([*inputs, "--output", str(markdown_file)])
    markdown_seconds, markdown_cpu = time.perf_counter() - begun, time.process_time() - cpu
    begun, cpu = time.perf_counter(), time.process_time()
    summary.main([*inputs, "--page", str(page_file)])
    page_seconds, page_cpu = time.perf_counter() - begun, time.process_time() - cpu
    begun, cpu = time.perf_counter(), time.process_time()
    summary.main([*inputs, "--output", str(markdown_file), "--page", str(page_file)])
    both_seconds, both_cpu = time.perf_counter() - begun, time.process_time() - cpu
    tests = sum(len(json.loads(Path(p).read_text(encoding="utf-8"))["tests"]) for p in inputs)
    figures = Figures(tests, markdown_seconds, page_seconds, page_file.stat().st_size,
                      markdown_cpu, page_cpu, both_seconds, both_cpu)
    if browser:
        from etsuite.tools import headless

        with headless.Browser() as running:
            tab = running.new_page(1440, 900)
            figures.browser_wall = tab.open(page_file)
            figures.usable_seconds = tab.evaluate("window.etsuiteReady")["ms"] / 1000
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.tools.bench.page_scale",
        description="Build a make-test-all-sized merge from real reports (tests repeated "
                    "under renamed node ids) and print the summary's time, the page's size "
                    "and its time to usable in headless Chromium.")
    parser.add_argument("sources", nargs="*", metavar="REPORT",
                        help="JSON reports to repeat (default: the fixture reports of "
                             "test/data/reports)")
    parser.add_argument("--tests", type=int, default=DEFAULT_TESTS,
                        help=f"tests in the merge (default {DEFAULT_TESTS})")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, metavar="FOLDER",
                        help=f"where the reports, summary.md and index.html go "
                             f"(default {DEFAULT_OUTPUT})")
    parser.add_argument("--distinct-text", action="store_true",
                        help="make every copy's error texts its own (the worst case for the "
                             "page's interning and compression; real merges repeat errors)")
    parser.add_argument("--no-browser", action="store_true",
                        help="skip the browser (no Chromium needed)")
    args = parser.parse_args(argv)
    folder = Path(args.output)
    for stale in folder.glob("*.json"):
        stale.unlink()
    repeat_reports(list(args.sources or DEFAULT_SOURCES), args.tests, folder, args.distinct_text)
    figures = measure(folder, browser=not args.no_browser)
    print("\n".join(f"page_scale: {line}" for line in figures.lines()))
    print(f"page_scale: files in {folder}/out/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
