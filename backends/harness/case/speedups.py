"""Fixed costs of lowering and quantizing that the suite pays once per process instead of
once per subtest.

Found by profiling (see tools/bench/benchmark.py and docs/explanation/start-up-and-speed.md), not
guessed:
- every `run_decompositions` call (about five per `to_edge_transform_and_lower`)
  recomputes the set of preservable CompositeImplicitAutograd ops by walking every operator
  namespace and re-materialising every C++ op in each of them, about 0.4 s per call here,
  the same for a one-op model as for a network. The answer changes only when an operator
  is registered, so it is memoised on a key that changes whenever one is.
- PT2E quantizers match the model against pattern graphs that they build with a strict
  `torch.export` of a small pattern function on every `annotate` call: XNNPACK's conv +
  batch-norm patterns (8 exports, 60% of a static int8 subtest), Core ML's ~400 patterns
  (about 100 s per subtest), and convert_pt2e's conv + batch-norm folding (96 exports for
  any model holding a batch norm, 20-80 s). A pattern's graph depends only on the
  pattern's code, the values it closes over and the example inputs' shapes, so the first
  graph is kept and each caller gets a deep copy (matchers rewrite the pattern graph in
  place).
- around each decomposition, torch.export registers and unregisters Python kernels for
  every preservable CIA op (about 20 `OperatorBase.py_impl` calls for each of ~500 ops,
  twice per `run_decompositions`). Each `py_impl` call builds its inner function's
  `collections.abc.Callable[...]` annotations anew, which `typing.Callable` would take
  from its cache: 180 -> 140 ms per decomposition here. torch._ops uses the name only in
  annotations and one `isinstance(x, Callable)`, which both spellings answer alike.
- those kernels go to every device's dispatch key (CPU, CUDA, Meta, XLA, Lazy, IPU, XPU,
  MPS, HPU and the private-use keys, with their autograd keys): about 20 registrations per
  op. On a host with no accelerator, every tensor the suite makes lives on the CPU, and
  fake tensors dispatch as Meta, so registering for CPU and Meta (and their autograd
  keys) alone gives the same graphs: 130 -> 33 ms per decomposition here. Not applied
  where CUDA, XPU, MPS or a private-use backend is present.
- Vulkan's partitioner and fusion pass rebuild the registered RoPE pattern graphs (strict
  export plus `to_edge`) twice per lowering, since the registry holds the builders without
  their lru_cache: about 3.5-4.5 s of a 5 s lowering.
- XNNPACK's partitioner checks on every partitioning whether it was reached through the
  deprecated `to_backend` path by taking `inspect.stack()`, which reads every frame's
  source file and scans sys.modules for each frame's module (60-100 ms per lowering under
  pytest's deep stacks). The check needs only the frames' function and file names, which
  the code objects hold.

- every node a pass creates records where it came from (`node.meta["from_node"]`, a
  chain of `torch.fx.traceback.NodeSource`) by deep-copying its origin's whole chain, which
  grows with every pass the node goes through. NodeSource records are never changed once
  made, so a copy may be the record itself.

Priming (case/priming.py) lowers and quantizes once in the parent process, so forked test
children inherit the filled caches.

Each speed-up leaves the graphs and verdicts unchanged (the benchmark compares verdicts),
and applies only when the torch internals it relies on have the expected shape, so a
different torch version runs unaccelerated rather than wrong.
`ETSUITE_NO_SPEEDUPS=1` turns them all off, to compare or to rule them out.
"""

from __future__ import annotations

import os
from types import FrameType
from typing import Any, Callable

_applied: list[str] = []  # names of the speed-ups in effect
_installed = False         # apply() has run with the speed-ups on


def apply() -> list[str]:
    """Install the speed-ups; returns the names of those in effect. Nothing is patched
    at import: each entry point that runs the pipeline calls this first (the pytest
    plugin at configure time, in every process that runs tests). Idempotent: a second
    call patches nothing again (a patched function is never wrapped twice)."""
    global _installed
    if _installed or os.environ.get("ETSUITE_NO_SPEEDUPS") == "1":
        return list(_applied)
    _installed = True
    if _memoize_preservable_cia_ops():
        _applied.append("preservable-cia-ops-cache")
    if _cached_callable_annotations():
        _applied.append("cached-callable-annotations")
    if _cpu_and_meta_decomposition_keys():
        _applied.append("cpu-and-meta-decomposition-keys")
    if _shared_node_provenance():
        _applied.append("shared-node-provenance")
    after_backend_imports()
    return list(_applied)


