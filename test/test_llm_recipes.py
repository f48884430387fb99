"""ExecuTorch's LLM recipes as flows (backends/harness/flows/llm_recipes.py): every recipe file
of the installed wheel is a flow or says why not, recipe flows are collected for the LLM
suite only, a recipe rewrites the exported model (not the eager reference), and a recipe
that does not apply, or fails, says so with its status."""

import dataclasses

import pytest
import torch

from etsuite.backends.harness.case.pipeline import run_steps_pipeline
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows import llm_recipes
from etsuite.backends.harness.flows.llm_recipes import LlmRecipe
from etsuite.backends.harness.flows.registry import builtin_flows
from etsuite.backends.portable.flows import PORTABLE, PORTABLE_LLM_CUSTOM_BF16
from etsuite.backends.suite.llm import decoders
from etsuite.backends.xnnpack.flows import LLM_FLOWS

CUSTOM = next(flow for flow in LLM_FLOWS if flow.name == "xnnpack_llm_custom")


def test_every_recipe_file_is_a_flow_or_says_why():
    """A recipe ExecuTorch adds or changes fails here until a flow takes it or it needs
    files this suite cannot have."""
    files = llm_recipes.recipe_files()
    assert len(files) >= 18, files
    left = llm_recipes.recipe_files_without_flow(builtin_flows())
    gaps = {name: why for name, why in left.items() if "needs" not in why}
    assert gaps == {}, f"recipes no flow covers: {gaps}"
    assert len(left) < len(files) / 2, left
    # every recipe flow's file is one of the wheel's
    assert {f.source_transform.config for f in builtin_flows()
            if isinstance(f.source_transform, LlmRecipe)} <= set(files)


def test_overrides_set_only_what_they_name():
    plain = LlmRecipe("lfm2/config/lfm2_xnnpack_fp32.yaml").settings()
    variant = LlmRecipe("lfm2/config/lfm2_xnnpack_fp32.yaml",
                        {"model.quantize_kv_cache": True}).settings()
    assert variant.pop("model.quantize_kv_cache") is True
    assert variant == plain


def test_an_unknown_recipe_file_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="qwen3_xnnpack_q8da4w.yaml"):
        LlmRecipe("qwen3/config/no_such_recipe.yaml").settings()


SUITE_TEST = """
def test_op(test_runner):
    pass
"""


def test_recipe_flows_are_collected_for_the_llm_suite_only(pytester):
    for suite in ("operators", "llm"):
        folder = pytester.path / "backends" / "suite" / suite
        folder.mkdir(parents=True)
        (folder / f"test_{suite}_case.py").write_text(SUITE_TEST)
    result = pytester.runpytest("--collect-only", "-q", "--flow", "xnnpack",
                                "--flow", "xnnpack_llm_custom")
    collected = {line for line in result.outlines if "::test_op[" in line}
    assert collected == {
        "backends/suite/operators/test_operators_case.py::test_op[xnnpack]",
        "backends/suite/llm/test_llm_case.py::test_op[xnnpack]",
        "backends/suite/llm/test_llm_case.py::test_op[xnnpack_llm_custom]",
    }, result.outlines


def test_a_recipe_says_which_models_it_does_not_apply_to():
    recipe = CUSTOM.source_transform
    assert "ExecuTorch's Llama Transformer" in recipe.unsupported(torch.nn.Linear(2, 2))
    no_cache = decoders.llama_no_kv(prefill_len=2, n_decode=1).module
    assert "KV cache" in recipe.unsupported(no_cache)
    with_cache = decoders.llama_kv_static(prefill_len=1, n_decode=1).module
    assert recipe.unsupported(with_cache) is None


@dataclasses.dataclass(frozen=True)
class BrokenRecipe:
    strict_export: bool = False

    def unsupported(self, model):
        return None

    def apply(self, model):
        raise RuntimeError("this recipe's transformation is broken")


def test_a_failing_transformation_fails_at_its_stage():
    decoder = decoders.llama_kv_static(prefill_len=1, n_decode=1)
    flow = dataclasses.replace(PORTABLE, name="portable_broken", source_transform=BrokenRecipe())
    outcome = run_steps_pipeline(decoder.module, decoder.steps, flow)
    assert (outcome.status, outcome.stage) == (Status.FAIL_QUANTIZE, "transform")
    assert "this recipe's transformation is broken" in outcome.error


@pytest.mark.slow
def test_custom_ops_recipe_decodes_through_xnnpack():
    """ExecuTorch's custom SDPA and cache-update ops, put in by its own transformation,
    run step after step in the runtime and match the untransformed eager Llama."""
    torch.manual_seed(5)
    decoder = decoders.llama_kv_static(prefill_len=2, n_decode=3)
    sdpa_before = type(decoder.module.model.layers[0].attention.SDPA)
    outcome = run_steps_pipeline(decoder.module, decoder.steps, CUSTOM,
                                 dynamic_shapes=decoder.dynamic_shapes)
    assert outcome.status is Status.PASS, outcome.error
    ops = {**outcome.delegated_ops, **outcome.undelegated_ops}
    assert "llama.custom_sdpa.default" in ops, sorted(ops)
    assert outcome.timings["transform"] > 0
    assert len(outcome.step_sqnr_db) == outcome.steps == 5
    assert min(min(step) for step in outcome.step_sqnr_db) > 80
    # the recipe rewrote a copy: the test's module is the eager reference still
    assert type(decoder.module.model.layers[0].attention.SDPA) is sdpa_before


@pytest.mark.slow
def test_the_bf16_recipe_decodes_in_bf16_and_is_judged_by_its_rule():
    """The bf16 recipe's program returns bf16 logits by design: every step is judged by
    the recipe's SQNR rule against the fp32 eager model, not failed for its dtype."""
    torch.manual_seed(5)
    decoder = decoders.llama_kv_static(prefill_len=2, n_decode=3)
    outcome = run_steps_pipeline(decoder.module, decoder.steps, PORTABLE_LLM_CUSTOM_BF16,
                                 dynamic_shapes=decoder.dynamic_shapes)
    assert outcome.status is Status.PASS, outcome.error
    assert outcome.verdict_rule is not None and outcome.verdict_rule.startswith("bf16 recipe")
    assert 38 < min(min(step) for step in outcome.step_sqnr_db) < 80  # bf16, not fp32
