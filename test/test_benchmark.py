"""The benchmark's comparison of the two harnesses (tools/bench/benchmark.py), on real reports:
a slice of one `make bench ARGS=--full` run (flow xnnpack), the reference's JSON and ours
for the same four operator modules; and a smoke run of the real `make bench`."""

import json
import os
import subprocess

import pytest

from etsuite.tools.bench import benchmark, figures, phases

DATA = os.path.join(os.path.dirname(__file__), "data", "bench")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(side: str) -> benchmark.MeasuredRun:
    with open(os.path.join(DATA, f"{side}-xnnpack.json"), encoding="utf-8") as handle:
        tests = json.load(handle)["tests"]
    return benchmark.MeasuredRun(label=side, wall_s=1.0, cpu_s=1.0, peak_rss_mb=[], rss_samples=[],
                         tests=tests)


def test_case_keys_match_across_the_harnesses_parameter_order():
    reference, ours = _run("reference"), _run("ours")
    assert set(reference.verdicts) == set(ours.verdicts)
    assert len(reference.verdicts) == len(reference.tests) == 35
    assert benchmark.case_key("a/b/test_x.py::test_y[float32-xnnpack]") == \
        benchmark.case_key("c/test_x.py::test_y[xnnpack-float32]")


def test_disagreements_are_counted_by_verdict_pair_with_our_statuses():
    reference, ours = _run("reference"), _run("ours")
    agreeing, differing = benchmark.verdict_agreement(reference, ours)
    assert (agreeing, len(differing)) == (13, 22)
    groups = benchmark.disagreement_groups(reference, ours)
    # conv3d: the reference turns a runtime failure it does not blame on the backend into
    # a skip; ours reports where it failed.
    assert groups[0].startswith("reference skip, ours fail: 12 tests (our subtests: fail_run ")
    # avg_pool3d, left to portable: the reference passes an undelegated program without
    # running it; ours runs it and the runtime has no kernel for it (0x14).
    assert groups[1].startswith("reference pass, ours fail: 9 tests (our subtests: fail_load ")
    # an invalid padding in one subtest: the reference skips the test, ours skips that
    # subtest and judges the others.
    assert groups[2] == ("reference skip, ours pass: 1 tests "
                         "(our subtests: pass_undelegated 1, skip_invalid 1)")
    assert len(groups) == 3
    assert sum(int(line.split(": ")[1].split()[0]) for line in groups) == len(differing)


def test_parallel_bound_says_when_a_measurement_exceeds_it():
    """The bound assumes the tests cost the same in both runs; when the measured efficiency
    is above it (run-to-run variation), the line says so instead of contradicting itself."""
    single = benchmark.MeasuredRun("n0", 43.7, 40.0, [], [], startup_s=[10.0])
    fast = benchmark.MeasuredRun("n2", 24.3, 45.0, [], [], startup_s=[9.8, 9.8])
    slow = benchmark.MeasuredRun("n2", 30.0, 45.0, [], [], startup_s=[9.8, 9.8])
    above = benchmark.parallel_bound_line(single, fast)
    assert "at most 0.82" in above and "the measured value is above it" in above
    within = benchmark.parallel_bound_line(single, slow)
    assert "at most 0.82" in within and "above it" not in within


def test_phases_place_the_wall_time_of_a_run_with_two_workers():
    """Controller from 0 to 30 s; worker gw0 tests from 10 to 25 s, gw1 from 12 to 20 s:
    start-up 10 s, tests 15 s, 2 + 5 worker-seconds idle inside them, 5 s session end."""
    def probe(worker, **times):
        return {"worker": worker, "times": {name: 100.0 + value for name, value in times.items()}}
    probes = [probe("main", started=0, configured=3, unconfigured=30),
              probe("gw0", started=4, configured=6, collected=8, first_test=10, last_test=25),
              probe("gw1", started=4, configured=7, collected=11, first_test=12, last_test=20)]
    found = phases.phases_of(probes)
    assert found == {"start-up": 10, "controller ready": 3, "worker start": 7,
                      "collection": 3, "tests": 15, "idle in tests": 7, "session end": 5,
                      "total": 30}
    run = benchmark.MeasuredRun("ours", 31.0, 40.0, [1.0, 1.0], [], phases=found)
    (row,) = [line for line in phases.phase_table([run.phase_row]).splitlines() if "ours" in line]
    assert [cell.strip() for cell in row.split("|")[1:-1]] == \
        ["ours", "2", "31.0", "10.0", "3.0", "7.0", "3.0", "15.0", "7.0", "5.0", "30.0"]
    # A process that did not report its times: no phases rather than wrong ones.
    del probes[2]["times"]["first_test"]
    assert phases.phases_of(probes) == {}


