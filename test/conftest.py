"""Helpers for the project's own tests: run the suite's plugin in a fresh pytest process
on small generated test files and read back the real pytest-json-report output."""

import functools
import json
import os
import signal
import sys
import time

import pytest

from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.backends.harness.contract.report import facts_of_report, records_of_test

pytest_plugins = ["pytester"]

# A conftest for generated projects: flows made for the self-tests, next to the real ones.
TEST_FLOWS_CONFTEST = '''
import dataclasses
import os

from etsuite.backends.portable.flows import PORTABLE
from etsuite.backends.xnnpack.flows import XNNPACK


CALLS = []  # execute calls of "first_call" runtimes in this process


@dataclasses.dataclass(frozen=True)
class FaultyRuntime:
    """Wraps a flow's runtime and spoils what it returns: the self-tests' faults live
    here, in a wrapped flow, not in the public Flow."""

    inner: object
    # "shift": outputs + 1; "abort": the process aborts while running; "noise": seeded
    # Gaussian noise of 1e-3 of each output's range; "flip": the largest element's sign
    # flipped; "first_call": the first call in a process raises, later ones are fine
    fault: str
    name: str = "faulty"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        import torch

        outputs = self.inner.execute(loaded, inputs)
        if self.fault == "abort":
            os.abort()
        if self.fault == "shift":
            return [o + 1.0 for o in outputs]
        if self.fault == "first_call":
            CALLS.append(self)
            if len(CALLS) == 1:
                raise RuntimeError("fails on its first call in this process")
            return outputs
        outputs = [o.clone() for o in outputs]
        for out in outputs:
            flat = out.view(-1)
            if self.fault == "noise":
                spread = float(out.max() - out.min())
                flat += 1e-3 * spread * torch.randn(
                    flat.shape, generator=torch.Generator().manual_seed(5))
            else:
                flat[flat.abs().argmax()] *= -1
        return outputs


def pytest_etsuite_flows(config):
    return [
        dataclasses.replace(XNNPACK, name="xnnpack_perturbed",
                            runtime=FaultyRuntime(XNNPACK.runtime, "shift")),
        dataclasses.replace(PORTABLE, name="portable_aborting", backend="faulty",
                            runtime=FaultyRuntime(PORTABLE.runtime, "abort")),
        dataclasses.replace(PORTABLE, name="needs_sdk", backend="missing_sdk",
                            requires=("no_such_vendor_sdk",),
                            enable_hint="pip install no-such-vendor-sdk"),
    ]
'''


class SuiteRun:
    """Result of one pytest subprocess: exit code, output, the JSON report's tests and
    the records, keyed for easy assertions."""

    def __init__(self, result, report_path):
        self.result = result
        self.ret = result.ret
        self.stdout = result.stdout.str()
        self.stderr = result.stderr.str()
        self.report_path = report_path
        self.report = json.loads(report_path.read_text()) if report_path.exists() else None

    @property
    def tests(self) -> dict:
        return {t["nodeid"]: t for t in self.report["tests"]}

    @property
    def facts(self) -> SessionFacts:
        return SessionFacts.from_dict(facts_of_report(self.report))

    def records(self, nodeid_part: str = "") -> list[dict]:
        found = []
        for test in self.report["tests"]:
            if nodeid_part in test["nodeid"]:
                found.extend(records_of_test(test))
        return found

    def outcome(self, nodeid_part: str) -> str:
        matches = [t["outcome"] for n, t in self.tests.items() if nodeid_part in n]
        assert len(matches) == 1, (nodeid_part, sorted(self.tests))
        return matches[0]


