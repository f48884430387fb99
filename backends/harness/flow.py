"""What a flow (a lowering recipe for one backend) is.

A `Flow` is plain data plus factories; building one must not import torch or executorch,
so that collection, `--collect-only` and the report tools stay fast and work on machines
without the backend's SDK. The factories run only inside the pipeline.
"""

from __future__ import annotations

import fnmatch
import importlib.util
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence


@dataclass(frozen=True)
class Tolerance:
    """Outputs match when |actual - expected| <= atol + rtol*|expected| + range_fraction*range.

    `range_fraction` scales with the reference output's value range, which is what an int8
    flow's error scales with (one quantization step is range/255).
    """

    atol: float = 1e-3
    rtol: float = 1e-3
    range_fraction: float = 0.0


FP32_TOLERANCE = Tolerance(atol=1e-3, rtol=1e-3)
INT8_TOLERANCE = Tolerance(atol=1e-2, rtol=0.0, range_fraction=0.05)


@dataclass(frozen=True)
class Flow:
    """One recipe: how to quantize (optional) and which partitioners lower the model."""

    name: str
    backend: str
    # Returns the partitioner list for to_edge_transform_and_lower; None means the flow
    # delegates nothing (portable kernels only).
    partitioners: Callable[[], list] | None = None
    # Returns a PT2E quantizer; None means the flow runs in floating point.
    quantizer: Callable[[], Any] | None = None
    tolerance: Tolerance = FP32_TOLERANCE
    # Name of the backend in the ExecuTorch runtime registry. When this host's runtime
    # lacks it, subtests stop after serialization as `lowered_not_run`.
    runtime_backend: str | None = None
    # Python modules the flow needs; if one is missing the flow is `unavailable`.
    requires: Sequence[str] = ("torch", "executorch")
    # fnmatch pattern on the test case id (node id without the flow) -> reason.
    # Expected failures are strict: an unexpected pass fails the run.
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    skips: Mapping[str, str] = field(default_factory=dict)
    # Applied to the runtime outputs before comparison. Only for the harness's own
    # fault-injection tests; real flows leave it None.
    perturb_outputs: Callable[[list], list] | None = None
    description: str = ""

    @property
    def delegates(self) -> bool:
        return self.partitioners is not None

    @property
    def quantizes(self) -> bool:
        return self.quantizer is not None

    def unavailable_reason(self) -> str | None:
        """Why this flow cannot run on this host, or None. Cheap: finds, does not import."""
        for module in self.requires:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return f"python module '{module}' is not installed"
        return None

    def expected_failure(self, test_case: str) -> str | None:
        return _first_match(self.expected_failures, test_case)

    def skip_reason(self, test_case: str) -> str | None:
        return _first_match(self.skips, test_case)


def _first_match(patterns: Mapping[str, str], test_case: str) -> str | None:
    for pattern, reason in patterns.items():
        if fnmatch.fnmatchcase(test_case, pattern):
            return reason
    return None


def delegating_flow(name: str, backend: str, description: str, *, partitioners: Callable[[], list],
                    runtime_backend: str, requires: Sequence[str], quantizer=None,
                    expected_failures: Mapping[str, str] | None = None) -> Flow:
    """A flow that lowers with a partitioner, with the tolerance its precision calls for:
    fp32 when it does not quantize, int8 when it does."""
    return Flow(
        name=name, backend=backend, description=description, partitioners=partitioners,
        quantizer=quantizer, tolerance=INT8_TOLERANCE if quantizer else FP32_TOLERANCE,
        runtime_backend=runtime_backend, requires=requires,
        expected_failures=dict(expected_failures or {}),
    )
