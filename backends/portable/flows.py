"""The portable flow: no partitioner, every op runs on ExecuTorch's portable kernels.

It is the baseline every backend is compared against: a case that fails here fails for
reasons no backend can fix (export, edge dialect or portable kernel gaps).
"""

from backends.harness.flow import Flow

PORTABLE = Flow(
    name="portable",
    backend="portable",
    description="no delegation; portable kernels",
    expected_failures={},
    skips={},
)

FLOWS = [PORTABLE]
