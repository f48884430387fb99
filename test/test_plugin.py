"""The plugin's collection behaviour: markers, per-flow expansion, pruning, usage errors,
seeds. Collection-only runs are in-process (fast); the seed test runs real tests."""

import json

import pytest

from conftest import TEST_FLOWS_CONFTEST, run_forked
from etsuite.backends.harness.contract.report import facts_of_report, records_of_test
from etsuite.backends.harness.flows.registry import builtin_flows

XNNPACK_FLOWS = {
    "xnnpack", "xnnpack_dynamic_int8_per_channel", "xnnpack_static_int8_per_channel",
    "xnnpack_static_int8_per_tensor",
}
BUILTIN_FLOWS = XNNPACK_FLOWS | {"portable", "vulkan", "vulkan_static_int8_per_channel"}

SIMPLE_TEST = """
def test_op(test_runner):
    pass

def test_plain():
    pass
"""


def collected_flows(result) -> set:
    return {line.split("[", 1)[1].rstrip("]") for line in result.outlines
            if "::test_op[" in line}


@pytest.fixture
def simple(pytester):
    pytester.makepyfile(test_simple=SIMPLE_TEST)
    return pytester


def test_markers_registered_for_every_flow_and_backend(pytester):
    result = pytester.runpytest("--markers")
    text = result.stdout.str()
    for flow in BUILTIN_FLOWS:
        assert f"@pytest.mark.flow_{flow}:" in text
    assert "@pytest.mark.backend_xnnpack:" in text
    assert "@pytest.mark.backend_portable:" in text


def test_test_runner_expands_once_per_flow(simple):
    """Every flow but those that name their suites (LLM recipes: test_llm_recipes.py)."""
    result = simple.runpytest("--collect-only", "-q")
    assert collected_flows(result) == {f.name for f in builtin_flows() if f.suites is None}
    assert BUILTIN_FLOWS <= collected_flows(result)
    assert "test_simple.py::test_plain" in result.stdout.str()


@pytest.mark.parametrize("args, expected", [
    (["--backend", "xnnpack"], XNNPACK_FLOWS),
    (["--backend", "portable"], {"portable"}),
    (["--flow", "xnnpack_static_int8_per_tensor"], {"xnnpack_static_int8_per_tensor"}),
    (["--backend", "portable", "--flow", "xnnpack"], {"portable", "xnnpack"}),
    # a --flow narrows its own backend (make test-xnnpack ARGS="--flow xnnpack")
    (["--backend", "xnnpack", "--flow", "xnnpack"], {"xnnpack"}),
    (["--backend", "xnnpack", "--backend", "portable", "--flow", "xnnpack_static_int8_per_tensor"],
     {"portable", "xnnpack_static_int8_per_tensor"}),
    (["-m", "backend_xnnpack"], XNNPACK_FLOWS),
    (["-m", "flow_xnnpack"], {"xnnpack"}),
])
def test_selection_prunes_flows(simple, args, expected):
    result = simple.runpytest("--collect-only", "-q", *args)
    assert collected_flows(result) == expected


def test_backend_selection_drops_other_backends_marked_tests(pytester):
    pytester.makepyfile(test_marked="""
        import pytest

        @pytest.mark.backend_xnnpack
        def test_xnnpack_only():
            pass

        def test_unmarked():
            pass
    """)
    only_portable = pytester.runpytest("--collect-only", "-q", "--backend", "portable").stdout.str()
    assert "test_xnnpack_only" not in only_portable
    assert "test_unmarked" in only_portable
    only_xnnpack = pytester.runpytest("--collect-only", "-q", "--backend", "xnnpack").stdout.str()
    assert "test_xnnpack_only" in only_xnnpack


@pytest.mark.parametrize("option, name, listed", [
    ("--backend", "nosuch", "known backends: " + ", ".join(sorted({f.backend for f in builtin_flows()}))),
    ("--flow", "xnnpack_int3", "known flows: " + ", ".join(sorted(f.name for f in builtin_flows()))),
])
def test_unknown_name_is_a_usage_error_listing_known_names(simple, option, name, listed):
    result = simple.runpytest("--collect-only", option, name)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"unknown {option[2:]} '{name}'" in result.stderr.str()
    assert listed in result.stderr.str()


