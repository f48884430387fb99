"""ExecuTorch's own example models (the registry `MODEL_NAME_TO_MODEL` of
`executorch.examples.models`), built from ExecuTorch's classes with random weights and run
on their own example inputs through every flow, as users of those examples would.

Where a wrapper would download pretrained weights (or a tokenizer), `random_weights.py`
builds the same architecture with random weights instead; every build runs with the
network blocked, so a build that tries to download fails its case. The packages these
models import (torchvision, timm, torchsr, ultralytics) are the `examples` extra.

Every registry name is a case. The ones this machine cannot build without downloading
weights or installing more packages are still cases: they end skipped with the reason in
`NOT_BUILT`, so a model never silently drops out of the report
(`test_runner.skip_unsupported`: the record says `skip_unsupported` with the reason).
"""

import copy
import functools
import importlib
import importlib.util
import json
import re
import tempfile
from pathlib import Path

import pytest
from executorch.examples.models import MODEL_NAME_TO_MODEL  # a dict and two enums: no torch

from . import random_weights

# Programs the size of the model suite's: its time limit, not the operators' 300 s.
pytestmark = pytest.mark.time_limit(1200)

# Why a registry model is not built here, from building each one with the network blocked
# (torch 2.13, executorch 1.5.1, transformers 5.24, and the `examples` extra: torchvision
# 0.28.0, timm 1.0.31, torchsr 1.0.4, ultralytics 8.4.190). "needs <module>" is checked at
# run time: once the module imports, the entry is stale and the case fails, asking for the
# survey to be done again.
NOT_BUILT = {
    # torchaudio 2.11.1, its last release, is built against the CUDA torch 2.11: its
    # `import` raises beside the CPU torch 2.13 (its library links libc10_cuda.so, and unlike
    # torchvision it does not tolerate that); installed, it also breaks `import transformers`.
    "emformer_transcribe": "needs torchaudio (2.11.1 does not import beside the CPU torch 2.13)",
    "emformer_predict": "needs torchaudio (2.11.1 does not import beside the CPU torch 2.13)",
    "emformer_join": "needs torchaudio (2.11.1 does not import beside the CPU torch 2.13)",
    "w2l": "needs torchaudio (2.11.1 does not import beside the CPU torch 2.13)",
    # torchtune 0.6.1, its last release, imports torchao.dtypes.nf4tensor, which torchao 0.18
    # (executorch 1.5.1 requires >=0.18,<0.19) no longer has.
    "llama3_2_vision_encoder": "needs torchtune (executorch.extension.llm.modules imports it; "
                               "0.6.1 does not import beside torchao 0.18)",
    "llava": "LlavaModel's constructor downloads the 7B weights, the processor and an image "
             "(llava-hf/llava-1.5-7b-hf); a tiny config would need a processor of its own",
}

# Llama2Model and its subclasses: with no params file ExecuTorch builds its default dummy
# model (dim 4096, 206.6M parameters, 788 MB, 35 s for one eager forward here); with no
# checkpoint it leaves the RMSNorm weights and the RoPE and mask buffers as uninitialized
# memory (`to_empty`, then only modules with `reset_parameters` are initialized), so its
# outputs are NaN at some seeds. Its public LlmConfig takes a params file and a
# checkpoint instead: each decoder at test size, with the random weights of ExecuTorch's
# own `construct_transformer`. The registry's classes for these names subclass
# Llama2Model and add nothing but a weight converter (which, for qwen2_5, phi_4_mini and
# smollm2, imports torchtune on import): what makes each model its own is its params file
# (examples/models/<name>/*config.json in ExecuTorch's repository, not in the wheel), so
# each is built as Llama2Model with that file's architectural switches at test widths
# (1.2-1.5B parameters and more at full size).
TINY_LLM_WIDTHS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2,
                   "vocab_size": 128, "hidden_dim": 128}
TINY_LLM_PARAMS = {
    "llama": TINY_LLM_WIDTHS,  # Llama 3: grouped-query attention
    "llama2": {**TINY_LLM_WIDTHS, "n_kv_heads": 4},  # Llama 2: multi-head attention
    # Qwen3: HuggingFace RoPE, RMSNorm of q and k before RoPE, a head_dim of its own
    "qwen3": {**TINY_LLM_WIDTHS, "head_dim": 32, "use_hf_rope": True, "use_qk_norm": True,
              "qk_norm_before_rope": True, "rope_theta": 1000000.0, "norm_eps": 1e-06},
    # Qwen2.5: HuggingFace RoPE, biased q/k/v projections
    "qwen2_5_1_5b": {**TINY_LLM_WIDTHS, "use_hf_rope": True, "attention_qkv_bias": True,
                     "rope_theta": 1000000.0, "norm_eps": 1e-06},
    # Phi-4-mini: HuggingFace RoPE over three quarters of each head
    "phi_4_mini": {**TINY_LLM_WIDTHS, "use_hf_rope": True, "partial_rotary_factor": 0.75},
    # SmolLM2: three query heads per key/value head
    "smollm2": {**TINY_LLM_WIDTHS, "dim": 48, "n_heads": 6, "n_kv_heads": 2,
                "rope_theta": 100000.0},
}
TINY_LLM_SEQ_LEN = 16
NOT_BUILT["smolvlm"] = ("the same program as `smollm2` here (SmolVLM-256M's text decoder: its "
                        "params file differs from SmolLM2-135M's only in the vocabulary size)")


