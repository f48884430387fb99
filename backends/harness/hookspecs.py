"""Hooks the plugin offers to conftest.py files and other plugins, and the one it uses
to hear from its isolation layer."""

import pytest


def pytest_etsuite_flows(config):
    """Return a list of extra `Flow` objects (e.g. a vendor's own backend, or flows
    made for the harness's self-tests). Called once, at configure time."""


@pytest.hookspec(firstresult=True)
def pytest_etsuite_child_lost(item, status, message, stage, records, duration, crash_dump):
    """The isolation layer lost the child running `item`: it crashed (`status` is
    fail_crash) or was killed at its time limit (fail_timeout). `records` are the record
    dicts the child finished before, `stage` the pipeline stage it had entered after them
    (or None), `crash_dump` what faulthandler wrote as it died (Python stacks and the
    extension modules; None when it wrote nothing). Return the call-phase TestReport
    that stands for the test.

    Modelled on pytest-xdist's `pytest_handlecrashitem`: the isolation layer reports
    the loss, the plugin decides what the report and its records say."""
