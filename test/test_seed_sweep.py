"""Verdicts that hold at any seed: a real sweep (the same tests at several seeds, each a
real XNNPACK lowering and run), what the stability report makes of it, and what the
updater declares from it: strict where a failure reproduces at every seed, a tolerance
where a moderately wider bound explains an input-dependent mismatch, non-strict where
nothing honest does. The rewritten file then holds at every seed of the sweep. Also the
declared-entries check (`--declared`) and the pinned seed ($ETSUITE_SEED)."""

import dataclasses
import json

import pytest
import torch

from conftest import run_forked
from etsuite.backends.harness.case.seeds import derive_seed
from etsuite.backends.harness.contract.record import OutputStatistics, SubtestRecord
from etsuite.backends.harness.contract.report import facts_of_report, records_of_test
from etsuite.backends.harness.fixture import seed_everything
from etsuite.backends.harness.flows import expectations as ex
from etsuite.backends.harness.flows.tolerance import EXACT
from etsuite.backends.harness.upkeep import entries_from_sweeps, sweeps
from etsuite.backends.harness.upkeep import stability_report as sweep_cli

CONFTEST = """
import dataclasses
from pathlib import Path

from etsuite.backends.harness.flows.expectations import load
from etsuite.backends.xnnpack.flows import XNNPACK


@dataclasses.dataclass(frozen=True)
class NoisyRuntime:
    '''Runs the real program, then spoils its outputs the way a kernel with an
    input-dependent bug would: by how much depends on the test and on the inputs.'''
    inner: object
    name: str = "noisy"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        outputs = self.inner.execute(loaded, inputs)
        x = inputs[0]
        if x.shape == (3, 2):                        # test_always: every seed, far off
            return [o + 1.0 for o in outputs]
        if x.shape == (4, 2) and float(x.sum()) > 0:  # test_flips: some seeds, far off
            return [o + 0.5 for o in outputs]
        if x.shape == (5, 2) and float(x.sum()) > 0:  # test_loose: some seeds, 2-3x the bound
            bound = 1e-5 + 2e-4 * float(outputs[0].max() - outputs[0].min())
            return [o + 2.5 * bound for o in outputs]
        return outputs


def pytest_etsuite_flows(config):
    path = Path(__file__).parent / "expectations.toml"
    data = load(path, "expectations.toml") if path.exists() else None
    flow = dataclasses.replace(XNNPACK, name="noisy", backend="selftest",
                               runtime=NoisyRuntime(XNNPACK.runtime))
    return [dataclasses.replace(flow, expectations=data) if data else flow]
"""

TESTS = """
import torch


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


def test_always(test_runner):
    test_runner.lower_and_run_model(Double(), (torch.randn(3, 2),))


def test_flips(test_runner):
    test_runner.lower_and_run_model(Double(), (torch.randn(4, 2),))


def test_loose(test_runner):
    test_runner.lower_and_run_model(Double(), (torch.randn(5, 2),))


def test_fine(test_runner):
    test_runner.lower_and_run_model(Double(), (torch.randn(2, 2),))
"""


def first_input_sum(seed: int, case: str, shape) -> float:
    """The sum of the first input a test draws at this session seed, as the fixture
    seeds it (so the test can pick seeds on both sides of the runtime's condition)."""
    seed_everything(derive_seed(seed, case))
    return float(torch.randn(*shape).sum())


def seeds_on_both_sides() -> list[int]:
    """Seeds where test_flips and test_loose spoil their outputs (two) and where they do
    not (one): [spoiled, clean, spoiled]."""
    spoiled, clean = [], []
    for seed in range(1, 200):
        sums = [first_input_sum(seed, f"test_cases.py::{name}", shape)
                for name, shape in (("test_flips", (4, 2)), ("test_loose", (5, 2)))]
        if all(s > 0 for s in sums) and len(spoiled) < 2:
            spoiled.append(seed)
        elif all(s <= 0 for s in sums) and len(clean) < 2:
            clean.append(seed)
        if len(spoiled) == len(clean) == 2:
            return [spoiled[0], clean[0], spoiled[1]]
    raise AssertionError("no such seeds")


