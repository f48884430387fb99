"""ExecuTorch's LLM export recipes as flows: the YAML files of the installed wheel
(`executorch/examples/models/<model>/config/*.yaml`, what `export_llm --config` reads),
applied to a test's model the way export_llama applies them, with ExecuTorch's own source
transformations composed by its own `export_llama_lib._get_source_transforms`.

A flow names a recipe file (and, for a variant ExecuTorch's CI runs that no file holds,
settings over it); nothing of the recipe is restated here, so the suite tests what
ExecuTorch documents. The recipes transform ExecuTorch's Llama `Transformer`
(examples/models/llama): a test model that wraps one in `.model` (the LLM suite's
decoders.py) can take them; others end skip_unsupported with the reason.

Only a recipe's model, quantization and backend settings are applied. Settings that need
files this suite has none of (a checkpoint, a LoRA adapter, pre-quantized weights) make
the recipe `needs_files`: not a flow here (`recipe_files_without_flow` lists them).

Torch-free at import: reading a recipe needs PyYAML only, applying one executorch.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from etsuite.backends.harness.flows.flow import Flow

# Settings of a recipe's `base` and `quantization` sections that need files or
# training this suite does not have, with why.
NEEDS_FILES = {
    "preq_mode": "pre-quantized (QAT or SpinQuant) weights from a checkpoint",
    "use_spin_quant": "SpinQuant rotations of a trained checkpoint",
    "use_qat": "a quantization-aware-trained checkpoint",
    "use_lora": "a LoRA adapter checkpoint",
    "lora_config": "a LoRA adapter checkpoint",
    "checkpoint": "a checkpoint",
}
# What the source transformations of a recipe read (`_get_source_transforms`' keywords),
# by section; with the enabled backends' settings (their partitioners), what makes two
# recipes one flow. The rest of a recipe is about export lengths or the runner.
TRANSFORM_SETTINGS = {
    "model": ("use_kv_cache", "use_sdpa_with_kv_cache", "use_custom_sdpa_with_attention_mask",
              "quantize_kv_cache", "dtype_override", "expand_rope_table",
              "use_shared_embedding", "use_attention_sink", "local_global_attention"),
    "quantization": ("qmode", "group_size", "embedding_quantize"),
}


def recipes_folder() -> Path | None:
    """`executorch/examples/models` of the installed wheel, found without importing it."""
    try:
        spec = importlib.util.find_spec("executorch")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "examples" / "models"
        if folder.is_dir():
            return folder
    return None


def recipe_files() -> list[str]:
    """Every recipe file of the wheel, as `<model>/config/<name>.yaml`."""
    folder = recipes_folder()
    if folder is None:
        return []
    return sorted(str(path.relative_to(folder)) for path in folder.glob("*/config/*.yaml"))


# model.dtype_override (LlmConfig's DType names) -> the torch dtype its outputs come in
RECIPE_FLOAT_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def read_recipe(relative: str) -> dict:
    """A recipe file's sections (a malformed `base`, as in the wheel's qwen2_5 files, is
    read as empty: it holds the runner's token metadata only)."""
    import yaml

    folder = recipes_folder()
    if folder is None:
        raise FileNotFoundError("executorch is not installed: its LLM recipes are not here")
    path = folder / relative
    if not path.is_file():
        raise FileNotFoundError(f"no LLM recipe {relative} in {folder} (recipes there: "
                                f"{', '.join(recipe_files())})")
    sections = yaml.safe_load(path.read_text()) or {}
    return {name: (value if isinstance(value, dict) else {})
            for name, value in sections.items()}


def needs_files(sections: Mapping[str, Mapping]) -> str | None:
    """What a recipe needs that this suite has none of (files, or a model the LLM suite
    does not build), or None."""
    for section in ("base", "quantization"):
        for key, what in NEEDS_FILES.items():
            if sections.get(section, {}).get(key):
                return f"{section}.{key}: needs {what}"
    if sections.get("model", {}).get("use_attention_sink"):
        return "model.use_attention_sink: needs a model built with an attention sink"
    return None


def enabled_backends(sections: Mapping[str, Mapping]) -> dict:
    """Each backend the recipe enables, with its settings (the partitioners' options)."""
    return {name: tuple(sorted(settings.items()))
            for name, settings in sections.get("backend", {}).items()
            if isinstance(settings, dict) and settings.get("enabled")}


def recipe_settings(sections: Mapping[str, Mapping]) -> dict:
    """The settings the source transformations read, as `section.key` -> value, and the
    backends the recipe enables with their settings: two recipes with equal settings are
    one flow."""
    chosen = {f"{section}.{key}": sections[section][key]
              for section, keys in TRANSFORM_SETTINGS.items()
              for key in keys if sections.get(section, {}).get(key) not in (None, False)}
    chosen.setdefault("model.dtype_override", "fp32")  # LlmConfig's default
    chosen["backend"] = enabled_backends(sections)
    return chosen


