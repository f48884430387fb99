"""The pytest plugin (entry point `pytest11: etsuite`).

Registers the `backend_*` / `flow_*` markers, parametrizes the `test_runner` fixture once
per selected flow, applies each flow's skips and expected failures, turns subtest records
into the test's outcome, and attaches the records to the report (pytest-json-report
metadata and the results stream). Process isolation lives in `isolation.py`, the results
stream in `stream.py`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

import pytest

from etsuite.backends.harness import artifacts, declared, hookspecs, isolation, sharding, stream
from etsuite.backends.harness.contract import (
    DURATIONS_FILE, FAILING, PASSING, SEED_POLICIES, Status, SubtestRecord, case_id, error_headline, param_ids,
    run_facts, session_facts, test_case_id,
)
from etsuite.backends.harness.expectations import judge, rewrite_status
from etsuite.backends.harness.registry import (
    backend_folders, backend_of_test_folder, backends_dir, builtin_flows, checked_flows, index_flows,
)
from etsuite.backends.harness.runner import TestContext, TestRunner, new_record
from etsuite.backends.harness.selection import (
    UnknownNameError, derive_seed, repro_command, select_flows,
    suite_of,
)

RUNNER_KEY = pytest.StashKey[TestRunner]()
EXIT_UNAVAILABLE = 7  # a backend or flow asked for by name cannot run on this host
# Status given at collection time (skip_unsupported, unavailable) with its reason.
COLLECTION_STATUS_KEY = pytest.StashKey[tuple]()
STATE_KEY = pytest.StashKey["SessionState"]()


class SessionState:
    """What the plugin knows about this session, stored on the config."""

    def __init__(self, flows: dict, selected: list, seed: int, seed_given: bool,
                 run: "RunIdentity"):
        self.flows = flows
        self.selected = selected
        self.seed = seed
        self.seed_given = seed_given
        self.seed_policy = "option" if seed_given else "random"  # contract.SEED_POLICIES
        self.run = run
        self.selected_backends = {f.backend for f in selected}
        self.usage_error: str | None = None  # found by an xdist worker at collection
        self.flows_in_run: list | None = None  # flows of the collected items, once known
        self.resumed = None                     # the killed run --resume continues
        self.finished_before: set[str] = set()  # its finished tests: not run again
        self.tests_in_run: int | None = None   # collected items that use a flow, once known
        # Probed once per session, for the selected flows only (a probe may import a
        # backend's package): why each cannot run here (None: it can).
        self.unavailable = {f.name: f.unavailable_reason() for f in selected}

    def facts(self) -> dict:
        """Session facts stored in every report (JSON and stream)."""
        from importlib.metadata import PackageNotFoundError, version

        def package_version(name):
            try:
                return version(name)
            except PackageNotFoundError:
                return None

        folders = backend_folders()
        return session_facts(
            seed=self.seed,
            versions={name: package_version(name) for name in ("torch", "executorch")},
            flows={
                f.name: {
                    "backend": f.backend,
                    "tox_env": f.backend if f.backend in folders else None,
                    "description": f.description,
                    "delegates": f.delegates,
                    "quantizes": f.quantizes,
                    "selected": f in self.selected,
                    "unavailable": self.unavailable.get(f.name),
                    "enable_hint": f.enable_hint or None,
                }
                for f in self.flows.values()
            },
            run=run_facts(self.run.id, self.run.selection, self.run.shard, self.run.plan),
            seed_policy=self.seed_policy,
        )


class RunIdentity:
    """Which run a report belongs to, so that the report tools can put the shards of one
    run together: the run id (--run-id, $ETSUITE_RUN_ID, the GitHub Actions run, else
    "local"), what was selected, this shard, and the shard plan once items are known."""

    def __init__(self, config):
        option = config.option
        self.id = option.run_id or os.environ.get("ETSUITE_RUN_ID") or (
            f"gh-{os.environ['GITHUB_RUN_ID']}" if os.environ.get("GITHUB_RUN_ID") else "local")
        self.shard: tuple[int, int] | None = option.shard
        self.plan: dict | None = None  # sharding.Plan.facts(), from collection
        names = sorted(set(option.backend)) + sorted(set(option.flow) - set(option.backend))
        parts = ["+".join(names) if names else "all flows"]
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            parts.extend(config.args)
        if option.keyword:
            parts.append(f"-k {option.keyword!r}")
        if option.markexpr:
            parts.append(f"-m {option.markexpr!r}")
        if option.declared:
            parts.append(f"--declared {','.join(sorted(option.declared))}")
            for name in ("declared_sample", "passing_sample"):
                sample = getattr(option, name)
                if sample:
                    parts.append(f"--{name.replace('_', '-')} {sample[0]}/{sample[1]}")
        self.selection = " ".join(parts)

    def seed(self) -> int:
        """The default seed of a sharded run: the same for every shard of the run, so all
        of its cases see inputs from one seed."""
        return derive_seed(0, f"{self.id} {self.selection}") % 10**6


def _shard_arg(text: str) -> tuple[int, int]:
    try:
        return sharding.parse_shard(text)
    except sharding.ShardError as error:
        raise argparse.ArgumentTypeError(str(error))


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
    group.addoption("--allow-unavailable", action="store_true", default=False,
                    help=f"a requested backend or flow that cannot run on this host is "
                         f"reported, but does not make the run exit {EXIT_UNAVAILABLE}")
    group.addoption("--shard", type=_shard_arg, default=None, metavar="K/N",
                    help="run only the K-th of N shards of the selected tests, balanced by "
                         "the backends' recorded durations (backends/<name>/durations.json)")
    group.addoption("--run-id", default=None, metavar="ID",
                    help="the run this report belongs to (default: $ETSUITE_RUN_ID, the "
                         "GitHub Actions run, else 'local'); shards of one run share it")
    declared.addoption(group)
    isolation.addoption(group, parser)
    stream.addoption(group)
    artifacts.addoption(group)


def pytest_configure(config):
    """Validate every setting once, here: a bad one is a usage error (exit 4) naming
    the value and where it came from, never an INTERNALERROR in the middle of a run."""
    try:
        flows = builtin_flows() + hook_flows(config)
        flows_by_name = index_flows(flows)
        selected = select_flows(flows_by_name, config.option.backend, config.option.flow)
        time_limits = isolation.parse_time_limits(config)
        declared.check_options(config.option)
        resumed = stream.resumed_run(config)
    except (UnknownNameError, isolation.SettingError, ValueError) as error:
        raise pytest.UsageError(str(error))

    for backend in sorted({f.backend for f in flows}):
        config.addinivalue_line("markers", f"backend_{backend}: a test of the {backend} backend")
    for flow in flows:
        config.addinivalue_line("markers", f"flow_{flow.name}: a test of the {flow.name} flow")
    isolation.register_markers(config)

    run = RunIdentity(config)
    if resumed:
        _check_resumable(resumed, run, config.option.seed)
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None and "etsuite_seed" in worker_input:
        seed, policy = worker_input["etsuite_seed"], worker_input["etsuite_seed_policy"]
    else:
        seed, policy = _session_seed(config, resumed, run)
    state = SessionState(flows_by_name, selected, seed, policy != "random", run)
    state.seed_policy = policy
    state.resumed = resumed
    if worker_input is not None:
        state.finished_before = set(worker_input.get("etsuite_finished_before", ()))
    elif resumed:
        state.finished_before = set(resumed.tests)
    state.artifacts = artifacts.ArtifactPolicy.from_config(config)
    if state.artifacts is not None and worker_input is None:  # a new run: a new cap
        stale = os.path.join(state.artifacts.root, artifacts.CAP_FILE)
        if os.path.exists(stale):
            os.remove(stale)
    config.stash[STATE_KEY] = state
    if isolation.isolation_mode(config) == "fork":
        config.pluginmanager.register(
            isolation.IsolationPlugin(config, time_limits, lambda: _warm_up(config, state)),
            "etsuite-isolation")
    stream.configure(config, state)


def hook_flows(config) -> list:
    """The flows of every `pytest_etsuite_flows` implementation, each result checked and
    named by the conftest or plugin that returned it: pluggy's call hands back the results
    without saying whose they are. The implementations are called in pluggy's order
    (tryfirst first, then the last registered first); with a wrapper among them, which may
    change what the others return, pluggy makes the call and a bad result goes unnamed."""
    hook = config.hook.pytest_etsuite_flows
    impls = hook.get_hookimpls()
    if any(impl.wrapper or impl.hookwrapper for impl in impls):
        return [flow for result in hook(config=config)
                for flow in checked_flows(result, "a pytest_etsuite_flows hook returned")]
    flows = []
    for impl in reversed(impls):
        result = impl.function(*[config for _ in impl.argnames])
        if result is not None:  # pluggy drops None results too
            where = f"pytest_etsuite_flows in {_plugin_name(impl)} returned"
            flows.extend(checked_flows(result, where))
    return flows


def _plugin_name(impl) -> str:
    """A conftest by its path (relative to the working folder when inside it), another
    plugin by its module or registered name."""
    path = getattr(impl.plugin, "__file__", None)
    if path:
        relative = os.path.relpath(path)
        return relative if not relative.startswith("..") else path
    return impl.plugin_name


SEED_ENV = "ETSUITE_SEED"


def _session_seed(config, resumed, run: "RunIdentity") -> tuple[int, str]:
    """(seed, policy): --seed, else a resumed run's, else a pinned $ETSUITE_SEED (CI
    exports .ci/seed), else one derived from a sharded run's identity, else random. The
    policy (a key of contract.SEED_POLICIES) goes into the report."""
    if config.option.seed is not None:
        return config.option.seed, "option"
    if resumed:
        return resumed.seed, "resumed"
    pinned = os.environ.get(SEED_ENV, "").strip()
    if pinned:
        try:
            return _seed_arg(pinned), "pinned"
        except argparse.ArgumentTypeError:
            raise pytest.UsageError(f"${SEED_ENV}={pinned!r}: wants a non-negative integer")
    if run.shard:
        return run.seed(), "run"
    return random.randrange(1, 10**6), "random"


def _warm_up(config, state: "SessionState") -> None:
    """Lower once in the parent so that forked tests start warm. A process that runs one
    test (a repro command; under xdist, no more tests than workers) would pay that
    lowering and its own, so it goes straight to the test."""
    from etsuite.backends.harness.pipeline import warm_up

    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if state.tests_in_run is not None and state.tests_in_run <= workers:
        return
    problems = warm_up(state.flows_in_run if state.flows_in_run is not None else state.selected)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for problem in problems:
        line = f"etsuite: warm-up skipped part of its work (tests run, a little slower): {problem}"
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: every worker uses the controller's seed, so a run has one seed."""
    state = node.config.stash[STATE_KEY]
    node.workerinput["etsuite_seed"] = state.seed
    node.workerinput["etsuite_seed_policy"] = state.seed_policy
    node.workerinput["etsuite_finished_before"] = sorted(state.finished_before)


