"""The speed-ups in backends/harness/case/speedups.py must not change what torch and the
quantizers compute: same answers as the original functions, recomputed when the operator
registry changes, one build per distinct pattern graph and a private copy for each caller.
They patch torch only when an entry point applies them (the plugin, at configure time), and
only once."""

import subprocess
import sys

import torch
import torch.nn.functional as F

from etsuite.backends.harness.case import speedups

speedups.apply()


def test_preservable_cia_ops_memo_matches_torch_and_follows_new_operators():
    import torch._export.utils as export_utils
    import torch.export.exported_program as exported_program

    memoized = exported_program._collect_all_valid_cia_ops
    original = memoized.__wrapped__
    assert memoized() == original()
    assert memoized() is memoized()  # served from the memo

    # A new functional op with a CompositeImplicitAutograd kernel is preservable: the memo
    # must notice the registration instead of serving the old set.
    library = torch.library.Library("etsuite_speedups_test", "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    try:
        fresh = memoized()
        assert fresh == original()
        assert any("etsuite_speedups_test" in str(op) for op in fresh)
    finally:
        library._destroy()
    assert export_utils._collect_all_valid_cia_ops is memoized


def _conv_bn_pattern(conv, relu: bool):
    from torchao.quantization.pt2e.export_utils import WrapperModule

    def pattern(x, weight, bias, bn_weight, bn_bias, mean, var):
        out = F.batch_norm(conv(x, weight, bias), mean, var, bn_weight, bn_bias, training=True)
        return F.relu(out) if relu else out

    return WrapperModule(pattern)


def _conv2d_inputs():
    return (torch.randn(1, 1, 3, 3), torch.randn(1, 1, 1, 1)) + tuple(torch.randn(1) for _ in range(5))


def test_pattern_graphs_built_once_per_distinct_pattern_and_copied():
    import torchao.quantization.pt2e.utils as pt2e_utils

    speedups.memoize_pattern_graphs()  # as the pipeline does once a quantizer is imported
    memoized = pt2e_utils._get_aten_graph_module_for_pattern
    assert getattr(memoized, "_etsuite_memoized", False)
    builds = []

    def counting_build(pattern, example_inputs, is_cuda=False, **kwargs):
        builds.append(pattern)
        return memoized.__wrapped__(pattern, example_inputs, is_cuda, **kwargs)

    build = speedups._memoized_builder(counting_build)
    first = build(_conv_bn_pattern(F.conv2d, relu=True), _conv2d_inputs())
    again = build(_conv_bn_pattern(F.conv2d, relu=True), _conv2d_inputs())
    assert len(builds) == 1 and first is not again
    fresh = memoized.__wrapped__(_conv_bn_pattern(F.conv2d, relu=True), _conv2d_inputs())
    assert first.code == again.code == fresh.code

    # A copy is private: rewriting it (as matchers do) leaves the next caller's intact.
    output = next(n for n in first.graph.nodes if n.op == "output")
    first.graph.erase_node(output)
    assert build(_conv_bn_pattern(F.conv2d, relu=True), _conv2d_inputs()).code == fresh.code

    # Another closed-over value, or other input shapes, is another pattern.
    build(_conv_bn_pattern(F.conv2d, relu=False), _conv2d_inputs())
    conv1d_inputs = (torch.randn(1, 1, 3), torch.randn(1, 1, 1)) + tuple(torch.randn(1) for _ in range(5))
    build(_conv_bn_pattern(F.conv1d, relu=True), conv1d_inputs)
    assert len(builds) == 3


def _local_class_pattern(binary_op, relu: bool, scale: float = 1.0) -> torch.nn.Module:
    """A pattern as Core ML's quantizer builds it: a class defined anew on every call."""

    class Pattern(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = scale

        def forward(self, x, y):
            out = binary_op(x, y) * self.scale
            return F.relu(out) if relu else out

    return Pattern()


def test_pattern_classes_defined_per_call_share_one_graph():
    builds = []

    def counting_build(pattern, example_inputs, is_cuda=False, **kwargs):
        builds.append(pattern)
        return torch.export.export(pattern, example_inputs, strict=True).module()

    build = speedups._memoized_builder(counting_build)
    inputs = (torch.randn(2, 3), torch.randn(2, 3))
    first = build(_local_class_pattern(torch.add, relu=True), inputs)
    again = build(_local_class_pattern(torch.add, relu=True), inputs)
    assert len(builds) == 1 and first is not again and first.code == again.code
    # Another closed-over op or flag, or another value of a plain attribute, is another
    # pattern with another graph.
    build(_local_class_pattern(torch.mul, relu=True), inputs)
    build(_local_class_pattern(torch.add, relu=False), inputs)
    scaled = build(_local_class_pattern(torch.add, relu=True, scale=2.0), inputs)
    assert len(builds) == 4
    assert scaled.code != first.code


def test_convert_pt2e_conv_bn_folding_uses_the_memo_with_tensor_keywords():
    """convert_pt2e folds conv + batch-norm through qat_utils' own imported builder, with
    example scales and zero points as keyword tensors: keyed by shape and dtype, so the
    next conversion finds them (they were 96 fresh exports per int8 batch-norm subtest)."""
    import torchao.quantization.pt2e.qat_utils as qat_utils

    speedups.memoize_pattern_graphs()
    assert getattr(qat_utils._get_aten_graph_module_for_pattern, "_etsuite_memoized", False)

    def pattern(x, scale):
        return x * scale

    inputs = (torch.randn(2, 3),)
    first = speedups.pattern_key(pattern, inputs, False, {"scale": torch.randn(1)})
    same_shape = speedups.pattern_key(pattern, (torch.randn(2, 3),), False, {"scale": torch.randn(1)})
    other_shape = speedups.pattern_key(pattern, inputs, False, {"scale": torch.randn(3)})
    assert first is not None and first == same_shape and first != other_shape


def test_vulkan_fusion_pattern_graphs_built_once_and_copied():
    """Vulkan's registry holds its RoPE graph builders without their lru_cache: once
    memoised, each lowering gets fresh copies of graphs built once, equal to a new build."""
    from executorch.backends.vulkan.patterns import fusable_patterns

    speedups.after_backend_imports()
    entry = fusable_patterns["export_llama_rope"]
    memoized = entry.get_graphs_fn
    assert getattr(memoized, "_etsuite_memoized", False)
    builds = []

    def counting_build():
        builds.append(1)
        return memoized.__wrapped__()

    build = speedups._built_once(counting_build)
    first, again = build(), build()
    assert len(builds) == 1
    assert first[0] is not again[0] and first[0].graph is not again[0].graph
    assert first[0].code == again[0].code == memoized.__wrapped__()[0].code


def test_pattern_with_state_of_its_own_is_not_memoised():
    assert speedups.pattern_key(torch.nn.Linear(2, 2), (torch.randn(1, 2),), False, {}) is None
    assert speedups.pattern_key(_conv_bn_pattern(F.conv2d, True), _conv2d_inputs(), False, {}) \
        is not None


class _Mixed(torch.nn.Module):
    """CIA ops that decompose (layer_norm, hardswish, gelu, upsample) and one that
    lowering keeps (SDPA), a constant to fold, and a conv + batch norm."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(2)
        self.register_buffer("scale", torch.arange(8.0))

    def forward(self, x):
        y = F.hardswish(F.layer_norm(x, (8,))) + F.gelu(x) * self.scale.softmax(0)
        y = F.scaled_dot_product_attention(y, y, y)
        image = self.norm(self.conv(y.unsqueeze(0)))
        return F.interpolate(image, scale_factor=2.0, mode="bilinear")


def _decomposed_and_lowered_code() -> tuple[str, str]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(_Mixed().eval(), (torch.randn(2, 4, 8),))
    decomposed = exported.run_decompositions().graph_module.code
    edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    return decomposed, edge.exported_program().graph_module.code


def test_decomposition_speedups_change_no_graph():
    """torch._ops with typing.Callable, and decomposition kernels registered for the CPU
    and Meta keys only, decompose and lower to the same graphs as torch unpatched."""
    import collections.abc
    import typing

    import torch._ops as ops
    import torch.export.exported_program as exported_program

    applied = speedups.apply()
    assert {"cached-callable-annotations", "cpu-and-meta-decomposition-keys"} <= set(applied)
    assert ops.Callable is typing.Callable and isinstance(len, ops.Callable)
    names = ("_AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE", "_BACKEND_KEYS_TO_OVERRIDE")
    pruned = {name: getattr(exported_program, name) for name in names}
    assert all(len(keys) == 2 for keys in pruned.values())

    with_speedups = _decomposed_and_lowered_code()
    every_key = [getattr(torch._C.DispatchKey, k) for k in ("AutogradCPU", "AutogradCUDA",
                 "AutogradMeta", "AutogradXLA", "AutogradMPS", "AutogradPrivateUse1")]
    every_backend = [getattr(torch._C.DispatchKey, k) for k in ("CPU", "CUDA", "Meta", "XLA",
                     "Lazy", "IPU", "XPU", "MPS", "HPU")]
    ops.Callable = collections.abc.Callable
    exported_program._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE = every_key
    exported_program._BACKEND_KEYS_TO_OVERRIDE = every_backend
    try:
        without = _decomposed_and_lowered_code()
    finally:
        ops.Callable = typing.Callable
        for name, keys in pruned.items():
            setattr(exported_program, name, keys)
    assert with_speedups == without
    assert "aten.native_layer_norm" in with_speedups[0] and "executorch_call_delegate" in with_speedups[1]


def test_edge_dialect_yaml_parsed_by_the_c_loader_gives_the_same_table():
    """executorch parses its edge-dialect table (edge.yaml, 140 KB) at import with ruamel's
    safe loader; the environments install ruamel.yaml.clib so that is the C parser
    (about 1.3 -> 0.25 s per process). The table must equal the pure-Python parse."""
    from importlib import resources

    import executorch.exir.dialects.edge as edge_package
    from executorch.exir.dialects.edge import _ops
    from ruamel.yaml import YAML

    assert "CParser" in YAML(typ="safe").Parser.__name__  # ruamel.yaml.clib is installed
    text = resources.files(edge_package).joinpath("edge.yaml").read_text(encoding="utf-8")
    pure = {entry["inherits"]: entry for entry in YAML(typ="safe", pure=True).load(text)}
    assert _ops._edge_dialect_info == pure
    assert len(pure) > 100


def test_frame_walk_caller_check_answers_like_inspect_stack():
    """XNNPACK's partitioner asks whether a `to_backend` of exir/program/_program.py (and
    no `to_edge_transform_and_lower`) is on the stack: the frame walk that replaces its
    inspect.stack() walk must answer the same, through each path and through neither."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    speedups.after_backend_imports()  # as the pipeline does once partitioners are built
    assert XnnpackPartitioner._check_if_called_from_to_backend is speedups.called_from_to_backend
    inspect_walk, partitioner = _original_caller_check(), XnnpackPartitioner()

    def both():
        return inspect_walk(partitioner), speedups.called_from_to_backend(partitioner)

    exir = {"both": both}
    exec(compile("def to_backend():\n    return both()\n"
                 "def to_edge_transform_and_lower():\n    return to_backend()\n",
                 "/somewhere/exir/program/_program.py", "exec"), exir)
    elsewhere = {"both": both}
    exec(compile("def to_backend():\n    return both()\n", "/elsewhere/mine.py", "exec"), elsewhere)
    assert both() == (False, False)
    assert exir["to_backend"]() == (True, True)
    assert exir["to_edge_transform_and_lower"]() == (False, False)
    assert elsewhere["to_backend"]() == (False, False)


def _original_caller_check():
    """The partitioner's own method, from a fresh copy of its module."""
    import importlib.util

    spec = importlib.util.find_spec("executorch.backends.xnnpack.partition.xnnpack_partitioner")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.XnnpackPartitioner._check_if_called_from_to_backend


def _history(record) -> dict:
    """A NodeSource chain as data, without the graph ids (object ids, new in every run)."""
    return {"name": record.name, "target": record.target, "pass": record.pass_name,
            "action": record._get_action_string(),
            "from": [_history(origin) for origin in record.from_node]}


def test_shared_node_provenance_leaves_lowering_and_node_history_unchanged():
    import copy

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from torch.fx.traceback import NodeSource

    from etsuite.backends.harness.case.priming import PrimingModel  # conv, relu, mean, linear

    torch.manual_seed(0)
    model, inputs = PrimingModel().eval(), (torch.randn(1, 2, 6, 6),)

    def lower():
        program = to_edge_transform_and_lower(torch.export.export(model, inputs),
                                              partitioner=[XnnpackPartitioner()])
        graph = program.exported_program().graph_module
        history = [(node.name, [_history(r) for r in node.meta.get("from_node", [])])
                   for node in graph.graph.nodes]
        records = [r for node in graph.graph.nodes for r in node.meta.get("from_node", [])]
        return graph.code, history, program.to_executorch().buffer, records

    assert "shared-node-provenance" in speedups.apply()
    shared = lower()
    record = shared[3][0]
    assert copy.deepcopy(record) is record
    assert any(len(h) and h[0]["from"] for _, h in shared[1])  # chains more than one deep
    saved = NodeSource.__deepcopy__
    del NodeSource.__deepcopy__
    try:
        copied = lower()
        assert copy.deepcopy(record) is not record
    finally:
        NodeSource.__deepcopy__ = saved
    assert shared[:3] == copied[:3]


def test_apply_twice_wraps_nothing_twice():
    import torch.export.exported_program as exported_program

    memoized = exported_program._collect_all_valid_cia_ops
    assert speedups.apply() == speedups.apply()
    assert exported_program._collect_all_valid_cia_ops is memoized
    assert not hasattr(memoized.__wrapped__, "__wrapped__")  # torch's own function


# In a new interpreter: import the pipeline and priming (torch untouched), then run a
# pytest session, whose configure applies the speed-ups before the session starts.
APPLIED_AT_CONFIGURE = """
import collections.abc, sys, typing
import pytest
import torch._ops
import etsuite.backends.harness.case.priming
from etsuite.backends.harness.case import speedups
print("imported:", torch._ops.Callable is collections.abc.Callable, speedups._applied)

class Probe:
    def pytest_sessionstart(self):
        print("configured:", torch._ops.Callable is typing.Callable)

pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", sys.argv[1]], plugins=[Probe()])
"""


def test_importing_the_pipeline_patches_nothing_and_the_plugin_applies_at_configure(tmp_path):
    done = subprocess.run([sys.executable, "-c", APPLIED_AT_CONFIGURE, str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    assert "imported: True []" in lines, done.stdout + done.stderr
    assert "configured: True" in lines, done.stdout + done.stderr
