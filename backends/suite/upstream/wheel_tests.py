"""ExecuTorch's own backend test modules, run from the installed wheel, unmodified.

The executorch wheel ships its backend test suite (`executorch/backends/test/suite/`).
Its model tests take a fixture named `test_runner` and call
`test_runner.lower_and_run_model(model, inputs, dynamic_shapes=...)`, the fixture and
method this suite's plugin provides, so a module here imports the wheel's module and puts
its `test_*` functions in its own namespace (`reexport`): pytest collects them with their
own parametrize marks, and the plugin parametrizes them over the selected flows like any
other suite's tests. Nothing of ExecuTorch's is copied into this repository.

When the wheel's module does not import here (a package it needs is missing or broken, or
the wheel no longer has the module), the module gets one test instead, whose every flow
ends `skip_unsupported` with the import error as its reason: the suite never silently
drops out of the report.

The suite is opt-in: these are full-size models (224x224 inputs, minutes per case on the
quantized flows), so the plugin collects `backends/suite/upstream/` only when a
command-line path points into it (`make test-<backend> SUITE=upstream`, or
`tox -e <backend> -- backends/suite/upstream`; `collection.py`'s `pytest_ignore_collect`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

WHEEL_SUITE = "executorch.backends.test.suite"


def reexport(module: str, namespace: dict, placeholder: str, note: str = "") -> None:
    """Put the `test_*` functions of `WHEEL_SUITE.<module>` in `namespace`; when that does
    not import, a test named `placeholder` that skips every flow with the reason."""
    name = f"{WHEEL_SUITE}.{module}"
    try:
        upstream = importlib.import_module(name)
    except Exception as error:  # ImportError, or what a broken package raises on import
        reason = f"{name} does not import here: {type(error).__name__}: {error}"
        namespace[placeholder] = _skipping_test(reason + (f" ({note})" if note else ""))
        return
    tests = {key: value for key, value in vars(upstream).items()
             if key.startswith("test_") and callable(value)}
    assert tests, f"{name} has no test_* functions any more"
    namespace.update(tests)


def _skipping_test(reason: str) -> Callable[..., None]:
    def test(test_runner) -> None:
        test_runner.skip_unsupported(reason)

    test.__doc__ = f"Stands for the wheel's tests that do not import: {reason}"
    return test

