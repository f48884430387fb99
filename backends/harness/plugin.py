"""The pytest plugin (entry point `pytest11: etsuite`).

Registers the `backend_*` / `flow_*` markers, parametrizes the `test_runner` fixture once
per selected flow, applies each flow's skips and expected failures, turns subtest records
into the test's outcome, and attaches the records to the report (pytest-json-report
metadata and the results stream). Process isolation lives in `isolation.py`, the results
stream in `stream.py`.
"""

from __future__ import annotations

import argparse
import random

import pytest

from backends.harness import hookspecs, isolation, stream
from backends.harness import taxonomy as tx
from backends.harness.registry import builtin_flows, index_flows
from backends.harness.runner import TestContext, TestRunner
from backends.harness.selection import (
    UnknownNameError, case_with_params, derive_seed, repro_command, select_flows,
    suite_of, test_case_id,
)

RUNNER_KEY = pytest.StashKey[TestRunner]()
# Status given at collection time (skip_unsupported, unavailable) with its reason.
COLLECTION_STATUS_KEY = pytest.StashKey[tuple]()
STATE_KEY = pytest.StashKey["SessionState"]()


class SessionState:
    """What the plugin knows about this session, stored on the config."""

    def __init__(self, flows: dict, selected: list, seed: int, seed_given: bool):
        self.flows = flows
        self.selected = selected
        self.seed = seed
        self.seed_given = seed_given
        self.selected_backends = {f.backend for f in selected}
        # Probed once per session: why each flow cannot run here (None: it can).
        self.unavailable = {f.name: f.unavailable_reason() for f in flows.values()}

    def facts(self) -> dict:
        """Session facts stored in every report (JSON and stream)."""
        from importlib.metadata import PackageNotFoundError, version

        def package_version(name):
            try:
                return version(name)
            except PackageNotFoundError:
                return None

        return {
            "schema_version": tx.SCHEMA_VERSION,
            "seed": self.seed,
            "versions": {name: package_version(name) for name in ("torch", "executorch")},
            "flows": {
                f.name: {
                    "backend": f.backend,
                    "description": f.description,
                    "selected": f in self.selected,
                    "unavailable": self.unavailable[f.name],
                }
                for f in self.flows.values()
            },
        }


def _seed_arg(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed wants a non-negative integer, got {text!r}")
    return value


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser):
    group = parser.getgroup("etsuite", "ExecuTorch backend test suite")
    group.addoption("--backend", action="append", default=[], metavar="NAME",
                    help="run only this backend's flows (repeatable)")
    group.addoption("--flow", action="append", default=[], metavar="NAME",
                    help="run only this flow (repeatable)")
    group.addoption("--seed", type=_seed_arg, default=None, metavar="N",
                    help="session seed for test inputs (default: random, printed in the header)")
    isolation.addoption(group, parser)
    stream.addoption(group)


def pytest_configure(config):
    config.pluginmanager.register(isolation.IsolationPlugin(config), "etsuite-isolation")
    flows = builtin_flows()
    for extra in config.hook.pytest_etsuite_flows(config=config):
        flows.extend(extra or [])
    try:
        flows_by_name = index_flows(flows)
        selected = select_flows(flows_by_name, config.option.backend, config.option.flow)
    except (UnknownNameError, ValueError) as error:
        raise pytest.UsageError(str(error))

    for backend in sorted({f.backend for f in flows}):
        config.addinivalue_line("markers", f"backend_{backend}: a test of the {backend} backend")
    for flow in flows:
        config.addinivalue_line("markers", f"flow_{flow.name}: a test of the {flow.name} flow")
    isolation.register_markers(config)

    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None and "etsuite_seed" in worker_input:
        seed, given = worker_input["etsuite_seed"], True
    elif config.option.seed is not None:
        seed, given = config.option.seed, True
    else:
        seed, given = random.randrange(1, 10**6), False
    config.stash[STATE_KEY] = SessionState(flows_by_name, selected, seed, given)
    stream.configure(config, config.stash[STATE_KEY])


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: every worker uses the controller's seed, so a run has one seed."""
    node.workerinput["etsuite_seed"] = node.config.stash[STATE_KEY].seed


def pytest_report_header(config):
    state = config.stash[STATE_KEY]
    names = ", ".join(f.name for f in state.selected) or "none"
    lines = [f"etsuite: seed {state.seed} (rerun with --seed {state.seed}); flows: {names}"]
    for flow in state.selected:
        reason = state.unavailable[flow.name]
        if reason:
            lines.append(f"etsuite: flow {flow.name} is unavailable: {reason}")
    lines.append(isolation.header_line(config))
    return lines


def pytest_generate_tests(metafunc):
    if "test_runner" not in metafunc.fixturenames:
        return
    state = metafunc.config.stash[STATE_KEY]
    metafunc.parametrize(
        "test_runner",
        [
            pytest.param(
                flow.name, id=flow.name,
                marks=[getattr(pytest.mark, f"backend_{flow.backend}"),
                       getattr(pytest.mark, f"flow_{flow.name}")],
            )
            for flow in state.selected
        ],
        indirect=True,
    )


def _flow_of(item, state: SessionState):
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("test_runner") if callspec else None
    return state.flows.get(name) if isinstance(name, str) else None


def _case_of(item, flow) -> str:
    callspec = getattr(item, "callspec", None)
    ids = list(getattr(callspec, "_idlist", [])) if callspec else None
    return case_with_params(item.nodeid, flow.name if flow else None, ids)


