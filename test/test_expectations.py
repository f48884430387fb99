"""Expectations as data: the file format, strict known failures (a pass or a failure at
another status fails the run and names the line to change), must-delegate rules, and the
updater that rewrites the file from a real report while keeping hand-written reasons."""

import json
from pathlib import Path

import pytest

from conftest import run_forked
from etsuite.backends.harness import declared
from etsuite.backends.harness.contract.nodeids import case_id
from etsuite.backends.harness.contract.record import error_headline
from etsuite.backends.harness.contract.report import records_of_test
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows import expectations as ex
from etsuite.backends.harness.flows.registry import builtin_flows
from etsuite.backends.harness.upkeep import entries_from_sweeps
from etsuite.tools.report import summary

EXPECTATIONS = """\
# known gaps of the self-test flows
[[fail]]
flows = ["shifting"]
case = "*::test_fails_at_run"
status = "fail_mismatch"
reason = "outputs shifted on purpose"

[[fail]]
flows = ["shifting"]
case = "*::test_wrong_status"
status = "fail_lower"
reason = "believed to fail when lowering"

[[fail]]
flows = ["shifting"]
case = "*::test_fixed"
status = "fail_mismatch"
reason = "believed broken"

[[skip]]
flows = ["shift*"]
case = "*::test_skipped[big]"
reason = "too large for this backend"

[[must_delegate]]
flows = ["shifting"]
case = "*::test_must_delegate"
reason = "a partitioner regression would hide here"
"""

CONFTEST = """
import dataclasses
from pathlib import Path

from etsuite.backends.harness.flows.expectations import load
from etsuite.backends.xnnpack.flows import XNNPACK


@dataclasses.dataclass(frozen=True)
class ShiftingRuntime:
    inner: object
    name: str = "shifting"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        outputs = self.inner.execute(loaded, inputs)
        return [o + 1.0 for o in outputs] if inputs[0].shape[0] == 3 else outputs


def pytest_etsuite_flows(config):
    data = load(Path(__file__).parent / "expectations.toml", "expectations.toml")
    return [dataclasses.replace(XNNPACK, name="shifting", backend="selftest",
                                runtime=ShiftingRuntime(XNNPACK.runtime), expectations=data)]
"""