def run_at(pytester, seed: int, *args) -> tuple:
    report = pytester.path / f"seed{seed}.json"
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
                        "--seed", str(seed), "--json-report", f"--json-report-file={report}",
                        *args)
    return result, report


def folder_with_tests(path):
    """A folder of the noisy flow's tests, as run_forked takes it."""
    (path / "conftest.py").write_text(CONFTEST)
    (path / "test_cases.py").write_text(TESTS)

    class Folder:
        pass

    Folder.path = path
    return Folder


def test_a_sweep_declares_what_holds_at_every_seed(tmp_path, capsys):
    """The four tests at three seeds (no expectations yet), the stability report, the
    updater's rewrite, and the rewritten file run again at every seed."""
    folder = folder_with_tests(tmp_path)
    seeds = seeds_on_both_sides()
    reports = []
    for seed in seeds:
        result, report = run_at(folder, seed)
        assert result.ret == 1, result.stdout.str()  # test_always fails at every seed
        reports.append(report)
    stability_report_names_what_depends_on_the_seed(seeds, reports, capsys)
    updater_declares_by_what_every_seed_saw_and_the_result_holds(folder, seeds, reports, capsys)
    a_strict_entry_from_one_seed_fails_another(folder, seeds, reports)


def stability_report_names_what_depends_on_the_seed(seeds, reports, capsys):
    seen = sweeps.sweep_of(list(reversed(reports)), "selftest")
    by_case = {case.split("::")[1]: s for (case, _), s in seen.items()}
    # each case's seeds by value, whatever order the reports came in (202 after 3)
    assert [o.seed for o in by_case["test_fine"].outcomes] == sorted(seeds)
    assert sorted([202, None, 3, 30], key=sweeps.seed_order) == [3, 30, 202, None]
    assert by_case["test_always"].strict() and not by_case["test_always"].depends_on_seed
    assert by_case["test_fine"].passes
    for name in ("test_flips", "test_loose"):
        assert by_case[name].depends_on_seed, by_case[name]
        assert {o.seed: o.status is None for o in by_case[name].outcomes} == \
            {seeds[0]: False, seeds[1]: True, seeds[2]: False}
    assert 2 < max(by_case["test_loose"].ratios) < 3.5
    # a second report of one seed (a shard, a rerun) adds nothing twice
    assert {k: len(s.outcomes) for k, s in sweeps.sweep_of(reports + reports[:1]).items()} \
        == {k: 3 for k in seen}
    assert sweep_cli.main([str(r) for r in reports]) == 1
    out = capsys.readouterr().out
    assert "## Verdict depends on the seed" in out
    dependent = out.split("## Verdict depends on the seed")[1].split("## Verdict held")[0]
    assert "`test_cases.py::test_flips` | noisy" in dependent
    assert "test_always" not in dependent  # it failed at every seed, far beyond its bound
    assert sweep_cli.main([str(reports[1])]) == 0  # one seed: nothing can depend on it


