"""Collection: which items exist and which of them run, in what order.

`test_runner` is parametrized once per selected flow (each param marked for its backend
and flow), tests under `backends/<name>/test/` are marked for that backend, and then the
collected items are pruned: other backends' items (--backend / --flow), what --declared
does not check, other shards' items and what a resumed run finished before. The items
that stay get their collection-time status (unavailable, skip_unsupported) and, under
xdist, go longest first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pytest

from etsuite.backends.harness import declared, isolation, sharding, workers
from etsuite.backends.harness.contract.durations import DURATIONS_FILE
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.registry import backend_folders, backend_of_test_folder, backends_dir
from etsuite.backends.harness.items import COLLECTION_STATUS_KEY, case_of, flow_of, suite_of
from etsuite.backends.harness.sharding import DurationsError, Item, load_durations, longest_first
from etsuite.backends.harness.state import FLOWS_IN_RUN_KEY, TESTS_IN_RUN_KEY, SessionState

# Suites under backends/suite/ collected only when a command-line path (or node id) points
# into them, e.g. `make test-xnnpack SUITE=upstream`: `upstream` runs ExecuTorch's own
# full-size model tests (minutes per case on the quantized flows).
OPT_IN_SUITES = ("upstream",)


def opted_out(path: Path, config: pytest.Config) -> bool:
    """`path` is an opt-in suite's folder and no command-line path is at or under it."""
    if path.name not in OPT_IN_SUITES or path.parent.name != "suite":
        return False
    here, folder = config.invocation_params.dir, path.resolve()
    return not any((here / arg.partition("::")[0]).resolve().is_relative_to(folder)
                   for arg in config.args)


def register_markers(config: pytest.Config, flows: Iterable[Flow]) -> None:
    """`backend_<name>` and `flow_<name>` for every known flow, selected or not, so that
    `-m` and --strict-markers accept them all."""
    flows = list(flows)
    for backend in sorted({f.backend for f in flows}):
        config.addinivalue_line("markers", f"backend_{backend}: a test of the {backend} backend")
    for flow in flows:
        config.addinivalue_line("markers", f"flow_{flow.name}: a test of the {flow.name} flow")