TESTS = """
import pytest
import torch


def test_fails_at_run(test_runner):       # shifted outputs (3 rows): fail_mismatch, as declared
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(3, 2),))


def test_wrong_status(test_runner):       # fails with fail_mismatch, declared fail_lower
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(3, 2),))


def test_fixed(test_runner):              # passes (2 rows), declared broken
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(2, 2),))


class Cumsum(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 0)


def test_must_delegate(test_runner):      # XNNPACK takes no cumsum: pass_undelegated
    test_runner.lower_and_run_model(Cumsum(), (torch.randn(2, 2),))


@pytest.mark.parametrize("size", ["small", "big"])
def test_skipped(test_runner, size):
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(2, 2),))
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expectations.toml"
    path.write_text(text)
    return path


def test_load_keeps_order_and_line_numbers(tmp_path):
    data = ex.load(write(tmp_path, EXPECTATIONS), "x.toml")
    fails = [e for e in data.entries if e.kind == "fail"]
    assert [e.source for e in fails] == ["x.toml:2", "x.toml:8", "x.toml:14"]
    assert fails[0].statuses == (Status.FAIL_MISMATCH,)
    assert data.skip("shifting", "a.py::test_skipped[big]").reason == "too large for this backend"
    assert data.skip("shifting", "a.py::test_skipped[small]") is None
    assert data.failure("xnnpack", "a.py::test_fails_at_run") is None  # other flow


@pytest.mark.parametrize("text, message", [
    ("[[fail]]\nflows = ['x']\ncase = 'a'\nstatus = 'fail_sometimes'\nreason = 'r'\n",
     "unknown status 'fail_sometimes'"),
    ("[[fail]]\nflows = ['x']\ncase = 'a'\nstatus = 'pass'\nreason = 'r'\n", "not a failure"),
    ("[[skip]]\nflows = ['x']\ncase = 'a'\n", "needs a non-empty 'reason'"),
    ("[[skip]]\nflows = 'x'\ncase = 'a'\nreason = 'r'\n", "needs a non-empty 'flows'"),
    ("[[xfail]]\nflows = ['x']\n", "unknown section(s) ['xfail']"),
    ("[[skip]\n", "not valid TOML"),
    ("\n\n[[skip]]\nflows = ['x']\ncase = 'a'\nreason = 'r'\ncolour = 'red'\n",
     "x.toml:3: unknown key(s) ['colour']"),
    ("[[tolerance]]\nflows = ['x']\ncase = 'a'\nreason = 'r'\n", "sets no rule field"),
    ("[[tolerance]]\nflows = ['x']\ncase = 'a'\nreason = 'r'\nsteps = 'many'\n",
     "'steps' must be a non-negative number"),
    ("[[tolerance]]\nflows = ['x']\ncase = 'a'\nmin_sqnr_db = 9\n", "needs a non-empty 'reason'"),
    ("[[skip]]\nflows = ['x']\ncase = 'a'\nreason = 'r'\nsteps = 3\n", "unknown key(s) ['steps']"),
    ("\n[[tolerance]]\nflows = ['x']\ncase = 'a'\nreason = 'r'\nbound_scale = 8.5\n",
     "x.toml:2: [[tolerance]] bound_scale 8.5 is beyond the widest a tolerance may make a bound (8)"),
])
def test_malformed_files_name_the_entry(tmp_path, text, message):
    with pytest.raises(ex.ExpectationsError) as error:
        ex.load(write(tmp_path, text), "x.toml")
    assert message in str(error.value) and "x.toml" in str(error.value)



ENTRY = "flows = ['x']\ncase = 'a.py::t'\nreason = 'r'\n"


@pytest.mark.parametrize("text, message", [
    # Before: AttributeError ('str' object has no attribute 'get').
    ("fail = 'x'\n", "x.toml:1: 'fail' must be written as [[fail]] tables, one per entry"),
    (f"# a table, not an array of tables\n[fail]\n{ENTRY}",
     "x.toml:2: 'fail' must be written as [[fail]] tables, one per entry"),
    ("\nskip = [1, 2]\n", "x.toml:2: 'skip' must be written as [[skip]] tables, one per "
                           "entry; entry 1 is a int"),
    # Before: accepted, and never used.
    (f"[[skip]]\n{ENTRY}status = 'fail_run'\n", "x.toml:1: unknown key(s) ['status'] for [[skip]]"),
    (f"\n[[tolerance]]\n{ENTRY}dtype = 'flaot16'\nrtol = 0.1\n",
     "x.toml:2: 'dtype' must be a dtype name such as \"float16\", got 'flaot16'"),
    (f"[[skip]]\n{ENTRY}\n[[skip]]\nflows = ['x']\ncase = 'a.py::t'\nreason = 'again'\n",
     "x.toml:6: this [[skip]] can never apply: the entry at x.toml:1 names every flow"),
    (f"[[fail]]\nflows = ['x*']\ncase = 'a.py::*'\nstatus = 'fail_run'\nreason = 'r'\n\n"
     f"[[fail]]\n{ENTRY}status = 'fail_lower'\n", "x.toml:7: this [[fail]] can never apply"),
    (f"[[tolerance]]\n{ENTRY}rtol = 0.1\n\n[[tolerance]]\n{ENTRY}dtype = 'float16'\nrtol = 0.2\n",
     "x.toml:7: this [[tolerance]] can never apply"),
    # Before: one entry made every failure of its status on every flow an xfail.
    ("[[fail]]\nflows = ['*']\ncase = '*'\nstatus = 'fail_mismatch'\nstrict = false\n"
     "reason = 'r'\n", "x.toml:1: [[fail]] case '*' matches every case of its flows: a "
                       "catch-all"),
    ("[[skip]]\nflows = ['x']\ncase = '*::*'\nreason = 'r'\n",
     "x.toml:1: [[skip]] case '*::*' matches every case of its flows: a catch-all"),
    (f"[[skip]]\n{ENTRY}catch_all = true\n", "x.toml:1: 'catch_all = true' on case 'a.py::t'"),
    ("[[skip]]\nflows = ['x']\ncase = '*'\nreason = 'r'\ncatch_all = 'yes'\n",
     "x.toml:1: 'catch_all' must be true or false"),
    ("[[skip]\n", "x.toml:1: not valid TOML"),
    ("\n\n[[xfail]]\nflows = ['x']\n", "x.toml:3: unknown section(s) ['xfail']"),
])
def test_every_malformed_file_is_one_error_naming_file_and_line(tmp_path, text, message):
    with pytest.raises(ex.ExpectationsError) as error:
        ex.load(write(tmp_path, text), "x.toml")
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_a_file_that_is_not_utf8_names_its_line(tmp_path):
    """Before: UnicodeDecodeError out of Path.read_text."""
    path = tmp_path / "expectations.toml"
    path.write_bytes(b"[[skip]]\nflows = ['x']\nreason = 'caf\xe9'\n")
    with pytest.raises(ex.ExpectationsError, match=r"^x.toml:3: not UTF-8 text \(byte 0xe9\)$"):
        ex.load(path, "x.toml")


def test_a_catch_all_is_read_when_it_says_so_and_kept_by_the_updater(tmp_path):
    text = ("[[fail]]\nflows = ['broken_flow']\ncase = '*'\nstatus = 'fail_lower'\n"
            "catch_all = true\nreason = 'the partitioner rejects every graph'\n")
    read = ex.load(write(tmp_path, text))
    (entry,) = read.entries
    assert entry.catch_all and read.failure("broken_flow", "any.py::test") == entry
    again = ex.load(write(tmp_path, entries_from_sweeps.dump(ex.Expectations((entry,)), "b")))
    assert again.entries[0].catch_all
    # A [[must_delegate]] only tightens: it may name every case without saying so.
    strict = ex.load(write(tmp_path, "[[must_delegate]]\nflows = ['f']\ncase = '*'\nreason = 'r'\n"))
    assert strict.must_delegate("f", "any.py::test") is not None


def test_every_dtype_name_of_torch_is_known():
    import torch

    from etsuite.backends.harness.flows.tolerance import DTYPE_NAMES
    names = {str(getattr(torch, n)).rsplit(".", 1)[-1] for n in dir(torch)
             if isinstance(getattr(torch, n), torch.dtype)}
    assert names == set(DTYPE_NAMES)


TOLERANCES = """\
[[tolerance]]
flows = ["xnnpack_static_*"]
case = "*::test_log_softmax*"
dtype = "float32"
min_sqnr_db = 8
steps = 64
reason = "log of small int8 probabilities saturates"