def _outside_selection(item, state: SessionState) -> bool:
    """Drop items of other backends than the selected ones (e.g. their own test/ folder),
    flows of another backend than the one a test is marked for, and items whose flow
    parametrization came out empty."""
    config = item.config
    backends = {m.name[len("backend_"):] for m in item.iter_markers() if m.name.startswith("backend_")}
    if "test_runner" in getattr(item, "fixturenames", ()):
        flow = _flow_of(item, state)
        # A test marked for one backend (backends/<name>/test) runs only that backend's flows.
        return flow is None or bool(backends - {flow.backend})
    if not (config.option.backend or config.option.flow):
        return False
    return bool(backends) and not (backends & state.selected_backends)


@pytest.hookimpl(trylast=True)  # after conftests add their backend marks
def pytest_collection_modifyitems(session, config, items):
    state = config.stash[STATE_KEY]
    keep, drop = [], []
    for item in items:
        outside = _outside_selection(item, state)
        (drop if outside else keep).append(item)
        flow = _flow_of(item, state)
        if flow is None or outside:
            continue
        case = _case_of(item, flow)
        unavailable = state.unavailable[flow.name]
        skip = flow.skip_reason(case)
        expected = flow.expected_failure(case)
        if unavailable:
            item.stash[COLLECTION_STATUS_KEY] = (tx.UNAVAILABLE, unavailable)
            item.add_marker(pytest.mark.skip(reason=f"{tx.UNAVAILABLE}: {unavailable}"))
        elif skip:
            item.stash[COLLECTION_STATUS_KEY] = (tx.SKIP_UNSUPPORTED, skip)
            item.add_marker(pytest.mark.skip(reason=f"{tx.SKIP_UNSUPPORTED}: {skip}"))
        elif expected:
            item.add_marker(pytest.mark.xfail(reason=f"{flow.name}: {expected}", strict=True))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _context(item, flow, state: SessionState) -> tuple[TestContext, int]:
    callspec = getattr(item, "callspec", None)
    params = {}
    if callspec is not None:
        names = [n for n in callspec.params if n != "test_runner"]
        params = {n: str(callspec.params[n]) for n in names}
    case = _case_of(item, flow)
    return TestContext(
        test_id=item.nodeid,
        test_case=test_case_id(item.nodeid),
        suite=suite_of(item.nodeid),
        params=params,
        seed=state.seed,
        repro=repro_command(flow.backend, item.nodeid, state.seed) if flow else "",
    ), derive_seed(state.seed, case)


@pytest.fixture
def test_runner(request):
    """The per-flow runner: `test_runner.lower_and_run_model(model, inputs)`.

    Seeds torch, random and numpy from (session seed, test case without the flow)
    before the test body runs, so every flow sees the same inputs and weights."""
    state = request.config.stash[STATE_KEY]
    flow = state.flows[request.param]
    context, input_seed = _context(request.node, flow, state)
    seed_everything(input_seed)
    runner = TestRunner(flow, context, on_progress=isolation.progress_sink(request.node))
    request.node.stash[RUNNER_KEY] = runner
    return runner


def seed_everything(seed: int) -> None:
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """After the test body: fail the test if a subtest failed (first line says how, for
    the short summary), skip it if no subtest passed."""
    result = yield
    runner = pyfuncitem.stash.get(RUNNER_KEY, None)
    if runner is None or not runner.records:
        return result
    failing = [r for r in runner.records if r["status"] in tx.FAILING]
    if failing:
        first = failing[0]
        first_error = (first["error"] or "").splitlines()[0] if first["error"] else ""
        lines = [f"{len(failing)} of {len(runner.records)} subtests failed; "
                 f"subtest {first['subtest']}: {first['status']}: {first_error}"]
        for r in failing:
            lines.append(f"  subtest {r['subtest']}: {r['status']} at {r['stage']}: {r['error']}")
        lines.append(f"repro: {runner.context.repro}")
        pytest.fail("\n".join(lines), pytrace=False)
    if not any(r["status"] in tx.PASSING for r in runner.records):
        first = runner.records[0]
        pytest.skip(f"{first['status']}: {first['error'] or ''}".strip())
    return result


def record_for_item(item, **fields) -> dict | None:
    """A record with the item's identity (test id, flow, seed, repro) and `fields`, for
    results that no subtest produced: collection-time skips, crashes, timeouts."""
    state = item.config.stash[STATE_KEY]
    flow = _flow_of(item, state)
    if flow is None:
        return None
    context, _ = _context(item, flow, state)
    return TestRunner(flow, context).new_record(**fields)


def records_for(item) -> list[dict]:
    """Records to attach to this item's report: the runner's, or the status the item
    got at collection (skip_unsupported / unavailable)."""
    runner = item.stash.get(RUNNER_KEY, None)
    if runner is not None:
        return list(runner.records)
    collected = item.stash.get(COLLECTION_STATUS_KEY, None)
    if collected is None:
        return []
    record = record_for_item(item, status=collected[0], error=collected[1])
    return [record] if record is not None else []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    records = records_for(item)
    if records and report.when in ("call", "setup"):
        if hasattr(report, "wasxfail"):
            # A flow's expected failure: failing subtests are xfail, an unexpected pass
            # (strict xfail, reported as failed) makes the passing subtests xpass.
            for record in records:
                if record["status"] in tx.FAILING:
                    record["status"] = tx.XFAIL
        elif report.failed and item.get_closest_marker("xfail") is not None:
            for record in records:
                if record["status"] in tx.PASSING:
                    record["status"] = tx.XPASS
    report.etsuite_records = records
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item, call):
    records = records_for(item)
    return {"subtests": records} if records else {}
