"""The TOSA reference model (`tosa_reference_model` from PyPI's `tosa-tools`) as a flow
runtime: it executes the TOSA flatbuffer that Arm's TOSA backend puts in each
`executorch_call_delegate` node (the lowered module's `processed_bytes`) on the CPU,
which is how Arm validates TOSA lowering. The ExecuTorch runtime in the PyPI wheel has
no TOSA backend, so without this the Arm flows could only end `lowered_not_run`.

What runs where:
- every TOSA delegate: the reference model, with the delegate's inputs and outputs in
  the dim order its lowered graph declares (NHWC tensors are handed over permuted);
- the quantize/dequantize nodes that a pure-INT lowering leaves outside the delegate at
  the graph's boundary (TOSA-1.0+INT cannot take float inputs): eager PyTorch, with the
  scales and zero points of the graph, like Arm's own tests feed the reference model;
- a program with no TOSA delegate at all: this host's ExecuTorch runtime (portable
  kernels), so such a case ends `pass_undelegated` like in every other backend.

A program whose graph keeps any other op outside the delegates (only partly delegated)
is not run: the reference model executes TOSA graphs, not portable kernels, so
`missing()` says which ops stayed outside and the subtest ends `lowered_not_run`.

Torch-free at import, like the rest of a flow's data.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from etsuite.backends.harness.flows.flow import module_on_disk
from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime, LoweredProgram

REFERENCE_MODULE = "tosa_reference_model"
TOSA_BACKEND_ID = "TOSABackend"
_NHWC = (0, 2, 3, 1)
_NNHWC = (0, 1, 3, 4, 2)
# Ops that may stay outside the delegates: the boundary (de)quantization of an INT graph,
# in its functional or (after to_executorch) its out-variant form.
_BOUNDARY_OPS = frozenset({
    "quantized_decomposed::quantize_per_tensor",
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::quantize_per_channel",
    "quantized_decomposed::dequantize_per_channel",
})


def _op_name(target) -> str:
    name = getattr(target, "__name__", None) or str(target)
    return name.replace("aten::", "aten.")


def _is_delegate_call(node) -> bool:
    import torch

    return node.op == "call_function" and node.target is torch._higher_order_ops.executorch_call_delegate


def _is_boundary_op(node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return schema is not None and schema.name in _BOUNDARY_OPS


def _is_memory_planning(node) -> bool:
    """`to_executorch` runs its passes on the edge program in place: by the time a runtime
    sees it, out-variant ops write into `alloc`ed buffers."""
    from executorch.exir import memory

    return node.target is memory.alloc


def _tosa_spec_of(lowered) -> str | None:
    for spec in lowered.compile_specs:
        if spec.key == "tosa_spec":
            value = spec.value
            return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)
    return None


def _fake(node):
    return node.meta.get("val")


def _dim_order(fake) -> tuple:
    try:
        return tuple(fake.dim_order())
    except Exception:  # noqa: BLE001 - ambiguous or absent dim order: plain contiguous
        return tuple(range(fake.dim()))


def _why_not_runnable(exported_program) -> str | None:
    """None when the graph is TOSA delegates plus boundary q/dq only; else the reason."""
    graph_module = exported_program.graph_module
    outside: dict[str, int] = {}
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem \
                or _is_boundary_op(node) or _is_memory_planning(node):
            continue
        if _is_delegate_call(node):
            lowered = getattr(graph_module, node.args[0].target)
            if lowered.backend_id != TOSA_BACKEND_ID:
                return f"delegate '{lowered.backend_id}' is not a TOSA delegate"
            spec = _tosa_spec_of(lowered) or "?"
            if not spec.startswith("TOSA-1.0"):
                return f"the TOSA reference model runs TOSA-1.0 graphs, this delegate is {spec}"
            for placeholder in lowered.original_module.graph.find_nodes(op="placeholder"):
                fake = _fake(placeholder)
                if fake is not None and hasattr(fake, "shape") and \
                        not all(isinstance(d, int) for d in fake.shape):
                    return ("the delegate has symbolic input shapes; the reference model needs "
                            "them resolved by TOSA's infer_shapes tool, which this runtime does not run")
            continue
        name = _op_name(node.target)
        outside[name] = outside.get(name, 0) + 1
    if outside:
        listed = ", ".join(f"{op} x{n}" for op, n in sorted(outside.items()))
        return ("not fully delegated: the TOSA reference model runs only graphs delegated whole "
                f"to TOSA, and these ops stayed outside the delegate: {listed}")
    return None


def _has_delegate(exported_program) -> bool:
    return any(_is_delegate_call(node) for node in exported_program.graph_module.graph.nodes)


def _to_numpy(tensor, fake):
    """A delegate input as the reference model wants it: the delegate's dim order."""
    import torch

    tensor = tensor.detach()
    order = _dim_order(fake) if fake is not None else tuple(range(tensor.dim()))
    if order in (_NHWC, _NNHWC):
        tensor = tensor.permute(order)
    tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.uint16)  # numpy has no bfloat16; the graph knows the type
    return tensor.numpy()


