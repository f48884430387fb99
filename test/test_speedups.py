"""The speed-ups in backends/harness/speedups.py must not change what torch and the
quantizers compute: same answers as the original functions, recomputed when the operator
registry changes, one build per distinct pattern graph and a private copy for each caller."""

import torch
import torch.nn.functional as F

from etsuite.backends.harness import speedups

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


def test_pattern_with_state_of_its_own_is_not_memoised():
    assert speedups.pattern_key(torch.nn.Linear(2, 2), (torch.randn(1, 2),), False, {}) is None
    assert speedups.pattern_key(_conv_bn_pattern(F.conv2d, True), _conv2d_inputs(), False, {}) \
        is not None


def test_cached_callable_annotations_decompose_alike():
    """torch._ops with typing.Callable registers kernels and decomposes as with
    collections.abc.Callable: the same decomposed graph either way."""
    import collections.abc
    import typing

    import torch._ops as ops

    assert "cached-callable-annotations" in speedups.apply()
    assert ops.Callable is typing.Callable and isinstance(len, ops.Callable)

    class Model(torch.nn.Module):
        def forward(self, x):
            return F.hardswish(F.layer_norm(x, (8,))) + F.gelu(x)

    def decomposed_code():
        exported = torch.export.export(Model(), (torch.randn(2, 8),))
        return exported.run_decompositions().graph_module.code

    with_cache = decomposed_code()
    ops.Callable = collections.abc.Callable
    try:
        without = decomposed_code()
    finally:
        ops.Callable = typing.Callable
    assert with_cache == without and "aten.native_layer_norm" in with_cache
