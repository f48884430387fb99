"""Lets torchvision's Python models import beside the CPU build of torch.

PyPI's Linux wheel of torchvision 0.28.0 (the release for torch 2.13) is built against the
CUDA build of torch: its operator library `_C.so` links `libc10_cuda.so`, which the CPU
build does not have. torchvision tolerates that library failing to load (its ops then
raise "Couldn't load custom C++ ops" when called), except for one thing: at import it
registers fake kernels for `torchvision::nms` and `torchvision::qnms` unconditionally, and
that raises when the library did not define them, so `import torchvision` fails. And
transformers imports torchvision whenever it is installed, so the failure reaches every
suite that builds a transformers model.

`install()` (called by the suites' package) puts a finder on `sys.meta_path` that acts once,
on the first `import torchvision`, and only when torchvision's library does not load: it
defines the schemas of those two ops, so the registration succeeds. The ops stay without a
kernel: calling them still raises torchvision's own error. Nothing is imported until
torchvision is, and an installation whose library loads is left as it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
           "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_library = None  # the torch.library.Library holding the schemas, kept alive
_checked = False  # the library was tried in this process (or a parent it was forked from)


def _define_schemas_if_library_fails() -> None:
    """Once per process: a second `Library("torchvision", "DEF")` raises. `install()` can
    run again after the finder removed itself (transformers only asks for torchvision's
    spec, so it is not in sys.modules yet), and this module can be imported under two
    names (the suite's own and `etsuite.`'s), so the schemas already being there counts."""
    global _library, _checked
    if _checked:
        return
    _checked = True
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    import torch

    if _schemas_defined(torch):
        return
    try:
        torch.ops.load_library(str(Path(spec.submodule_search_locations[0]) / "_C.so"))
    except OSError:
        _library = torch.library.Library("torchvision", "DEF")
        for schema in SCHEMAS:
            _library.define(schema)


def _schemas_defined(torch) -> bool:
    """torchvision's library, or this module's stand-in for it, already defines nms."""
    try:
        return torch.ops.torchvision.nms.default is not None
    except (AttributeError, RuntimeError):
        return False


class _BeforeTorchvision(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torchvision":
            sys.meta_path.remove(self)
            _define_schemas_if_library_fails()
        return None  # the usual finders import it


def install() -> None:
    if _checked or "torchvision" in sys.modules or any(isinstance(f, _BeforeTorchvision)
                                           for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _BeforeTorchvision())
