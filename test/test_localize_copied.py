"""Localizing a bug planted from outside the project (test/planted_faults.py), the way a
real lowering bug arrives: a pass inside `executorch.exir.to_edge_transform_and_lower`
that lowers a deep copy of the exported program with `aten.tanh` computed as
`aten.sigmoid`. The copy has graphs of its own, so the runtime's ops reach the exported
program's nodes only by stable identity (names along the provenance chain), never by the
objects' ids; real export, lowering and execution, portable and XNNPACK."""

import pytest

pytestmark = pytest.mark.slow

CASES = """
import torch


class ThreeLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 32)
        self.second = torch.nn.Linear(32, 32)
        self.third = torch.nn.Linear(32, 8)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        hidden = self.second(hidden) * 3
        hidden = torch.tanh(hidden)
        return torch.softmax(self.third(hidden), -1)


def test_mlp(test_runner):
    test_runner.lower_and_run_model(ThreeLayers(), (torch.randn(4, 16),))
"""
TANH_LINE = CASES.lstrip("\n").splitlines().index("        hidden = torch.tanh(hidden)") + 1


@pytest.fixture
def run_planted(pytester, run_suite, monkeypatch):
    """run_planted(plant, *args): the MLP above, ETSUITE_PLANT set (see
    test/planted_faults.py; "" plants nothing)."""
    pytester.makepyfile(test_cases=CASES)

    def run(plant: str, *args):
        monkeypatch.setenv("ETSUITE_PLANT", plant)
        return run_suite("-p", "planted_faults", "--seed", "7", "-p", "no:xdist", *args)

    return run


@pytest.mark.parametrize("flow", ["portable", "xnnpack"])
@pytest.mark.parametrize(("plant", "how"), [("swap", "name"), ("swap_renamed", "source")])
def test_a_swap_in_a_copied_program_is_localized_to_the_tanh(run_planted, flow, plant, how):
    """The copy keeps its nodes' names and provenance (swap): every compared node is
    matched by name along its provenance chain. Renamed, its provenance dropped
    (swap_renamed): by source line and module path, the last resort."""
    run = run_planted(f"graph:{plant}:tanh:sigmoid", "--flow", flow)
    records = run.records(f"test_mlp[{flow}]")
    assert len(records) == 1, run.stdout[-3000:] + run.stderr[-3000:]
    record = records[0]
    assert record["status"] == "fail_mismatch", record
    found = record["localization"]
    assert found["localized"] is True, found
    assert found["method"].startswith("intermediates"), found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default"), found
    assert found["source"] == f"test_cases.py:{TANH_LINE}", found
    assert found["matched_by"] == how, found
    assert list(found["matches"]) == [how] and "tanh" in found["matches"][how], found
    assert found["compared"] >= 2, found  # something before it was compared, and agreed
    if flow == "xnnpack":  # one delegate call, then lowered again one node per call
        assert found["delegate"] == "XnnpackBackend"
        assert found["method"] == "intermediates, one node per delegate call"
    assert found["lowerings"] == (2 if flow == "xnnpack" else 1), found


def test_without_the_plant_the_mlp_passes(run_planted):
    run = run_planted("", "--flow", "portable")
    (record,) = run.records("test_mlp[portable]")
    assert record["status"] == "pass" and record["localization"] is None, record


@pytest.mark.parametrize("flow", ["portable", "xnnpack"])
def test_when_the_intermediates_cannot_reach_the_tanh_bisection_does(run_planted, flow):
    """The copy's ops get names of their own and lose their provenance and source
    (graph:swap_bare): no runtime op maps to an exported node, and nothing compared is no
    verdict ("could not compare"): bisection over prefixes of the graph comes next, and
    names the tanh."""
    run = run_planted("graph:swap_bare:tanh:sigmoid", "--flow", flow)
    records = run.records(f"test_mlp[{flow}]")
    assert len(records) == 1, run.stdout[-3000:] + run.stderr[-3000:]
    record = records[0]
    assert record["status"] == "fail_mismatch", record
    found = record["localization"]
    (tried,) = found["tried"]
    assert tried["method"] == "intermediates" and tried["localized"] is False, tried
    assert tried["reason"].startswith("could not compare: no runtime intermediate was "
                                      "matched"), tried
    assert tried["compared"] == 0 and tried["matches"] == {}, tried
    assert found["method"] == "bisection over graph prefixes", found
    assert found["localized"] is True, found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default"), found
    assert found["source"] == f"test_cases.py:{TANH_LINE}", found
    assert found["lowerings"] == 1 + found["attempts"], found
