"""`make test` on a machine without Chromium stops at once, in one line that gives the
install command, instead of failing the page's browser tests minutes later. Real make on
the real Makefile, with a PATH of only a scratch folder (no browser unless a test puts a
fake one there) and TOX naming a fake that records being called, so nothing real runs."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from etsuite.tools import headless

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
NEEDS = ("make test needs Chromium for the page's browser tests (test/test_page_browser.py): "
         "apt-get install -y chromium")
# Settings an outer make or the caller's shell could hand down to the make under test.
INHERITED = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ARGS", "CHROMIUM_CHECK", "ETSUITE_CHROMIUM", "LINT_FIRST")

pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def make_test(tmp_path):
    """make_test(*variables, env=...) -> (completed make, the fake tox's argv or None)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").symlink_to(MAKE)
    called = tmp_path / "tox-called"
    tox = executable(tmp_path / "tox", f'#!/bin/sh\necho "$@" > {called}\n')

    def run(*variables, env=None):
        environment = {k: v for k, v in os.environ.items() if k not in INHERITED}
        environment.update(PATH=str(bin_dir), **(env or {}))
        done = subprocess.run([MAKE, "-s", "test", f"TOX={tox}", *variables], cwd=ROOT,
                              env=environment, capture_output=True, text=True, timeout=60)
        argv = called.read_text().split() if called.exists() else None
        called.unlink(missing_ok=True)
        return done, argv

    run.bin_dir = bin_dir
    return run


@pytest.mark.parametrize("args", [None, "test", "test/test_page_browser.py", "test -k page"])
def test_without_chromium_it_stops_in_one_line_before_tox(make_test, args):
    done, tox_argv = make_test(*([f"ARGS={args}"] if args is not None else []))
    assert done.returncode != 0
    assert tox_argv is None, "tox ran although the check failed"
    (line,) = done.stderr.splitlines()
    assert NEEDS in line, line
    assert done.stdout == ""


@pytest.mark.parametrize("variables, expected", [
    (["ARGS=test/test_plugin.py"], ["-e", "test", "--", "test/test_plugin.py"]),
    (["CHROMIUM_CHECK=no"], ["-e", "test", "--", "test"]),
])
def test_runs_without_chromium_when_the_browser_tests_are_left_out(make_test, variables, expected):
    done, tox_argv = make_test(*variables)
    assert done.returncode == 0, done.stderr
    assert tox_argv == expected


@pytest.mark.parametrize("name", headless.CANDIDATES)
def test_any_browser_the_page_tests_find_passes_the_check(make_test, name):
    executable(make_test.bin_dir / name)
    done, tox_argv = make_test()
    assert done.returncode == 0, done.stderr
    assert tox_argv == ["-e", "test", "--", "test"]


def test_etsuite_chromium_decides_as_it_does_for_the_browser_tests(make_test, tmp_path):
    elsewhere = executable(tmp_path / "my-chromium")  # not on PATH
    done, tox_argv = make_test(env={"ETSUITE_CHROMIUM": str(elsewhere)})
    assert done.returncode == 0 and tox_argv is not None, done.stderr
    executable(make_test.bin_dir / "chromium")
    done, tox_argv = make_test(env={"ETSUITE_CHROMIUM": "no-such-browser"})
    assert done.returncode != 0 and tox_argv is None and NEEDS in done.stderr


def test_make_help_says_so():
    listed = subprocess.run([MAKE, "-s", "help"], cwd=ROOT, capture_output=True, text=True)
    assert "needs Chromium on PATH" in listed.stdout and "CHROMIUM_CHECK=no" in listed.stdout