# Where PT2E quantizers build their pattern graphs: (module, function name). A module is
# patched once it has been imported (a flow imports its quantizer lazily), so the pipeline
# calls `after_backend_imports` again after building a quantizer or partitioners.
PATTERN_GRAPH_BUILDERS = (
    ("torchao.quantization.pt2e.utils", "_get_aten_graph_module_for_pattern"),
    # convert_pt2e folds conv + batch-norm patterns with its own imported name: 96 exports
    # per conversion of any model holding a batch norm (20-80 s per int8 subtest).
    ("torchao.quantization.pt2e.qat_utils", "_get_aten_graph_module_for_pattern"),
    ("torchao.quantization.pt2e.reference_representation_rewrite",
     "_get_aten_graph_module_for_pattern"),
    ("executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils",
     "_get_aten_graph_module_for_pattern"),
    ("executorch.backends.apple.coreml.quantizer._coreml_quantizer_utils",
     "_get_aten_graph_module"),
)


def after_backend_imports() -> None:
    """The speed-ups of modules a flow imports lazily (quantizers, partitioners): call once
    they are imported, e.g. after building a flow's quantizer or partitioners (idempotent).
    Does nothing unless `apply()` installed the speed-ups in this process."""
    if not _installed:
        return
    memoize_pattern_graphs()
    _memoize_registered_fusion_graphs()
    _frame_walk_caller_checks()


# Partitioner methods that ask whether they were called through the deprecated
# `to_backend` path by taking `inspect.stack()`, which reads the source file of every
# frame and scans sys.modules for each: 60-100 ms per partitioning under pytest's deep
# stacks, and only the frames' function and file names are looked at. (module, class).
CALLER_CHECKS = (
    ("executorch.backends.xnnpack.partition.xnnpack_partitioner", "XnnpackPartitioner"),
)


def called_from_to_backend(self: Any = None) -> bool:
    """True when a `to_backend` of executorch's exir/program/_program.py is on the call
    stack and `to_edge_transform_and_lower` is not; the same answer as the partitioners'
    inspect.stack() walk, from the frames' code objects alone."""
    import sys

    frame: FrameType | None = sys._getframe(1)
    through_to_backend = False
    while frame is not None:
        code = frame.f_code
        if code.co_name == "to_edge_transform_and_lower":
            return False
        if code.co_name == "to_backend" and "program/_program.py" in code.co_filename:
            through_to_backend = True
        frame = frame.f_back
    return through_to_backend


# Registries of fusion patterns whose entries build their pattern graphs on every call:
# (module, dict attribute, entry attribute holding a no-argument graph builder).
FUSION_PATTERN_REGISTRIES = (
    ("executorch.backends.vulkan.patterns.pattern_registry", "fusable_patterns", "get_graphs_fn"),
)


def _memoize_registered_fusion_graphs() -> None:
    """Vulkan's partitioner and its fusion pass each ask every registered pattern for its
    graphs, once per lowering. The RoPE patterns' builders are `lru_cache`d, but the cache
    is applied after the registering decorator, so the registry holds the uncached
    builders: two strict exports plus `to_edge` of a rotary embedding, twice per lowering,
    about 3.5 s of a 5 s Vulkan lowering of a one-op model. The graphs depend on nothing
    but the builder, so the first build is kept and each call gets deep copies, as the
    uncached builder would give fresh graphs."""
    import inspect
    import sys

    for module_name, registry_name, attribute in FUSION_PATTERN_REGISTRIES:
        registry = getattr(sys.modules.get(module_name), registry_name, None)
        if not isinstance(registry, dict):
            continue
        for entry in registry.values():
            build = getattr(entry, attribute, None)
            if build is None or getattr(build, "_etsuite_memoized", False):
                continue
            try:
                if inspect.signature(build).parameters:
                    continue  # takes arguments: its graphs may depend on them
            except (TypeError, ValueError):
                continue
            setattr(entry, attribute, _built_once(build))
            if "fusion-pattern-graph-cache" not in _applied:
                _applied.append("fusion-pattern-graph-cache")


