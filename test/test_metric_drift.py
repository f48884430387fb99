"""Metric drift on real runs: tiny modules lowered with XNNPACK and run, once as a baseline,
then again with a fault planted in the generated folder's conftest (the partitioner made to
take nothing or only part of the graph, the runtime made slower), and the summary CLI's
`--fail-on` read back: each fault must be caught and named, a healthy re-run must not;
then the thresholds on record pairs, where a real run cannot reach (a runner's medians)."""

from pathlib import Path

import pytest

from conftest import ADD_CASES, run_forked
from etsuite.backends.harness.contract.record import OutputStatistics, SubtestRecord
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.slow_runtime import DELAY_VARIABLE, MATCH_VARIABLE, delay_seconds
from etsuite.tools.report import loading, markdown, summary
from etsuite.tools.report.baseline_diff import compare
from etsuite.tools.report.drift import (
    BETTER_2X,
    METRICS,
    SINGLE_CALL_FLOOR_S,
    WORSE,
    WORSE_2X,
    WORSE_BUCKETS,
    metric_drift,
)
from etsuite.tools.report.size_limit import assemble, fit, size

CASES = ADD_CASES

# The faults, chosen by $DRIFT_FAULT in the forked session: "nothing", XNNPACK's
# partitioner offered no config the modules use; "add_only", only the add config (relu
# stays on portable kernels, yet the program still delegates: status pass). The runtime is
# slowed by tools/slow_runtime.py: each execute of test_add sleeps SLOW_S first (same
# outputs).
SLOW_S = 0.05
FAULTS = '''
import os

FAULT = os.environ.get("DRIFT_FAULT", "")

if FAULT in ("nothing", "add_only"):
    from executorch.backends.xnnpack.partition import xnnpack_partitioner as module
    from executorch.backends.xnnpack.partition.config.generic_node_configs import (
        AddConfig,
        SoftmaxConfig,
    )

    _offered = [SoftmaxConfig] if FAULT == "nothing" else [AddConfig]
    _real = module.XnnpackPartitioner

    class Restricted(_real):
        def __init__(self, *args, **kwargs):
            super().__init__(configs=_offered)

    module.XnnpackPartitioner = Restricted
'''

PORTABLE_REPORT = Path(__file__).parent / "data" / "reports" / "portable.json"
ADD, ADD_RELU = "test_cases.py::test_add[xnnpack]", "test_cases.py::test_add_relu[xnnpack]"


class Runs:
    """One generated folder, run once per fault when first asked (each a real session)."""

    def __init__(self, folder, scratch):
        self.folder, self.scratch, self.done = folder, scratch, {}

    def report(self, fault: str) -> str:
        if fault not in self.done:
            path = self.folder / "reports" / f"{fault or 'baseline'}.json"
            slow = ("-p", "etsuite.backends.harness.flows.slow_runtime") if fault == "slow" else ()
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("DRIFT_FAULT", fault)
                if fault == "slow":
                    patch.setenv(DELAY_VARIABLE, str(SLOW_S * 1000))
                    patch.setenv(MATCH_VARIABLE, "test_add[")
                result = run_forked(self.folder, "-p", "no:cacheprovider", "-p", "no:xdist", *slow,
                                    "--json-report", f"--json-report-file={path}",
                                    "--flow", "xnnpack", "--seed", "5", scratch=self.scratch)
            assert result.ret == 0, "\n".join(result.outlines + result.errlines)
            self.done[fault] = str(path)
        return self.done[fault]


@pytest.fixture
def runs(tmp_path):
    """Per test: the harness runs each of the project's tests in a forked child too, so a
    wider scope would share nothing."""
    folder = tmp_path / "drift"
    folder.mkdir()
    (folder / "test_cases.py").write_text(CASES)
    (folder / "conftest.py").write_text(FAULTS)
    (tmp_path / "scratch").mkdir()
    return Runs(folder, tmp_path / "scratch")


