"""What a flow (a lowering recipe for one backend) is.

A `Flow` is plain data plus factories; building one must not import torch or executorch,
so that collection, `--collect-only` and the report tools stay fast and work on machines
without the backend's SDK. The factories run only inside the pipeline.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from etsuite.backends.harness.flows.budgets import Budgets
from etsuite.backends.harness.flows.expectations import Expectation, Expectations
from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime, Runtime
from etsuite.backends.harness.flows.tolerance import FP32, INT8, RuleBook, Tolerance

# Older names of tolerance.FP32 and tolerance.INT8, kept for flows outside this repository
# (a conftest's pytest_etsuite_flows, an `etsuite.flows` entry point) that import them from
# here; this repository's flows import tolerance's names.
FP32_TOLERANCE = FP32
INT8_TOLERANCE = INT8


class SourceTransform(Protocol):
    """A recipe's rewrite of the eager model before export (e.g. one of ExecuTorch's LLM
    recipes, llm_recipes.py): the eager reference stays the untransformed model, so the
    comparison measures the recipe. `strict_export`: export the transformed model with
    torch.export's strict mode, as the recipe's own tool does."""

    @property
    def strict_export(self) -> bool:
        """Read-only, so a frozen dataclass (llm_recipes.LlmRecipe) satisfies it."""

    def unsupported(self, model: Any) -> str | None:
        """Why the recipe does not apply to `model` (the subtest ends skip_unsupported
        with this reason), or None."""

    def apply(self, model: Any) -> Any:
        """The transformed model (the `transform` stage; may modify `model`)."""

    @property
    def recipe_float_dtype(self) -> str | None:
        """The float dtype the transformed model computes and returns in by design
        ("bfloat16" for a bf16 recipe), or None when it keeps the model's."""


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
    # convert_pt2e's fold_quantize: False keeps float weights behind quantize nodes, which
    # some backends' converters need (OpenVINO rejects a folded int8 weight).
    fold_quantize: bool = True
    # Returns the edge transform passes for to_edge_transform_and_lower (None: none), for a
    # recipe that rewrites the edge graph before partitioning.
    transform_passes: Callable[[], list] | None = None
    # Returns the EdgeCompileConfig for to_edge_transform_and_lower (None: ExecuTorch's
    # default), for backends whose recipe needs one (e.g. Arm skips the IR validity check).
    edge_compile_config: Callable[[], Any] | None = None
    # How outputs are judged (tolerance.py): set from the recipe's precision; refined per
    # output dtype and, with a reason, per case in expectations.toml ([[tolerance]]).
    tolerance: Tolerance = FP32
    # What executes the lowered program (see runtimes.py). When it cannot on this host
    # (e.g. the ExecuTorch runtime lacks the delegate), subtests stop after serialization
    # as `lowered_not_run`.
    runtime: Runtime = ExecuTorchRuntime()
    # Python modules the flow needs; if one is missing the flow is `unavailable`.
    requires: Sequence[str] = ("torch", "executorch")
    # What a user does to make an unavailable flow runnable (a package, an SDK path).
    enable_hint: str = ""
    # Further cheap check run once per session when the flow is selected (an SDK path in
    # an environment variable, a simulator on PATH): returns why it cannot run, or None.
    probe: Callable[[], str | None] | None = None
    # Known failures, skips and must-delegate cases. For this repository's backends they
    # come from backends/<name>/expectations.toml (see expectations.py), added by the
    # registry; flows defined elsewhere may carry their own.
    expectations: Expectations = field(default_factory=Expectations)
    # What a passing case may cost (backends/<name>/budgets.toml, see budgets.py), added
    # by the registry like the expectations.
    budgets: Budgets = field(default_factory=Budgets)
    description: str = ""
    # Rewrites the model before export (see SourceTransform); None: exported as it is.
    source_transform: SourceTransform | None = None
    # The suites (folders of backends/suite/) the flow is collected for; None: every one.
    # A recipe that only makes sense for some (an LLM recipe over the operators) names them.
    suites: tuple[str, ...] | None = None

    @property
    def delegates(self) -> bool:
        return self.partitioners is not None

    @property
    def quantizes(self) -> bool:
        return self.quantizer is not None

    @property
    def quantize(self) -> bool:
        """ExecuTorch's suite's name for `quantizes` (its operator tests read it)."""
        return self.quantizes

    def unavailable_reason(self) -> str | None:
        """Why this flow cannot run on this host, or None. Cheap: looks for the modules
        on disk and imports nothing (importing a backend's package can take seconds)."""
        for module in self.requires:
            if not module_on_disk(module):
                return f"python module '{module}' is not installed"
        return self.probe() if self.probe is not None else None

    @property
    def recipe_float_dtype(self) -> str | None:
        """The float dtype this flow's recipe returns outputs in by design (its source
        transform's; a transform without the attribute keeps the model's dtype)."""
        return getattr(self.source_transform, "recipe_float_dtype", None)

    def rule_book(self, base: Tolerance | None = None, overrides: tuple = ()) -> RuleBook:
        """How this flow judges outputs: its rule (or `base`, e.g. with a test's atol),
        a case's overrides, and the float dtype its recipe returns outputs in."""
        return RuleBook(base or self.tolerance, overrides,
                        recipe_float_dtype=self.recipe_float_dtype)

    def applies_to_suite(self, suite: str) -> bool:
        return self.suites is None or suite in self.suites


def module_on_disk(dotted: str) -> bool:
    """Whether `dotted` can be imported, judged without importing its parent packages:
    find the top-level package, then walk the folders."""
    top, *rest = dotted.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if not rest:
        return True
    for location in spec.submodule_search_locations or []:
        folder = Path(location).joinpath(*rest[:-1])
        leaf = rest[-1]
        if (folder / leaf).is_dir() or (folder / f"{leaf}.py").is_file() \
                or any(folder.glob(f"{leaf}.*.so")):
            return True
    return False


def delegating_flow(name: str, backend: str, description: str, *, partitioners: Callable[[], list],
                    runtime_backend: str, requires: Sequence[str], quantizer: Callable[[], Any] | None = None,
                    expected_failures: Mapping[str, str] | None = None,
                    enable_hint: str = "", tolerance: Tolerance | None = None) -> Flow:
    """A flow that lowers with a partitioner, with the rule its precision calls for
    (`tolerance`; by default fp32 when it does not quantize, int8 when it does).
    `expected_failures` (case pattern -> reason, any failing status) is for flows defined
    outside this repository; ours keep theirs in expectations.toml."""
    entries = tuple(
        Expectation(kind="fail", flows=(name,), case=pattern, reason=reason,
                    source=f"{backend} flows.py")
        for pattern, reason in (expected_failures or {}).items())
    return Flow(
        name=name, backend=backend, description=description, partitioners=partitioners,
        quantizer=quantizer, tolerance=tolerance or (INT8 if quantizer else FP32),
        runtime=ExecuTorchRuntime(runtime_backend), requires=requires,
        expectations=Expectations(entries), enable_hint=enable_hint,
    )
