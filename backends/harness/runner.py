"""`TestRunner`: what the `test_runner` fixture hands a test. Each
`lower_and_run_model` call is one subtest and yields one record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from backends.harness import taxonomy as tx
from backends.harness.flow import Flow, Tolerance


@dataclass(frozen=True)
class TestContext:
    """Identity of the running test, shared by all of its subtests' records."""

    test_id: str
    test_case: str
    suite: str
    params: dict
    seed: int
    repro: str


class TestRunner:
    __test__ = False  # not a test class, despite the name

    def __init__(self, flow: Flow, context: TestContext,
                 on_progress: Callable[[dict], None] = lambda event: None):
        self.flow = flow
        self.context = context
        self.records: list[dict] = []
        self._on_progress = on_progress

    def new_record(self, **fields) -> dict:
        """A record with this test's identity; `subtest` defaults to the next index."""
        ctx = self.context
        fields.setdefault("subtest", len(self.records))
        return tx.empty_record(
            test_id=ctx.test_id, test_case=ctx.test_case,
            suite=ctx.suite, backend=self.flow.backend, flow=self.flow.name,
            params=dict(ctx.params), seed=ctx.seed, repro=ctx.repro, **fields,
        )

    def lower_and_run_model(self, model, inputs, *, dynamic_shapes=None,
                            atol: float | None = None, rtol: float | None = None) -> dict:
        """Run the flow's pipeline on `model(*inputs)` and record the result.

        Never raises for a backend failure: the harness fails the test after the test
        body returns, so every subtest of a test is recorded. Returns the record.
        """
        from backends.harness.pipeline import run_pipeline

        tolerance = None
        if atol is not None or rtol is not None:
            base = self.flow.tolerance
            tolerance = Tolerance(
                atol=base.atol if atol is None else atol,
                rtol=base.rtol if rtol is None else rtol,
                range_fraction=base.range_fraction,
            )
        subtest = len(self.records)
        result = run_pipeline(
            model, inputs, self.flow, dynamic_shapes=dynamic_shapes, tolerance=tolerance,
            on_stage=lambda stage: self._on_progress(
                {"event": "stage", "subtest": subtest, "stage": stage}),
        )
        record = self.new_record(**result)
        self.records.append(record)
        self._on_progress({"event": "record", "record": record})
        return record