def _check_resumable(resumed, run: "RunIdentity", seed: int | None) -> None:
    """--resume continues the same run: the same selection and shard, and its seed."""
    before = resumed.facts.get("run") or {}
    shard = tuple(before["shard"]) if before.get("shard") else None
    if before.get("selection") != run.selection or shard != run.shard:
        was = before.get("selection") or "?"
        raise pytest.UsageError(
            f"--resume: {resumed.path} is a run of {was}"
            f"{f' shard {shard[0]}/{shard[1]}' if shard else ''}, not of {run.selection}"
            f"{f' shard {run.shard[0]}/{run.shard[1]}' if run.shard else ''}: select the same, "
            f"or run without --resume to start afresh")
    if seed is not None and resumed.seed is not None and seed != resumed.seed:
        raise pytest.UsageError(f"--resume: {resumed.path} ran with --seed {resumed.seed}, "
                                f"not {seed}: resume with its seed (or leave --seed out)")


def pytest_report_header(config):
    state = config.stash[STATE_KEY]
    names = ", ".join(f.name for f in state.selected) or "none"
    lines = [f"etsuite: seed {state.seed} ({state.seed_policy}: "
             f"{SEED_POLICIES[state.seed_policy]}; rerun with "
             f"--seed {state.seed}); flows: {names}"]
    for flow in state.selected:
        reason = state.unavailable[flow.name]
        if reason:
            hint = f" (to enable it: {flow.enable_hint})" if flow.enable_hint else ""
            lines.append(f"etsuite: flow {flow.name} is unavailable: {reason}{hint}")
    lines.append(isolation.header_line(config))
    if state.run.shard:
        index, count = state.run.shard
        lines.append(f"etsuite: shard {index}/{count} of run {state.run.id} "
                     f"({state.run.selection})")
    if state.resumed:
        lines.append(f"etsuite: resuming {state.resumed.path}: {len(state.finished_before)} "
                     f"tests finished before are kept, not run again")
    elif config.option.resume:
        lines.append("etsuite: --resume: no results stream left to continue; running all")
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
    return case_id(item.nodeid, flow.name if flow else None)


