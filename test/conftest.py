"""Helpers for the project's own tests: run the suite's plugin in a fresh pytest process
on small generated test files and read back the real pytest-json-report output."""

import json

import pytest

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
        self.report = json.loads(report_path.read_text()) if report_path.exists() else None

    @property
    def tests(self) -> dict:
        return {t["nodeid"]: t for t in self.report["tests"]}

    def records(self, nodeid_part: str = "") -> list[dict]:
        found = []
        for test in self.report["tests"]:
            if nodeid_part in test["nodeid"]:
                found.extend(test.get("metadata", {}).get("subtests", []))
        return found

    def outcome(self, nodeid_part: str) -> str:
        matches = [t["outcome"] for n, t in self.tests.items() if nodeid_part in n]
        assert len(matches) == 1, (nodeid_part, sorted(self.tests))
        return matches[0]


@pytest.fixture
def run_suite(pytester):
    """run_suite(*args) -> SuiteRun: pytest in a subprocess with a JSON report."""

    def run(*args, timeout=600):
        report_path = pytester.path / "reports" / "run.json"
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--json-report",
            f"--json-report-file={report_path}", *args, timeout=timeout,
        )
        overrides = [a.split("=", 1)[1] for a in args if a.startswith("--json-report-file=")]
        if overrides:  # the last one wins, as in pytest's own parsing
            report_path = pytester.path / overrides[-1]
        return SuiteRun(result, report_path)

    return run