# The smallest selection `make bench` takes: one operator module of the wheel's suite
# with three tests, one flow, one process per run, none of the optional parts; ours runs
# cold and through a private warm process, as by default.
SMOKE_ARGS = "--ops abs --flows xnnpack -n 0 --skip collection,parallel,own,localize,runners --check"


def _bench_warm_servers() -> set[int]:
    """Warm servers serving a benchmark's scratch folder, by pid."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                words = handle.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "etsuite.backends.harness.warm.server" in words and \
                any("etsuite-bench-" in word for word in words):
            found.add(int(pid))
    return found


@pytest.mark.slow
def test_make_bench_runs_end_to_end_and_prints_its_ratios():
    """The real `make bench` (tox env, benchmark, the reference suite, ours cold and warm),
    so that a renamed module or option cannot break it unseen."""
    servers_before = _bench_warm_servers()
    done = subprocess.run(["make", "--no-print-directory", "bench", f"ARGS={SMOKE_ARGS}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1500)
    assert _bench_warm_servers() <= servers_before, "the bench left its warm process running"
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    for ratio in ("ratio ours, cold / reference", "ratio ours, warm process / reference"):
        (row,) = [line for line in done.stdout.splitlines() if ratio in line]
        wall, cpu = (float(cell) for cell in row.split("|")[4:6])
        assert wall > 0 and cpu > 0, row
    # The phase table: the reference's and ours' last runs, every phase measured.
    rows = [line for line in done.stdout.split("## Where the wall time goes")[1].splitlines()
            if line.startswith("| reference-") or line.startswith("| ours-")]
    assert len(rows) == 2, done.stdout[-3000:]
    for row in rows:
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert len(cells) == 3 + len(phases.PHASES) and all(cells), row
        assert 0 < float(cells[3]) < float(cells[-1]), row  # start-up within the total
    assert "ours through the warm process: verdicts identical to ours cold" in done.stdout
    assert "benchmark: warm process" in done.stderr and "started and warmed" in done.stderr
    # The figures as a block for the log, and --check saying this selection was never logged.
    (block,) = figures.logged(done.stdout)
    assert block.selection["modules"] == ["test_abs.py"] and block.selection["workers"] == "0"
    assert block.values["xnnpack: wall, ours, cold / reference"] > 0
    assert block.values["xnnpack, ours, cold: tests s"] > 0
    assert "no logged figures of this selection" in done.stdout.split("## Against the last")[1]


def _log(*blocks: figures.Figures) -> str:
    return "\n\n".join(["# Measurements", *(f"## entry {i}\n\n{b.block()}"
                                             for i, b in enumerate(blocks))])


def test_the_check_names_the_figures_that_moved_since_the_last_logged_ones():
    chosen = {"modules": ["test_add.py"], "flows": ["xnnpack"], "workers": "2"}
    old = figures.Figures(chosen, {"ratio": 0.40, "tests s": 20.0, "session end s": 2.0})
    older = figures.Figures(chosen, {"ratio": 9.0, "tests s": 1.0, "session end s": 9.0})
    other = figures.Figures({**chosen, "workers": "0"}, {"ratio": 0.1})
    now = figures.Figures(chosen, {"ratio": 0.42, "tests s": 20.5, "session end s": 7.5,
                                   "worker start s": 9.0})
    lines = figures.check(now, _log(older, old, other))  # the last of the same selection
    assert lines[0].startswith("- 2 of 4 figures moved")
    assert "  - session end s: 2 -> 7.5 (up 275 %)" in lines
    assert "  - worker start s: new (9)" in lines
    assert not any("ratio" in line or "tests s" in line for line in lines)
    steady = figures.check(figures.Figures(chosen, dict(old.values)), _log(old))
    assert steady == ["- all 3 figures within 17 % of the last logged ones"]
    assert "no logged figures of this selection" in figures.check(now, _log(other))[0]


def test_an_unreadable_figures_block_is_named():
    broken = "```bench-figures\n{\"selection\": {}, \"values\": {\"a\": \"fast\"}}\n```"
    with pytest.raises(figures.LogError, match="block 1 is not a selection and numbers"):
        figures.logged(broken)
    with pytest.raises(figures.LogError, match="block 1 is not readable"):
        figures.logged("```bench-figures\n{not json\n```")
