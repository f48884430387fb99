"""Cases for the `outcomes` report fixture: every pytest outcome the report must count,
with and without a flow (crash, timeout, setup and teardown errors, failures outside a
subtest, xfail/xpass, skips). REPORT_FIXTURE_BASELINE=1 gives the older variant used as
the baseline (one case regressed since, one was fixed, one removed, one added).
See ../README.md."""

import ctypes
import os
import time

import pytest
import torch

BASELINE = os.environ.get("REPORT_FIXTURE_BASELINE") == "1"


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def _add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(3), torch.randn(3)))


@pytest.fixture
def broken_setup():
    raise OSError("fixture cannot open /dev/fixture0")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("fixture teardown left 3 temp files")


def test_crash_in_runner(test_runner):
    _add(test_runner)
    ctypes.string_at(0)


def test_plain_crash():
    ctypes.string_at(0)


@pytest.mark.time_limit(3)
def test_hang(test_runner):
    _add(test_runner)
    time.sleep(60)


def test_setup_error(broken_setup, test_runner):
    _add(test_runner)


def test_teardown_error(test_runner, broken_teardown):
    _add(test_runner)


def test_regressed(test_runner):
    _add(test_runner)
    assert BASELINE, "checked after the subtests: the output dtype changed"


def test_fixed(test_runner):
    _add(test_runner)
    assert not BASELINE, "fails in the baseline only"


def test_plain_failure():
    assert 2 + 2 == 5


@pytest.mark.xfail(reason="known upstream bug", strict=False)
def test_plain_xfail():
    raise NotImplementedError("not yet")


@pytest.mark.xfail(reason="was flaky", strict=False)
def test_plain_xpass():
    pass


@pytest.mark.xfail(reason="was broken", strict=True)
def test_plain_strict_xpass():
    pass


def test_plain_skip():
    pytest.skip("needs a device with 2 GPUs")


def test_plain_pass():
    pass


if BASELINE:
    def test_removed_since(test_runner):
        _add(test_runner)
else:
    def test_added_since(test_runner):
        _add(test_runner)
