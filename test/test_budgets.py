"""Budgets on real runs: tiny modules lowered with XNNPACK (its partitioner offered only
the add config, so a relu stays outside the delegate) and run, with a budgets.toml that
some of them break; then the updater's budgets from that run, which a second run must
keep. And the loader's rules on files alone."""

import json
from pathlib import Path

import pytest

from conftest import ADD_CASES, run_forked
from etsuite.backends.harness.contract.report import records_of_test
from etsuite.backends.harness.contract.statuses import FAILING, Status
from etsuite.backends.harness.flows import budgets as bd
from etsuite.backends.harness.flows.expectations import Expectation
from etsuite.backends.harness.upkeep import update_budgets

CONFTEST = """
import dataclasses
from pathlib import Path

from executorch.backends.xnnpack.partition import xnnpack_partitioner as module
from executorch.backends.xnnpack.partition.config.generic_node_configs import AddConfig

from etsuite.backends.harness.flows.budgets import load
from etsuite.backends.xnnpack.flows import XNNPACK

_real = module.XnnpackPartitioner


class AddOnly(_real):
    def __init__(self, *args, **kwargs):
        super().__init__(configs=[AddConfig])


module.XnnpackPartitioner = AddOnly


def pytest_etsuite_flows(config):
    budgets = load(Path(__file__).parent / "budgets.toml", "budgets.toml")
    return [dataclasses.replace(XNNPACK, name="tiny", backend="selftest", budgets=budgets)]
"""

CASES = ADD_CASES + """

def test_add_timed(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4, 8), torch.randn(4, 8)))
"""

BUDGETS = """# hand-written
[[budget]]
flows = ["tiny"]
case = "*::test_add"
max_pte_bytes = 100
reason = "below any program"

[[budget]]
flows = ["tiny"]
case = "*::test_add_relu"
min_delegation_share = 1.0
reason = "the whole graph"

[[budget]]
flows = ["tiny"]
case = "*::test_add_relu"
host = "elsewhere"
max_ms_per_call = 0
reason = "another host's"

[[budget]]
flows = ["tiny"]
case = "*::test_add_timed"
host = "here"
max_ms_per_call = 0
reason = "no call takes no time"

[[budget]]
flows = ["t*"]
case = "*"
max_pte_bytes = 10000000
min_delegation_share = 0.0
max_planned_bytes = 0
reason = "holds for all"
"""


def session(folder: Path, name: str) -> tuple[int, dict]:
    path = folder / "reports" / f"{name}.json"
    result = run_forked(folder, "-p", "no:cacheprovider", "-p", "no:xdist", "--backend",
                        "selftest", "--seed", "5", "--budget-host", "here", "--json-report",
                        f"--json-report-file={path}", scratch=folder.parent / "scratch")
    tests = {t["nodeid"].split("::")[1]: t for t in json.loads(path.read_text())["tests"]}
    return result.ret, tests


@pytest.fixture
def first(tmp_path):
    """The generated folder and its first run (its budgets: BUDGETS). Per test: the
    harness runs each of the project's tests in a forked child, so a wider scope would
    share nothing."""
    root = tmp_path
    folder = root / "cases"
    folder.mkdir()
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_cases.py").write_text(CASES)
    (folder / "budgets.toml").write_text(BUDGETS)
    (root / "scratch").mkdir()
    return folder, *session(folder, "first")


