"""Localizing bugs of classes the suite's own tests do not plant (test/planted_faults.py),
the way a real lowering bug arrives, on the MLP of test_localize_copied.py (real export,
lowering and execution, portable and XNNPACK):

- `graph:fold:mul`: a constant folded wrongly. A pass inside
  `to_edge_transform_and_lower` gives the copy's `mul` (`linear_1 * 3`) the constant 4.5.
  The right answer is that `mul` node: its runtime output is the first off the rule.
- `graph:permute_delegate_output`: the lowered graph reads the first delegate call's
  output flipped along its last dimension (an `aten.flip` inserted after the call, with
  no debug handle, as a lowering that gets the output's layout wrong at the call's boundary
  would). The delegate's own output is right; the right answer is the op that consumes it
  and changes it, the flip, which no exported node made: named as an op the lowering
  added (`added`), after the value it follows (the delegate call's output, `softmax`).
  Portable has no delegate call, so the plant changes nothing there: it passes."""

import json
import os

import pytest

from test_localize_copied import CASES

pytestmark = pytest.mark.slow

MUL_LINE = CASES.lstrip("\n").splitlines().index("        hidden = self.second(hidden) * 3") + 1


@pytest.fixture
def run_planted(pytester, run_suite, monkeypatch):
    """run_planted(plant, *args): the MLP, ETSUITE_PLANT set, both flows."""
    pytester.makepyfile(test_cases=CASES)

    def run(plant: str):
        monkeypatch.setenv("ETSUITE_PLANT", plant)
        return run_suite("-p", "planted_faults", "--seed", "7", "-p", "no:xdist",
                         "--flow", "portable", "--flow", "xnnpack")

    return run


def _record(run, flow: str) -> dict:
    records = run.records(f"test_mlp[{flow}]")
    assert len(records) == 1, run.stdout[-3000:] + run.stderr[-3000:]
    found = records[0]["localization"] or {}
    log = os.environ.get("ETSUITE_UNPLANTED_LOG")  # where the figures are written, if asked
    if log:
        with open(log, "a") as figures:
            figures.write(json.dumps({"flow": flow, "status": records[0]["status"],
                                      "localization": found}) + "\n")
    print(f"{flow}: {records[0]['status']}, {found.get('node') or found.get('target')}, "
          f"{found.get('seconds')} s, {found.get('lowerings')} lowerings, "
          f"{found.get('reason')}")
    return records[0]


def test_a_constant_folded_wrongly_is_localized_to_its_op(run_planted):
    run = run_planted("graph:fold:mul")
    for flow in ("portable", "xnnpack"):
        record = _record(run, flow)
        assert record["status"] == "fail_mismatch", record
        found = record["localization"]
        assert found["localized"] is True, found
        assert (found["node"], found["target"]) == ("mul", "aten.mul.Tensor"), found
        assert found["source"] == f"test_cases.py:{MUL_LINE}", found
        assert found["matched_by"] == "name", found
        # what feeds it was compared, and agreed
        assert {"linear", "relu", "linear_1"} <= set(found["matches"]["name"]), found
        if flow == "xnnpack":  # the whole MLP is one delegate call: split, then named
            assert found["method"] == "intermediates, one node per delegate call", found
            assert found["delegate"] == "XnnpackBackend", found
            assert found["lowerings"] == 2, found
        else:
            assert found["method"] == "intermediates", found
            assert found["lowerings"] == 1, found


def test_a_permuted_delegate_output_is_localized_to_the_op_that_reads_it(run_planted):
    run = run_planted("graph:permute_delegate_output")
    record = _record(run, "xnnpack")
    assert record["status"] == "fail_mismatch", record
    found = record["localization"]
    assert found["localized"] is True, found
    assert found["method"] == "intermediates", found
    # the delegate call's own output was compared and is within the rule ...
    assert found["matches"] == {"name": ["softmax"]}, found
    # ... and the op after it, which no exported node made, changed it
    assert found["added"] is True and found["node"] is None, found
    assert "flip" in found["target"], found
    assert found["after"] == {"node": "softmax", "delegate": "XnnpackBackend"}, found
    assert found["error"]["error_ratio"] > 1, found
    assert found["lowerings"] == 1, found
    # portable: no delegate call, nothing permuted
    record = _record(run, "portable")
    assert record["status"] == "pass" and record["localization"] is None, record


HALF_CASES = CASES.replace("    test_runner.lower_and_run_model(ThreeLayers(), (torch.randn(4, 16),))",
                           "    test_runner.lower_and_run_model(ThreeLayers().half(), "
                           "(torch.randn(4, 16).half(),))")


