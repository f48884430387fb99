"""Flows that fail on purpose, so the report fixtures hold every pipeline status from a
real run. Loaded as a plugin: `PYTHONPATH=test/data/reports/src pytest -p fault_flows ...`
(see ../README.md). Not collected by `pytest test`: no test_ prefix."""

import dataclasses

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import Expectation, Expectations
from etsuite.backends.harness.flows.flow import Flow
from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime
from etsuite.backends.portable.flows import PORTABLE
from etsuite.backends.xnnpack.flows import XNNPACK


@dataclasses.dataclass(frozen=True)
class ShiftedRuntime:
    """Wraps a flow's runtime and shifts its outputs by +1: a mismatch on purpose."""

    inner: object
    name: str = "executorch, outputs shifted by +1"

    def missing(self, program):
        return self.inner.missing(program)

    def load(self, program):
        return self.inner.load(program)

    def execute(self, loaded, inputs):
        return [o + 1.0 for o in self.inner.execute(loaded, inputs)]


CALLS = []  # runs of FirstCallFailsRuntime in this process


@dataclasses.dataclass(frozen=True)
class FirstCallFailsRuntime(ShiftedRuntime):
    """Raises on its first run in a process, then runs fine: a flaky runtime."""

    name: str = "executorch, first call fails"

    def execute(self, loaded, inputs):
        CALLS.append(1)
        if len(CALLS) == 1:
            raise RuntimeError("device busy (first call in this process)")
        return self.inner.execute(loaded, inputs)


def _broken_quantizer():
    raise RuntimeError("vendor quantizer 3.2.1 failed to load /opt/vendor/lib/libquant.so")


def _broken_partitioners():
    """A partitioner that raises inside to_edge_transform_and_lower, with an address in
    its message so the report's error signatures have something to normalize."""
    from executorch.exir.backend.partitioner import Partitioner

    class BrokenPartitioner(Partitioner):
        def partition(self, exported_program):
            raise RuntimeError(
                f"cannot partition graph at {hex(id(exported_program))}: "
                f"{len(exported_program.graph.nodes)} nodes, 0 supported")

    return [BrokenPartitioner()]


def pytest_etsuite_flows(config):
    return [
        dataclasses.replace(
            PORTABLE, name="faulty_mismatch", backend="faulty",
            runtime=ShiftedRuntime(PORTABLE.runtime),
            description="portable kernels, outputs shifted by +1",
            expectations=Expectations((
                Expectation("fail", ("faulty_mismatch",), "*::test_known_gap",
                            "outputs are shifted on purpose", (Status.FAIL_MISMATCH,)),
                Expectation("skip", ("faulty_mismatch",), "*::test_unsupported_case",
                            "no kernel for this case")))),
        dataclasses.replace(PORTABLE, name="faulty_quantize", backend="faulty",
                            quantizer=_broken_quantizer, description="a quantizer that raises"),
        dataclasses.replace(PORTABLE, name="faulty_lower", backend="faulty",
                            partitioners=_broken_partitioners,
                            description="a partitioner that raises"),
        dataclasses.replace(XNNPACK, name="faulty_lowered_only", backend="faulty",
                            runtime=ExecuTorchRuntime("NoSuchRuntimeBackend"),
                            description="XNNPACK lowering, no runtime on this host"),
        dataclasses.replace(PORTABLE, name="faulty_fixed", backend="faulty",
                            description="declares a gap that has been fixed",
                            expectations=Expectations((
                                Expectation("fail", ("faulty_fixed",), "*::test_add",
                                            "believed broken", (Status.FAIL_RUN,)),
                                *(Expectation("skip", ("faulty_fixed",), f"*::test_{name}",
                                              "only test_add runs on this flow")
                                  for name in ("cumsum", "two_subtests", "known_gap",
                                               "unsupported_case", "invalid_model"))))),
        dataclasses.replace(PORTABLE, name="faulty_flaky", backend="faulty",
                            runtime=FirstCallFailsRuntime(PORTABLE.runtime),
                            description="portable kernels, the first run in a process fails"),
        Flow(name="missing_sdk", backend="missing", requires=("no_such_vendor_sdk",),
             description="a vendor SDK that is not installed"),
    ]
