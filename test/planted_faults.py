"""Integer-kernel bugs planted in ExecuTorch itself, from outside the harness, to test
the quantized verdicts (case/fidelity.py). A pytest plugin: `-p planted_faults` with
`test/` on PYTHONPATH and ETSUITE_PLANT set to one of

- `graph:zero_point:K`   a pass inside `executorch.exir.to_edge_transform_and_lower`
  adds K output steps to the bias of the first quantized linear or conv of a copy of the
  program it was given (what a zero point off by K does to that op's output);
- `graph:multiplier:G`   the same pass multiplies that op's weight scale by G (a
  requantization multiplier off by G);
- `graph:rounding`       the same pass adds half an output step to its bias (a
  requantization that truncates where it should round);
- `graph:swap:A:B`       the same pass computes ATen op B wherever the copy has op A
  (`graph:swap:tanh:sigmoid`: every `aten.tanh.default` becomes `aten.sigmoid.default`),
  the node keeping its name and metadata, as a pass that rewrites an op in place would;
- `graph:swap_renamed:A:B`  the same, and the copy's ops get names of their own and lose
  their provenance (`from_node`), as a pass that rebuilds the graph keeping only its
  source metadata (stack traces, module paths) would;
- `graph:swap_bare:A:B`  the same, the stack traces and module paths lost too
  (`stack_trace`, `nn_module_stack`): a graph rebuilt without its metadata;
- `graph:fold:OP`        the same pass folds a constant wrongly: the first `aten.OP` node
  (`graph:fold:mul`: `aten.mul.*`) one of whose operands is a constant (a number in the
  graph, or a parameter, buffer or lifted constant) gets that constant times 1.5, the
  node keeping its name and metadata, as a constant-folding pass that computed the
  folded value wrongly would;
- `graph:permute_delegate_output`  after `to_edge_transform_and_lower` has lowered the
  program, the lowered graph reads the first delegate call's first output flipped along
  its last dimension (an `aten.flip` inserted between the call's getitem and its users,
  with no debug handle: an op no exported node made), as a lowering that gets a
  delegate's output layout wrong at the call's boundary would (a missing or wrong
  permute back from the backend's memory format); a program with no delegate call is
  left as it is;
- `runtime:zero_point:K` `executorch.runtime.Method.execute` moves every float output by K
  steps of its grid (the smallest gap between its distinct values);
- `runtime:multiplier:G` the same scales every float output by G;
- `runtime:saturation`   the same clamps every float output one grid step inside its
  extremes (a saturation range one code narrower: it shows where the output saturates,
  i.e. where two or more elements sit on an end of the range).

The eager model and the harness's own exported program are never touched: the pass
works on a deep copy, as a real lowering pass that rebuilds the graph would."""

from __future__ import annotations

import copy
import os


def _first_quantized_op(exported):
    """The first linear or conv whose weight comes through a dequantize, its bias node
    and the scale of the quantize after it; None when the program has none."""
    for node in exported.graph.nodes:
        if node.op != "call_function" or not any(
                k in str(node.target) for k in ("aten.linear", "aten.conv")):
            continue
        weight = node.args[1]
        users = list(node.users)
        if "dequantize" not in str(getattr(weight, "target", "")) or len(users) != 1 \
                or "quantize_per_tensor" not in str(users[0].target):
            continue
        bias = node.args[2] if len(node.args) > 2 else None
        return node, weight, bias, float(users[0].args[1])
    return None


def _tensor_of(exported, node):
    signature = exported.graph_signature
    key = (signature.inputs_to_parameters.get(node.name)
           or signature.inputs_to_buffers.get(node.name)
           or signature.inputs_to_lifted_tensor_constants.get(node.name))
    table = exported.state_dict if key in exported.state_dict else exported.constants
    return table, key


# What a node's metadata says of where it came from: its provenance, its source.
PROVENANCE = ("from_node",)
SOURCE = ("stack_trace", "nn_module_stack", "source_fn_stack")


def swapped_copy(exported, old: str, new: str, kind: str = "swap"):
    """A deep copy of `exported` computing `aten.<new>.default` wherever it had
    `aten.<old>.default`; `kind` `swap_renamed` and `swap_bare` also rename its nodes and
    drop their provenance, `swap_bare` their source too."""
    import torch

    program = copy.deepcopy(exported)
    was, becomes = getattr(torch.ops.aten, old).default, getattr(torch.ops.aten, new).default
    outputs = {spec.arg.name: spec.arg for spec in program.graph_signature.output_specs
               if hasattr(spec.arg, "name")}
    for node in program.graph.nodes:
        if node.op == "call_function" and node.target is was:
            node.target = becomes
        if node.op == "call_function" and kind != "swap":
            for key in (*PROVENANCE, *(SOURCE if kind == "swap_bare" else ())):
                node.meta.pop(key, None)
            name = node.name
            node._rename(f"rebuilt_{name}")
            if name in outputs:  # the signature names the program's outputs
                outputs[name].name = node.name
    program.graph_module.recompile()
    return program


