"""Everything under backends/xnnpack/test is an XNNPACK test: it runs only on XNNPACK
flows and is dropped from runs that select other backends."""

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/xnnpack/test/" in f"/{item.nodeid}":
            item.add_marker(pytest.mark.backend_xnnpack)