@functools.cache
def _warm_this_process() -> None:
    """Import torch and executorch and lower once (the harness priming, with the
    portable and XNNPACK flows) in this test process, so every forked session starts warm."""
    from etsuite.backends.harness.case import speedups
    from etsuite.backends.harness.case.priming import prime
    from etsuite.backends.portable.flows import PORTABLE
    from etsuite.backends.xnnpack.flows import XNNPACK, XNNPACK_STATIC_INT8_PER_TENSOR

    speedups.apply()
    prime([PORTABLE, XNNPACK, XNNPACK_STATIC_INT8_PER_TENSOR])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Warm this worker before the harness forks the test's own child (priming inside
    that child would be lost with it)."""
    if {"run_suite", "pytester"} & set(getattr(item, "fixturenames", ())) \
            or item.get_closest_marker("slow"):
        _warm_this_process()
    return (yield)


def run_forked(where, *args, timeout: float = 600, scratch=None) -> pytest.RunResult:
    """pytest in `where` (a folder, or a pytester's folder) in a forked child of this
    process, as `pytester.runpytest_subprocess` would run it in a new interpreter: its own process
    (a crash or os.abort stays there), its own stdout/stderr, its exit code. The child
    starts with torch and executorch already imported, which a new interpreter spends
    about 7 s on, so the project's tests run their many small sessions this way.
    Use a real subprocess where a fresh interpreter is the point (hash seed, PYTEST_ADDOPTS
    read at start-up, a session killed from outside)."""
    _warm_this_process()
    folder = getattr(where, "path", where)
    scratch = scratch or folder  # its basetemp and output files: give one outside a checkout
    basetemp = scratch / "basetemp"
    out_path, err_path = scratch / ".forked.out", scratch / ".forked.err"
    argv = [f"--basetemp={basetemp}", *map(str, args)]
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            for fd, path in ((1, out_path), (2, err_path)):
                target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(target, fd)
                os.close(target)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
            os.chdir(folder)
            if "torch" in sys.modules:  # a thread pool started before fork is unusable
                sys.modules["torch"].set_num_threads(1)
            code = int(pytest.main(argv))
        except BaseException:  # noqa: BLE001 - say what broke, then leave
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = started + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"pytest {' '.join(argv)} ran past {timeout} s")
        time.sleep(0.05)
    ret = os.waitstatus_to_exitcode(status)
    lines = [p.read_text(errors="replace").splitlines() for p in (out_path, err_path)]
    return pytest.RunResult(ret, lines[0], lines[1], time.monotonic() - started)


@pytest.fixture
def run_suite(pytester):
    """run_suite(*args) -> SuiteRun: pytest in a forked child with a JSON report."""

    def run(*args, timeout=600):
        report_path = pytester.path / "reports" / "run.json"
        result = run_forked(
            pytester, "-p", "no:cacheprovider", "--json-report",
            f"--json-report-file={report_path}", *args, timeout=timeout,
        )
        overrides = [a.split("=", 1)[1] for a in args if a.startswith("--json-report-file=")]
        if overrides:  # the last one wins, as in pytest's own parsing
            report_path = pytester.path / overrides[-1]
        return SuiteRun(result, report_path)

    return run


# Two tiny test cases for generated folders: an add, which XNNPACK delegates whole, and
# an add and a relu (two computing nodes).
ADD_CASES = """
import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class AddRelu(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x + y)


def test_add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4, 8), torch.randn(4, 8)))


def test_add_relu(test_runner):
    test_runner.lower_and_run_model(AddRelu(), (torch.randn(4, 8), torch.randn(4, 8)))
"""



@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A fuzz target's case count (test/fuzzing.py) rides on its report: the test runs in
    a forked child, and the report is what comes back to this process."""
    report = yield
    fuzzing = sys.modules.get("fuzzing")
    if call.when == "call" and fuzzing is not None and item.originalname in fuzzing.TRIED:
        report.user_properties.append(("fuzz_cases", fuzzing.TRIED[item.originalname]))
    return report


def pytest_terminal_summary(terminalreporter):
    """The cases each fuzz target ran, for `make fuzz-inputs`' figures."""
    counts = {report.head_line: value
              for reports in terminalreporter.stats.values() for report in reports
              if getattr(report, "when", None) == "call"
              for name, value in getattr(report, "user_properties", ()) if name == "fuzz_cases"}
    if counts:
        terminalreporter.write_sep("-", "fuzz cases tried")
        for target, count in sorted(counts.items()):
            terminalreporter.write_line(f"{count:>9,}  {target}")