def test_a_breach_fails_naming_the_budget_the_value_and_the_limit(first):
    _, ret, tests = first
    assert ret == 1
    record = {name: records_of_test(t)[0] for name, t in tests.items()}
    assert {n: t["outcome"] for n, t in tests.items()} == {
        "test_add[tiny]": "failed", "test_add_relu[tiny]": "failed",
        "test_add_timed[tiny]": "failed"}
    assert {n: r["status"] for n, r in record.items()} == dict.fromkeys(record, "fail_budget")
    add = record["test_add[tiny]"]
    assert add["error"] == (f"budget max_pte_bytes: measured {add['pte_size']} bytes, "
                            f"limit 100 bytes (budgets.toml:2)")
    assert add["pte_size"] > 100 and add["stage"] == "budget"
    # The same figures as data, for the summary to rank (its Budget breaches section).
    assert add["budget_breaches"] == [{"limit": "max_pte_bytes", "measured": add["pte_size"],
                                       "value": 100, "source": "budgets.toml:2"}]
    assert "budget max_pte_bytes: measured" in tests["test_add[tiny]"]["call"]["longrepr"]
    # A partitioner that takes part of the graph: 1 of 2 computing nodes delegated. The
    # time budget of another host does not apply, nor a planned-memory budget where no
    # native runner reported planned memory.
    relu = record["test_add_relu[tiny]"]
    assert relu["error"] == "budget min_delegation_share: measured 0.500, limit 1.000 (budgets.toml:8)"
    assert relu["delegated_nodes"] == 1 and relu["undelegated_nodes"] >= 1
    assert relu["budget_breaches"] == [{"limit": "min_delegation_share", "measured": 0.5,
                                        "value": 1.0, "source": "budgets.toml:8"}]
    # The time budget of the host this run declared (--budget-host here) applies.
    slow = record["test_add_timed[tiny]"]
    assert slow["error"].startswith("budget max_ms_per_call: measured ")
    assert slow["error"].endswith(" ms, limit 0.000 ms (budgets.toml:21)")


def test_the_updaters_budgets_hold_on_a_second_run(first):
    folder, _, tests = first
    records = {n: records_of_test(t)[0] for n, t in tests.items()}
    seen = update_budgets.observe([folder / "reports" / "first.json"], "selftest")
    assert sorted(seen) == [(f"test_cases.py::{n}", "tiny")
                            for n in ("test_add", "test_add_relu", "test_add_timed")]
    current = bd.load(folder / "budgets.toml", "budgets.toml")
    new = update_budgets.updated(current, seen, "here", "2026-12-06")
    text = update_budgets.dump(new, "selftest", ["# hand-written"])
    add = next(e for e in new.entries if e.case == "test_cases.py::test_add" and e.host is None)
    limits = dict(add.limits)
    assert limits[bd.PTE_LIMIT] == -(-records["test_add[tiny]"]["pte_size"] * 5 // 4096) * 1024
    assert limits[bd.SHARE_LIMIT] == 0.95 and add.reason.startswith("measured share 1.000")
    relu = next(e for e in new.entries if e.case == "test_cases.py::test_add_relu" and e.host is None)
    assert dict(relu.limits)[bd.SHARE_LIMIT] == 0.45
    timed = [e for e in new.entries if e.host == "here" and e.case.startswith("test_cases.py")]
    # Each timed once in-process: the limit clears that timing's noise, not only 2x.
    assert len(timed) == 3 and all(dict(e.limits)[bd.TIME_LIMIT] >= 5.0 for e in timed)
    # Kept: the hand-written entries with patterns, the other host's time budget, the header.
    assert "another host's" in text and "holds for all" in text and text.startswith("# hand-written")
    assert bd.load(write(folder.parent, text), "again.toml").entries == tuple(
        bd.Budget(e.flows, e.case, e.limits, e.reason, e.host, f"again.toml:{line}")
        for e, line in zip(new.entries, _lines(text), strict=True))
    # The measured entries alone (the hand-written ones were written to fail) hold.
    kept = [e for e in new.entries if e.case.startswith("test_cases.py")]
    (folder / "budgets.toml").write_text(update_budgets.dump(bd.Budgets(tuple(kept)), "selftest"))
    ret, second = session(folder, "second")
    statuses = {n: records_of_test(t)[0]["status"] for n, t in second.items()}
    assert (ret, statuses) == (0, {"test_add[tiny]": "pass", "test_add_relu[tiny]": "pass",
                                   "test_add_timed[tiny]": "pass"}), statuses


def _lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line == "[[budget]]"]


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "budgets.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, message", [
    ('host = "ci"\nmax_pte_bytes = 10', "budgets.toml:1: an entry with 'host' sets only max_ms_per_call"),
    ("max_ms_per_call = 1", "budgets.toml:1: max_ms_per_call needs a 'host'"),
    ("min_delegation_share = 1.5", "min_delegation_share must be a non-negative number at most 1"),
    ("max_bytes = 1", "unknown key(s) ['max_bytes']"),
    ("", "sets no limit"),
])
def test_the_loader_refuses_a_bad_entry_naming_its_line(tmp_path, body, message):
    path = write(tmp_path, f'[[budget]]\nflows = ["x"]\ncase = "*"\nreason = "r"\n{body}\n')
    with pytest.raises(bd.BudgetsError, match=None) as error:
        bd.load(path, "budgets.toml")
    assert message in str(error.value)