def gate(capsys, current: str, baseline: str, fail_on: str) -> tuple[int, str]:
    """The summary's exit code and what it said on stderr (the markdown goes to stdout)."""
    capsys.readouterr()
    code = summary.main([current, "--baseline", baseline, "--fail-on", fail_on])
    return code, capsys.readouterr().err


def changes_of(current: str, baseline: str):
    return compare(loading.load_all([current]), loading.load_all([baseline]))


def assert_cut_to_the_size_limit(current: loading.Merged, changes) -> None:
    """Many drifting subtests (real rows, repeated) are cut like any long section: whole
    rows, worst first, with a note saying how many were shown."""
    changes.drift = changes.drift * 400
    sections = markdown.build(current, changes)
    section = next(s for s in sections if s.heading.startswith("## Metric drift"))
    limit = size(assemble(sections)) - size(section.text()) // 2
    text, cut = fit(sections, limit, "summary.full.md")
    assert cut and size(text) <= limit
    part = text.split("## Metric drift", 1)[1].split("\n## ", 1)[0]
    shown = [line for line in part.splitlines() if line.startswith("| ≥")]
    assert 0 < len(shown) < len(changes.drift)
    assert f"_Cut to fit the size budget: {len(shown)} of {len(changes.drift)} changes shown" in part
    assert all(line.endswith("|") for line in shown)


