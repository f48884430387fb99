"""Hooks the plugin offers to conftest.py files and other plugins."""


def pytest_etsuite_flows(config):
    """Return a list of extra `Flow` objects (e.g. a vendor's own backend, or flows
    made for the harness's self-tests). Called once, at configure time."""