def _backend_marks(item) -> set[str]:
    return {m.name[len("backend_"):] for m in item.iter_markers() if m.name.startswith("backend_")}


def _outside_selection(item, state: SessionState) -> bool:
    """Drop items of other backends than the selected ones (e.g. their own test/ folder),
    flows of another backend than the one a test is marked for, and items whose flow
    parametrization came out empty."""
    config = item.config
    backends = _backend_marks(item)
    if "test_runner" in getattr(item, "fixturenames", ()):
        flow = _flow_of(item, state)
        # A test marked for one backend (backends/<name>/test) runs only that backend's flows.
        return flow is None or bool(backends - {flow.backend})
    if not (config.option.backend or config.option.flow):
        return False
    return bool(backends) and not (backends & state.selected_backends)


@pytest.hookimpl(tryfirst=True)
def pytest_itemcollected(item):
    """Tests under backends/<name>/test/ are that backend's: mark them for it."""
    backend = backend_of_test_folder(item.path)
    if backend is not None:
        item.add_marker(getattr(pytest.mark, f"backend_{backend}"))


@pytest.hookimpl(trylast=True)  # after conftests add their own marks
def pytest_collection_modifyitems(session, config, items):
    state = config.stash[STATE_KEY]
    try:
        for item in items:
            isolation.check_time_limit_marker(item)
    except isolation.SettingError as error:
        _usage_error_at_collection(config, items, str(error))
        return
    keep, drop = [], []
    for item in items:
        outside = _outside_selection(item, state) or _not_checked(config, state, item)
        (drop if outside else keep).append(item)
        flow = _flow_of(item, state)
        if flow is None or outside:
            continue
        case = _case_of(item, flow)
        unavailable = state.unavailable[flow.name]
        skip = flow.expectations.skip(flow.name, case)
        if unavailable:
            item.stash[COLLECTION_STATUS_KEY] = (Status.UNAVAILABLE, unavailable)
            item.add_marker(pytest.mark.skip(reason=f"{Status.UNAVAILABLE}: {unavailable}"))
        elif skip:
            reason = f"{skip.reason} ({skip.source})"
            item.stash[COLLECTION_STATUS_KEY] = (Status.SKIP_UNSUPPORTED, reason)
            item.add_marker(pytest.mark.skip(reason=f"{Status.SKIP_UNSUPPORTED}: {reason}"))
    under_xdist = hasattr(config, "workerinput")
    durations: dict[str, float] = {}
    if state.run.shard or under_xdist:
        try:
            durations = _recorded_durations(state)
        except sharding.ShardError as error:
            _usage_error_at_collection(config, items, str(error))
            return
    if state.run.shard:
        keep, outside_shard = _shard_of(config, state, keep, durations)
        drop.extend(outside_shard)
    if state.finished_before:  # after sharding, so a resumed shard plans as the killed one
        drop.extend(item for item in keep if item.nodeid in state.finished_before)
        keep = [item for item in keep if item.nodeid not in state.finished_before]
    if under_xdist:
        _longest_first(state, keep, durations)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def _not_checked(config, state: SessionState, item) -> bool:
    """With --declared: drop what no expectation names, unless the rotating sample
    takes it; tests that use no flow are not the check's business."""
    if not config.option.declared:
        return False
    flow = _flow_of(item, state)
    if flow is None:
        return True
    return not declared.checked(flow.expectations, flow.name, _case_of(item, flow),
                                item.nodeid, config.option)


