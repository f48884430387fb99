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

# TEMPORARY (removed once the arm/openvino folders move to expectations.toml).
PORTABLE_KERNEL_GAPS = {
    "backends/suite/operators/test_pad.py::test_pad_negative*":
        "portable constant_pad_nd rejects negative padding at run time (error 0x12)",
}
