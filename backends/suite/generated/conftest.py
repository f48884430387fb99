"""Imports PyTorch's OpInfo database in the pytest process before its first generated
case is forked, so the forked children inherit it instead of each paying the seconds
the import takes (collection never imports it: opinfo_cases.py)."""

import pytest

from . import opinfo_cases


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.nodeid.startswith("backends/suite/generated/"):
        opinfo_cases.warm()
    yield