[[tolerance]]
flows = ["xnnpack*"]
case = "*::test_log_softmax*"
range_fraction = 0.001
reason = "any other dtype"
"""


def test_tolerance_overrides_apply_per_flow_case_and_dtype(tmp_path):
    from etsuite.backends.harness.flows.tolerance import INT8, RuleBook

    data = ex.load(write(tmp_path, TOLERANCES), "x.toml")
    overrides = data.tolerances("xnnpack_static_int8_per_tensor", "a.py::test_log_softmax[3d]")
    book = RuleBook(INT8, overrides)
    rule = book.for_dtype("torch.float32")
    assert (rule.min_sqnr_db, rule.steps) == (8, 64) and "override x.toml:1" in rule.name
    assert book.for_dtype("torch.float16").range_fraction == 0.001  # the second entry
    assert book.for_dtype("torch.float16").min_sqnr_db == INT8.min_sqnr_db
    assert data.tolerances("xnnpack_static_int8_per_tensor", "a.py::test_softmax") == ()
    assert data.tolerances("portable", "a.py::test_log_softmax") == ()
    again = ex.load(write(tmp_path, entries_from_sweeps.dump(data, "x")), "y.toml")  # the updater keeps them
    assert [(e.dtype, e.rule, e.reason) for e in again.entries] == \
        [(e.dtype, e.rule, e.reason) for e in data.entries]


def test_shipped_backends_load_their_files():
    flows = {f.name: f for f in builtin_flows()}
    entry = flows["xnnpack_static_int8_per_tensor"].expectations.failure(
        "xnnpack_static_int8_per_tensor", "backends/suite/operators/test_pad.py::test_pad_negative")
    assert entry is not None and entry.source.startswith("backends/xnnpack/expectations.toml:")


def test_strict_expectations_end_to_end(pytester):
    pytester.makeconftest(CONFTEST)
    (pytester.path / "expectations.toml").write_text(EXPECTATIONS)
    pytester.makepyfile(test_cases=TESTS)
    report = pytester.path / "r.json"
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
                        "--json-report", f"--json-report-file={report}")
    tests = {t["nodeid"].split("::")[1]: t for t in json.loads(report.read_text())["tests"]}
    outcome = {name: t["outcome"] for name, t in tests.items()}
    assert outcome == {
        "test_fails_at_run[shifting]": "xfailed",
        "test_wrong_status[shifting]": "failed",
        "test_fixed[shifting]": "failed",
        "test_must_delegate[shifting]": "failed",
        "test_skipped[shifting-small]": "passed",
        "test_skipped[shifting-big]": "skipped",
    }
    status = {name: records_of_test(t)[0]["status"] for name, t in tests.items()}
    assert status["test_fails_at_run[shifting]"] == "xfail"
    assert status["test_fixed[shifting]"] == "xpass"
    assert status["test_must_delegate[shifting]"] == "fail_lower"
    assert status["test_skipped[shifting-big]"] == "skip_unsupported"
    text = result.stdout.str()
    assert "expected fail_lower (expectations.toml:8), but subtest 0 ended fail_mismatch" in text
    assert "expected fail_mismatch (expectations.toml:14), but it passed at this seed; one " \
        "run cannot tell: sweep it (make sweep BACKEND=selftest" in text
    assert "delete" not in text
    assert "must be delegated (expectations.toml:25" in text
    assert result.ret == 1


def mismatch_entry(case: str, reason: str, *history: str) -> str:
    """A strict fail_mismatch entry of the shifting flow, as TOML lines."""
    return "\n".join(["[[fail]]", 'flows = ["shifting"]', f'case = "{case}"',
                      'status = "fail_mismatch"', *history, f'reason = "{reason}"', ""])


SWEPT_AND_UNSWEPT = mismatch_entry("*::test_fixed", "failed at nine seeds of a sweep",
                                   "seeds_failed = 9", "seeds_swept = 10") + "\n" + \
    mismatch_entry("*::test_skipped[small]", "seen failing once")


def test_an_unexpected_pass_advises_from_the_entrys_sweep_history(pytester):
    """Two strict entries whose cases pass: the one with sweep figures is told to become
    non-strict or be swept again, the one without to be swept; neither to be deleted."""
    pytester.makeconftest(CONFTEST)
    (pytester.path / "expectations.toml").write_text(SWEPT_AND_UNSWEPT)
    pytester.makepyfile(test_cases=TESTS)
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
                        "-k", "test_fixed or small")
    result.assert_outcomes(failed=2, skipped=0, passed=0)
    text = result.stdout.str()
    assert "expected fail_mismatch (expectations.toml:1), but it passed at this seed; the " \
        "entry says it fails at 9 of 10 seeds: make it non-strict or sweep again" in text
    assert "expected fail_mismatch (expectations.toml:9), but it passed at this seed; one " \
        "run cannot tell: sweep it (make sweep BACKEND=selftest SEEDS='<10 seeds>' " \
        "ARGS='-k test_skipped'" in text
    assert "delete" not in text


@pytest.mark.parametrize("history, message", [
    ("seeds_swept = 10", "without 'seeds_failed'"),
    ("seeds_failed = 0\nseeds_swept = 10", "1 <= seeds_failed <= seeds_swept"),
    ("seeds_failed = 11\nseeds_swept = 10", "1 <= seeds_failed <= seeds_swept"),
    ("seeds_failed = true\nseeds_swept = 10", "must be integers"),
])
def test_sweep_history_is_both_fields_and_consistent(tmp_path, history, message):
    entry = '[[fail]]\nflows = ["x"]\ncase = "c"\nstatus = "fail_mismatch"\nreason = "r"\n'
    path = write(tmp_path, f"{entry}{history}\n")
    with pytest.raises(ex.ExpectationsError, match=message):
        ex.load(path)
    without = ex.load(write(tmp_path, entry))
    assert without.entries[0].swept_text is None


def test_update_rewrites_from_a_real_report_keeping_reasons(pytester, tmp_path):
    pytester.makeconftest(CONFTEST)
    (pytester.path / "expectations.toml").write_text(EXPECTATIONS)
    pytester.makepyfile(test_cases=TESTS)
    report = pytester.path / "r.json"
    run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
               "--json-report", f"--json-report-file={report}")
    current = ex.load(pytester.path / "expectations.toml")
    result = entries_from_sweeps.updated(current, entries_from_sweeps.observe([report], "selftest"))
    fails = {e.case: e for e in result.entries if e.kind == "fail"}
    # kept with its hand-written reason; status corrected; the fixed one removed.
    assert fails["*::test_fails_at_run"].reason == "outputs shifted on purpose"
    assert fails["*::test_wrong_status"].statuses == (Status.FAIL_MISMATCH,)
    assert fails["*::test_wrong_status"].reason == "believed to fail when lowering"
    assert "*::test_fixed" not in fails
    # the must_delegate failure is new: an entry with the error as a reason to edit.
    new = fails["test_cases.py::test_must_delegate"]
    assert new.flows == ("shifting",) and new.statuses == (Status.FAIL_LOWER,)
    assert new.reason.startswith("TODO explain: must be delegated")
    assert [e.kind for e in result.entries].count("skip") == 1
    # a failure the flow declares elsewhere (a host-dependent file) gets no entry here
    elsewhere = ex.Expectations((ex.Expectation(
        "fail", ("shifting",), "*::test_must_delegate", "host-dependent", source="x.toml:1"),))
    assert "test_cases.py::test_must_delegate" not in {
        e.case for e in entries_from_sweeps.updated(
            current, entries_from_sweeps.observe([report], "selftest"), elsewhere).entries}
    # what it writes reads back the same
    again = ex.load(write(tmp_path, entries_from_sweeps.dump(result, "selftest")))
    assert [(e.kind, e.flows, e.case, e.statuses, e.reason) for e in again.entries] == \
        [(e.kind, e.flows, e.case, e.statuses, e.reason) for e in sorted(
            result.entries, key=lambda e: ex.KINDS.index(e.kind))]


def test_case_id_removes_only_the_flow():
    assert case_id("a.py::t[xnnpack-float16]", "xnnpack") == "a.py::t[float16]"
    assert case_id("a.py::t[xnnpack]", "xnnpack") == "a.py::t"
    assert case_id("a.py::t[-1-xnnpack]", "xnnpack") == "a.py::t[-1]"
    assert case_id("a.py::t", "xnnpack") == "a.py::t"


def test_update_command_refuses_bad_input(tmp_path):
    """The command behind `make update-expectations`: unknown backend and missing report
    are usage errors (the rewrite itself is tested above on a real report)."""
    from etsuite.backends.harness.upkeep import update_expectations as cli

    with pytest.raises(SystemExit) as unknown:
        cli.main(["--backend", "nosuch", str(tmp_path / "r.json")])
    assert unknown.value.code == 2
    with pytest.raises(SystemExit) as missing:
        cli.main(["--backend", "portable", str(tmp_path / "absent.json")])
    assert missing.value.code == 2


def test_the_headline_of_a_chained_error_is_its_root_cause():
    chained = ("Exception: An error occurred when running the 'P' pass\n"
               "caused by: AssertionError: Attempting to convert non-NHWC compatible node\nmore")
    assert error_headline(chained) == "AssertionError: Attempting to convert non-NHWC compatible node"
    assert error_headline("RuntimeError: plain\nsecond line") == "RuntimeError: plain"
    assert error_headline("") == ""
    # A message that starts on its own line is what the headline shows.
    assert error_headline("torch._export.verifier.SpecViolationError: \nOperator aten.hypot is "
                          "not in Core ATen opset\nThere are a few things to try:") == \
        "torch._export.verifier.SpecViolationError: Operator aten.hypot is not in Core ATen opset"


# A declared mismatch and a declared crash: one ends in its test body, the other loses
# its forked child. The spy logs every call of verdicts.decide, in whichever process.
ONE_PATH_EXPECTATIONS = """\
[[fail]]
flows = ["shifting"]
case = "*::test_declared"
status = "fail_mismatch"
reason = "outputs shifted on purpose"

