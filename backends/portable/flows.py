"""The undelegated baseline: no partitioner, every op on ExecuTorch's portable kernels.

Every backend is compared against it: a case that fails here fails for reasons no backend
can fix (export, edge dialect or portable kernel gaps). Its known failures are in
expectations.toml beside this file.
"""

from etsuite.backends.harness.flow import Flow

PORTABLE = Flow(
    name="portable",
    backend="portable",
    description="no delegation; portable kernels",
)

FLOWS = [PORTABLE]