def updater_declares_by_what_every_seed_saw_and_the_result_holds(folder, seeds, reports,
                                                                 capsys):
    result = entries_from_sweeps.updated(ex.Expectations(), entries_from_sweeps.observe(reports, "selftest"))
    by_case = {(e.kind, e.case.split("::")[1]): e for e in result.entries}
    always = by_case[("fail", "test_always")]
    assert always.strict and always.statuses == (ex.Status.FAIL_MISMATCH,)
    assert always.reason.startswith("TODO explain:")
    flips = by_case[("fail", "test_flips")]
    assert not flips.strict and flips.statuses == (ex.Status.FAIL_MISMATCH,)
    assert "input-dependent: fail_mismatch 2, pass 1 of 3 seeds" in flips.reason
    loose = by_case[("tolerance", "test_loose")]
    scale = dict(loose.rule)["bound_scale"]
    assert 3 < scale <= 5.5 and "bound widened from the sweep" in loose.reason
    assert ("fail", "test_loose") not in by_case and ("fail", "test_fine") not in by_case
    # Each entry records the sweep it came from, in fields of its own.
    assert [(e.seeds_failed, e.seeds_swept) for e in (always, flips, loose)] == \
        [(3, 3), (2, 3), (2, 3)]
    # One seed alone cannot tell: what failed there is declared strict, with no history.
    alone = entries_from_sweeps.updated(ex.Expectations(),
                                        entries_from_sweeps.observe(reports[:1], "selftest"))
    assert {e.case.split("::")[1]: (e.strict, e.seeds_swept) for e in alone.entries} == {
        "test_always": (True, None), "test_flips": (True, None), "test_loose": (True, None)}
    # Written, read back, and run again at every seed: each run exits 0.
    (folder.path / "expectations.toml").write_text(entries_from_sweeps.dump(result, "selftest"))
    loaded = ex.load(folder.path / "expectations.toml")
    assert [(e.kind, e.strict, e.rule, e.seeds_failed, e.seeds_swept) for e in loaded.entries] \
        == [(e.kind, e.strict, e.rule, e.seeds_failed, e.seeds_swept) for e in result.entries]
    reruns = []
    for seed in seeds:
        rerun, report = run_at(folder, seed)
        assert rerun.ret == 0, rerun.stdout.str()
        reruns.append(report)
        tests = {t["nodeid"].split("::")[1]: t for t in json.loads(report.read_text())["tests"]}
        flips_record = records_of_test(tests["test_flips[noisy]"])[0]
        assert flips_record["declared_strict"] is False
        assert flips_record["declared_by"].startswith("expectations.toml:")
        always_record = records_of_test(tests["test_always[noisy]"])[0]
        assert always_record["status"] == "xfail"
        assert always_record["observed_status"] == "fail_mismatch"
    # The sweep of the reruns: what moves with the seed is declared so, listed apart,
    # and no longer news (exit 0).
    assert sweep_cli.main([str(r) for r in reruns]) == 0
    out = capsys.readouterr().out
    assert "## Verdict depends on the seed" not in out
    declared = out.split("## Declared non-strict, verdict depends on the seed")[1]
    assert "`test_cases.py::test_flips` | noisy" in declared
    assert "test_always" not in declared and "test_loose" not in declared
    (folder.path / "expectations.toml").unlink()


def a_strict_entry_from_one_seed_fails_another(folder, seeds, reports):
    """What made main red: a strict mismatch written from one seed fails another."""
    (folder.path / "expectations.toml").write_text(entries_from_sweeps.dump(
        entries_from_sweeps.updated(ex.Expectations(),
                                    entries_from_sweeps.observe(reports[:1], "selftest")),
        "selftest"))
    try:
        result, _ = run_at(folder, seeds[1], "-k", "flips")
        assert result.ret == 1
        assert "but it passed at this seed; one run cannot tell: sweep it" in \
            result.stdout.str()
    finally:
        (folder.path / "expectations.toml").unlink()