def _built_once(build: Callable[[], Any]) -> Callable[..., Any]:
    """`build()` called once; every call gets a deep copy of its answer."""
    import copy

    built: list = []

    def memoized() -> Any:
        if not built:
            built.append(build())
        return copy.deepcopy(built[0])

    return _wrapping(memoized, build, memoized=True)


def _wrapping(wrapper: Callable[..., Any], wrapped: Callable[..., Any], *,
              memoized: bool) -> Callable[..., Any]:
    """`wrapper` pointing at what it wraps (`__wrapped__`, without functools.wraps's
    copied signature) and, if `memoized`, marked as ours so apply() never wraps it twice.
    Set through `__dict__`: a function's type declares no attributes of its own."""
    wrapper.__dict__["__wrapped__"] = wrapped
    if memoized:
        wrapper.__dict__["_etsuite_memoized"] = True
    return wrapper


def _frame_walk_caller_checks() -> None:
    import sys

    for module_name, class_name in CALLER_CHECKS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        method = getattr(cls, "_check_if_called_from_to_backend", None)
        if cls is None or method is None or method is called_from_to_backend:
            continue
        cls._check_if_called_from_to_backend = called_from_to_backend
        if "frame-walk-caller-check" not in _applied:
            _applied.append("frame-walk-caller-check")


def memoize_pattern_graphs() -> None:
    """Memoise every known pattern-graph builder whose module is imported (idempotent)."""
    import sys

    if os.environ.get("ETSUITE_NO_SPEEDUPS") == "1":
        return
    for module_name, attribute in PATTERN_GRAPH_BUILDERS:
        module = sys.modules.get(module_name)
        builder = getattr(module, attribute, None)
        if builder is None or getattr(builder, "_etsuite_memoized", False):
            continue
        setattr(module, attribute, _memoized_builder(builder))
        if "pattern-graph-cache" not in _applied:
            _applied.append("pattern-graph-cache")


def _memoized_builder(build: Callable[..., Any]) -> Callable[..., Any]:
    import copy

    graphs: dict = {}

    def memoized(pattern: Any, example_inputs: Any, is_cuda: bool = False,
                 **kwargs: Any) -> Any:
        key = pattern_key(pattern, example_inputs, is_cuda, kwargs)
        if key is None:
            return build(pattern, example_inputs, is_cuda, **kwargs)
        if key not in graphs:
            graphs[key] = build(pattern, example_inputs, is_cuda, **kwargs)
        return copy.deepcopy(graphs[key])

    return _wrapping(memoized, build, memoized=True)


def _function_identity(function: Any) -> tuple:
    # A method's `__class__` cell (there for `super()`) is its class, which _class_identity
    # describes by content instead.
    closure = tuple(cell.cell_contents for name, cell in
                    zip(function.__code__.co_freevars, function.__closure__ or (), strict=True)
                    if name != "__class__")
    return (function.__code__, closure, function.__defaults__,
            tuple(sorted((function.__kwdefaults__ or {}).items())))


def _class_identity(cls: type) -> tuple:
    """A pattern class by what it computes, not by the class object: Core ML's quantizer
    defines its `Pattern(nn.Module)` inside the function that builds it, so every call
    makes a new class with the same code and closed-over values."""
    import types

    def function_of(value: Any) -> Any:
        return value.__func__ if isinstance(value, (staticmethod, classmethod)) else value

    methods = tuple(sorted((name, _function_identity(function_of(value)))
                           for name, value in vars(cls).items()
                           if isinstance(function_of(value), types.FunctionType)))
    return (cls.__module__, cls.__qualname__, cls.__bases__, methods)


