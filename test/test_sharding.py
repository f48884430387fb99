"""`--shard K/N` (backends/harness/sharding.py, durations.py and the plugin): shards are
disjoint, cover the selection, are balanced by recorded durations, keep a test case's
flows together when that costs little, and come out the same in the pytest process and
xdist workers."""

import json
import random

import pytest

from etsuite.backends.harness import sharding
from etsuite.backends.harness.contract.durations import durations_document
from etsuite.backends.harness.sharding import (
    DEFAULT_SECONDS,
    DurationsError,
    Item,
    ShardError,
    estimates,
    load_durations,
    longest_first,
)

FLOWS = ("fp32", "int8")


def items_of(cases: int, flows=FLOWS) -> list[Item]:
    return [Item(f"suite/test_op.py::test_case_{i}[{flow}]", flow)
            for i in range(cases) for flow in flows]


def recorded(items: list[Item], seed: int = 0) -> dict[str, float]:
    """Made-up durations: int8 several times fp32, spread like a real suite."""
    rng = random.Random(seed)
    return {i.nodeid: rng.uniform(1, 20) * (4 if i.flow == "int8" else 1) for i in items}


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_are_disjoint_and_cover_the_selection(count):
    items = items_of(25)
    plan = sharding.plan(items, recorded(items), count)
    assert len(plan.shards) == count
    flat = [n for shard in plan.shards for n in shard]
    assert sorted(flat) == sorted(i.nodeid for i in items)  # each item exactly once
    assert plan.items == len(items) and plan.estimated == 0


def test_the_plan_ignores_collection_order():
    items = items_of(30)
    durations = recorded(items)
    shuffled = items[:]
    random.Random(1).shuffle(shuffled)
    first, second = sharding.plan(items, durations, 4), sharding.plan(shuffled, durations, 4)
    assert [set(s) for s in first.shards] == [set(s) for s in second.shards]
    assert first.digest == second.digest
    # Within a shard, the items keep the order they were collected in.
    order = {i.nodeid: n for n, i in enumerate(shuffled)}
    assert all(s == sorted(s, key=order.get) for s in second.shards)


def test_shards_are_balanced_by_the_recorded_durations():
    items = items_of(60)
    durations = recorded(items)
    plan = sharding.plan(items, durations, 4)
    loads = [sum(durations[n] for n in shard) for shard in plan.shards]
    assert loads == pytest.approx(plan.predicted)
    assert max(loads) / (sum(loads) / 4) < 1.1
    # Counting items instead would be far worse: int8 items cost four times as much.
    assert plan.grouped


def test_the_flows_of_one_case_stay_together():
    items = items_of(20)
    plan = sharding.plan(items, recorded(items), 3)
    for shard in plan.shards:
        cases = {n.split("[")[0] for n in shard}
        assert all(f"{case}[{flow}]" in shard for case in cases for flow in FLOWS)


def test_single_items_when_whole_cases_would_unbalance_the_shards():
    items = items_of(6, flows=("a", "b", "c", "d"))
    durations = {i.nodeid: 1.0 for i in items}
    for i in items[:4]:  # case 0 costs 100 s in each of its four flows
        durations[i.nodeid] = 100.0
    plan = sharding.plan(items, durations, 4)
    assert not plan.grouped
    assert max(plan.predicted) < 110  # whole, case 0 alone would make one shard 400 s
    heavy = [n for n, i in enumerate(plan.shards) if any(x.nodeid in i for x in items[:4])]
    assert len(heavy) == 4


def test_an_unknown_item_costs_the_median_of_its_flow():
    items = items_of(5)
    durations = {i.nodeid: (2.0 if i.flow == "fp32" else 10.0) + n
                 for n, i in enumerate(items[:-2])}
    # Recorded: fp32 2, 4, 6, 8 s and int8 11, 13, 15, 17 s; case 4 is new in both flows.
    cost = estimates(items, durations)
    assert (cost[items[-2].nodeid], cost[items[-1].nodeid]) == (5.0, 14.0)
    assert cost[items[0].nodeid] == 2.0  # a recorded item costs what it took
    assert estimates([Item("x.py::t[new]", "new")], {})["x.py::t[new]"] == DEFAULT_SECONDS
    plan = sharding.plan(items, durations, 2)
    assert plan.estimated == 2


def test_longest_first_orders_by_estimate_and_keeps_ties_in_collection_order():
    items = items_of(6)
    durations = recorded(items[:-2], seed=3)  # case 5 unrecorded: its flows' medians
    order = longest_first(items, durations)
    assert sorted(order) == sorted(i.nodeid for i in items)
    cost = estimates(items, durations)
    assert [cost[n] for n in order] == sorted(cost.values(), reverse=True)
    same = [Item(f"t.py::t{i}[fp32]", "fp32") for i in range(5)]
    assert longest_first(same, {}) == [i.nodeid for i in same]


@pytest.mark.parametrize("text", ["2", "0/4", "5/4", "a/b", "1/0", "-1/3", "1/2/3"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(ShardError, match="--shard"):
        sharding.parse_shard(text)


def test_durations_files_are_read_and_checked(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(durations_document("x", {"a.py::t[f]": 1.23456}, ["r.json"])))
    assert load_durations([good, tmp_path / "absent.json"]) == {"a.py::t[f]": 1.235}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "durations": {"a.py::t": "slow"}}))
    with pytest.raises(DurationsError, match="bad.json"):
        load_durations([bad])


# ---------------------------------------------------------------- in the plugin

CASES = """
import pytest

@pytest.mark.parametrize("size", [1, 2, 3])
def test_op(test_runner, size):
    pass

def test_other(test_runner):
    pass

def test_plain():
    pass
"""


def _selected(run) -> set[str]:
    return {t["nodeid"] for t in run.report["tests"]}


@pytest.mark.slow
def test_shards_of_a_run_with_xdist_cover_the_unsharded_run(pytester, run_suite):
    """Workers collect and deselect on their own: the shards must still partition the
    selection, and each report must say which shard of which run it is."""
    pytester.makepyfile(test_cases=CASES)
    common = ("--backend", "portable", "--backend", "xnnpack", "--isolation", "none",
              "--run-id", "ci-7")
    whole = run_suite(*common, "-n", "0")
    assert whole.ret == 0, whole.stdout
    shards = [run_suite(*common, "--shard", f"{k}/2", "-n", "2") for k in (1, 2)]
    for k, run in enumerate(shards, 1):
        assert run.ret == 0, run.stdout
        facts = run.facts.run
        assert (facts.id, facts.shard, facts.shards) == ("ci-7", k, 2)
        assert facts.selection == "portable+xnnpack"
        assert facts.plan["items"] == len(whole.report["tests"])
    first, second = (_selected(run) for run in shards)
    assert first and second and not first & second
    assert first | second == _selected(whole)
    # The seed of a sharded run without --seed is the same for every shard.
    assert shards[0].facts.seed == shards[1].facts.seed


@pytest.mark.slow
def test_an_empty_shard_is_not_an_error_and_a_bad_shard_is(pytester, run_suite):
    pytester.makepyfile(test_cases="def test_one(test_runner):\n    pass\n")
    empty = run_suite("--backend", "portable", "--isolation", "none", "-n", "0",
                      "--shard", "2/2")
    assert empty.ret == 0, empty.stdout
    assert empty.report["tests"] == []
    assert "shard 2/2 holds none of the 1 selected items" in empty.stderr
    bad = run_suite("--backend", "portable", "-n", "0", "--shard", "3/2")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "K must be between 1 and N" in bad.stderr