def _longest_first(state: SessionState, items: list, durations: dict[str, float]) -> None:
    """Under xdist, hand out the longest tests first (by the recorded durations) so the
    run ends on short tests instead of one worker finishing a long one while the others
    idle. Every worker sorts alike, so their collections stay identical; tests with no
    recorded duration keep their collection order among equals."""
    if not durations:
        return
    position = {nodeid: index for index, nodeid in
                enumerate(sharding.longest_first(_sharding_items(state, items), durations))}
    items.sort(key=lambda item: position[item.nodeid])


def _recorded_durations(state: SessionState) -> dict[str, float]:
    folders = set(backend_folders())
    return sharding.load_durations([backends_dir() / backend / DURATIONS_FILE
                                    for backend in sorted(state.selected_backends)
                                    if backend in folders])


def _sharding_items(state: SessionState, items: list) -> list:
    return [sharding.Item(item.nodeid, getattr(_flow_of(item, state), "name", None))
            for item in items]


def pytest_collection_finish(session):
    """The flows the collected tests use, after every deselection (-k, node ids, shards):
    the warm-up lowers with these only, not with every selected flow."""
    state = session.config.stash.get(STATE_KEY, None)
    if state is not None:
        used, tests = {}, 0
        for item in session.items:
            flow = _flow_of(item, state)
            if flow is not None:
                used.setdefault(flow.name, flow)
                tests += 1
        state.flows_in_run = list(used.values())
        state.tests_in_run = tests