@pytest.mark.parametrize("seed", ["abc", "-4", "1.5"])
def test_malformed_seed_is_a_usage_error(simple, seed):
    result = simple.runpytest("--collect-only", f"--seed={seed}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--seed wants a non-negative integer" in result.stderr.str()


def test_unwritable_report_path_exits_with_its_own_code(simple):
    blocker = simple.path / "not_a_dir"
    blocker.write_text("a file where a folder should be")
    result = run_forked(
        simple, "--json-report", f"--json-report-file={blocker}/out.json", "-k", "plain")
    assert result.ret == 6
    assert f"cannot write report file {blocker}/out.json" in result.stderr.str()


def test_seed_printed_in_header_and_stored_in_report(simple):
    report = simple.path / "r.json"
    result = simple.runpytest("--seed", "4242", "-k", "plain", "--json-report",
                              f"--json-report-file={report}")
    assert "etsuite: seed 4242 (option: given with --seed; rerun with --seed 4242)" in result.stdout.str()
    assert facts_of_report(json.loads(report.read_text()))["seed"] == 4242


def test_flows_from_a_conftest_hook_and_unavailable_reason(pytester):
    pytester.makeconftest(TEST_FLOWS_CONFTEST)
    pytester.makepyfile(test_simple=SIMPLE_TEST)
    result = pytester.runpytest("--collect-only", "-q", "--backend", "missing_sdk")
    assert collected_flows(result) == {"needs_sdk"}
    header = pytester.runpytest("--backend", "missing_sdk", "-rs", "-k", "test_op")
    text = header.stdout.str()
    assert "flow needs_sdk is unavailable: python module 'no_such_vendor_sdk' is not installed" in text
    assert "SKIPPED" in text and "unavailable: python module 'no_such_vendor_sdk'" in text


def test_an_unavailable_backend_asked_for_exits_7_and_still_reports(pytester):
    pytester.makeconftest(TEST_FLOWS_CONFTEST)
    pytester.makepyfile(test_simple=SIMPLE_TEST)
    report = pytester.path / "r.json"
    result = run_forked(pytester, "--backend", "missing_sdk", "-k", "test_op", "--json-report",
                        f"--json-report-file={report}")
    assert result.ret == 7
    stderr = result.stderr.str()
    assert "backend missing_sdk, flow needs_sdk cannot run on this host: python module " \
           "'no_such_vendor_sdk' is not installed; to enable it: pip install no-such-vendor-sdk" in stderr
    (test,) = json.loads(report.read_text())["tests"]
    assert records_of_test(test)[0]["status"] == "unavailable"
    allowed = run_forked(pytester, "--backend", "missing_sdk", "-k", "test_op",
                         "--allow-unavailable")
    assert allowed.ret == 0 and "cannot run on this host" in allowed.stderr.str()
    # Not asked for by name (a run of every flow): reported, never an exit code of its own.
    everything = run_forked(pytester, "-k", "test_plain")
    assert everything.ret == 0
    # --may-be-unavailable names the flows this host may lack; any other one exits 7,
    # asked for by name or not (a check of what runs here cannot pass by running nothing).
    strict = run_forked(pytester, "-k", "test_plain", "--may-be-unavailable", "other_*")
    assert strict.ret == 7
    assert "flow needs_sdk cannot run on this host" in strict.stderr.str()
    assert "--may-be-unavailable allows only other_*" in strict.stderr.str()
    named = run_forked(pytester, "--backend", "missing_sdk", "-k", "test_op",
                       "--may-be-unavailable", "needs_*,other_*")
    assert named.ret == 0, named.stderr.str()


INPUT_PROBE = """
import json, os, torch

def test_inputs(test_runner):
    out = os.path.join(os.environ["PROBE_DIR"], test_runner.flow.name + ".json")
    with open(out, "w") as f:
        json.dump({"x": torch.randn(4).tolist(), "w": torch.nn.Linear(2, 1).weight.tolist()}, f)
"""


def test_inputs_identical_across_flows_and_reproduced_by_seed(pytester, monkeypatch):
    pytester.makepyfile(test_probe=INPUT_PROBE)

    def draw(seed):
        probe_dir = pytester.mkdir(f"probe_{seed}_{len(list(pytester.path.iterdir()))}")
        monkeypatch.setenv("PROBE_DIR", str(probe_dir))
        # The probe lowers nothing, so no isolation (no priming with every
        # flow); the repro test in test_pipeline.py covers seeds under fork.
        result = run_forked(pytester, "--seed", str(seed), "-p", "no:xdist", "--backend",
                            "portable", "--backend", "xnnpack", "--backend", "vulkan",
                            "--isolation", "none")
        assert result.ret == 0, result.stdout.str()
        return {p.stem: json.loads(p.read_text()) for p in probe_dir.iterdir()}

    first = draw(7)
    assert set(first) == BUILTIN_FLOWS
    assert len({json.dumps(v) for v in first.values()}) == 1  # every flow, same inputs
    assert draw(7) == first                                    # same seed, same inputs
    assert draw(8)["portable"] != first["portable"]            # another seed, other inputs


def test_a_test_declares_its_case_unsupported(pytester):
    """`test_runner.skip_unsupported(reason)`: the test stops there and its record says
    skip_unsupported with the reason (an example model this host cannot build)."""
    pytester.makepyfile(test_unsupported='''
def test_model(test_runner):
    test_runner.skip_unsupported("needs a package this host lacks")
    raise AssertionError("not reached")
''')
    report = pytester.path / "r.json"
    result = run_forked(pytester, "--flow", "portable", "-rs", "--json-report",
                        f"--json-report-file={report}")
    assert result.ret == 0
    assert "skip_unsupported: needs a package this host lacks" in result.stdout.str()
    (test,) = json.loads(report.read_text())["tests"]
    assert test["outcome"] == "skipped"
    (record,) = records_of_test(test)
    assert (record["status"], record["error"]) == ("skip_unsupported", "needs a package this host lacks")