def _tiny_llm(name: str):
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model import Llama2Model
    from executorch.examples.models.llama.model_args import ModelArgs
    from executorch.extension.llm.export.config.llm_config import LlmConfig

    config = LlmConfig()
    config.export.max_seq_length = TINY_LLM_SEQ_LEN
    config.export.max_context_length = TINY_LLM_SEQ_LEN
    params = TINY_LLM_PARAMS[name]
    with tempfile.TemporaryDirectory() as folder:  # read (or mapped) by the constructor
        params_file, checkpoint = Path(folder) / "params.json", Path(folder) / "checkpoint.pth"
        params_file.write_text(json.dumps(params))
        torch.save(construct_transformer(ModelArgs(**params)).state_dict(), checkpoint)
        config.base.params, config.base.checkpoint = str(params_file), str(checkpoint)
        return Llama2Model(llm_config=config)


@functools.cache
def _build(name: str, seed: int):
    """(eager model, example inputs, dynamic shapes) as ExecuTorch's EagerModelFactory
    makes them. Cached per (name, seed) for a process that runs several flows of a case
    (--isolation none); with fork isolation each test builds its own."""
    import torch

    torch.manual_seed(seed)  # weights and inputs: the same for every flow of the case
    with random_weights.network_blocked() as refused:
        if name in random_weights.BUILDERS:
            model, inputs = random_weights.BUILDERS[name](name)
            model = random_weights.without_zero_weights(model)
            kwarg_inputs = dynamic_shapes = None
        else:
            if name in TINY_LLM_PARAMS:
                wrapper = _tiny_llm(name)
            else:
                module_name, class_name = MODEL_NAME_TO_MODEL[name]
                module = importlib.import_module(f"executorch.examples.models.{module_name}")
                wrapper = getattr(module, class_name)()
            model = wrapper.get_eager_model()
            inputs = wrapper.get_example_inputs()
            kwarg_inputs = getattr(wrapper, "get_example_kwarg_inputs", lambda: None)()
            dynamic_shapes = getattr(wrapper, "get_dynamic_shapes", lambda: None)()
    assert not refused, f"building {name} tried to reach the network: {refused}"
    return model, tuple(inputs), kwarg_inputs, dynamic_shapes


def _imports(module: str) -> bool:
    if importlib.util.find_spec(module) is None:
        return False
    try:  # installed is not enough: torchaudio and torchtune are installable and do not import
        importlib.import_module(module)
    except Exception:
        return False
    return True


def _stale_needs(reason: str) -> list[str]:
    """Modules a reason says are missing that import now."""
    return [m for m in re.findall(r"needs (\w+)", reason) if _imports(m)]


@pytest.mark.parametrize("model_name", sorted(set(MODEL_NAME_TO_MODEL) | set(NOT_BUILT)))
def test_example_model(test_runner, model_name):
    assert model_name in MODEL_NAME_TO_MODEL, (
        f"NOT_BUILT names {model_name!r}, which ExecuTorch's registry no longer has")
    reason = NOT_BUILT.get(model_name)
    if reason is not None:
        stale = _stale_needs(reason)
        assert not stale, f"{model_name}: {stale} installed now; build it or survey again"
        test_runner.skip_unsupported(reason)
    package = random_weights.PACKAGES.get(model_name)
    if package and importlib.util.find_spec(package) is None:
        test_runner.skip_unsupported(
            f"needs {package}: the `examples` extra is in the envs where these models have "
            f"been run (portable, xnnpack); elsewhere: tox -e <env> -x "
            f"testenv:<env>.extras=executorch,examples")
    import torch

    # the seed the test_runner fixture gave this case (session seed + case, not flow)
    model, inputs, kwarg_inputs, dynamic_shapes = _build(model_name, torch.initial_seed())
    assert not kwarg_inputs, f"{model_name} has keyword example inputs; the runner takes positional"
    test_runner.lower_and_run_model(copy.deepcopy(model), copy.deepcopy(inputs),
                                    dynamic_shapes=dynamic_shapes)
