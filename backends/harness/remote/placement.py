"""Choosing runners without editing flows: `--runner PATTERN=SPEC[,SPEC...]` (repeatable)
and the ini setting `etsuite_runners` (one `PATTERN=SPEC[,SPEC...]` per line) replace the
runtime of every flow whose name matches PATTERN (fnmatch: * and ?) by a runner
(remote/runtime.py, over the kinds of remote/kinds.py); several specs are a pool. The
last matching line wins, and the command line comes after the ini file, so `--runner`
overrides it.

Decided at configure time with the other settings (session.build_state): a malformed
spec or a pattern that matches no flow is a usage error. The run's pool folder (device
locks, lost marks: remote/pool.py) is made by the process that runs the session (the
xdist controller hands it to its workers) and removed at its end.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import tempfile
from typing import TYPE_CHECKING, Sequence

from etsuite.backends.harness import workers
from etsuite.backends.harness.remote.kinds import RunnerKind, known_kinds, split_specs
from etsuite.backends.harness.remote.runtime import RunnerRuntime
from etsuite.backends.harness.remote.spec import RunnerChoice, RunnerSpec, SpecError

if TYPE_CHECKING:
    import pytest

    from etsuite.backends.harness.flows.flow import Flow

RUNNERS_INI = "etsuite_runners"
RUNNERS_HELP = ("run the flows matching PATTERN on a runner instead of in this process: "
                "process, native[?iterations=N] (the C++ runner built from the wheel), "
                "ssh://[user@]host[:port][?python=...&identity=...], "
                "adb://SERIAL?runner=PATH, cmd:TEMPLATE with {pte} {inputs} {outputs}, or a "
                "kind a plugin adds (pytest_etsuite_runner_kinds); "
                "several specs separated by commas are a pool (repeatable)")


def addoption(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption("--runner", action="append", default=[], metavar="PATTERN=SPEC",
                    help=RUNNERS_HELP)
    parser.addini(RUNNERS_INI, type="linelist", default=[],
                  help="runners by flow pattern, 'PATTERN=SPEC[,SPEC...]' per line (as --runner)")


def parse_choice(text: str, source: str, kinds: Sequence[RunnerKind] | None = None) -> RunnerChoice:
    pattern, equals, specs = text.partition("=")
    if not equals or not pattern.strip() or not specs.strip():
        raise SpecError(f"{source}: {text!r} is not PATTERN=SPEC (e.g. "
                        f"'coreml*=ssh://mac1' or 'xnnpack=process')")
    try:
        parsed = split_specs(specs, kinds)
    except SpecError as error:
        raise SpecError(f"{source}: {error}") from None
    names = [spec.name for spec in parsed]
    if len(set(names)) != len(names):
        raise SpecError(f"{source}: {text!r} names a device twice")
    return RunnerChoice(pattern.strip(), tuple(parsed), text.strip(), source)


def parse_choices(config: pytest.Config) -> list[RunnerChoice]:
    ini = f"{RUNNERS_INI} in {config.inipath or 'the ini file'}"
    lines = [(line, ini) for line in config.getini(RUNNERS_INI)]
    lines += [(line, "--runner") for line in config.getoption("runner", None) or []]
    kinds = known_kinds(config) if lines else None
    return [parse_choice(text, source, kinds) for text, source in lines]


def apply_runners(flows: dict, choices: list[RunnerChoice], folder: str | None) -> dict:
    """The flows with the runtime of each matched one replaced (the last matching
    choice wins). Raises SpecError for a pattern that matches no flow."""
    known = ", ".join(sorted(flows))
    for choice in choices:
        if not any(fnmatch.fnmatchcase(name, choice.pattern) for name in flows):
            raise SpecError(f"{choice.source}: pattern {choice.pattern!r} matches no flow; "
                            f"known flows: {known}")
    replaced = dict(flows)
    for name, flow in flows.items():
        chosen = [c for c in choices if fnmatch.fnmatchcase(name, c.pattern)]
        if chosen and folder is not None:
            runtime = RunnerRuntime(chosen[-1].specs, folder, option=chosen[-1].text)
            replaced[name] = dataclasses.replace(flow, runtime=runtime)
    return replaced


def pool_folder(config: pytest.Config, choices: list[RunnerChoice]) -> tuple[str | None, bool]:
    """(the run's pool folder, whether this process made it and removes it)."""
    if not choices:
        return None, False
    handed = workers.controller_runner_folder(config)
    if handed:
        return handed, False
    return tempfile.mkdtemp(prefix="etsuite-runners-"), True


def specs_of(flow: Flow) -> tuple[RunnerSpec, ...]:
    runtime = flow.runtime
    return runtime.specs if isinstance(runtime, RunnerRuntime) else ()