def test_declared_runs_only_the_cases_an_entry_names(tmp_path):
    folder = folder_with_tests(tmp_path)
    (folder.path / "expectations.toml").write_text(
        '[[fail]]\nflows = ["noisy"]\ncase = "*::test_always"\nstatus = "fail_mismatch"\n'
        'reason = "r"\n\n[[tolerance]]\nflows = ["noisy"]\ncase = "*::test_loose"\n'
        'bound_scale = 5.0\nreason = "r"\n\n[[fail]]\nflows = ["noisy"]\ncase = "*::test_flips"\n'
        'status = "fail_mismatch"\nstrict = false\nreason = "r"\n')
    try:
        def collected(*args):
            result = run_forked(folder, "--backend", "selftest", "-n", "0", "--collect-only",
                                "-q", *args)
            return result, {line.split("::")[1] for line in result.stdout.lines
                            if "::" in line}

        _, names = collected("--declared")
        assert names == {"test_always[noisy]", "test_loose[noisy]", "test_flips[noisy]"}
        _, names = collected("--declared", "tolerance")
        assert names == {"test_loose[noisy]"}
        # A non-strict entry cannot go stale by passing: it rotates with the sample even
        # when its status is named.
        _, names = collected("--declared", "fail_mismatch")
        assert names == {"test_always[noisy]"}
        flips_seen = [k for k in (1, 2, 3) if "test_flips[noisy]" in collected(
            "--declared", "fail_mismatch", "--declared-sample", f"{k}/3")[1]]
        assert len(flips_seen) == 1
        # The rotating samples: over N slices each other case comes once, declared
        # ones in --declared-sample's, the rest in --passing-sample's.
        declared_seen, passing_seen = [], []
        for k in (1, 2, 3):
            _, names = collected("--declared", "tolerance", "--declared-sample", f"{k}/3")
            declared_seen.extend(names - {"test_loose[noisy]"})
            _, names = collected("--declared", "tolerance", "--passing-sample", f"{k}/3")
            passing_seen.extend(names - {"test_loose[noisy]"})
        assert sorted(declared_seen) == ["test_always[noisy]", "test_flips[noisy]"]
        assert passing_seen == ["test_fine[noisy]"]
        bad, _ = collected("--declared", "fail_nothing")
        assert bad.ret == 4 and "unknown fail_nothing" in bad.stderr.str()
        bad, _ = collected("--declared", "--declared-sample", "4/3")
        assert bad.ret == 4 and "K must be between 1 and N" in bad.stderr.str()
        bad, _ = collected("--passing-sample", "1/3")
        assert bad.ret == 4 and "go with --declared" in bad.stderr.str()
    finally:
        (folder.path / "expectations.toml").unlink()


def test_a_pinned_seed_is_used_and_reported(tmp_path, monkeypatch):
    folder = folder_with_tests(tmp_path)
    monkeypatch.setenv("ETSUITE_SEED", "4242")
    report = folder.path / "pinned.json"
    result = run_forked(folder, "--backend", "selftest", "-n", "0", "-k", "fine",
                        "--json-report", f"--json-report-file={report}")
    assert result.ret == 0
    assert "etsuite: seed 4242 (pinned" in result.stdout.str()
    facts = facts_of_report(json.loads(report.read_text()))
    assert (facts["seed"], facts["seed_policy"]) == (4242, "pinned")
    monkeypatch.setenv("ETSUITE_SEED", "soon")
    bad = run_forked(folder, "--backend", "selftest", "-n", "0", "-k", "fine")
    assert bad.ret == 4 and "$ETSUITE_SEED='soon'" in bad.stderr.str()


def sweep_of(*outcomes, flow="f"):
    """A CaseSweep from (status or None, worst error ratio, least SQNR) per seed."""
    return sweeps.CaseSweep("c.py::t", flow, [
        sweeps.SeedOutcome(seed, None if status is None else ex.Status(status),
                              "boom", ratio, sqnr)
        for seed, (status, ratio, sqnr) in enumerate(outcomes, 1)])