def planted_copy(exported, kind: str, amount: float):
    """A deep copy of `exported` with one op's fault (see the module docstring)."""
    program = copy.deepcopy(exported)
    found = _first_quantized_op(program)
    if found is None:
        return program
    _, weight, bias, out_scale = found
    if kind in ("zero_point", "rounding"):
        if bias is None or getattr(bias, "op", None) != "placeholder":
            return program
        table, key = _tensor_of(program, bias)
        shift = out_scale * (0.5 if kind == "rounding" else amount)
        table[key].data.add_(shift)  # the copy's own tensor, kept a Parameter
    elif kind == "multiplier":
        scale = weight.args[1]
        if isinstance(scale, float):
            weight.update_arg(1, scale * amount)
        elif getattr(scale, "op", None) in ("placeholder", "get_attr"):
            if scale.op == "get_attr":
                module = program.graph_module
                setattr(module, scale.target, getattr(module, scale.target) * amount)
            else:
                table, key = _tensor_of(program, scale)
                table[key].data.mul_(amount)
    return program


def _number_args(node) -> list[int]:
    return [i for i, a in enumerate(node.args)
            if isinstance(a, (int, float)) and not isinstance(a, bool)]


def folded_copy(exported, op: str, factor: float = 1.5):
    """A deep copy of `exported` whose first `aten.<op>` node with a constant operand has
    that constant times `factor` (see the module docstring); a copy unchanged when the
    program has no such node."""
    program = copy.deepcopy(exported)
    signature = program.graph_signature
    constants = {*signature.inputs_to_parameters, *signature.inputs_to_buffers,
                 *signature.inputs_to_lifted_tensor_constants}
    for node in program.graph.nodes:
        if node.op != "call_function" or not str(node.target).startswith(f"aten.{op}."):
            continue
        numbers = _number_args(node)
        if numbers:
            node.update_arg(numbers[0], node.args[numbers[0]] * factor)
            break
        held = [a for a in node.args if getattr(a, "op", None) == "placeholder"
                and a.name in constants]
        if held:
            table, key = _tensor_of(program, held[0])
            table[key].data.mul_(factor)  # the copy's own tensor
            break
    program.graph_module.recompile()
    return program


def permuted_delegate_output(edge):
    """`edge` (an EdgeProgramManager, changed in place): its first delegate call's first
    output read flipped along its last dimension by every user (see the module
    docstring)."""
    from executorch.exir.dialects._ops import ops as exir_ops

    program = edge.exported_program()
    graph = program.graph
    call = next((n for n in graph.nodes if n.op == "call_function"
                 and getattr(n.target, "__name__", "") == "executorch_call_delegate"), None)
    if call is None:
        return edge
    first = next((u for u in call.users if u.args[1] == 0), None)
    if first is None:
        return edge
    with graph.inserting_after(first):
        flipped = graph.call_function(exir_ops.edge.aten.flip.default, (first, [-1]))
    first.replace_all_uses_with(flipped, delete_user_cb=lambda user: user is not flipped)
    value = first.meta.get("val")
    flipped.meta["val"] = value.flip(-1) if value is not None else None
    for key in ("stack_trace", "nn_module_stack"):
        if key in first.meta:
            flipped.meta[key] = first.meta[key]
    program.graph_module.recompile()
    return edge


def _grid_step(values):
    import torch

    distinct = torch.unique(values.detach().flatten().to(torch.float64))
    gaps = distinct[1:] - distinct[:-1]
    return float(gaps.min()) if gaps.numel() else 0.0


def planted_outputs(outputs: list, kind: str, amount: float) -> list:
    import torch

    changed = []
    for value in outputs:
        if not isinstance(value, torch.Tensor) or not value.is_floating_point() \
                or value.numel() < 2:
            changed.append(value)
            continue
        step = _grid_step(value)
        if kind == "zero_point":
            value = value + amount * step
        elif kind == "multiplier":
            value = value * amount
        elif kind == "saturation":
            low, high = float(value.min()), float(value.max())
            if high - low > 2 * step > 0:
                value = value.clamp(low + step, high - step)
        changed.append(value)
    return changed


def _install(plant: str) -> None:
    layer, kind, *rest = plant.split(":")
    if layer == "graph" and kind == "permute_delegate_output":
        import executorch.exir as exir

        lower = exir.to_edge_transform_and_lower

        def lowering_then_permuted(programs, *args, **kwargs):
            return permuted_delegate_output(lower(programs, *args, **kwargs))

        exir.to_edge_transform_and_lower = lowering_then_permuted
        return
    if layer == "graph" and kind == "fold":
        (op,) = rest

        def fault(program):
            return folded_copy(program, op)
    elif layer == "graph" and kind in ("swap", "swap_renamed", "swap_bare"):
        old, new = rest

        def fault(program):
            return swapped_copy(program, old, new, kind)
    else:
        amount = float(rest[0]) if rest else 0.0

        def fault(program):
            return planted_copy(program, kind, amount)
    if layer == "graph":
        import executorch.exir as exir

        real = exir.to_edge_transform_and_lower

        def lowering_with_fault(programs, *args, **kwargs):
            if isinstance(programs, dict):
                programs = {k: fault(p) for k, p in programs.items()}
            else:
                programs = fault(programs)
            return real(programs, *args, **kwargs)

        exir.to_edge_transform_and_lower = lowering_with_fault
    elif layer == "runtime":
        from executorch.runtime import Method

        real_execute = Method.execute

        def execute_with_fault(self, inputs):
            return planted_outputs(list(real_execute(self, inputs)), kind, amount)

        Method.execute = execute_with_fault
    else:
        raise ValueError(f"ETSUITE_PLANT={plant!r}: expected graph:... or runtime:...")


def pytest_configure(config) -> None:
    plant = os.environ.get("ETSUITE_PLANT", "")
    if plant:
        _install(plant)