@dataclass(frozen=True)
class LlmRecipe:
    """One recipe file of the wheel (`config`, e.g. "qwen3/config/qwen3_xnnpack_q8da4w
    .yaml") with `overrides` (`section.key` -> value) for a variant that ExecuTorch's CI
    runs and no file holds (e.g. model.quantize_kv_cache). A flow's source transform."""

    config: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    strict_export: bool = True  # export_llama exports strictly (LLMEdgeManager._export)

    def sections(self) -> dict:
        sections = read_recipe(self.config)
        for dotted, value in self.overrides.items():
            section, key = dotted.split(".", 1)
            sections.setdefault(section, {})[key] = value
        return sections

    @property
    def recipe_float_dtype(self) -> str | None:
        """The float dtype of `model.dtype_override` when it is not fp32: export_llama
        computes the whole model in it, so its logits come back in it."""
        chosen = str(self.sections().get("model", {}).get("dtype_override") or "fp32")
        return RECIPE_FLOAT_DTYPES.get(chosen)

    def settings(self) -> dict:
        """What makes this recipe the flow it is (see recipe_settings)."""
        return recipe_settings(self.sections())

    def describe(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.overrides.items())
        return f"{self.config}" + (f" with {extra}" if extra else "")

    def unsupported(self, model: Any) -> str | None:
        transformer = getattr(model, "model", None)
        from executorch.examples.models.llama.llama_transformer import Transformer

        if not isinstance(transformer, Transformer):
            return (f"{self.config} is one of ExecuTorch's export_llama recipes, which "
                    f"transform ExecuTorch's Llama Transformer (examples/models/llama); "
                    f"this case is a {type(model).__name__}")
        sections = self.sections()
        missing = needs_files(sections)
        if missing:
            return f"{self.config}: {missing}"
        model_settings = sections.get("model", {})
        if model_settings.get("use_kv_cache") and not transformer.params.use_kv_cache:
            return f"{self.config} is for a model with a KV cache (model.use_kv_cache)"
        return None

    def llm_config(self) -> Any:
        """The recipe as ExecuTorch's `LlmConfig` (its model, quantization and backend
        sections over LlmConfig's defaults, as export_llm merges a --config file)."""
        from executorch.extension.llm.export.config.llm_config import LlmConfig
        from omegaconf import OmegaConf

        sections = self.sections()
        given = {name: sections.get(name, {}) for name in ("model", "quantization", "backend")}
        config = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(LlmConfig), given))
        assert isinstance(config, LlmConfig)
        return config

    def xnnpack_partitioners(self) -> list:
        """export_llama's XNNPACK partitioners for this recipe: the dynamically quantized
        ops' partitioner first, then, with `extended_ops`, the one that takes the rest."""
        from executorch.extension.llm.export.partitioner_lib import get_xnnpack_partitioner

        settings = self.llm_config().backend.xnnpack
        partitioners = [get_xnnpack_partitioner(dynamic_quant_only_partitioner=True,
                                                enable_bf16=settings.enable_bf16)]
        if settings.extended_ops:
            partitioners.append(get_xnnpack_partitioner(dynamic_quant_only_partitioner=False,
                                                        enable_bf16=settings.enable_bf16))
        return partitioners

    def coreml_partitioners(self) -> list:
        """export_llama's Core ML partitioner for this recipe (deployment target, compute
        units and quantization from its `backend.coreml` settings)."""
        from executorch.extension.llm.export.partitioner_lib import get_coreml_partitioner

        config = self.llm_config()
        coreml = config.backend.coreml
        pt2e = config.quantization.pt2e_quantize
        return [get_coreml_partitioner(
            coreml.ios, config.quantization.embedding_quantize,
            pt2e.value if pt2e else None, coreml.quantize.value if coreml.quantize else None,
            coreml.compute_units.value)]

    def apply(self, model: Any) -> Any:
        """ExecuTorch's source transformations for this recipe, in export_llama's order."""
        import executorch.extension.llm.custom_ops  # noqa: F401  (llama::sdpa_with_kv_cache ...)
        import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed::embedding_*)
        from executorch.examples.models.llama.export_llama_lib import _get_source_transforms
        from executorch.extension.llm.export.builder import DType

        config = self.llm_config()
        dtype = DType[config.model.dtype_override.value]
        transforms = _get_source_transforms(
            dtype,
            embedding_quantize=config.quantization.embedding_quantize,
            use_shared_embedding=config.model.use_shared_embedding,
            quantization_mode=config.quantization.qmode,
            group_size=config.quantization.group_size,
            expand_rope_table=config.model.expand_rope_table,
            use_custom_sdpa_with_attention_mask=getattr(
                config.model, "use_custom_sdpa_with_attention_mask", False),
            use_sdpa_with_kv_cache=config.model.use_sdpa_with_kv_cache,
            quantize_kv_cache=config.model.quantize_kv_cache,
            use_kv_cache=config.model.use_kv_cache,
            coreml=config.backend.coreml.enabled,
            coreml_ios=config.backend.coreml.ios,
            vulkan=config.backend.vulkan.enabled,
            mlx=config.backend.mlx.enabled,
            local_global_attention=config.model.local_global_attention,
            quantize_with_hqq=config.quantization.use_hqq,
        )
        for transform in transforms:
            model = transform(model)
        return model.eval()


def recipe_files_without_flow(flows: Iterable[Flow]) -> dict[str, str]:
    """Each recipe file of the wheel that no flow covers (no flow's recipe has its
    settings), with why: the files the suite cannot test here, or a gap."""
    covered = [flow.source_transform.settings() for flow in flows
               if isinstance(flow.source_transform, LlmRecipe)]
    left: dict[str, str] = {}
    for relative in recipe_files():
        sections = read_recipe(relative)
        reason = needs_files(sections)
        if reason is None and recipe_settings(sections) in covered:
            continue
        left[relative] = reason or "no flow has its settings"
    return left
