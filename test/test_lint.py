"""The lint gate (`make lint`, tox env `lint`) can fail: ruff with the project's settings
and mypy through tools/typecheck.py each exit nonzero on an injected finding, and mypy's
finding names the file by its repository path, not by the import-name layout. They use
the lint env's tools, which `make test` builds first (its lint step). And `make test`
runs the gate before the tests, unless ARGS narrows the run."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_BIN = ROOT / ".tox" / "lint" / "bin"
MAKE = shutil.which("make")

needs_lint_env = pytest.mark.skipif(not (LINT_BIN / "mypy").exists(),
                                    reason="no lint env (.tox/lint): run make lint first")


@needs_lint_env
def test_ruff_fails_on_a_finding(tmp_path):
    (tmp_path / "unsorted.py").write_text("import sys\nimport os\n\nprint(os, sys)\n")
    done = subprocess.run([LINT_BIN / "ruff", "check", "--no-cache", "--config",
                           ROOT / "pyproject.toml", "unsorted.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "I001" in done.stdout


@needs_lint_env
def test_mypy_fails_on_a_finding_and_names_the_repository_file(tmp_path):
    # A tree of the repository's shape (the two folders typecheck.py maps), one error in it.
    for package in ("backends", "backends/harness", "tools"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "backends" / "harness" / "broken.py").write_text('count: int = "three"\n')
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    done = subprocess.run([LINT_BIN / "python", ROOT / "tools" / "typecheck.py",
                           "--root", tmp_path, "--cache-dir", tmp_path / "cache"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("backends/harness/broken.py:1: error: Incompatible types"), \
        done.stdout


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
@pytest.mark.parametrize("variables, expected", [
    ([], ["-e lint", "-e test -- test"]),
    (["ARGS=test/test_lint.py"], ["-e test -- test/test_lint.py"]),
    (["ARGS=test/test_lint.py", "LINT_FIRST=yes"], ["-e lint", "-e test -- test/test_lint.py"]),
    (["LINT_FIRST=no"], ["-e test -- test"]),
])
def test_make_test_lints_first_unless_args_narrow_the_run(tmp_path, variables, expected):
    calls = tmp_path / "tox-calls"
    tox = tmp_path / "tox"
    tox.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    tox.chmod(0o755)
    inherited = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ARGS", "LINT_FIRST")
    environment = {k: v for k, v in os.environ.items() if k not in inherited}
    done = subprocess.run([MAKE, "-s", "test", f"TOX={tox}", "CHROMIUM_CHECK=no", *variables],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == expected