@pytest.mark.parametrize("outcomes, floor, kind, rule", [
    # the same clear failure at every seed: strict
    ([("fail_mismatch", 5.0, None)] * 3, None, "strict", ()),
    # nan/inf elements differ at every seed (ratio of finite ones under 1): strict
    ([("fail_mismatch", 0.0, None)] * 3, None, "strict", ()),
    # fails at every seed, but once just over its bound: a tolerance, 1.5x the worst
    ([("fail_mismatch", 1.2, None), ("fail_mismatch", 2.0, None)], None, "tolerance",
     (("bound_scale", 3.0),)),
    # comes and goes with the inputs, within 8x: a tolerance
    ([(None, 0.5, None), ("fail_mismatch", 2.4, None)], None, "tolerance",
     (("bound_scale", 3.6),)),
    # comes and goes, far beyond any honest bound: non-strict
    ([(None, 0.5, None), ("fail_mismatch", 40.0, None)], None, "non-strict", ()),
    # an exact output differs at one seed: no bound to widen, non-strict
    ([(None, 0.0, None), ("fail_mismatch", float("inf"), None)], None, "non-strict", ()),
    # a quantized mismatch short of its SQNR floor by a little: the floor is lowered (and
    # the bound widened, as 0.9x leaves less than the headroom)
    ([(None, 0.3, 25.0), ("fail_mismatch", 0.9, 18.5)], 20.0, "tolerance",
     (("bound_scale", 1.4), ("min_sqnr_db", 15.0))),
    # ... by too much to call it a precision gap: non-strict
    ([(None, 0.3, 25.0), ("fail_mismatch", 2.0, 9.0)], 20.0, "non-strict", ()),
    # a failure at another stage at some seeds only: non-strict, with that status
    ([(None, 0.1, None), ("fail_run", None, None)], None, "non-strict", ()),
    # a wrong answer at 20 of 21 seeds, passing at one: non-strict however rare the pass
    # (strict, the gate would be red at the seeds where it passes)
    ([("fail_mismatch", 3.0, 5.0)] * 20 + [(None, 0.9, 24.0)], 20.0, "non-strict", ()),
    # ... at 9 of 10 seeds: each outcome a tenth or more, the inputs decide: non-strict
    ([("fail_mismatch", 3.0, 5.0)] * 9 + [(None, 0.9, 24.0)], 20.0, "non-strict", ()),
    # ... at 8 of 9 seeds: non-strict
    ([("fail_mismatch", 3.0, 5.0)] * 8 + [(None, 0.9, 24.0)], 20.0, "non-strict", ()),
    # passes everywhere: nothing to declare
    ([(None, 0.1, None)] * 3, None, "pass", ()),
])
def test_what_a_sweep_of_one_case_declares(outcomes, floor, kind, rule):
    decided = entries_from_sweeps.declaration(sweep_of(*outcomes), floor)
    assert (decided.kind, decided.rule) == (kind, rule)
    if kind == "non-strict":
        assert decided.statuses == (next(ex.Status(s) for s, _, _ in outcomes if s),)


def test_an_exact_outputs_figures_give_no_ratio_to_a_zero_bound():
    """An integer output judged by the exact rule either matches (error ratio 0, which is
    no distance to a bound of zero) or differs (no ratio): its figures say which seeds
    differed, never "0x the bound"."""
    def exact_record(differs: bool) -> SubtestRecord:
        stats = OutputStatistics(max_abs_error=1.0 if differs else 0.0,
                                 mean_abs_error=0.01 if differs else 0.0,
                                 error_ratio=None if differs else 0.0, rule=EXACT.name)
        return SubtestRecord("c.py::t[f]", "c.py::t", 0, "operators", "b", "f",
                             ex.Status.FAIL_MISMATCH if differs else ex.Status.PASS,
                             outputs=[stats])

    sweep = sweeps.CaseSweep("c.py::t", "f", [
        sweeps.outcome_of([exact_record(differs)], seed)
        for seed, differs in ((1, False), (2, True), (3, False))])
    assert sweep.ratios == [float("inf")]
    assert sweep.depends_on_seed
    figures = sweep.figures()
    assert "the bound" not in figures, figures
    assert "exact outputs differ at some seeds" in figures
    assert entries_from_sweeps.declaration(sweep, None).kind == "non-strict"