USAGE_ERROR_KEY = "etsuite_usage_error"
SHARD_PLAN_KEY = "etsuite_shard_plan"


def _shard_of(config, state: SessionState, items: list,
              durations: dict[str, float]) -> tuple[list, list]:
    """(this shard's items, the others'): the same on the pytest process and on every
    xdist worker, which all collect the same items and read the same durations."""
    plan = sharding.plan(_sharding_items(state, items), durations, state.run.shard[1])
    state.run.plan = plan.facts()
    if hasattr(config, "workerinput"):
        config.workeroutput[SHARD_PLAN_KEY] = state.run.plan
    index = state.run.shard[0] - 1
    mine = set(plan.shards[index])
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        reporter.write_line(
            f"etsuite: shard {index + 1}/{len(plan.shards)}: {len(mine)} of {plan.items} "
            f"items, predicted {plan.predicted[index]:.0f} s (shards: "
            f"{', '.join(f'{s:.0f}' for s in plan.predicted)} s; {plan.estimated} items "
            f"without a recorded duration)")
    return [i for i in items if i.nodeid in mine], [i for i in items if i.nodeid not in mine]


def _usage_error_at_collection(config, items, message: str) -> None:
    """Markers are only seen at collection, which xdist does in its workers, where a
    raised UsageError becomes an INTERNALERROR. A worker therefore runs nothing and hands
    the message to the controller (`pytest_testnodedown`), which ends the session with
    the usage error's exit code."""
    if not hasattr(config, "workerinput"):
        raise pytest.UsageError(message)
    config.workeroutput[USAGE_ERROR_KEY] = message
    config.hook.pytest_deselected(items=list(items))
    items[:] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    output = getattr(node, "workeroutput", {})
    state = node.config.stash[STATE_KEY]
    if output.get(USAGE_ERROR_KEY):
        state.usage_error = output[USAGE_ERROR_KEY]
    if output.get(SHARD_PLAN_KEY):
        state.run.plan = output[SHARD_PLAN_KEY]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput"):
        return
    state = config.stash[STATE_KEY]
    if state.usage_error:
        sys.stderr.write(f"ERROR: {state.usage_error}\n")
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    plan = state.run.plan
    if plan and plan["items"] and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        # More shards than test cases: this one is empty, which is no error of the run.
        sys.stderr.write(f"etsuite: shard {state.run.shard[0]}/{state.run.shard[1]} holds "
                         f"none of the {plan['items']} selected items\n")
        session.exitstatus = pytest.ExitCode.OK
    missing = unavailable_requests(config, state)
    if missing:
        for line in missing:
            sys.stderr.write(f"etsuite: {line}\n")
        if not config.option.allow_unavailable and session.exitstatus in (0, 5):
            sys.stderr.write(f"etsuite: exit {EXIT_UNAVAILABLE}: what was asked for cannot run "
                             f"here (the report lists it as unavailable); pass "
                             f"--allow-unavailable to exit as if it had run\n")
            session.exitstatus = EXIT_UNAVAILABLE


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(STATE_KEY, None)
    message = artifacts.cap_message(state.artifacts if state else None)
    if message and not hasattr(config, "workerinput"):
        terminalreporter.write_line(message)