def test_a_partitioner_that_takes_nothing_is_a_regression(runs, capsys):
    baseline, now = runs.report(""), runs.report("nothing")
    statuses = {r.nodeid: r.status.value for r in loading.load_all([now]).results}
    assert statuses == {ADD: "pass_undelegated", ADD_RELU: "pass_undelegated"}
    code, err = gate(capsys, now, baseline, "regressions")
    assert code == 1
    assert ADD in err and ADD_RELU in err
    changes = changes_of(now, baseline)
    assert sorted(c.nodeid for c in changes.lost_delegation) == [ADD, ADD_RELU]
    assert changes.regressions == []  # correct, only no longer delegated
    assert changes.other == []  # no longer an "other" change that gates nothing
    shares = {(d.result.nodeid, d.metric): (d.was, d.now) for d in changes.drift}
    assert shares[(ADD, "delegation")] == ("100 %", "0 %")
    # The markdown lists them first in its Metric drift section, worst first.
    summary.main([now, "--baseline", baseline])
    markdown = capsys.readouterr().out
    section = markdown.split("## Metric drift", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ≥")]
    assert rows[:2] and all("| ≥2x worse | delegation |" in row for row in rows[:2])
    assert {ADD, ADD_RELU} == {n for n in (ADD, ADD_RELU) for row in rows[:2] if n + "`" in row}
    assert_cut_to_the_size_limit(loading.load_all([now]), changes)


def test_a_slower_runtime_is_flagged_and_a_healthy_rerun_is_not(runs, capsys):
    baseline, healthy, slow = runs.report(""), runs.report("healthy"), runs.report("slow")
    code, err = gate(capsys, slow, baseline, "runtime")
    assert code == 1 and ADD in err and ADD_RELU not in err
    slowed = [d for d in changes_of(slow, baseline).drift if d.metric == "runtime"]
    assert [(d.result.nodeid, d.bucket) for d in slowed] == [(ADD, "≥2x worse")]
    # The same outputs: only time moved.
    assert not [d for d in changes_of(slow, baseline).drift if d.metric != "runtime"]
    record = loading.load_all([slow]).results[0].records[0]
    assert record.timings["run"] >= SLOW_S > SINGLE_CALL_FLOOR_S
    code, err = gate(capsys, healthy, baseline, "regressions,runtime,lowering,size,error,sqnr")
    assert (code, err.count("--fail-on")) == (0, 0), err
    assert [d for d in changes_of(healthy, baseline).drift if d.worse] == []


def test_a_partial_loss_of_delegation_is_flagged_while_every_status_passes(runs, capsys):
    baseline, now = runs.report(""), runs.report("add_only")
    statuses = {r.nodeid: r.status.value for r in loading.load_all([now]).results}
    assert statuses == {ADD: "pass", ADD_RELU: "pass"}
    code, err = gate(capsys, now, baseline, "regressions")
    assert code == 1 and ADD_RELU in err and ADD not in err.replace(ADD_RELU, "")
    lost = [d for d in changes_of(now, baseline).drift if d.metric == "delegation"]
    assert [(d.result.nodeid, d.was, d.now, d.bucket in WORSE_BUCKETS) for d in lost] == [
        (ADD_RELU, "100 %", "50 %", True)]
    code, _ = gate(capsys, now, baseline, "delegation")
    assert code == 1


def test_the_gates_are_a_checked_comma_list(capsys):
    baseline = str(PORTABLE_REPORT)
    with pytest.raises(SystemExit) as exited:
        summary.main([baseline, "--baseline", baseline, "--fail-on", "regressions,speed"])
    assert exited.value.code == 2
    assert "unknown gate 'speed'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        summary.main([baseline, "--fail-on", "size"])  # a metric gate needs a baseline
    assert "--fail-on size needs --baseline" in capsys.readouterr().err
    assert gate(capsys, baseline, baseline, "never")[0] == 0


# ---------------------------------------------------------------- thresholds, one record pair

def record(**findings) -> SubtestRecord:
    return SubtestRecord(test_id="t.py::t[x]", test_case="t.py::t", subtest=0, suite="s",
                         backend="b", flow="x", status=Status.PASS, **findings)


def calls(median: float, p90: float, iterations: int = 20) -> dict:
    return {"calls": [{"method": "forward", "iterations": iterations, "median": median,
                       "p90": p90, "min": median}]}


RUNTIME = next(m for m in METRICS if m.name == "runtime")
SQNR = next(m for m in METRICS if m.name == "sqnr")


@pytest.mark.parametrize("was, now, expected", [
    # one in-process call: the ratio is not enough under the floor
    ({"timings": {"run": 0.0001}}, {"timings": {"run": 0.0003}}, None),
    ({"timings": {"run": 0.001}}, {"timings": {"run": 0.001 + 2 * SINGLE_CALL_FLOOR_S}}, WORSE_2X),
    # a runner's median: a small floor, but more than its own spread
    ({"cost": calls(0.001, 0.0012)}, {"cost": calls(0.0013, 0.0014)}, WORSE),
    ({"cost": calls(0.001, 0.002)}, {"cost": calls(0.0013, 0.0014)}, None),
    ({"cost": calls(0.001, 0.0011)}, {"cost": calls(0.0004, 0.0005)}, BETTER_2X),
    # a median is not compared with a single in-process call
    ({"timings": {"run": 0.001}}, {"cost": calls(0.1, 0.1)}, None),
])
def test_runtime_needs_its_floor_and_one_basis(was, now, expected):
    moved = metric_drift(RUNTIME, record(**was), record(**now))
    assert (moved[0] if moved else None) == expected


def test_sqnr_moves_by_amplitude_and_is_capped():
    def sqnr(db):
        return record(outputs=[OutputStatistics(sqnr_db=db)])

    assert metric_drift(SQNR, sqnr(140.0), sqnr(70.0)) is None  # both past the cap
    assert metric_drift(SQNR, sqnr(40.0), sqnr(38.5)) is None   # 1.19x the noise
    assert metric_drift(SQNR, sqnr(40.0), sqnr(37.0))[0] == WORSE
    assert metric_drift(SQNR, sqnr(40.0), sqnr(33.0))[0] == WORSE_2X
    assert metric_drift(SQNR, sqnr(30.0), sqnr(50.0))[0] == BETTER_2X


@pytest.mark.parametrize("text", ["30ms", "-1", "nan", "inf", "fast"])
def test_a_slowdown_not_given_in_milliseconds_is_refused(text):
    with pytest.raises(pytest.UsageError, match="milliseconds per call"):
        delay_seconds(text)
    assert delay_seconds("30") == pytest.approx(0.03)
