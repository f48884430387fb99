"""A new backend is one folder: `backends/<name>/flows.py` (and optionally a `test/`
folder) is picked up by collection, markers, `make test-<name>`, `make help` and
`tox -e <name>` with no other file edited.

The backend is made in a copy of the checkout, imported as `etsuite` through PYTHONPATH,
so the real checkout (and tests running beside this one) never see it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from etsuite.backends.harness.contract.report import records_of_test

ROOT = Path(__file__).resolve().parent.parent
NAME = "newbackend"

FLOWS = '''"""A backend made by a self-test: portable kernels under another name."""

import dataclasses

from etsuite.backends.portable.flows import PORTABLE

FLOWS = [dataclasses.replace(PORTABLE, name="newbackend_fp32", backend="newbackend",
                             description="portable kernels, renamed")]
'''

OWN_TEST = '''import torch


def test_only_for_newbackend(test_runner):
    test_runner.lower_and_run_model(torch.nn.ReLU(), (torch.randn(2, 3),))
'''


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the repository with one more backend folder, and the environment that
    makes `import etsuite` resolve to the copy."""
    base = tmp_path_factory.mktemp("checkout")
    copy = base / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in ("backends", "tools"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=ignore)
    for name in ("Makefile", "tox.ini", "toxfile.py", "setup.cfg", "setup.py", "pyproject.toml"):
        shutil.copy(ROOT / name, copy / name)
    (copy / "backends" / NAME / "test").mkdir(parents=True)
    (copy / "backends" / NAME / "__init__.py").write_text("")
    (copy / "backends" / NAME / "flows.py").write_text(FLOWS)
    (copy / "backends" / NAME / "test" / "test_own.py").write_text(OWN_TEST)
    site = base / "site" / "etsuite"  # a namespace package pointing at the copy
    site.mkdir(parents=True)
    for folder in ("backends", "tools"):
        (site / folder).symlink_to(copy / folder)
    env = dict(os.environ, PYTHONPATH=str(base / "site"))
    return copy, env


def pytest_in(checkout, *args):
    copy, env = checkout
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=600)


def test_collected_and_marked_with_no_other_edit(checkout):
    run = pytest_in(checkout, "--collect-only", "-q", "--backend", NAME,
                    "backends/newbackend/test", "backends/suite/operators/test_relu.py")
    assert run.returncode == 0, run.stdout + run.stderr
    items = [line for line in run.stdout.splitlines() if "::" in line]
    assert "backends/newbackend/test/test_own.py::test_only_for_newbackend[newbackend_fp32]" in items
    assert items and all(line.endswith("[newbackend_fp32]") for line in items)
    # The folder's own tests carry the backend's marker; other backends do not run them.
    marked = pytest_in(checkout, "--collect-only", "-q", "-m", f"backend_{NAME}",
                       "backends/newbackend/test")
    assert "test_only_for_newbackend[newbackend_fp32]" in marked.stdout
    others = pytest_in(checkout, "--collect-only", "-q", "--backend", "portable",
                       "backends/newbackend/test")
    assert "test_only_for_newbackend" not in others.stdout


def test_runs_end_to_end(checkout, tmp_path):
    report = tmp_path / "report.json"
    run = pytest_in(checkout, "--backend", NAME, "backends/newbackend/test", "-n", "0",
                    "--seed", "5", "--json-report", f"--json-report-file={report}")
    assert run.returncode == 0, run.stdout + run.stderr
    (test,) = json.loads(report.read_text())["tests"]
    (record,) = records_of_test(test)
    assert (record["backend"], record["flow"], record["status"]) == (NAME, "newbackend_fp32", "pass")
    assert record["repro"].startswith(f"tox -e {NAME} -- ")


def test_make_and_tox_know_it(checkout):
    copy, env = checkout
    listed = subprocess.run(["make", "-s", "help"], cwd=copy, capture_output=True, text=True)
    assert f"make test-{NAME}" in listed.stdout
    dry = subprocess.run(["make", "-n", f"test-{NAME}", "TOX=tox"], cwd=copy,
                         capture_output=True, text=True)
    assert f"tox -e {NAME} --" in dry.stdout, dry.stdout + dry.stderr
    unknown = subprocess.run(["make", "test-nosuchbackend", "TOX=true"], cwd=copy,
                             capture_output=True, text=True)
    assert unknown.returncode != 0 and "known backends: " in unknown.stderr
    tox = ROOT / ".tools" / "bin" / "tox"
    if not tox.exists():
        pytest.skip("tox is not bootstrapped (.tools/bin/tox); `make test` makes it")
    config = subprocess.run([str(tox), "-c", str(copy / "tox.ini"), "config", "-e", NAME,
                             "-k", "commands", "description"],
                            cwd=copy, capture_output=True, text=True, timeout=300)
    assert config.returncode == 0, config.stdout + config.stderr
    assert f"--backend {NAME}" in config.stdout and "portable kernels under another name" in config.stdout
