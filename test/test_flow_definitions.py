"""Flows defined wrongly stop the session at start-up with a usage error (exit 4): one line
that names the culprit (a backend's flows.py, an `etsuite.flows` entry point, the conftest
or plugin whose `pytest_etsuite_flows` returned it), never an INTERNALERROR. The same under
xdist, whose controller configures before any worker starts.

Every session is a new interpreter, since PYTHONPATH (where the broken backend folder and
the vendor's distribution live, in a scratch folder) is read at start-up. They stop before
torch is imported, so each takes about a second."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

ONE_TEST = """
def test_op(test_runner):
    pass
"""


def pytest_session(folder: Path, *args, pythonpath: Path | None = None):
    """pytest in `folder`, in a new interpreter; no bytecode written, so a backend folder
    linked from the checkout leaves the checkout as it was."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def usage_error(run) -> str:
    """The session's one line of complaint, once it is sure to be a usage error with
    nothing else said on stderr."""
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    (line,) = [line for line in run.stderr.splitlines() if line.strip()]
    assert line.startswith("ERROR: "), output
    return line.removeprefix("ERROR: ")


# -- (a) a backend folder whose flows.py has no FLOWS, or FLOWS that is not a list of Flow

def site_with_backend(base: Path, name: str, flows_py: str) -> Path:
    """A PYTHONPATH folder whose `etsuite` is this checkout plus the backend folder `name`:
    the checkout's folders linked, the new one written beside them."""
    package = base / "site" / "etsuite"
    backends = package / "backends"
    backends.mkdir(parents=True)
    for entry in (ROOT / "backends").iterdir():
        if entry.name != "__pycache__":
            (backends / entry.name).symlink_to(entry)
    (package / "tools").symlink_to(ROOT / "tools")
    (backends / name).mkdir()
    (backends / name / "__init__.py").write_text("")
    (backends / name / "flows.py").write_text(flows_py)
    return base / "site"


@pytest.mark.parametrize("flows_py, said", [
    ('"""A backend that forgot its flows."""\nFLOW = []\n',
     "backends/broken/flows.py defines no FLOWS (a list of Flow)"),
    ("FLOWS = 3\n", "FLOWS in backends/broken/flows.py is 3 (int) instead of a list of Flow"),
    ('FLOWS = "portable"\n',
     "FLOWS in backends/broken/flows.py is 'portable' (str) instead of a list of Flow"),
    ("from etsuite.backends.portable.flows import PORTABLE\nFLOWS = PORTABLE\n",
     "FLOWS in backends/broken/flows.py is Flow(name='portable', ...) (Flow) instead of a list of Flow"),
    ('FLOWS = ["portable"]\n',
     "FLOWS in backends/broken/flows.py is ['portable'] (list), whose item 0, 'portable' (str), "
     "is not a Flow"),
], ids=["no_FLOWS", "int", "str", "one_flow", "list_of_str"])
def test_a_backend_without_a_list_of_flows(tmp_path, flows_py, said):
    site = site_with_backend(tmp_path, "broken", flows_py)
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "--collect-only", pythonpath=site))
    assert line == said


def test_a_backend_without_flows_under_xdist(tmp_path):
    site = site_with_backend(tmp_path, "broken", "FLOW = []\n")
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "-n", "2", pythonpath=site))
    assert line == "backends/broken/flows.py defines no FLOWS (a list of Flow)"


# -- (b) an `etsuite.flows` entry point that cannot be loaded (or loads something else)

def site_with_distribution(base: Path, module_text: str) -> Path:
    """A PYTHONPATH folder holding an installed distribution, as pip leaves one: its
    dist-info lists `vendor = vendor_flows:FLOWS` under the etsuite.flows group."""
    site = base / "site"
    info = site / "vendor_flows-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vendor-flows\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[etsuite.flows]\nvendor = vendor_flows:FLOWS\n")
    (site / "vendor_flows.py").write_text(module_text)
    return site