def test_a_case_failing_under_its_own_tolerance_gets_it_widened_again(tmp_path):
    """The sweep's ratios and SQNRs of a case with a [[tolerance]] were measured against
    that tolerance: a further widening composes with it (flow f), only for the flows that
    failed (h keeps the old rule), and goes non-strict beyond an honest total (flow g).
    A pattern entry stays whole behind the specific one that now shadows it."""
    tolerance = ex.Expectation("tolerance", ("f", "g", "h"), "c.py::t", "int8 edge",
                               rule=(("bound_scale", 2.0), ("min_sqnr_db", 16.0)))
    pattern = ex.Expectation("tolerance", ("q*",), "c.py::*", "wide", rule=(("rtol", 0.01),))
    seen = {("c.py::t", "f"): sweep_of((None, 0.5, 30.0), ("fail_mismatch", 1.6, 14.5),
                                       flow="f"),
            ("c.py::t", "g"): sweep_of((None, 0.5, 30.0), ("fail_mismatch", 7.0, 17.0),
                                       flow="g"),
            ("c.py::t", "q1"): sweep_of((None, 0.2, None), ("fail_mismatch", 1.2, None),
                                        flow="q1")}
    result = entries_from_sweeps.updated(ex.Expectations((tolerance, pattern)), seen,
                        sqnr_floors={"f": 20.0, "g": 20.0, "h": 20.0})
    path = tmp_path / "expectations.toml"
    path.write_text(entries_from_sweeps.dump(result, "b"))
    reread = ex.load(path)
    # f: 2 x 1.6 x 1.5 = 4.8 the flow's bound; SQNR floor 14.5 - 3 -> 11 (a 9 dB drop from
    # 20 is too much): so f, too, goes non-strict; only the bound alone would have fitted
    assert reread.failure("f", "c.py::t").strict is False
    assert reread.failure("g", "c.py::t").strict is False  # 2 x 7 x 1.5 = 21 > 8
    assert dict(reread.tolerances("h", "c.py::t")[0].values) == dict(tolerance.rule)
    assert dict(reread.tolerances("q1", "c.py::t")[0].values) == {"rtol": 0.018,
                                                                   "bound_scale": 1.8}
    assert reread.tolerances("q2", "c.py::t")[0].values == (("rtol", 0.01),)

    seen[("c.py::t", "f")] = sweep_of((None, 0.5, 30.0), ("fail_mismatch", 1.6, 17.5),
                                      flow="f")
    path.write_text(entries_from_sweeps.dump(entries_from_sweeps.updated(ex.Expectations((tolerance,)), seen,
                                       sqnr_floors={"f": 20.0, "g": 20.0}), "b"))
    reread = ex.load(path)
    assert reread.failure("f", "c.py::t") is None
    widened = reread.tolerances("f", "c.py::t")[0]
    assert dict(widened.values) == {"bound_scale": 4.8, "min_sqnr_db": 16.0}  # 2 x 2.4
    assert "widened again" in widened.reason and widened.reason.startswith("int8 edge")
    assert dict(reread.tolerances("h", "c.py::t")[0].values) == dict(tolerance.rule)
    assert dict(reread.tolerances("g", "c.py::t")[0].values) == dict(tolerance.rule)


def test_a_rewrite_keeps_the_flows_a_sweep_did_not_run_and_makes_a_constant_failure_strict(tmp_path):
    """A sweep of Arm's TOSA flows says nothing of its Ethos-U flows: an entry naming both
    keeps the unrun ones as they were (flow u), while the run ones get what the sweep
    decides: a non-strict entry failing at every one of ten seeds (once near its bound,
    too short of the SQNR floor for a tolerance) becomes strict with the figures in its
    reason, and one that passed at every seed goes, for the flow that ran only."""
    mismatch = (ex.Status.FAIL_MISMATCH,)
    near = ex.Expectation("fail", ("f", "u"), "c.py::near", "int8 edge", mismatch, strict=False)
    fixed = ex.Expectation("fail", ("f", "u"), "c.py::fixed", "flips", mismatch, strict=False)
    seen = {("c.py::near", "f"): sweep_of(*[("fail_mismatch", 3.0, 5.0)] * 9,
                                          ("fail_mismatch", 1.2, 19.0)),
            ("c.py::fixed", "f"): sweep_of(*[(None, 0.1, 30.0)] * 10)}
    path = tmp_path / "expectations.toml"
    path.write_text(entries_from_sweeps.dump(entries_from_sweeps.updated(
        ex.Expectations((near, fixed)), seen, sqnr_floors={"f": 20.0}), "b"))
    reread = ex.load(path)
    now = reread.failure("f", "c.py::near")
    assert now.strict and now.statuses == mismatch
    assert now.reason.startswith("int8 edge [strict from a sweep: fail_mismatch 10 of 10 seeds")
    assert (now.seeds_failed, now.seeds_swept) == (10, 10)
    assert reread.failure("u", "c.py::near").strict is False
    assert reread.failure("u", "c.py::near").seeds_swept is None
    assert reread.failure("f", "c.py::fixed") is None
    assert reread.failure("u", "c.py::fixed").reason == "flips"
    # rewritten again from the same sweep: the same file (the figures replaced, not added)
    again = entries_from_sweeps.dump(entries_from_sweeps.updated(reread, seen, sqnr_floors={"f": 20.0}), "b")
    assert again == path.read_text()


