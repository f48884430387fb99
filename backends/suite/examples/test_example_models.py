"""ExecuTorch's own example models (the registry `MODEL_NAME_TO_MODEL` of
`executorch.examples.models`), built from ExecuTorch's classes with random weights and run
on their own example inputs through every flow, as users of those examples would.

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

# Programs the size of the model suite's: its time limit, not the operators' 300 s.
pytestmark = pytest.mark.time_limit(1200)

# Why a registry model is not built here, from building each one in a subprocess with the
# network blocked (torch 2.13, executorch 1.5.1, transformers 5.24; no torchvision).
# "needs <module>" is checked at run time: once the module is installed the entry is
# stale and the case fails, asking for the survey to be done again.
NOT_BUILT = {
    "dl3": "needs torchvision; downloads DeepLabV3-ResNet50 weights (torchvision DEFAULT)",
    "edsr": "needs torchsr; downloads EDSR weights (edsr_r16f64 pretrained=True)",
    "emformer_transcribe": "needs torchaudio; downloads EMFORMER_RNNT_BASE_LIBRISPEECH weights",
    "emformer_predict": "needs torchaudio; downloads EMFORMER_RNNT_BASE_LIBRISPEECH weights",
    "emformer_join": "needs torchaudio; downloads EMFORMER_RNNT_BASE_LIBRISPEECH weights",
    "llama3_2_vision_encoder": "needs torchtune (executorch.extension.llm.modules imports it)",
    "mobilebert": "downloads weights and tokenizer from HF (google/mobilebert-uncased)",
    "mv2": "needs torchvision; downloads MobileNet_V2 ImageNet weights",
    "mv2_untrained": "needs torchvision (random weights, nothing downloaded)",
    "mv3": "needs torchvision; downloads MobileNet_V3_Small ImageNet weights",
    "vit": "needs torchvision; downloads vit_b_16 ImageNet weights",
    "w2l": "needs torchaudio (random weights, nothing downloaded)",
    "ic3": "needs torchvision; downloads inception_v3 ImageNet weights",
    "ic4": "needs timm; downloads inception_v4 weights (pretrained=True)",
    "resnet18": "needs torchvision; downloads ResNet18 ImageNet weights",
    "resnet50": "needs torchvision; downloads ResNet50 ImageNet weights",
    "llava": "needs torchvision; downloads weights from HF (llava-hf/llava-1.5-7b-hf) and an image",
    "efficient_sam": "downloads weights from HF (merve/EfficientSAM efficient_sam_vitt.pt)",
    "qwen2_5_1_5b": "needs torchtune (imported by qwen2_5/convert_weights.py on import)",
    "phi_4_mini": "needs torchtune (imported by phi_4_mini/convert_weights.py on import)",
    "smollm2": "needs torchtune (imported by smollm2/convert_weights.py on import)",
    "deit_tiny": "needs timm; downloads deit_tiny_patch16_224 weights (pretrained=True)",
    "yolo26": "needs ultralytics; downloads yolo26n.pt weights",
    "whisper": "downloads weights from HF (openai/whisper-base)",
}

# Llama2Model and its subclasses: with no params file ExecuTorch builds its default dummy
# model (dim 4096, 206.6M parameters, 788 MB, 35 s for one eager forward here); with no
# checkpoint it leaves the RMSNorm weights and the RoPE and mask buffers as uninitialized
# memory (`to_empty`, then only modules with `reset_parameters` are initialized), so its
# outputs are NaN at some seeds. Its public LlmConfig takes a params file and a
# checkpoint instead: this architecture (RMSNorm, RoPE, grouped-query attention, SwiGLU)
# at test size, with the random weights of ExecuTorch's own `construct_transformer`.
# The registry gives these classes no params of their own: all four build the same model.
TINY_LLAMA_PARAMS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2,
                     "vocab_size": 128, "hidden_dim": 128}
TINY_LLAMA_SEQ_LEN = 16
TINY_LLAMA = {"llama2", "llama", "qwen3", "smolvlm"}
# Built once: the other three are the same program at these params.
NOT_BUILT.update({name: "the same program as `llama` here (ExecuTorch's Llama2Model with "
                        "the tiny params; the registry gives it no config of its own)"
                  for name in TINY_LLAMA - {"llama"}})


def _tiny_llama(model_class):
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs
    from executorch.extension.llm.export.config.llm_config import LlmConfig

    config = LlmConfig()
    config.export.max_seq_length = TINY_LLAMA_SEQ_LEN
    config.export.max_context_length = TINY_LLAMA_SEQ_LEN
    with tempfile.TemporaryDirectory() as folder:  # read (or mapped) by the constructor
        params, checkpoint = Path(folder) / "params.json", Path(folder) / "checkpoint.pth"
        params.write_text(json.dumps(TINY_LLAMA_PARAMS))
        torch.save(construct_transformer(ModelArgs(**TINY_LLAMA_PARAMS)).state_dict(), checkpoint)
        config.base.params, config.base.checkpoint = str(params), str(checkpoint)
        return model_class(llm_config=config)


def _construct(name: str, model_class):
    """The class's instance, with its public constructor arguments where the defaults are
    too big for a test (or, for the Llama family, not initialized)."""
    return _tiny_llama(model_class) if name in TINY_LLAMA else model_class()


@functools.cache
def _build(name: str, seed: int):
    """(eager model, example inputs, dynamic shapes) as ExecuTorch's EagerModelFactory
    makes them. Cached per (name, seed) for a process that runs several flows of a case
    (--isolation none); with fork isolation each test builds its own."""
    import torch

    torch.manual_seed(seed)  # weights and inputs: the same for every flow of the case
    module_name, class_name = MODEL_NAME_TO_MODEL[name]
    module = importlib.import_module(f"executorch.examples.models.{module_name}")
    wrapper = _construct(name, getattr(module, class_name))
    model = wrapper.get_eager_model()
    inputs = wrapper.get_example_inputs()
    kwarg_inputs = getattr(wrapper, "get_example_kwarg_inputs", lambda: None)()
    dynamic_shapes = getattr(wrapper, "get_dynamic_shapes", lambda: None)()
    return model, tuple(inputs), kwarg_inputs, dynamic_shapes


def _stale_needs(reason: str) -> list[str]:
    """Modules a reason says are missing that are importable now."""
    return [m for m in re.findall(r"needs (\w+)", reason) if importlib.util.find_spec(m)]


@pytest.mark.parametrize("model_name", sorted(set(MODEL_NAME_TO_MODEL) | set(NOT_BUILT)))
def test_example_model(test_runner, model_name):
    assert model_name in MODEL_NAME_TO_MODEL, (
        f"NOT_BUILT names {model_name!r}, which ExecuTorch's registry no longer has")
    reason = NOT_BUILT.get(model_name)
    if reason is not None:
        stale = _stale_needs(reason)
        assert not stale, f"{model_name}: {stale} installed now; build it or survey again"
        test_runner.skip_unsupported(reason)
    import torch

    # the seed the test_runner fixture gave this case (session seed + case, not flow)
    model, inputs, kwarg_inputs, dynamic_shapes = _build(model_name, torch.initial_seed())
    assert not kwarg_inputs, f"{model_name} has keyword example inputs; the runner takes positional"
    test_runner.lower_and_run_model(copy.deepcopy(model), copy.deepcopy(inputs),
                                    dynamic_shapes=dynamic_shapes)