def _to_torch(array, fake):
    """A reference model output back into the shape, dtype and dim order of the graph."""
    import numpy as np
    import torch

    if array.dtype.type is np.void or fake.dtype == torch.bfloat16:
        tensor = torch.frombuffer(bytearray(array.tobytes()), dtype=fake.dtype)
    else:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    shape = list(fake.shape)
    order = _dim_order(fake)
    if order in (_NHWC, _NNHWC):
        tensor = tensor.reshape([shape[i] for i in order])
        inverse = [order.index(i) for i in range(len(order))]
        tensor = tensor.permute(inverse)
    else:
        tensor = tensor.reshape(shape)
    if tensor.dtype != fake.dtype:
        tensor = tensor.to(fake.dtype)  # e.g. TOSA's int32 for a graph's int64
    return tensor.contiguous()


@dataclass
class _Delegate:
    """One TOSA delegate, ready to run: flatbuffer, input and output fake tensors."""

    tosa: bytes
    input_fakes: list
    output_fakes: list
    consumed: tuple  # positions, among the delegate's inputs, of those its graph reads

    def __call__(self, inputs: list) -> tuple:
        import tosa_reference_model as reference_model

        arrays = [_to_numpy(inputs[i], fake) for i, fake in zip(self.consumed, self.input_fakes, strict=True)]
        outputs, status = reference_model.run(
            self.tosa, arrays, verbosity="NONE", initialize_variable_tensor_from_numpy=True)
        if status != reference_model.GraphStatus.TOSA_VALID:
            raise RuntimeError(f"TOSA reference model: graph status {status.name}")
        if len(outputs) != len(self.output_fakes):
            raise RuntimeError(f"TOSA reference model returned {len(outputs)} outputs, "
                               f"the delegate declares {len(self.output_fakes)}")
        return tuple(_to_torch(a, fake) for a, fake in zip(outputs, self.output_fakes, strict=True))


def _prepare_delegate(lowered) -> _Delegate:
    original = lowered.original_module
    by_name = {n.name: n for n in original.graph.find_nodes(op="placeholder")}
    user_inputs = [name for name in original.graph_signature.user_inputs if isinstance(name, str)]
    tosa = bytes(lowered.processed_bytes)
    # The TOSA graph leaves out inputs it does not read (ones_like(x) reads only x's
    # shape, which is static): give the reference model the ones its graph names.
    consumed = _tosa_input_names(tosa)
    if consumed is None or not set(consumed) <= set(user_inputs):
        consumed = user_inputs
    input_fakes = [_fake(by_name[name]) for name in consumed]
    output_args = original.graph.output_node().args[0]
    user_output_count = len(original.graph_signature.user_outputs)
    output_fakes = [_fake(n) for n in list(output_args)[:user_output_count]]
    return _Delegate(tosa, input_fakes, output_fakes,
                     tuple(user_inputs.index(name) for name in consumed))