def test_a_narrower_sweep_keeps_the_recorded_history_and_cannot_make_an_entry_strict():
    """An entry records the widest sweep that left it as it is: a later run of fewer
    seeds neither replaces its figures nor turns a non-strict entry strict."""
    mismatch = (ex.Status.FAIL_MISMATCH,)
    strict = ex.Expectation("fail", ("f",), "c.py::t", "r", mismatch,
                            seeds_failed=10, seeds_swept=10)
    loose = ex.Expectation("fail", ("f",), "c.py::t", "r", mismatch, strict=False,
                           seeds_failed=6, seeds_swept=10)
    three = {("c.py::t", "f"): sweep_of(*[("fail_mismatch", 9.0, None)] * 3)}
    twelve = {("c.py::t", "f"): sweep_of(*[("fail_mismatch", 9.0, None)] * 12)}
    kept = entries_from_sweeps.updated(ex.Expectations((strict,)), three).entries
    assert [(e.strict, e.seeds_failed, e.seeds_swept) for e in kept] == [(True, 10, 10)]
    still = entries_from_sweeps.updated(ex.Expectations((loose,)), three).entries
    assert [(e.strict, e.seeds_failed, e.seeds_swept) for e in still] == [(False, 6, 10)]
    # A case whose recorded sweep saw it pass stays non-strict, even when a wider sweep
    # saw only failures (Arm's float32->int32 cast: 8 of 10, then 10 of 10, and it passed
    # at the pinned seed); one whose sweep saw none becomes strict.
    wider = entries_from_sweeps.updated(ex.Expectations((loose,)), twelve).entries
    assert [(e.strict, e.seeds_failed, e.seeds_swept) for e in wider] == [(False, 6, 10)]
    never = dataclasses.replace(loose, seeds_failed=10)
    wider = entries_from_sweeps.updated(ex.Expectations((never,)), twelve).entries
    assert [(e.strict, e.seeds_failed, e.seeds_swept) for e in wider] == [(True, 12, 12)]
    # A strict entry whose recorded sweep saw a pass (the old rare-pass rule) is non-strict.
    rare = dataclasses.replace(strict, seeds_failed=20, seeds_swept=21)
    kept = entries_from_sweeps.updated(ex.Expectations((rare,)), twelve).entries
    assert [(e.strict, e.seeds_failed, e.seeds_swept) for e in kept] == [(False, 20, 21)]


def test_one_run_that_passes_cannot_remove_an_entry_the_inputs_decide():
    """Rewritten from one seed where every case passed: a non-strict mismatch entry
    stays as it is and a strict one becomes non-strict (the run showed it can pass),
    until a sweep of ten seeds decides; a stage failure's entry goes (the seed draws
    values only, so one run tells), and so does a mismatch entry after ten passing seeds."""
    mismatch, lower = (ex.Status.FAIL_MISMATCH,), (ex.Status.FAIL_LOWER,)
    loose = ex.Expectation("fail", ("f",), "c.py::loose", "flips", mismatch, strict=False)
    strict = ex.Expectation("fail", ("f",), "c.py::strict", "wrong", mismatch)
    stage = ex.Expectation("fail", ("f",), "c.py::stage", "no kernel", lower)
    current = ex.Expectations((loose, strict, stage))
    cases = ("c.py::loose", "c.py::strict", "c.py::stage")
    one = {(case, "f"): sweep_of((None, 0.1, 30.0)) for case in cases}
    after = entries_from_sweeps.updated(current, one)
    assert after.failure("f", "c.py::loose") == loose
    made = after.failure("f", "c.py::strict")
    assert made is not None and not made.strict and made.statuses == mismatch
    assert "passed at 1 of 1 seed, too few to remove it: a sweep of 10 seeds decides" \
        in made.reason
    assert after.failure("f", "c.py::stage") is None
    ten = {(case, "f"): sweep_of(*[(None, 0.1, 30.0)] * 10) for case in cases}
    assert entries_from_sweeps.updated(current, ten).failure("f", "c.py::loose") is None
    assert entries_from_sweeps.updated(current, ten).failure("f", "c.py::strict") is None
