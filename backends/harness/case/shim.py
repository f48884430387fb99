"""Run unittest-style operator tests under pytest, per flow.

Many existing op tests are unittest classes whose methods take the flow (and a dtype)
and call `self._test_op(model, inputs, flow)`. `@operator_test` turns such a class into
a pytest class whose methods take the `test_runner` fixture, so they expand per flow and
produce the same markers and records as function-style tests:

    @operator_test
    class TestAdd(OperatorTest):
        @dtype_test
        def test_add(self, flow, dtype):
            self._test_op(Add(), (torch.rand(3, dtype=dtype),) * 2, flow)

A module written for ExecuTorch's own suite (`executorch/backends/test/suite/operators`)
runs here with only its imports pointed at this module: `OperatorTest`, `dtype_test`,
`operator_test` and `TestFlow` exist here, `_test_op` takes its `generate_random_test_inputs`
and `dynamic_shapes`, and `flow.quantize` reads as there.

New tests should prefer the function style: `def test_add(test_runner): ...`.
"""

from __future__ import annotations

import sys
import unittest
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pytest

from etsuite.backends.harness.flows.flow import Flow

if TYPE_CHECKING:
    from etsuite.backends.harness.case.runner import TestRunner
    from etsuite.backends.harness.contract.record import SubtestRecord

DEFAULT_DTYPES = ("float32",)
# ExecuTorch's suite annotates `flow` with its TestFlow: the same role as our Flow.
TestFlow = Flow


class OperatorTest(unittest.TestCase):
    """Base of unittest-style operator tests; see the module docstring."""

    _runner: TestRunner | None = None

    def _test_op(self, model: Any, inputs: Any, flow: Flow, **options: Any) -> SubtestRecord:
        if self._runner is None:
            raise RuntimeError(f"{type(self).__name__} must be decorated with @operator_test")
        if flow is not self._runner.flow:
            raise ValueError(f"_test_op got flow {flow.name!r}, but this test runs "
                             f"{self._runner.flow.name!r}")
        return self._runner.lower_and_run_model(model, inputs, **options)


def dtype_test(function: Any = None, *, dtypes: Iterable[str] = DEFAULT_DTYPES) -> Any:
    """Mark a method as taking `(self, flow, dtype)`; it runs once per dtype name."""

    def mark(method: Any) -> Any:
        method.etsuite_dtypes = tuple(dtypes)
        return method

    return mark(function) if function is not None else mark


def _bind(cls: type[OperatorTest], method: Any) -> Callable[..., None]:
    """A pytest test function equivalent to `method` on a fresh instance of `cls`.

    The wrapper's own signature is what pytest reads for fixtures, so it must not carry
    `__wrapped__` (functools.wraps would make pytest look at the original signature)."""
    dtypes = getattr(method, "etsuite_dtypes", None)

    def instance(test_runner: TestRunner) -> OperatorTest:
        test = cls()
        test._runner = test_runner
        return test

    if dtypes is None:
        def run(test_runner: TestRunner) -> None:
            method(instance(test_runner), test_runner.flow)
    else:
        import torch

        @pytest.mark.parametrize("dtype", [getattr(torch, d) for d in dtypes], ids=list(dtypes))
        def run(test_runner: TestRunner, dtype: Any) -> None:
            method(instance(test_runner), test_runner.flow, dtype)

    run.__name__ = run.__qualname__ = method.__name__
    run.__module__ = cls.__module__
    run.__doc__ = method.__doc__
    return run


def operator_test(cls: type[OperatorTest]) -> None:
    """Class decorator: put one module-level pytest test per `test*` method into the
    class's module and return None, as ExecuTorch's suite does, so a module written for it
    gets the same node ids here (`test_add.py::test_add_f32[...]`, no class part)."""
    module = sys.modules[cls.__module__]
    for name in dir(cls):
        if name.startswith("test"):
            if hasattr(module, name):
                raise ValueError(f"@operator_test on {cls.__name__}: {module.__name__} already "
                                 f"has a {name!r}; method names become module-level tests")
            setattr(module, name, _bind(cls, getattr(cls, name)))
    return None