def unavailable_requests(config, state: "SessionState") -> list[str]:
    """One line per backend (every flow unavailable) or flow asked for by name that
    cannot run here, with the reason and how to enable it."""
    lines = []
    for backend in config.option.backend:
        flows = [f for f in state.selected if f.backend == backend]
        if flows and all(state.unavailable.get(f.name) for f in flows):
            lines.extend(_unavailable_line(f"backend {backend}, flow", f, state) for f in flows)
    for name in config.option.flow:
        flow = state.flows[name]
        if state.unavailable.get(name) and flow.backend not in config.option.backend:
            lines.append(_unavailable_line("flow", flow, state))
    return lines


def _unavailable_line(what: str, flow, state: "SessionState") -> str:
    hint = f"; to enable it: {flow.enable_hint}" if flow.enable_hint else ""
    return f"{what} {flow.name} cannot run on this host: {state.unavailable[flow.name]}{hint}"


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
        repro=repro_command(flow.backend if flow else None, item.nodeid, state.seed),
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
    runner = TestRunner(flow, context, on_progress=isolation.progress_sink(request.node),
                        artifacts=state.artifacts)
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
    """After the test body: apply the flow's expectations, then fail the test if a
    subtest failed (first line says how, for the short summary), skip it if no subtest
    passed."""
    result = yield
    runner = pyfuncitem.stash.get(RUNNER_KEY, None)
    if runner is None or not runner.records:
        return result
    flow = runner.flow
    verdict = judge(flow.expectations, flow.name, _case_of(pyfuncitem, flow), runner.records)
    if verdict.xfail_reason:
        pytest.xfail(f"{flow.name}: {verdict.xfail_reason}")
    failing = [r for r in runner.records if r.status in FAILING]
    if failing or verdict.failure:
        lines = []
        if verdict.failure:
            lines.append(verdict.failure)
        if failing:
            first = failing[0]
            first_error = error_headline(first.error or "")
            lines.append(f"{len(failing)} of {len(runner.records)} subtests failed; "
                         f"subtest {first.subtest}: {first.status}: {first_error}")
        for r in failing:
            flaky = " [flaky: passed when run again on the same inputs]" if r.flaky else ""
            lines.append(f"  subtest {r.subtest}: {r.status} at {r.stage}{flaky}: {r.error}")
        lines.append(f"repro: {runner.context.repro}")
        pytest.fail("\n".join(lines), pytrace=False)
    if not any(r.status in PASSING for r in runner.records):
        first = runner.records[0]
        pytest.skip(f"{first.status}: {first.error or ''}".strip())
    return result