[[fail]]
flows = ["aborting"]
case = "*::test_declared"
status = "fail_crash"
reason = "the runtime aborts on purpose"
"""

ONE_PATH_CONFTEST = """
import dataclasses
import json
import os
from pathlib import Path

from etsuite.backends.harness import verdicts
from etsuite.backends.harness.flows.expectations import load
from etsuite.backends.portable.flows import PORTABLE

HERE = Path(__file__).parent


@dataclasses.dataclass(frozen=True)
class FaultyRuntime:
    inner: object
    abort: bool
    name: str = "faulty"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        outputs = self.inner.execute(loaded, inputs)
        if self.abort:
            os.abort()
        return [o + 1.0 for o in outputs]


def pytest_etsuite_flows(config):
    data = load(HERE / "expectations.toml", "expectations.toml")
    return [dataclasses.replace(PORTABLE, name=name, backend="selftest", expectations=data,
                                runtime=FaultyRuntime(PORTABLE.runtime, name == "aborting"))
            for name in ("shifting", "aborting")]


_decide = verdicts.decide


def _spy(flow, case, records, *args, **kwargs):
    outcome = _decide(flow, case, records, *args, **kwargs)
    with open(HERE / "decided.jsonl", "a") as log:
        log.write(json.dumps({"flow": flow.name, "case": case, "xfail": outcome.xfail,
                              "lost": kwargs.get("lost") is not None}) + "\\n")
    return outcome