def _tosa_input_names(tosa: bytes) -> list[str] | None:
    """The input tensor names of the TOSA graph's main block (None if unreadable)."""
    try:
        from tosa.TosaGraph import TosaGraph

        graph = TosaGraph.GetRootAsTosaGraph(tosa, 0)
        regions = [graph.Regions(i) for i in range(graph.RegionsLength())]
        main = next((r for r in regions if r.Name() == b"main"), regions[0] if regions else None)
        block = main.Blocks(0)
        return [block.Inputs(i).decode() for i in range(block.InputsLength())]
    except Exception:  # noqa: BLE001 - an unreadable graph keeps every input, as before
        return None


@dataclass
class _Loaded:
    """A lowered graph ready to interpret: delegates run on the reference model, boundary
    q/dq in PyTorch."""

    exported_program: object
    delegates: dict = field(default_factory=dict)  # delegate node name -> _Delegate

    def run(self, inputs: list) -> list:
        from torch.export.graph_signature import InputKind, OutputKind

        program = self.exported_program
        graph_module = program.graph_module
        signature = program.graph_signature
        values: dict[str, object] = {}
        user_inputs = iter(inputs)
        for spec in signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                values[spec.arg.name] = next(user_inputs)
            elif spec.target in program.state_dict:
                values[spec.arg.name] = program.state_dict[spec.target]
            else:
                values[spec.arg.name] = program.constants[spec.target]

        def value(arg):
            import torch.fx

            if isinstance(arg, torch.fx.Node):
                return values[arg.name]
            if isinstance(arg, (list, tuple)):
                return type(arg)(value(a) for a in arg)
            return arg

        outputs = None
        for node in graph_module.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                values[node.name] = getattr(graph_module, node.target)
            elif node.op == "call_function" and node.name in self.delegates:
                values[node.name] = self.delegates[node.name]([value(a) for a in node.args[1:]])
            elif node.op == "call_function":
                values[node.name] = node.target(*value(node.args), **{
                    k: value(v) for k, v in node.kwargs.items()})
            elif node.op == "output":
                outputs = list(value(node.args[0]))
        user = [out for out, spec in zip(outputs, signature.output_specs, strict=True)
                if spec.kind == OutputKind.USER_OUTPUT]
        return user


@dataclass(frozen=True)
class TosaReferenceRuntime:
    """Executes lowered Arm TOSA programs on the TOSA reference model (see module doc)."""

    name: str = "tosa-reference-model"

    def missing(self, program: LoweredProgram) -> str | None:
        exported_program = program.edge_program.exported_program()
        if not _has_delegate(exported_program):
            return None  # nothing for the reference model: the host's runtime runs it
        if not module_on_disk(REFERENCE_MODULE):
            return (f"python module '{REFERENCE_MODULE}' is not installed "
                    "(pip install tosa-tools, see backends/arm/requirements.txt)")
        return _why_not_runnable(exported_program)

    def load(self, program: LoweredProgram):
        exported_program = program.edge_program.exported_program()
        if not _has_delegate(exported_program):
            runtime = ExecuTorchRuntime()
            return runtime, runtime.load(program)
        import tosa_reference_model  # noqa: F401 - fail at load, not at run, if it is broken

        graph_module = exported_program.graph_module
        loaded = _Loaded(exported_program)
        for node in graph_module.graph.nodes:
            if _is_delegate_call(node):
                loaded.delegates[node.name] = _prepare_delegate(getattr(graph_module, node.args[0].target))
        return None, loaded

    def execute(self, loaded, inputs: list) -> list:
        runtime, prepared = loaded
        if runtime is not None:
            return runtime.execute(prepared, inputs)
        return prepared.run(list(inputs))
