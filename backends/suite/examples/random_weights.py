"""Registry models whose ExecuTorch wrapper downloads weights (or a tokenizer), built here
as the same architecture with random weights, so nothing is downloaded.

A backend is tested by the program, not by what the weights learned: each builder makes
the architecture the wrapper would load, with the constructor arguments its pretrained
weights imply (torchvision's weight enums override some, e.g. Inception v3's
`transform_input`), and takes the example inputs from ExecuTorch's wrapper where that
downloads nothing. Where the wrapper's own `torch.nn.Module` holds the forward (Emformer,
Whisper), that class is used with the randomly initialized network put inside it.

`network_blocked()` surrounds every build of the suite: a connection or name lookup raises
instead of reaching the network, and is recorded, so a build that tried fails its case
even when the library caught the error.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import socket
from typing import Any, Callable

# "Hello, my dog is cute" in the bert-base-uncased vocabulary that google/mobilebert-uncased
# uses, with [CLS] and [SEP]: what MobileBertModelExample's tokenizer gives.
MOBILEBERT_INPUT_IDS = [[101, 7592, 1010, 2026, 3899, 2003, 10140, 102]]

# openai/whisper-base, from its config.json: 72.6M parameters.
WHISPER_BASE = {"d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
                "encoder_attention_heads": 8, "decoder_attention_heads": 8,
                "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048, "vocab_size": 51865,
                "num_mel_bins": 80, "max_source_positions": 1500,
                "max_target_positions": 448, "decoder_start_token_id": 50258}

# the architecture of torchaudio's EMFORMER_RNNT_BASE_LIBRISPEECH bundle
EMFORMER_SYMBOLS = 4097


class NetworkBlocked(OSError):
    pass


@contextlib.contextmanager
def network_blocked():
    """Any connection or name lookup raises `NetworkBlocked` while inside; yields the list
    of what was refused."""
    refused: list[str] = []

    def refuse(*args, **kwargs):
        refused.append(repr(args[1] if args and isinstance(args[0], socket.socket) else args[0]))
        raise NetworkBlocked(f"network blocked while building an example model: {refused[-1]}")

    saved = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
    socket.socket.connect = socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.getaddrinfo = refuse
    try:
        yield refused
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = saved


def _wrapper_module(name: str):
    from executorch.examples.models import MODEL_NAME_TO_MODEL

    module_name, class_name = MODEL_NAME_TO_MODEL[name]
    module = importlib.import_module(f"executorch.examples.models.{module_name}")
    return module, getattr(module, class_name)


def _holding(module_class, **children):
    """An instance of ExecuTorch's `module_class` (its forward) around `children`, without
    its constructor (which downloads them)."""
    import torch

    holder = module_class.__new__(module_class)
    torch.nn.Module.__init__(holder)
    for name, child in children.items():
        setattr(holder, name, child)
    return holder


def _torchvision(constructor: str, **kwargs) -> Callable[[str], tuple[Any, tuple]]:
    def build(name: str):
        from torchvision import models

        factory = (getattr(models.segmentation, constructor) if "deeplab" in constructor
                   else getattr(models, constructor))
        _, wrapper = _wrapper_module(name)
        return factory(weights=None, **kwargs), wrapper().get_example_inputs()
    return build


def _timm(constructor: str) -> Callable[[str], tuple[Any, tuple]]:
    def build(name: str):
        import timm

        _, wrapper = _wrapper_module(name)
        return timm.create_model(constructor, pretrained=False), wrapper().get_example_inputs()
    return build


def _edsr(name: str):
    from torchsr.models import edsr_r16f64

    _, wrapper = _wrapper_module(name)
    return edsr_r16f64(scale=2, pretrained=False), wrapper().get_example_inputs()


def _emformer(example_class: str) -> Callable[[str], tuple[Any, tuple]]:
    def build(name: str):
        from torchaudio.models import emformer_rnnt_base

        module, wrapper = _wrapper_module(name)
        rnnt = emformer_rnnt_base(num_symbols=EMFORMER_SYMBOLS)
        return (_holding(getattr(module, example_class), rnnt=rnnt),
                wrapper().get_example_inputs())
    return build


def _mobilebert(name: str):
    import torch
    import transformers

    config = transformers.MobileBertConfig(return_dict=False)  # defaults: mobilebert-uncased
    return (transformers.MobileBertModel(config),
            (torch.tensor(MOBILEBERT_INPUT_IDS, dtype=torch.long),))


def _whisper(name: str):
    import transformers

    module, wrapper_class = _wrapper_module(name)
    wrapper = wrapper_class.__new__(wrapper_class)  # its constructor downloads whisper-base
    wrapper.model = transformers.WhisperModel(transformers.WhisperConfig(**WHISPER_BASE))
    return wrapper.get_eager_model(), wrapper.get_example_inputs()


def _efficient_sam(name: str):
    from executorch.examples.models.efficient_sam.efficient_sam_core.efficient_sam import (
        build_efficient_sam,
    )

    _, wrapper = _wrapper_module(name)
    # build_efficient_sam_vitt's sizes, without its checkpoint URL
    model = build_efficient_sam(encoder_patch_embed_dim=192, encoder_num_heads=3,
                                checkpoint=None).eval()
    return model, wrapper().get_example_inputs()


def _yolo26(name: str):
    # ultralytics looks two hosts up at import to learn whether it is online
    os.environ.setdefault("YOLO_OFFLINE", "1")
    _, wrapper_class = _wrapper_module(name)
    # the yolo26n architecture from ultralytics' model config instead of yolo26n.pt
    wrapper = wrapper_class(model_name="yolo26n.yaml")
    return wrapper.get_eager_model(), wrapper.get_example_inputs()


def without_zero_weights(model):
    """Draws at random the weight matrices an initializer left all zero (torchvision's ViT
    zeroes its classifier, so its output is all zero and any backend error in the network
    would go unseen), and returns the model."""
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("weight") and parameter.dim() >= 2 and not parameter.any():
                torch.nn.init.normal_(parameter, std=0.02)
    return model


# registry name -> builder(name) -> (eager model, example inputs)
BUILDERS: dict[str, Callable[[str], tuple[Any, tuple]]] = {
    "dl3": _torchvision("deeplabv3_resnet50", weights_backbone=None, num_classes=21,
                        aux_loss=True),
    "mv2": _torchvision("mobilenet_v2"),
    "mv3": _torchvision("mobilenet_v3_small"),
    "vit": _torchvision("vit_b_16"),
    "ic3": _torchvision("inception_v3", aux_logits=True, transform_input=True,
                        init_weights=True),
    "resnet18": _torchvision("resnet18"),
    "resnet50": _torchvision("resnet50"),
    "ic4": _timm("inception_v4"),
    "deit_tiny": _timm("deit_tiny_patch16_224"),
    "edsr": _edsr,
    "emformer_transcribe": _emformer("EmformerRnntTranscriberExample"),
    "emformer_predict": _emformer("EmformerRnntPredictorExample"),
    "emformer_join": _emformer("EmformerRnntJoinerExample"),
    "mobilebert": _mobilebert,
    "whisper": _whisper,
    "efficient_sam": _efficient_sam,
    "yolo26": _yolo26,
}

# registry name -> the module of the `examples` extra (setup.cfg) its build imports
PACKAGES = {name: "torchvision" for name in
            ("dl3", "mv2", "mv2_untrained", "mv3", "vit", "ic3", "resnet18", "resnet50")}
PACKAGES.update({"ic4": "timm", "deit_tiny": "timm", "edsr": "torchsr", "yolo26": "ultralytics"})