verdicts.decide = _spy
"""


def test_a_lost_child_and_a_finished_test_take_one_verdict_path(pytester):
    """The crash (decided in the parent, from the records the child left) and the
    mismatch (decided in the child, after the test body) both go through
    verdicts.decide and come out alike: xfailed, their records xfail with what the
    pipeline or the lost child observed, each naming its entry."""
    pytester.makeconftest(ONE_PATH_CONFTEST)
    (pytester.path / "expectations.toml").write_text(ONE_PATH_EXPECTATIONS)
    pytester.makepyfile(test_cases="""
        import torch

        def test_declared(test_runner):
            test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(3, 2),))
    """)
    report = pytester.path / "r.json"
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
                        "--isolation", "fork", "-rx", "--json-report", f"--json-report-file={report}")
    tests = {t["nodeid"].split("::")[1]: t for t in json.loads(report.read_text())["tests"]}
    assert {name: t["outcome"] for name, t in tests.items()} == {
        "test_declared[shifting]": "xfailed", "test_declared[aborting]": "xfailed"}
    records = {name: records_of_test(t) for name, t in tests.items()}
    (mismatch,), (crash,) = records["test_declared[shifting]"], records["test_declared[aborting]"]
    assert (mismatch["status"], mismatch["observed_status"], mismatch["declared_by"]) == \
        ("xfail", "fail_mismatch", "expectations.toml:1")
    assert (crash["status"], crash["observed_status"], crash["declared_by"]) == \
        ("xfail", "fail_crash", "expectations.toml:7")
    assert mismatch["declared_strict"] is crash["declared_strict"] is True
    assert crash["stage"] == "run" and "SIGABRT" in crash["error"]

    decided = [json.loads(line) for line in (pytester.path / "decided.jsonl").read_text().splitlines()]
    assert sorted(decided, key=lambda d: d["flow"]) == [
        {"flow": "aborting", "case": "test_cases.py::test_declared", "lost": True,
         "xfail": "aborting: the runtime aborts on purpose (expectations.toml:7)"},
        {"flow": "shifting", "case": "test_cases.py::test_declared", "lost": False,
         "xfail": "shifting: outputs shifted on purpose (expectations.toml:1)"},
    ]
    text = result.stdout.str()
    for line in (d["xfail"] for d in decided):
        assert line in text  # pytest's short summary shows the same reason for both
    assert result.ret == 0


# One [[fail]] entry covers exactly the statuses it names: a test whose subtests fail in
# two ways (a shifted output and a runtime that aborts the process) under an entry that
# names only the mismatch fails, in either order, and names the crash.
COVERING_EXPECTATIONS = """\
[[fail]]
flows = ["faulty"]
case = "*::test_mismatch_then_crash"
status = "fail_mismatch"
reason = "outputs shifted on purpose"