def record_for_item(item, subtest: int, **found) -> SubtestRecord:
    """A record with the item's identity (test id, flow, seed, repro) and what was
    found, for results no subtest produced: collection-time skips, crashes, timeouts."""
    state = item.config.stash[STATE_KEY]
    flow = _flow_of(item, state)
    context, _ = _context(item, flow, state)
    return new_record(flow, context, subtest, **found)


def records_for(item) -> list[SubtestRecord]:
    """Records of this item: the runner's, or the status the item got at collection
    (skip_unsupported / unavailable)."""
    runner = item.stash.get(RUNNER_KEY, None)
    if runner is not None:
        return list(runner.records)
    collected = item.stash.get(COLLECTION_STATUS_KEY, None)
    if collected is None:
        return []
    return [record_for_item(item, 0, status=collected[0], error=collected[1])]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    records = records_for(item)
    if records and report.when in ("call", "setup"):
        if hasattr(report, "wasxfail"):
            # A flow's expected failure: failing subtests are xfail, an unexpected pass
            # (strict xfail, reported as failed) makes the passing subtests xpass.
            for record in records:
                if record.status in FAILING:
                    rewrite_status(record, Status.XFAIL)
        elif report.failed and item.get_closest_marker("xfail") is not None:
            for record in records:
                if record.status in PASSING:
                    rewrite_status(record, Status.XPASS)
    stream.attach_records(report, [r.to_dict() for r in records])
    return report


def pytest_etsuite_child_lost(item, status, message, stage, records, duration, crash_dump):
    """The isolation layer lost the test's child: the records it finished, plus one for
    the subtest that was running when it died (or ran out of time)."""
    lost = record_for_item(item, len(records), status=status, stage=stage, error=message,
                           crash_dump=crash_dump)
    in_progress = [SubtestRecord.from_dict(r) for r in records] + [lost]
    flow = _flow_of(item, item.config.stash[STATE_KEY])
    verdict = judge(flow.expectations, flow.name, _case_of(item, flow), in_progress) \
        if flow else None
    report = pytest.TestReport(
        nodeid=item.nodeid, location=item.location,
        keywords={k: 1 for k in item.keywords}, outcome="failed",
        longrepr=f"{status}: {message}", when="call", sections=[],
        duration=duration, user_properties=[],
    )
    if verdict and verdict.xfail_reason:
        report.outcome, report.wasxfail = "skipped", f"{flow.name}: {verdict.xfail_reason}"
    stream.attach_records(report, [r.to_dict() for r in in_progress])
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """pytest-xdist lost a worker while it ran `crashitem` (isolation off): give the
    report a fail_crash record, so the status travels as a field like any other."""
    state = sched.config.stash[STATE_KEY]
    flow = next((state.flows[p] for p in param_ids(crashitem) if p in state.flows), None)
    if flow is None:
        return
    context = TestContext(
        test_id=crashitem, test_case=test_case_id(crashitem), suite=suite_of(crashitem),
        params={}, seed=state.seed, repro=repro_command(flow.backend, crashitem, state.seed))
    record = new_record(flow, context, 0, status=Status.FAIL_CRASH,
                        error=f"the xdist worker running this test crashed: {report.longrepr}"[:1200])
    stream.attach_records(report, [record.to_dict()])