@pytest.mark.parametrize("text, message", [
    # Before: "unknown key(s) ['a', 'c', 'e', 's', 'w']", the letters of its keys.
    ('[budget]\nflows = ["x"]\ncase = "c"\nreason = "r"\nmax_pte_bytes = 1\n',
     "budgets.toml:1: 'budget' must be written as [[budget]] tables, one per entry"),
    # Before: accepted; the second never decides a limit.
    ('[[budget]]\nflows = ["x*"]\ncase = "*"\nreason = "r"\nmax_pte_bytes = 1\n\n'
     '[[budget]]\nflows = ["x1"]\ncase = "a.py::t"\nreason = "r"\nmax_pte_bytes = 2\n',
     "budgets.toml:7: this [[budget]] can never apply: each of its limits is decided first "
     "by an entry that names every flow and case it names (max_pte_bytes by budgets.toml:1)"),
])
def test_a_malformed_file_is_one_error_naming_its_line(tmp_path, text, message):
    with pytest.raises(bd.BudgetsError) as error:
        bd.load(write(tmp_path, text), "budgets.toml")
    assert str(error.value).startswith(message)


def test_the_first_entry_setting_a_limit_decides_it_and_time_needs_the_host(tmp_path):
    data = bd.load(write(tmp_path, BUDGETS), "b.toml")
    limits = data.limits("tiny", "test_cases.py::test_add_relu", None)
    assert {k: v.source for k, v in limits.items()} == {
        bd.SHARE_LIMIT: "b.toml:8", bd.PTE_LIMIT: "b.toml:28", bd.PLANNED_LIMIT: "b.toml:28"}
    assert limits_on(data, "elsewhere")[bd.TIME_LIMIT].source == "b.toml:14"
    assert bd.TIME_LIMIT not in limits_on(data, "here")


def limits_on(data, host):
    return data.limits("tiny", "test_cases.py::test_add_relu", host)


def test_fail_budget_is_a_failure_only_an_entry_naming_it_absorbs():
    assert Status.FAIL_BUDGET in FAILING
    assert Status.FAIL_BUDGET.rank == Status.FAIL_RECIPE_ACCURACY.rank + 1
    any_failure = Expectation("fail", ("x",), "*", "r")
    named = Expectation("fail", ("x",), "*", "r", statuses=(Status.FAIL_BUDGET,))
    assert not any_failure.covers(Status.FAIL_BUDGET) and any_failure.covers(Status.FAIL_MISMATCH)
    assert named.covers(Status.FAIL_BUDGET)


def test_the_updater_writes_no_share_floor_of_zero():
    seen = {("a.py::test_x", "portable"): update_budgets.Worst({bd.SHARE_LIMIT: 0.03, bd.PTE_LIMIT: 2000.0})}
    (entry,) = update_budgets.updated(bd.Budgets(), seen, None, "2026-12-06").entries
    assert entry.limits == ((bd.PTE_LIMIT, 3072),) and entry.reason == "measured .pte 2000 B on 2026-12-06"
