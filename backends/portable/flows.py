"""The portable flow: no partitioner, every op runs on ExecuTorch's portable kernels.

It is the baseline every backend is compared against: a case that fails here fails for
reasons no backend can fix (export, edge dialect or portable kernel gaps).
"""

from backends.harness.flow import Flow

# Gaps of the portable kernel library. Every flow inherits them for the ops its
# partitioner leaves undelegated (fnmatch pattern on the test case id -> reason).
PORTABLE_KERNEL_GAPS = {
    "backends/suite/operators/test_pad.py::test_pad_negative*":
        "portable constant_pad_nd rejects negative padding at run time (error 0x12)",
}

PORTABLE = Flow(
    name="portable",
    backend="portable",
    description="no delegation; portable kernels",
    expected_failures=PORTABLE_KERNEL_GAPS,
    skips={},
)

FLOWS = [PORTABLE]