ENTRY_POINT = "the etsuite.flows entry point 'vendor = vendor_flows:FLOWS' (from vendor-flows)"
VENDOR_FLOWS = """
import dataclasses

from etsuite.backends.portable.flows import PORTABLE

FLOWS = [dataclasses.replace(PORTABLE, name="vendor_fp32", backend="vendor")]
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_entry_point_that_raises_when_loaded(tmp_path, workers):
    site = site_with_distribution(
        tmp_path, 'raise ImportError("libvendor.so: cannot open shared object file\\n(more)")\n')
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "-n", workers, pythonpath=site))
    assert line == (f"{ENTRY_POINT} cannot be loaded: "
                    "ImportError: libvendor.so: cannot open shared object file")


def test_an_entry_point_that_holds_something_else(tmp_path):
    site = site_with_distribution(tmp_path, 'FLOWS = {"vendor_fp32": None}\n')
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "--collect-only", pythonpath=site))
    assert line == (f"{ENTRY_POINT} loads {{'vendor_fp32': None}} (dict), whose item 0, "
                    "'vendor_fp32' (str), is not a Flow")


def test_an_entry_point_with_flows_adds_them(tmp_path):
    """The same distribution, done right: its flow is collected (the check lets it by)."""
    site = site_with_distribution(tmp_path, VENDOR_FLOWS)
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    run = pytest_session(tmp_path, "--collect-only", "-q", "--backend", "vendor", pythonpath=site)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "test_one.py::test_op[vendor_fp32]" in run.stdout


# -- (c) a pytest_etsuite_flows implementation returning something else than Flows

def hook_returning(value: str) -> str:
    return f"""
from etsuite.backends.portable.flows import PORTABLE


def pytest_etsuite_flows(config):
    return {value}
"""


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("returned, said", [
    ("3", "3 (int) instead of a list of Flow"),
    ("PORTABLE", "Flow(name='portable', ...) (Flow) instead of a list of Flow"),
    ('[PORTABLE, "xnnpack"]', "[Flow(name='portable', ...), 'xnnpack'] (list), whose item 1, "
                              "'xnnpack' (str), is not a Flow"),
], ids=["int", "one_flow", "list_with_str"])
def test_a_conftest_hook_returning_something_else(tmp_path, workers, returned, said):
    (tmp_path / "conftest.py").write_text(hook_returning(returned))
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "-n", workers))
    assert line == f"pytest_etsuite_flows in conftest.py returned {said}"


def test_a_plugin_hook_is_named_by_its_module(tmp_path):
    (tmp_path / "vendor_plugin.py").write_text(hook_returning('"portable"'))
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "-p", "vendor_plugin", "--collect-only"))
    assert line == ("pytest_etsuite_flows in vendor_plugin.py returned 'portable' (str) "
                    "instead of a list of Flow")


def test_a_hook_behind_a_wrapper_is_still_a_usage_error(tmp_path):
    """A wrapper may change what the others return, so pluggy makes that call and the
    bad result goes unnamed; it stays one line."""
    (tmp_path / "wrapping.py").write_text("""
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_etsuite_flows(config):
    return (yield)
""")
    (tmp_path / "conftest.py").write_text(hook_returning("3"))
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    line = usage_error(pytest_session(tmp_path, "-p", "wrapping", "--collect-only"))
    assert line == "a pytest_etsuite_flows hook returned 3 (int) instead of a list of Flow"


def test_hooks_returning_any_iterable_of_flows_still_add_them(tmp_path):
    """A generator and None (no flows) are fine, as before the check."""
    (tmp_path / "conftest.py").write_text("""
import dataclasses

from etsuite.backends.portable.flows import PORTABLE


def pytest_etsuite_flows(config):
    return (dataclasses.replace(PORTABLE, name=f"mine_{i}", backend="mine") for i in range(2))
""")
    (tmp_path / "other_plugin.py").write_text(hook_returning("None"))
    (tmp_path / "test_one.py").write_text(ONE_TEST)
    run = pytest_session(tmp_path, "-p", "other_plugin", "--collect-only", "-q", "--backend", "mine")
    assert run.returncode == 0, run.stdout + run.stderr
    assert {line.split("[")[1] for line in run.stdout.splitlines() if "::test_op[" in line} \
        == {"mine_0]", "mine_1]"}


def test_host_expectation_files_are_read_each_time_the_flows_are(tmp_path, monkeypatch):
    """A backend's host-only expectations (OpenVINO's on native-bf16 CPUs) are read with
    expectations.toml, each time the registry builds the flows, never once at import:
    a warm process that keeps flows.py imported still sees an edit to the file."""
    from etsuite.backends.harness.flows.registry import builtin_flows
    from etsuite.backends.openvino import flows as openvino

    host_file = tmp_path / "expectations.host.toml"
    entry = ('[[fail]]\nflows = ["openvino"]\ncase = "backends/suite/operators/test_add.py::*"\n'
             'status = "fail_run"\nreason = "{}"\n')
    host_file.write_text(entry.format("first"))
    monkeypatch.setattr(openvino, "host_expectation_files", lambda: [host_file])

    def host_reasons():
        (flow,) = [f for f in builtin_flows() if f.name == "openvino"]
        return [e.reason for e in flow.expectations.entries if e.source.startswith(str(host_file))]

    assert host_reasons() == ["first"]
    host_file.write_text(entry.format("edited"))
    assert host_reasons() == ["edited"]