def pattern_key(pattern: Any, example_inputs: Any, is_cuda: bool, kwargs: dict) -> tuple | None:
    """What determines a pattern graph: the pattern's methods (and, for a module wrapping
    a function, that function) with the values they close over, the module's own plain
    attributes, and the example inputs' (positional and keyword) shapes and dtypes.
    None, meaning "build it as before", for a pattern with state of its own (parameters,
    submodules) or anything unhashable."""
    import torch

    try:
        if isinstance(pattern, torch.nn.Module):
            if any(True for _ in pattern.children()) or any(True for _ in pattern.parameters()) \
                    or any(True for _ in pattern.buffers()):
                return None
            attributes = tuple(sorted((name, value) for name, value in vars(pattern).items()
                                      if not name.startswith("_") and name != "fn"))
            identity: tuple = (_class_identity(type(pattern)), attributes)
            wrapped = getattr(pattern, "fn", None)
            if wrapped is not None:
                identity += (_function_identity(wrapped),)
        else:
            identity = (_function_identity(pattern),)

        def described(value: Any) -> Any:
            # An example tensor matters to the export by its shape and dtype only.
            return (tuple(value.shape), value.dtype) if isinstance(value, torch.Tensor) else value

        inputs = tuple(described(value) for value in example_inputs)
        keywords = tuple(sorted((name, described(value)) for name, value in kwargs.items()))
        key = (identity, inputs, is_cuda, keywords)
        hash(key)
    except (TypeError, ValueError, AttributeError):
        return None
    return key


def _registry_key() -> tuple:
    """Changes whenever an operator (C++ or Python, any namespace) is registered or
    materialised, which is all the memoised answer depends on."""
    import torch

    cia = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    namespaces = tuple(
        (name, len(getattr(getattr(torch.ops, name), "_dir", ()))) for name in torch.ops._dir
    )
    return len(cia), namespaces


def _memoize_preservable_cia_ops() -> bool:
    try:
        import torch._export.utils as export_utils
        import torch.export.decomp_utils as decomp_utils
        import torch.export.exported_program as exported_program
    except ImportError:
        return False
    users = (exported_program, decomp_utils)
    original = getattr(export_utils, "_collect_all_valid_cia_ops", None)
    if original is None or any(
            getattr(module, "_collect_all_valid_cia_ops", None) is not original for module in users):
        return False
    answers: dict[tuple, object] = {}

    def collect_all_valid_cia_ops() -> Any:
        key = _registry_key()
        if key not in answers:
            answer = original()
            # Collecting materialises op packets, which changes the key: file the answer
            # under the key as it stands afterwards, so the next call finds it.
            answers[_registry_key()] = answers[key] = answer
        return answers[key]

    _wrapping(collect_all_valid_cia_ops, original, memoized=False)
    for module in (export_utils, *users):
        module._collect_all_valid_cia_ops = collect_all_valid_cia_ops
    return True


def _cached_callable_annotations() -> bool:
    import collections.abc
    import typing

    try:
        import torch._ops as ops
    except ImportError:
        return False
    if getattr(ops, "Callable", None) is not collections.abc.Callable:
        return False
    ops.Callable = typing.Callable
    return True


def _accelerator_present(torch: Any) -> bool:
    checks = (
        lambda: torch.cuda.is_available(),
        lambda: torch.xpu.is_available(),
        lambda: torch.backends.mps.is_available(),
        lambda: torch._C._get_privateuse1_backend_name() != "privateuseone",
    )
    for check in checks:
        try:
            if check():
                return True
        except (AttributeError, RuntimeError):
            continue
    return False


def _cpu_and_meta_decomposition_keys() -> bool:
    try:
        import torch
        import torch.export.exported_program as exported_program
    except ImportError:
        return False
    names = ("_AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE", "_BACKEND_KEYS_TO_OVERRIDE")
    if _accelerator_present(torch) or not all(
            isinstance(getattr(exported_program, name, None), list) for name in names):
        return False
    key = torch._C.DispatchKey
    wanted = {key.CPU, key.Meta, key.AutogradCPU, key.AutogradMeta}
    kept = {name: [k for k in getattr(exported_program, name) if k in wanted] for name in names}
    if not all(kept.values()):
        return False
    for name, keys in kept.items():
        setattr(exported_program, name, keys)
    return True


def _shared_node_provenance() -> bool:
    """Deep-copying a NodeSource returns it: torch creates them whole and never changes one
    afterwards (only `_from_dict` fills in a record it has just made), so a shared record
    and a copy answer every question alike, and a new node stops paying for a copy of its
    origin's whole history."""
    try:
        from torch.fx.traceback import NodeSource
    except ImportError:
        return False
    if "__deepcopy__" in vars(NodeSource):
        return False
    NodeSource.__deepcopy__ = _same_record
    return True


def _same_record(record: Any, memo: Any) -> Any:
    return record