[[fail]]
flows = ["faulty"]
case = "*::test_crash_then_mismatch"
status = "fail_mismatch"
reason = "outputs shifted on purpose"

[[fail]]
flows = ["faulty"]
case = "*::test_both_named"
status = ["fail_mismatch", "fail_crash"]
reason = "outputs shifted on purpose, and the runtime aborts on four elements"

[[fail]]
flows = ["lowered_only"]
case = "*::test_lowers"
status = "fail_lower"
reason = "believed not to lower (it does: stale, and this host can tell)"

[[fail]]
flows = ["lowered_only"]
case = "*::test_not_checkable"
status = "fail_run"
reason = "believed to fail on the device (this host cannot tell)"
"""

COVERING_CONFTEST = """
import dataclasses
import os
from pathlib import Path

from etsuite.backends.harness.flows.expectations import load
from etsuite.backends.portable.flows import PORTABLE


@dataclasses.dataclass(frozen=True)
class FaultyRuntime:
    inner: object
    name: str = "faulty"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        outputs = self.inner.execute(loaded, inputs)
        if inputs[0].numel() == 4:
            os.abort()
        return [o + 1.0 for o in outputs]


@dataclasses.dataclass(frozen=True)
class NoRuntime:
    name: str = "none"

    def missing(self, program):
        return "no runtime for this backend on this host"


def pytest_etsuite_flows(config):
    data = load(Path(__file__).parent / "expectations.toml", "expectations.toml")
    return [dataclasses.replace(PORTABLE, name="faulty", backend="selftest", expectations=data,
                                runtime=FaultyRuntime(PORTABLE.runtime)),
            dataclasses.replace(PORTABLE, name="lowered_only", backend="selftest",
                                expectations=data, runtime=NoRuntime())]
"""

COVERING_TESTS = """
import torch

SHIFTED, ABORTS = (torch.randn(3, 2),), (torch.randn(4),)


def test_mismatch_then_crash(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), SHIFTED)
    test_runner.lower_and_run_model(torch.nn.ReLU(), ABORTS)


def test_crash_then_mismatch(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), ABORTS)
    test_runner.lower_and_run_model(torch.nn.ReLU(), SHIFTED)


def test_both_named(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), SHIFTED)
    test_runner.lower_and_run_model(torch.nn.ReLU(), ABORTS)


def test_lowers(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), SHIFTED)