def test_float16_intermediates_unreadable_are_said_per_op_and_bisection_goes_on(
        pytester, run_suite, monkeypatch):
    """The MLP in float16 on portable, its tanh computed as a sigmoid (graph:swap). This
    executorch's ETDump of a run that logs float16 values is malformed (`flatc` exits 1:
    "string contains non-utf8 bytes"; the same program in float32 reads), so no
    intermediate can be read: each float16 op's value is named unreadable, with why, and
    nothing compared is "could not compare", after which bisection over graph prefixes
    (which judges each prefix's own outputs, no ETDump) names the tanh. Before, the
    record was "not localized: CalledProcessError: ..." and nothing else was tried."""
    assert HALF_CASES != CASES
    pytester.makepyfile(test_cases=HALF_CASES)
    monkeypatch.setenv("ETSUITE_PLANT", "graph:swap:tanh:sigmoid")
    run = run_suite("-p", "planted_faults", "--seed", "7", "-p", "no:xdist",
                    "--flow", "portable")
    record = _record(run, "portable")
    assert record["status"] == "fail_mismatch", record
    found = record["localization"]
    (tried,) = found["tried"]
    assert tried["method"] == "intermediates" and tried["compared"] == 0, tried
    assert tried["reason"].startswith(
        "could not compare: the runtime's ETDump could not be read"), tried
    notes = {note["node"]: note for note in tried["unreadable"]}
    assert {"linear", "relu", "linear_1", "mul", "tanh", "linear_2", "softmax"} <= set(notes)
    assert notes["tanh"]["op"] == "aten.tanh.default", notes
    assert notes["tanh"]["why"] == ("its float16 value was unreadable: the ETDump of the run "
                                    "could not be read (CalledProcessError: flatc exited with "
                                    "status 1)"), notes
    assert found["method"] == "bisection over graph prefixes", found
    assert found["localized"] is True, found
    assert (found["node"], found["target"]) == ("tanh", "aten.tanh.default"), found
    assert found["lowerings"] == 1 + found["attempts"], found


TWO_CALLS = """
import torch


class TwoCalls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 32)
        self.second = torch.nn.Linear(32, 32)
        self.third = torch.nn.Linear(32, 32)
        self.fourth = torch.nn.Linear(32, 8)

    def forward(self, x):
        hidden = torch.relu(self.second(torch.relu(self.first(x))))
        hidden = torch.cumsum(hidden, -1)
        hidden = torch.tanh(self.third(hidden) * 3)
        return torch.softmax(self.fourth(hidden), -1)


def test_mlp(test_runner):
    test_runner.lower_and_run_model(TwoCalls(), (torch.randn(4, 16),))
"""


def _mul_folded_on_xnnpack(pytester, run_suite, monkeypatch, cases: str) -> dict:
    """`cases` on XNNPACK with the mul's constant folded wrongly: the record fails and
    names the mul after splitting a delegate call; its localization."""
    pytester.makepyfile(test_cases=cases)
    monkeypatch.setenv("ETSUITE_PLANT", "graph:fold:mul")
    run = run_suite("-p", "planted_faults", "--seed", "7", "-p", "no:xdist",
                    "--flow", "xnnpack")
    record = _record(run, "xnnpack")
    assert record["status"] == "fail_mismatch", record
    found = record["localization"]
    assert found["localized"] is True, found
    assert (found["node"], found["target"]) == ("mul", "aten.mul.Tensor"), found
    assert found["method"] == "intermediates, one node per delegate call", found
    return found


def test_only_the_culprit_partition_is_split(pytester, run_suite, monkeypatch):
    """Two XNNPACK delegate calls (linear, relu, linear, relu | cumsum on portable |
    linear, mul, tanh, linear, softmax), the mul's constant folded wrongly: the second
    call is the first off the rule, and only its partition is lowered again one node per
    call (5 calls), the first staying whole (1): 6 delegate calls, not 9."""
    found = _mul_folded_on_xnnpack(pytester, run_suite, monkeypatch, TWO_CALLS)
    assert found["within"]["nodes"] == 5, found
    assert found["split_calls"] == 6, found
    assert found["lowerings"] == 2, found
    assert "_inside" not in found, found


DEEP = """
import torch


class Deep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(16, 16) for _ in range(5))
        self.last = torch.nn.Linear(16, 8)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        x = torch.tanh(x * 3)
        return torch.softmax(self.last(x), -1)


def test_mlp(test_runner):
    test_runner.lower_and_run_model(Deep(), (torch.randn(4, 16),))
"""


def test_a_large_culprit_partition_is_halved_before_it_is_split(pytester, run_suite,
                                                               monkeypatch):
    """One XNNPACK call of 14 computing nodes (5 x linear, relu; mul, tanh, linear,
    softmax), the mul's constant folded wrongly: more than HALVING_ABOVE (8), so the
    partition is lowered as two calls of 7 first, the second is off the rule, and only
    its 7 nodes are then split one per call, the first 7 staying one call: 3 lowerings,
    8 delegate calls in the last (not 14)."""
    found = _mul_folded_on_xnnpack(pytester, run_suite, monkeypatch, DEEP)
    assert found["within"]["nodes"] == 14, found
    assert found["lowerings"] == 3, found
    assert found["split_calls"] == 8, found
