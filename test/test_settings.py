"""Every setting is checked once, at start-up: a bad one is a usage error (exit 4) whose
message names the value and where it came from, with isolation on or off and under
xdist, never an INTERNALERROR in the middle of a run."""

import pytest

from conftest import run_forked

ONE_TEST = """
import pytest

{marker}
def test_one(test_runner):
    pass
"""


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.lines if line.startswith("ERROR")]


@pytest.mark.parametrize("isolation", ["fork", "none"])
@pytest.mark.parametrize("marker, named", [
    ("@pytest.mark.time_limit()", "args=()"),
    ("@pytest.mark.time_limit('soon')", "'soon'"),
    ("@pytest.mark.time_limit(-5)", "'-5'"),
    ("@pytest.mark.time_limit(5, 6)", "args=(5, 6)"),
])
def test_bad_time_limit_marker(pytester, isolation, marker, named):
    pytester.makepyfile(test_bad=ONE_TEST.format(marker=marker))
    result = run_forked(pytester, "--flow", "portable", "--isolation", isolation, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    (line,) = error_lines(result)
    assert "test_bad.py::test_one[portable]" in line and "time_limit" in line and named in line
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_bad_time_limit_marker_under_xdist(pytester):
    pytester.makepyfile(test_bad=ONE_TEST.format(marker="@pytest.mark.time_limit()"))
    result = run_forked(pytester, "--flow", "portable", "-n", "2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert "time_limit" in result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("line", ["backends/suite/models/", "=soon", "models/=0"])
def test_bad_time_limits_ini_line(pytester, line):
    pytester.makeini(f"[pytest]\netsuite_time_limits =\n    {line}\n")
    pytester.makepyfile(test_ok=ONE_TEST.format(marker=""))
    result = run_forked(pytester, "--flow", "portable", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (error,) = error_lines(result)
    assert "etsuite_time_limits" in error and repr(line) in error and "tox.ini" in error


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_bad_time_limit_option(pytester, value):
    pytester.makepyfile(test_ok=ONE_TEST.format(marker=""))
    result = run_forked(pytester, "--flow", "portable", f"--time-limit={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--time-limit" in result.stderr.str() and repr(value) in result.stderr.str()


def test_valid_settings_still_run(pytester):
    pytester.makeini("[pytest]\netsuite_time_limits =\n    test_ok.py=120\n    =60\n")
    pytester.makepyfile(test_ok=ONE_TEST.format(marker="@pytest.mark.time_limit(30)"))
    result = run_forked(pytester, "--flow", "portable", "--time-limit=90", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


BROKEN_PARTITIONER_CONFTEST = '''
import dataclasses

from etsuite.backends.xnnpack.flows import XNNPACK


def _broken():
    raise RuntimeError("partitioner library missing on purpose")


def pytest_etsuite_flows(config):
    return [dataclasses.replace(XNNPACK, name="broken_partitioner", partitioners=_broken)]
'''


def test_priming_says_why_it_skipped_work(pytester):
    """Priming is only an optimization, so a failure there must not stop the run,
    but it must not be silent either."""
    pytester.makeconftest(BROKEN_PARTITIONER_CONFTEST)
    two_tests = ONE_TEST.format(marker="") + "\n\ndef test_two(test_runner):\n    pass\n"
    pytester.makepyfile(test_ok=two_tests)
    result = run_forked(pytester, "--flow", "broken_partitioner", "-p", "no:cacheprovider", "-n", "0")
    text = result.stdout.str()
    assert "priming skipped part of its work" in text
    assert "flow broken_partitioner: RuntimeError: partitioner library missing on purpose" in text
    assert result.ret == pytest.ExitCode.OK  # the tests themselves call no pipeline

    # A run of one test (a repro command) skips priming: it would lower twice.
    alone = run_forked(pytester, "--flow", "broken_partitioner", "-p", "no:cacheprovider", "-n", "0",
                       "-k", "test_one")
    assert alone.ret == pytest.ExitCode.OK
    assert "priming skipped" not in alone.stdout.str()


def test_priming_keeps_the_runtimes_cpu_probe_off_the_console(capfd):
    """The runtime's thread pool probes the CPU the first time a process executes a program
    and prints five lines about it on hosts without Arm's midr files (this one). The
    priming is that first time in every session and worker: those lines stay off the
    console, and anything else printed meanwhile still reaches it."""
    import os
    import subprocess
    import sys

    from etsuite.backends.harness.case import priming
    code = ("from etsuite.backends.harness.case.priming import prime\n"
            "from etsuite.backends.portable.flows import PORTABLE\n"
            "assert prime([PORTABLE]) == []\n"
            "print('warmed')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "warmed"
    assert "[cpuinfo_utils.cpp:" not in done.stderr, done.stderr

    with priming._runtime_chatter_kept_off_the_console():
        os.write(2, b"[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version\n")
        os.write(2, b"a real problem\n")
    assert capfd.readouterr().err == "a real problem\n"