class Collection:
    def __init__(self, state: SessionState):
        self.state = state
        # flow name -> file -> the case ids collected from it, for entries that name nothing
        self.collected: dict[str, dict[str, set[str]]] = {}

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        return True if opted_out(collection_path, config) else None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "test_runner" not in metafunc.fixturenames:
            return
        # A flow that names its suites (an LLM recipe) has no items in the others.
        suite = suite_of(metafunc.definition.nodeid)
        metafunc.parametrize(
            "test_runner",
            [
                pytest.param(
                    flow.name, id=flow.name,
                    marks=[getattr(pytest.mark, f"backend_{flow.backend}"),
                           getattr(pytest.mark, f"flow_{flow.name}")],
                )
                for flow in self.state.selected if flow.applies_to_suite(suite)
            ],
            indirect=True,
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """Tests under backends/<name>/test/ are that backend's: mark them for it."""
        backend = backend_of_test_folder(item.path)
        if backend is not None:
            item.add_marker(getattr(pytest.mark, f"backend_{backend}"))
        flow = flow_of(item, self.state)
        if flow is not None:  # before -k, -m and --declared narrow the items
            files = self.collected.setdefault(flow.name, {})
            files.setdefault(item.nodeid.split("::", 1)[0], set()).add(case_of(item, flow))

    @pytest.hookimpl(trylast=True)  # after conftests add their own marks
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        state = self.state
        try:
            for item in items:
                isolation.check_time_limit_marker(item)
        except isolation.SettingError as error:
            workers.usage_error_at_collection(config, items, str(error))
            return
        naming_nothing = self._entries_naming_nothing(config)
        if naming_nothing:
            workers.usage_error_at_collection(
                config, items, "expectations that name no test (a claim about nothing):\n  "
                + "\n  ".join(naming_nothing))
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            outside = self._outside_selection(item) or self._not_checked(config, item)
            (drop if outside else keep).append(item)
            flow = flow_of(item, state)
            if flow is None or outside:
                continue
            case = case_of(item, flow)
            unavailable = state.unavailable[flow.name]
            skip = flow.expectations.skip(flow.name, case)
            if unavailable:
                item.stash[COLLECTION_STATUS_KEY] = (Status.UNAVAILABLE, unavailable)
                item.add_marker(pytest.mark.skip(reason=f"{Status.UNAVAILABLE}: {unavailable}"))
            elif skip:
                reason = f"{skip.reason} ({skip.source})"
                item.stash[COLLECTION_STATUS_KEY] = (Status.SKIP_UNSUPPORTED, reason)
                item.add_marker(pytest.mark.skip(reason=f"{Status.SKIP_UNSUPPORTED}: {reason}"))
        under_xdist = workers.is_xdist_worker(config)
        durations: dict[str, float] = {}
        if state.run.shard or under_xdist:
            try:
                durations = self._recorded_durations()
            except DurationsError as error:
                workers.usage_error_at_collection(config, items, str(error))
                return
        if state.run.shard:
            keep, outside_shard = self._shard_of(config, keep, durations)
            drop.extend(outside_shard)
        if state.finished_before:  # after sharding, so a resumed shard plans as the killed one
            drop.extend(item for item in keep if item.nodeid in state.finished_before)
            keep = [item for item in keep if item.nodeid not in state.finished_before]
        if under_xdist:
            self._longest_first(keep, durations)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The flows the collected tests use, after every deselection (-k, node ids, shards):
        priming lowers with these only, not with every selected flow."""
        used: dict[str, Flow] = {}
        tests = 0
        for item in session.items:
            flow = flow_of(item, self.state)
            if flow is not None:
                used.setdefault(flow.name, flow)
                tests += 1
        session.config.stash[FLOWS_IN_RUN_KEY] = list(used.values())
        session.config.stash[TESTS_IN_RUN_KEY] = tests

    def _entries_naming_nothing(self, config: pytest.Config) -> list[str]:
        """declared.entries_naming_nothing for every selected flow, over what this run
        collected: whole files, except those asked for by node id (`file::test`); a file
        that does not exist counts only where the rootdir is this repository."""
        root, here = config.rootpath, config.invocation_params.dir
        narrowed: set[str] = set()
        folders: list[Path] = []
        for arg in config.args:
            path, _, rest = arg.partition("::")
            resolved = (here / path).resolve()
            if rest:
                narrowed.add(resolved.relative_to(root).as_posix()
                             if resolved.is_relative_to(root) else path)
            elif backends_dir().parent == root:  # entries' file paths are the repository's
                folders.append(resolved)
        lines: dict[str, None] = {}
        for flow in self.state.selected:
            cases = self.collected.get(flow.name, {})
            lines.update(dict.fromkeys(declared.entries_naming_nothing(
                flow.expectations, flow.name, cases, narrowed, root, folders)))
        return list(lines)

    def _outside_selection(self, item: pytest.Item) -> bool:
        """Drop items of other backends than the selected ones (e.g. their own test/
        folder), flows of another backend than the one a test is marked for, and items
        whose flow parametrization came out empty."""
        option = item.config.option
        backends = {m.name[len("backend_"):] for m in item.iter_markers()
                    if m.name.startswith("backend_")}
        if "test_runner" in getattr(item, "fixturenames", ()):
            flow = flow_of(item, self.state)
            # A test marked for one backend (backends/<name>/test) runs only that backend's flows.
            return flow is None or bool(backends - {flow.backend})
        if not (option.backend or option.flow):
            return False
        return bool(backends) and not (backends & self.state.selected_backends)

    def _not_checked(self, config: pytest.Config, item: pytest.Item) -> bool:
        """With --declared: drop what no expectation names, unless the rotating sample
        takes it; tests that use no flow are not the check's business."""
        if not config.option.declared:
            return False
        flow = flow_of(item, self.state)
        if flow is None:
            return True
        return not declared.checked(flow.expectations, flow.name, case_of(item, flow),
                                    item.nodeid, config.option)

    def _recorded_durations(self) -> dict[str, float]:
        folders = set(backend_folders())
        return load_durations([backends_dir() / backend / DURATIONS_FILE
                               for backend in sorted(self.state.selected_backends)
                               if backend in folders])

    def _duration_items(self, items: list) -> list:
        return [Item(item.nodeid, getattr(flow_of(item, self.state), "name", None))
                for item in items]

    def _shard_of(self, config: pytest.Config, items: list,
                  durations: dict[str, float]) -> tuple[list, list]:
        """(this shard's items, the others'): the same on the pytest process and on every
        xdist worker, which all collect the same items and read the same durations."""
        run = self.state.run
        assert run.shard is not None, "called only for a sharded run"
        shard, shards = run.shard
        plan = sharding.plan(self._duration_items(items), durations, shards)
        run.plan = plan.facts()
        workers.hand_over_shard_plan(config, run.plan)
        index = shard - 1
        mine = set(plan.shards[index])
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not workers.is_xdist_worker(config):
            reporter.write_line(
                f"etsuite: shard {index + 1}/{len(plan.shards)}: {len(mine)} of {plan.items} "
                f"items, predicted {plan.predicted[index]:.0f} s (shards: "
                f"{', '.join(f'{s:.0f}' for s in plan.predicted)} s; {plan.estimated} items "
                f"without a recorded duration)")
        return [i for i in items if i.nodeid in mine], [i for i in items if i.nodeid not in mine]

    def _longest_first(self, items: list, durations: dict[str, float]) -> None:
        """Under xdist, hand out the longest tests first (by the recorded durations) so
        the run ends on short tests instead of one worker finishing a long one while the
        others idle. Every worker sorts alike, so their collections stay identical; tests
        with no recorded duration keep their collection order among equals."""
        if not durations:
            return
        order = longest_first(self._duration_items(items), durations)
        position = {nodeid: index for index, nodeid in enumerate(order)}
        items.sort(key=lambda item: position[item.nodeid])