def test_not_checkable(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), SHIFTED)
"""


def test_an_entry_covers_only_the_statuses_it_names(pytester):
    """The crash is never absorbed by the mismatch's entry, whichever subtest comes
    first; an entry that names both holds. A fail_lower entry on a case that now lowers
    is stale even where nothing can run it; a fail_run entry there is not checkable."""
    pytester.makeconftest(COVERING_CONFTEST)
    (pytester.path / "expectations.toml").write_text(COVERING_EXPECTATIONS)
    pytester.makepyfile(test_cases=COVERING_TESTS)
    report = pytester.path / "r.json"
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider",
                        "--isolation", "fork", "--json-report", f"--json-report-file={report}",
                        "-k", "(faulty and not lowers and not checkable) or "
                              "(lowered_only and (lowers or checkable))")
    tests = {t["nodeid"].split("::")[1]: t for t in json.loads(report.read_text())["tests"]}
    outcomes = {name: t["outcome"] for name, t in tests.items()}
    assert outcomes == {
        "test_mismatch_then_crash[faulty]": "failed", "test_crash_then_mismatch[faulty]": "failed",
        "test_both_named[faulty]": "xfailed", "test_lowers[lowered_only]": "failed",
        "test_not_checkable[lowered_only]": "skipped"}, result.stdout.str()[-3000:]
    text = result.stdout.str()
    for name, crashed in (("test_mismatch_then_crash", 1), ("test_crash_then_mismatch", 0)):
        records = records_of_test(tests[f"{name}[faulty]"])
        by_status = {r["status"]: r for r in records}
        assert by_status["fail_crash"]["subtest"] == crashed, records  # kept, not xfail
        assert f"but subtest {crashed} ended fail_crash" in text
        if crashed == 1:  # the mismatch ran first: it is the declared failure it is
            assert by_status["xfail"]["observed_status"] == "fail_mismatch"
    both = records_of_test(tests["test_both_named[faulty]"])
    assert [(r["status"], r["observed_status"]) for r in both] == [
        ("xfail", "fail_mismatch"), ("xfail", "fail_crash")]
    (stale,) = records_of_test(tests["test_lowers[lowered_only]"])
    assert (stale["status"], stale["observed_status"]) == ("xpass", "lowered_not_run")
    assert "expected fail_lower (expectations.toml:19), but it quantized, lowered and " \
           "serialized" in text
    (unchecked,) = records_of_test(tests["test_not_checkable[lowered_only]"])
    assert (unchecked["status"], unchecked["declared_by"]) == ("lowered_not_run",
                                                                "expectations.toml:25")
    assert result.ret == 1
    # The summary counts what this host could check of the declared failures, and what not.
    assert summary.main([str(report), "--output", str(pytester.path / "s.md")]) == 0
    assert "- **Declared failures:** 4 checked on this host, 1 not checkable on this host " \
           "(selftest 1: lowered but not run, or the flow is unavailable)" in \
           (pytester.path / "s.md").read_text()


def test_a_fail_entry_reads_one_status_or_a_list(tmp_path):
    listed = ex.load(write(tmp_path, '[[fail]]\nflows = ["f"]\ncase = "c"\nreason = "r"\n'
                                     'status = ["fail_run", "fail_crash"]\n'))
    (entry,) = listed.entries
    assert entry.statuses == (Status.FAIL_RUN, Status.FAIL_CRASH)
    assert entry.covers(Status.FAIL_CRASH) and not entry.covers(Status.FAIL_MISMATCH)
    written = entries_from_sweeps.dump(listed, "b")
    assert ex.load(write(tmp_path, written)).entries[0].statuses == entry.statuses
    for bad, said in (('[]', "needs a 'status'"), ('["fail_run", "fail_run"]', "listed twice"),
                      ('["fail_run", "xpass"]', "'xpass' is not a failure"),
                      ('"fail_nothing"', "unknown status 'fail_nothing'"),
                      ('["fail_run", "fail_infra"]', "fail_infra .* no entry may declare it")):
        with pytest.raises(ex.ExpectationsError, match=said):
            ex.load(write(tmp_path, f'[[fail]]\nflows = ["f"]\ncase = "c"\nreason = "r"\n'
                                    f'status = {bad}\n'))
    # An entry without statuses (a flow defined in code) covers any stage's failure, but
    # never a crash, a timeout or an infrastructure failure (a lost runner device).
    anything = ex.Expectation("fail", ("f",), "c", "r")
    assert anything.covers(Status.FAIL_LOWER) and anything.covers(Status.FAIL_MISMATCH)
    assert not anything.covers(Status.FAIL_CRASH) and not anything.covers(Status.FAIL_TIMEOUT)
    assert not anything.covers(Status.FAIL_INFRA)


def test_entries_that_cannot_mean_what_they_say_are_refused_for_their_flow(tmp_path):
    """Checked per flow at session start (build_state): a tolerance whose element bound
    is the output's whole range (an int8 flow's 32 steps x 8 = 256 of 255), and a [[fail]]
    and a [[tolerance]] that can both name one case, each naming the lines."""
    from etsuite.backends.harness.flows.tolerance import FP32, INT8
    wide = ex.load(write(tmp_path, "[[tolerance]]\nflows = ['q*']\ncase = 'a.py::*'\n"
                                   "reason = 'r'\nbound_scale = 8\n"), "x.toml")
    ex.check_for_flow(wide, "q8", FP32)  # 8 x 2e-4 of the range: a bound that judges
    ex.check_for_flow(wide, "other", INT8)  # not its flow
    with pytest.raises(ex.ExpectationsError, match=r"x.toml:1: \[\[tolerance\]\] on flow q8: "
                       r"an element bound of 256 steps is the whole output range \(255 steps"):
        ex.check_for_flow(wide, "q8", INT8)
    both = ex.load(write(tmp_path, "[[fail]]\nflows = ['f']\ncase = 'a.py::t[x*]'\n"
                                   "status = 'fail_run'\nreason = 'r'\n\n[[tolerance]]\n"
                                   "flows = ['f', 'g']\ncase = 'a.py::t[*1]'\nreason = 'r'\n"
                                   "rtol = 0.1\n"), "y.toml")
    ex.check_for_flow(both, "g", FP32)  # the [[fail]] is not g's
    with pytest.raises(ex.ExpectationsError, match=r"y.toml:7: \[\[tolerance\]\] and "
                       r"\[\[fail\]\] at y.toml:1 can both name a case of flow f"):
        ex.check_for_flow(both, "f", FP32)


@pytest.mark.parametrize("first, second, overlap", [
    ("a.py::t[x*]", "a.py::t[*1]", True),     # t[x1]
    ("a.py::t[x*]", "a.py::t[y*]", False),
    ("*::test_add*", "b.py::test_add[f]", True),
    ("a.py::t?", "a.py::t", False),           # ? is exactly one character
    ("a*b*c", "*c*b*", True),                 # "acbc" matches both
    ("a.py::t", "a.py::t", True),
])
def test_patterns_overlap_when_one_text_matches_both(first, second, overlap):
    assert ex.patterns_overlap(first, second) is overlap
    assert ex.patterns_overlap(second, first) is overlap


def test_a_session_with_such_an_entry_stops_at_start_with_exit_4(pytester):
    pytester.makeconftest(COVERING_CONFTEST)
    (pytester.path / "expectations.toml").write_text(
        COVERING_EXPECTATIONS + '\n[[tolerance]]\nflows = ["lowered_only"]\ncase = "*::test_lowers"\n'
                                'reason = "overlaps a [[fail]] entry"\nrtol = 0.1\n')
    pytester.makepyfile(test_cases=COVERING_TESTS)
    result = run_forked(pytester, "--backend", "selftest", "-n", "0", "-p", "no:cacheprovider")
    assert result.ret == 4
    assert "expectations.toml:31: [[tolerance]] and [[fail]] at expectations.toml:19 can " \
           "both name a case of flow lowered_only" in result.stderr.str() + result.stdout.str()


def test_an_entry_that_names_no_collected_test_stops_the_run(pytester):
    """A renamed test leaves its entry a claim about nothing: the run stops at collection
    (exit 4) naming the line, before -k narrows anything; asking for other tests by node
    id does not count as the file collected."""
    pytester.makeconftest(COVERING_CONFTEST)
    stale = ('\n[[fail]]\nflows = ["faulty"]\ncase = "test_cases.py::test_renamed*"\n'
             'status = "fail_lower"\nreason = "the test was renamed"\n'
             '\n[[skip]]\nflows = ["faulty"]\ncase = "test_gone.py::test_x"\nreason = "gone"\n')
    (pytester.path / "expectations.toml").write_text(COVERING_EXPECTATIONS + stale)
    pytester.makepyfile(test_cases=COVERING_TESTS)
    args = ("--backend", "selftest", "-n", "0", "-p", "no:cacheprovider")
    result = run_forked(pytester, *args, "-k", "test_lowers")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, text
    assert "expectations.toml:31: [[fail]] names 'test_cases.py::test_renamed*' on flow " \
           "faulty, which matches none of the 5 tests collected from test_cases.py" in text
    assert "test_gone.py" not in text  # a missing file counts only in this repository
    narrowed = run_forked(pytester, *args, "test_cases.py::test_not_checkable", "-k", "lowered_only")
    assert narrowed.ret == 0, narrowed.stdout.str()
    assert "name no test" not in narrowed.stdout.str() + narrowed.stderr.str()


def test_an_entry_naming_a_missing_file_under_a_collected_folder_is_named(tmp_path):
    """The file part of an entry that no longer exists, under a folder the run collected;
    a missing file elsewhere, or an existing one this run did not collect, is not."""
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_here.py").write_text("")
    expectations = ex.load(write(tmp_path,
        '[[skip]]\nflows = ["f"]\ncase = "suite/test_gone.py::test_x"\nreason = "r"\n'
        '[[skip]]\nflows = ["f"]\ncase = "elsewhere/test_gone.py::test_x"\nreason = "r"\n'
        '[[skip]]\nflows = ["f"]\ncase = "suite/test_here.py::test_x"\nreason = "r"\n'
        '[[skip]]\nflows = ["g"]\ncase = "suite/test_gone2.py::test_x"\nreason = "r"\n'),
        "x.toml")
    lines = declared.entries_naming_nothing(expectations, "f", {}, set(), tmp_path,
                                            [tmp_path / "suite"])
    assert len(lines) == 1 and "'suite/test_gone.py::test_x', but suite/test_gone.py does " \
        "not exist" in lines[0]
