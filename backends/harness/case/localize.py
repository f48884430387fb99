"""Where a mismatch starts: the first graph node whose runtime output leaves the flow's rule.

The program runs once more on this host's ExecuTorch runtime with ETDump intermediate
outputs on; the exported program from before lowering runs eagerly on the same inputs,
recording every node's output. ExecuTorch's Inspector reads the ETDump; each runtime op
is mapped to the exported program's node it came from by its debug handle (handle ->
edge node of the program the pipeline lowered -> exported node, by stable identity: the
names along the edge node's `from_node` provenance chain, or its source line and module
path; never by object ids, which a copy of the program between export and lowering
changes), and judged by the flow's rule for its dtype (`compare_outputs`). The reference
is the program before any lowering pass, so a pass that broke the graph is blamed, not
agreed with.

No verdict from nothing: when no runtime op could be matched, when the first node off the
rule depends on a node never compared, or when the compared nodes, all within the rule, do
not cover every computing node the outputs depend on, the answer is "could not compare:
..." (`could_not_compare`), and the caller goes on to the next method (bisection).

A delegate is one opaque row. When a delegate call is the first to leave the rule, the
program is lowered again with the partitioner's choice split one node per delegate call
(`one_node_per_partition`), in that call's partition only (the other partitions stay
whole, so a large program's split compiles as many calls as the culprit has nodes, plus
one per other partition: `split_calls`; a culprit of more than `HALVING_ABOVE` nodes is
halved first, a lowering per halving, so the calls grow with log2 of its nodes): every
node of the culprit's is then a delegate call's output, which ETDump logs, so the first
one off the rule is that node ("one node per delegate call"). When that lowering fails
or no longer fails the rule, the record names the delegate call and the exported nodes
it took, and says why it went no further.
Never raises, and never ends the test: `contained` runs the work in a forked process,
so a runtime that crashes with ETDump on, or a localization that overruns its time limit, is
"not localized: ..." and the subtest keeps the status it had.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import os
import re
import select
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import torch
import torch.utils._pytree as pytree

from etsuite.backends.harness.case.output_match import Comparison, compare_outputs, flatten_tensors
from etsuite.backends.harness.flows.runtimes import ExecuTorchRuntime, Runtime
from etsuite.backends.harness.flows.tolerance import RuleBook, Tolerance

METHOD = "intermediates"
# The debug buffer holds every logged intermediate (a delegate call logs its inputs and
# outputs): a few times the sum of the exported nodes' outputs, within a cap.
BUFFER_FACTOR, BUFFER_SLACK, BUFFER_CAP = 4, 2**20, 2**30
# Ops whose outputs are not judged on their own: integer quantized values, whose error
# shows in the float output of the dequantize that follows, under the flow's rule.
UNJUDGED_NAMESPACES = ("quantized_decomposed",)


# A quantized flow's program that agrees with its own quantized graph run eagerly: what
# the case's rule measured is the error of the quantization the recipe asked for.
QUANTIZATION_ERROR = ("{} against the fake-quantized program (the quantized graph run "
                      "eagerly): the mismatch is the quantization's error, not a node's")


class NotLocalized(Exception):
    """Why a mismatch cannot be localized; the message follows "not localized: "."""


# Dtypes whose logged values this executorch's ETDump cannot give back: with one of them
# among the intermediates, the ETDump it writes is malformed (checked on executorch 1.5.1:
# a float16 MLP on portable; `flatc` exits 1, "string contains non-utf8 bytes", and
# segfaults when told to allow them), while the same program in float32 reads.
HALF_DTYPES = (torch.float16, torch.bfloat16)


class Unreadable(Exception):
    """The ETDump of the run could not be read, so no intermediate was: which ops' values
    were unreadable and why (`notes`, one per exported op whose output is of a half dtype,
    none when no op's is), for "could not compare" and the next method."""

    def __init__(self, exported: Any, error: BaseException) -> None:
        command = getattr(error, "cmd", None)
        if isinstance(command, (list, tuple)) and command:  # a tool's long command line
            why = (f"{type(error).__name__}: {os.path.basename(str(command[0]))} exited with "
                   f"status {getattr(error, 'returncode', '?')}")
        else:
            why = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        self.why = why
        self.notes = [{"op": str(node.target), "node": node.name,
                       "why": f"its {dtype} value was unreadable: the ETDump of the run "
                              f"could not be read ({why})"}
                      for node, dtype in _half_outputs(exported)]
        super().__init__(why)


def _half_outputs(exported: Any) -> list:
    """The exported program's ops with an output of a half dtype, in graph order, and that
    dtype's name."""
    found = []
    for node in exported.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        dtypes = {v.dtype for v in flatten_tensors(node.meta.get("val"))
                  if isinstance(v, torch.Tensor) and v.dtype in HALF_DTYPES}
        if dtypes:
            found.append((node, str(sorted(dtypes, key=str)[0]).removeprefix("torch.")))
    return found


@dataclass
class DelegateCall:
    """One call_delegate node of the edge program: its backend, the debug handles of the
    nodes it took (what the runtime's DELEGATE_CALL event carries) and the handle of each
    of its outputs (its getitem users, in output order)."""

    backend: str
    handles: frozenset
    output_handles: list
    computing: list = field(default_factory=list)  # the exported ops it computes (no q/dq)
    returning: dict = field(default_factory=dict)   # output handle -> the inner node returned


@dataclass
class Lineage:
    """What `to_executorch` loses, taken from the edge program before it runs (it rewrites
    the edge graph in place and renumbers its handles): the exported nodes each debug handle
    came from, how each was matched, and the delegate calls.

    An edge node is matched to the exported node it came from by stable identity, never by
    object identity (a program copied between export and lowering has another graph):
    "name", its `from_node` provenance chain reaches a node of the exported node's name
    with that node's own provenance below it; else "source", the one exported node of its
    source line and module path (of those, of its op when several share them)."""

    nodes_of_handle: dict = field(default_factory=dict)   # handle -> [exported node names]
    how_of_handle: dict = field(default_factory=dict)     # handle -> "name" or "source"
    delegates: list = field(default_factory=list)          # [DelegateCall]
    edge_ops: int = 0                                      # edge ops with a debug handle

    @classmethod
    def of(cls, edge_program: Any, exported: Any) -> "Lineage":
        index = ExportedIndex.of(exported)
        lineage = cls()
        module = edge_program.graph_module
        lineage._add(module, index)
        for node in module.graph.nodes:
            if node.op == "call_function" \
                    and getattr(node.target, "__name__", "") == "executorch_call_delegate":
                call, inner = _delegate_call(module, node)
                call.computing = _computing(inner, index)
                lineage.delegates.append(call)
                lineage._add(inner, index)
        for call in lineage.delegates:  # an output no name reached: the node it returns
            for handle, node in call.returning.items():
                if handle in lineage.nodes_of_handle or not isinstance(node, torch.fx.Node):
                    continue
                names = index.by_name(node)
                how = "name" if names else "source"
                names = names or index.by_source(node)
                if names:
                    lineage.nodes_of_handle[handle] = names
                    lineage.how_of_handle[handle] = how
        return lineage

    def _add(self, module: Any, index: "ExportedIndex") -> None:
        unmatched: dict = {}
        for node in module.graph.nodes:
            handle = node.meta.get("debug_handle")
            if node.op != "call_function" or not isinstance(handle, int):
                continue
            self.edge_ops += 1
            names = index.by_name(node)
            if not names:
                unmatched.setdefault(handle, []).append(node)
                continue
            known = self.nodes_of_handle.setdefault(handle, [])
            known += [name for name in names if name not in known]
            self.how_of_handle[handle] = "name"
        # the last resort, for a handle none of whose nodes is matched by name (a getitem's
        # source is whatever the lowering copied into it: a delegate's output is matched
        # through the node the delegate returns, in `of`)
        for handle, nodes in unmatched.items():
            if handle in self.nodes_of_handle:
                continue
            names = [name for node in nodes if node.target is not operator.getitem
                     for name in index.by_source(node)]
            if names:
                self.nodes_of_handle[handle] = list(dict.fromkeys(names))
                self.how_of_handle[handle] = "source"

    def how(self, handles: Iterable[int], names: Iterable[str]) -> str:
        """How the exported nodes `names` of an op with these handles were matched."""
        found = {self.how_of_handle.get(h) for h in handles
                 if set(names) & set(self.nodes_of_handle.get(h, ()))}
        return "name" if found <= {"name"} else "source"

    def delegated(self, handles: tuple) -> bool:
        """Whether an op's handles are taken by a delegate (an op outside it that shares a
        handle, such as a constant's copy, is not that node's value)."""
        return any(not call.handles.isdisjoint(handles) for call in self.delegates)


def _chain(source: Any) -> list:
    """A `from_node` entry and the entries it came from, nearest first."""
    found = []
    while source is not None:
        found.append(source)
        source = source.from_node[-1] if source.from_node else None
    return found


def _step(source: Any) -> tuple:
    """One provenance step as it survives a copy of its graph: the node's name and the
    pass that made the next one (a graph's id is an object's, and changes with a copy)."""
    return (source.name, getattr(source, "pass_name", None))


@dataclass
class ExportedIndex:
    """The exported program's computing nodes by what identifies them across a copy: name
    and own provenance (`from_node` chains, by names and pass names), and source line with
    module path."""

    names: set
    provenance: set        # {(name, (step, ...))}: a node's name above its own chain
    sources: dict          # (file:line, module path) -> [nodes]

    @classmethod
    def of(cls, exported: Any) -> "ExportedIndex":
        names: set = set()
        provenance: set = set()
        sources: dict = {}
        for node in exported.graph.nodes:
            if node.op != "call_function":
                continue
            names.add(node.name)
            chains = [tuple(_step(s) for s in _chain(entry))
                      for entry in node.meta.get("from_node") or []] or [()]
            provenance.update((node.name, chain) for chain in chains)
            key = _source_key(node)
            if key is not None:
                sources.setdefault(key, []).append(node)
        return cls(names, provenance, sources)

    def by_name(self, node: torch.fx.Node) -> list[str]:
        """The exported nodes `node` was made from: along each of its provenance chains, the
        nearest entry that names an exported node whose own provenance is the rest of it."""
        found = []
        for entry in node.meta.get("from_node") or []:
            chain = _chain(entry)
            steps = [_step(s) for s in chain]
            for position, source in enumerate(chain):
                if source.name in self.names \
                        and (source.name, tuple(steps[position + 1:])) in self.provenance:
                    if source.name not in found:
                        found.append(source.name)
                    break
        return found

    def by_source(self, node: torch.fx.Node) -> list[str]:
        """The exported node of `node`'s source line and module path: the one there, or
        the one of its op among several; none when that does not single one out."""
        key = _source_key(node)
        candidates = self.sources.get(key, []) if key is not None else []
        if len(candidates) > 1:
            candidates = [c for c in candidates if _op_name(c) == _op_name(node)]
        return [candidates[0].name] if len(candidates) == 1 else []


def _source_key(node: torch.fx.Node) -> tuple | None:
    where = source_location(node.meta.get("stack_trace"))
    return None if where is None else (where, module_path(node.meta.get("nn_module_stack")))


def _op_name(node: torch.fx.Node) -> str:
    """`aten.tanh.default` of an ATen op and of its edge dialect op alike."""
    return str(getattr(node.target, "_op", node.target))


def _computing(module: Any, index: "ExportedIndex") -> list[str]:
    """The exported nodes a delegate's graph computes: the provenance of its ops other than
    quantize, dequantize and getitem (whose handles a neighbour's op may share)."""

    found: list[str] = []
    for node in module.graph.nodes:
        if node.op == "call_function" and node.target is not operator.getitem \
                and _namespace(node) not in UNJUDGED_NAMESPACES:
            names = index.by_name(node) or index.by_source(node)
            found += [n for n in names if n not in found]
    return found


def _delegate_call(module: Any, node: torch.fx.Node) -> tuple[DelegateCall, object]:
    """The delegate call and the graph module of what it took."""
    lowered = getattr(module, node.args[0].target)
    inner = lowered.original_module.graph_module
    # the handles of the ops it computes: a placeholder of its graph carries the handle
    # of the op outside that feeds it (a portable op between two calls), not the call's
    handles = frozenset(n.meta["debug_handle"] for n in inner.graph.nodes
                        if n.op == "call_function"
                        and isinstance(n.meta.get("debug_handle"), int))
    outputs = sorted((user.args[1], user.meta.get("debug_handle")) for user in node.users
                     if getattr(user.target, "__name__", "") == "getitem")
    call = DelegateCall(lowered.backend_id, handles, [handle for _, handle in outputs])
    returned = _user_outputs(lowered.original_module)
    call.returning = {handle: returned[index] for index, handle in outputs
                      if isinstance(index, int) and index < len(returned)}
    return call, inner


def _user_outputs(program: Any) -> list:
    """The nodes a program returns as its user outputs, in order (a getitem: the node it
    reads)."""
    output = next(n for n in program.graph.nodes if n.op == "output")
    values = list(output.args[0]) if isinstance(output.args[0], (list, tuple)) \
        else [output.args[0]]
    kinds = [spec.kind.name for spec in program.graph_signature.output_specs]
    found = [v for v, kind in zip(values, kinds, strict=False) if kind == "USER_OUTPUT"]
    return [v.args[0] if isinstance(v, torch.fx.Node) and v.target is operator.getitem
            else v for v in found]


@dataclass
class ProgramMaps:
    """The serialized program's maps from instruction to debug handles (and delegate
    identifiers), as ExecuTorch's ETRecord keeps them."""

    debug_handles: dict
    delegates: dict
    outputs: dict

    @classmethod
    def of(cls, executorch_program: Any) -> "ProgramMaps":
        return cls(executorch_program.debug_handle_map, executorch_program.delegate_map,
                   executorch_program.instruction_id_to_num_outs_map)


@dataclass
class Target:
    """What is being localized: the lowered program and where it came from."""

    pte: bytes
    exported: Any               # torch.export.ExportedProgram before lowering
    edge_program: Any           # the lowered edge program (for the Inspector's op graph)
    lineage: Lineage
    maps: ProgramMaps


def one_node_per_partition(inner: Any, only: set | None = None, exported: Any = None,
                           groups: dict | None = None) -> Any:
    """A partitioner that delegates what `inner` delegates, one node per partition: each
    delegated op becomes its own delegate call. A getitem goes with the node it reads, a
    dequantize, or an op on constants only (a weight's), with the op it feeds and a
    quantize with the op it follows (a quantized pattern stays whole), a tagged constant
    with the first node that uses it. With `only` (exported node names) and `exported`,
    the culprit first: only the partitions holding one of those nodes (tied to them by
    name along the provenance chain, or source) are split, the others stay whole, so the
    lowering compiles one call per node of the culprit partition, not of the program
    (all are split when none is found). With `groups` too (exported node name -> label),
    a culprit node of a labelled name goes in one call per label instead of its own.
    (Made on first use: executorch is imported only once a program is lowered.)"""
    from executorch.exir.backend.partitioner import Partitioner, PartitionResult

    index = ExportedIndex.of(exported) if only and exported is not None else None

    class OneNodePerPartition(Partitioner):
        def __init__(self) -> None:
            super().__init__(getattr(inner, "spec", {}))

        def ops_to_not_decompose(self, ep: Any) -> Any:
            return inner.ops_to_not_decompose(ep)

        def partition(self, exported_program: Any) -> Any:
            result = inner.partition(exported_program)
            graph = result.tagged_exported_program.graph_module.graph
            tags: dict = {}
            own: dict = {}
            tagged = [n for n in graph.nodes
                      if n.op == "call_function" and n.meta.get("delegation_tag") is not None]
            weights = _constant_nodes(exported_program)
            culprits = None if index is None else {
                n.meta["delegation_tag"] for n in tagged
                if set(index.by_name(n) or index.by_source(n)) & set(only or ())} or None
            if culprits is not None:  # the other partitions stay whole
                for node in tagged:
                    tag = node.meta["delegation_tag"]
                    if tag not in culprits:
                        tags[tag] = result.partition_tags[tag]
                tagged = [n for n in tagged if n.meta["delegation_tag"] in culprits]
            for node in tagged:  # each computing op its own partition (or its group's)
                if node.target is operator.getitem or _is_qdq(node) or node in weights:
                    continue
                label = next((groups[n] for n in index.by_name(node) or index.by_source(node)
                              if n in groups), None) if groups and index is not None else None
                own[node] = f"{node.meta['delegation_tag']}_node{len(tags)}" if label is None \
                    else f"{node.meta['delegation_tag']}_{label}"
                tags[own[node]] = result.partition_tags[node.meta["delegation_tag"]]
            # q/dq with the op they belong to, a getitem with its source; twice, so that
            # a quantize whose partition is its dequantize's finds it the second time
            for node in [*tagged, *tagged]:
                if node in own:
                    continue
                if node in weights or "dequantize" in str(node.target):
                    near = list(node.users)      # a dequantize or a weight's op: its user
                else:
                    near = [node.args[0]] if node.args else []   # a quantize: its producer
                found = next((own[n] for n in near if n in own), None)
                if found is None:  # a q/dq between two others' ops: the producer's side
                    found = next((own[n] for n in (*node.users, *node.all_input_nodes)
                                  if n in own), None)
                if found is not None:
                    own[node] = found
            for node in tagged:
                if node in own:
                    node.meta["delegation_tag"] = own[node]
                else:
                    del node.meta["delegation_tag"]
            for node in graph.nodes:
                if node.meta.get("delegation_tag") is not None and node.op != "call_function" \
                        and (culprits is None or node.meta["delegation_tag"] in culprits):
                    user = next((u for u in node.users if u in own), None)
                    if user is None:
                        del node.meta["delegation_tag"]
                    else:
                        node.meta["delegation_tag"] = own[user]
            return PartitionResult(tagged_exported_program=result.tagged_exported_program,
                                   partition_tags=tags)

    return OneNodePerPartition()


def _constant_nodes(exported_program: Any) -> set:
    """The nodes computed from constants only (parameters, buffers, lifted constants): a
    weight's dequantize or reshape, which a backend wants in the partition of its user."""
    signature = exported_program.graph_signature
    constant_names = {*signature.inputs_to_parameters, *signature.inputs_to_buffers,
                      *signature.inputs_to_lifted_tensor_constants}
    found: set = set()
    for node in exported_program.graph.nodes:
        if node.op == "placeholder" and node.name in constant_names:
            found.add(node)
        elif node.op == "call_function" and node.all_input_nodes \
                and all(n in found for n in node.all_input_nodes):
            found.add(node)
    return found


def _is_qdq(node: torch.fx.Node) -> bool:
    return _namespace(node) in UNJUDGED_NAMESPACES


def not_localized(why: str, started: float, compared: int = 0, method: str = METHOD) -> dict:
    return {"method": method, "localized": False, "reason": f"not localized: {why}",
            "compared": compared, "seconds": round(time.monotonic() - started, 3)}


# A forked localization that has not answered this long after its time limit is killed.
GRACE_SECONDS = 5.0
# True in a process `contained` forked: its own forks stay in its process group, so that
# killing the outermost one's group ends every attempt it started.
_INSIDE = False


def contained(work: Callable[[], dict], time_limit: float, method: str = METHOD) -> dict:
    """`work()` in a forked child, its answer back as JSON: a crash (a signal) or no answer
    within the time limit and a grace is "not localized" by `method` (what `work` was doing),
    never the test's own crash. The outermost child leads a process group: killed, it
    takes the attempts it forked along."""
    global _INSIDE
    started = time.monotonic()
    read_end, write_end = os.pipe()
    leader = not _INSIDE
    pid = os.fork()
    if pid == 0:  # the child: answer, then leave without running the parent's exit code
        if leader:
            os.setpgid(0, 0)
        _INSIDE = True
        os.close(read_end)
        try:
            answer = json.dumps(work(), default=str).encode()
        except BaseException as error:  # noqa: BLE001 - the child must exit either way
            answer = json.dumps(not_localized(f"{type(error).__name__}: {error}",
                                              started, method=method)).encode()
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(answer)
        os._exit(0)
    if leader:
        try:
            os.setpgid(pid, pid)  # as the child does: whichever runs first
        except OSError:
            pass
    os.close(write_end)
    chunks = []
    deadline = started + time_limit + GRACE_SECONDS
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pipe], [], [], max(left, 0))
            if not ready:
                if leader:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return not_localized(f"budget of {time_limit:g} s spent (stopped)", started,
                                     method=method)
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return not_localized(f"the localization run was killed by {name}", started,
                             method=method)
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return not_localized("the localization run gave no answer", started, method=method)


SPLIT = "one node per delegate call"
# A delegate call's exported nodes, kept by `localize` for `localize_deep`'s split only.
INSIDE = "_inside"


def localize_deep(target: Target, runtime: Runtime, inputs: list, rules: RuleBook | Tolerance,
                  time_limit: float, split: Callable[..., Target] | None = None,
                  repro: Callable[..., dict] | None = None,
                  earlier: list | tuple = ()) -> dict:
    """`localize`, then, when a delegate call of several nodes is where it starts, again
    on the program `split()` lowers one node per delegate call, to name the node."""
    started = time.monotonic()
    found = localize(target, runtime, inputs, rules, time_limit, repro, earlier)
    culprit = found.pop(INSIDE, None)
    found["lowerings"] = 1  # the program, lowered again by the caller for its ETDump
    boundary = found.get("boundary") or {}
    if not found.get("localized") or not found.get("delegate") or split is None \
            or boundary.get("nodes", 0) <= 1:
        return found
    found["lowerings"] = 2
    try:
        # the culprit call's partition split, the others whole; a large one halved first
        order = {n.name: i for i, n in enumerate(target.exported.graph.nodes)}
        whole = sorted(set(culprit or ()) & set(order), key=order.__getitem__)
        names, lowerings, halving = _halved(whole, target, runtime, inputs, rules, split,
                                            time_limit - (time.monotonic() - started), earlier)
        found["compared"] += halving
        found["lowerings"] = 2 + lowerings  # the program, the halvings, the split
        program = split(set(whole), _around(whole, names))
        found["split_calls"] = len(program.lineage.delegates)
        inner = localize(program, runtime, inputs, rules, time_limit - (time.monotonic() - started),
                         repro, earlier)
        inner.pop(INSIDE, None)
    except Exception as error:  # noqa: BLE001 - the delegate call stays the answer
        inner = not_localized(f"lowering one node per delegate call failed: "
                              f"{type(error).__name__}: {error}".splitlines()[0][:300], started)
    named = inner.get("localized") and inner.get("node") \
        and (inner.get("boundary") or {}).get("nodes") == 1
    if not named:
        why = inner.get("reason") or "not localized: the split program failed elsewhere"
        verdict, _, rest = why.partition(": ")
        found["inside"] = f"{verdict} inside ({SPLIT}): {rest}"
        found["seconds"] = round(time.monotonic() - started, 3)
        return found
    matches = {how: list(names) for how, names in found.get("matches", {}).items()}
    for how, names in inner.get("matches", {}).items():
        matches[how] = [*matches.get(how, []), *(n for n in names if n not in matches.get(how, []))]
    inner.update(method=f"{METHOD}, {SPLIT}", within=boundary,
                 split_calls=found.get("split_calls"),
                 compared=found["compared"] + inner["compared"], matches=matches,
                 lowerings=found["lowerings"], seconds=round(time.monotonic() - started, 3))
    return inner


# A culprit partition of more computing nodes than this is halved (lowered as two calls,
# the half whose call is first off the rule kept) until it has this many at most, then
# split one node per call: log2(nodes) lowerings of a few calls each, not one of a call
# per node.
HALVING_ABOVE = 8


def _around(whole: list, names: list) -> dict:
    """Groups for `one_node_per_partition`: the culprit partition's nodes before `names`
    one call, those after another, `names` one call each (a contiguous run of a
    topological order, so each group is a valid partition)."""
    if len(names) == len(whole):
        return {}
    first, last = whole.index(names[0]), whole.index(names[-1])
    return {**{n: "before" for n in whole[:first]}, **{n: "after" for n in whole[last + 1:]}}


def _halved(whole: list, target: Target, runtime: Runtime, inputs: list,
            rules: RuleBook | Tolerance, split: Callable[..., Target], time_limit: float,
            earlier: list | tuple) -> tuple[list, int, int]:
    """The run of the culprit partition's nodes (in graph order) that holds the first
    node off the rule, narrowed by halves while it has more than HALVING_ABOVE; the
    lowerings that took and the values they compared. Stops where a halving's answer is
    not one of its two halves."""
    started = time.monotonic()
    names, lowerings, compared = whole, 0, 0
    while len(names) > HALVING_ABOVE and time.monotonic() - started < time_limit:
        middle = len(names) // 2
        first, second = names[:middle], names[middle:]
        groups = {**_around(whole, names), **{n: "first_half" for n in first},
                  **{n: "second_half" for n in second}}
        lowerings += 1
        answer = localize(split(set(whole), groups), runtime, inputs, rules,
                          time_limit - (time.monotonic() - started), None, earlier)
        inside = set(answer.pop(INSIDE, None) or ())
        compared += answer.get("compared", 0)
        if not answer.get("localized") or not inside:
            break
        if inside <= set(first):
            names = first
        elif inside <= set(second):
            names = second
        else:
            break
    return names, lowerings, compared


def localize(target: Target, runtime: Runtime, inputs: list, rules: RuleBook | Tolerance,
             time_limit: float, repro: Callable[..., dict] | None = None,
             earlier: list | tuple = ()) -> dict:
    """The record's `localization` (keys in contract/record.py): the first exported node in
    execution order whose runtime output fails `rules`, within `time_limit` seconds. With
    `repro`, a named node's op is then lowered alone on its captured inputs (repro.py)."""
    started = time.monotonic()
    compared = 0
    matches: dict = {}
    try:
        if not isinstance(runtime, ExecuTorchRuntime):
            raise NotLocalized(f"the program ran on {runtime.name}; intermediates are read "
                               f"from this host's ExecuTorch runtime")
        clock = _TimeLimit(time_limit, started)
        clock.check("start")
        eager = eager_intermediates(target.exported, inputs, earlier)
        clock.check("the eager run")
        run = runtime_run(target, inputs, earlier)
        events = run.events
        clock.check("the ETDump run")
        nodes = {n.name: n for n in target.exported.graph.nodes}
        order = {name: index for index, name in enumerate(nodes)}
        covered: set = set()
        last_compared: tuple | None = None   # (position, judged) of the last one compared
        for position, event in enumerate(events):
            clock.check(f"{compared} nodes")
            judged = _judge_event(event, target.lineage, nodes, order, eager, rules)
            if judged is None:
                continue
            compared += 1
            last_compared = (position, judged)
            _note(matches, judged)
            covered.update(judged["covers"])
            if judged["matched"]:
                continue
            found = judged["found"]
            unseen = _uncompared_before(target.exported, judged, covered)
            if unseen:
                # The first node compared off the rule is not the first off it when a node
                # it depends on was never compared (its runtime op not matched).
                shown = ", ".join(unseen[:NAMED]) + (", ..." if len(unseen) > NAMED else "")
                first = found.get("node") or (found.get("boundary") or {}).get("first")
                return {**could_not_compare(
                    f"the first node compared off the rule, {first}, depends on "
                    f"{len(unseen)} computing nodes that were not compared ({shown})",
                    started, compared), "matches": matches, "uncovered": len(unseen),
                    "first_off_the_rule": {k: found.get(k) for k in
                                           ("node", "target", "source", "delegate")}}
            if repro is not None and found.get("node"):
                clock.check("the minimal repro")
                found["repro"] = _repro(repro, nodes[found["node"]], eager, started + time_limit)
            found.update(method=METHOD, localized=True, compared=compared, matches=matches,
                         reference=_reference(target.exported),
                         seconds=round(time.monotonic() - started, 3))
            return found
        after = _after_the_last_compared(target, run, last_compared, covered, eager, rules)
        if after is not None:
            after.update(compared=compared, matches=matches,
                         reference=_reference(target.exported),
                         seconds=round(time.monotonic() - started, 3))
            return after
        return _nothing_off_the_rule(target, len(events), compared, covered, matches, started)
    except NotLocalized as why:
        return {**not_localized(str(why), started, compared), "matches": matches}
    except Unreadable as unreadable:
        # No value of the run could be read: nothing compared is no verdict, and the next
        # method (bisection, which judges each prefix's own outputs) goes on.
        halves = [note["node"] for note in unreadable.notes]
        shown = ", ".join(halves[:NAMED]) + (", ..." if len(halves) > NAMED else "")
        held = (f"; {len(halves)} of its ops output float16 or bfloat16 values ({shown}), "
                f"which this executorch's ETDump cannot give back") if halves else ""
        return {**could_not_compare(f"the runtime's ETDump could not be read "
                                    f"({unreadable.why}){held}", started, compared),
                "matches": matches, "unreadable": unreadable.notes}
    except Exception as error:  # noqa: BLE001 - localizing must never change a verdict
        text = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        return {**not_localized(text, started, compared), "matches": matches}


def _after_the_last_compared(target: Target, run: RuntimeRun, last_compared: tuple | None,
                             covered: set, eager: dict, rules: RuleBook | Tolerance
                             ) -> dict | None:
    """Every compared intermediate within the rule, covering every computing node the
    outputs depend on, and yet the program's outputs off the rule (judged again, on this
    run): what changed them ran after the last compared value, in a runtime op no exported
    node made (no debug handle: the lowering added it after the handles were given, e.g. a
    layout change at a delegate call's boundary). The first such op logged after the last
    compared one is where it starts (`added`, `after`: the node whose value it follows);
    None when the outputs are within the rule or nothing was compared or covered."""
    if last_compared is None \
            or any(n not in covered for n in output_ancestors(target.exported)):
        return None
    expected = _user_outputs_eagerly(target.exported, eager)
    actual = [o for o in run.outputs if isinstance(o, torch.Tensor)]
    actual = actual[len(actual) - len(expected):]
    if not expected or len(actual) != len(expected):
        return None
    comparison = compare_outputs(expected, actual, rules)
    if comparison.matched:
        return None
    position, judged = last_compared
    added = [e for e in run.events[position + 1:] if not e.handles and e.delegate is None]
    found = judged["found"]
    follows = {"node": found.get("node") or judged["nodes"][-1],
               "delegate": found.get("delegate")}
    if not added:
        raise NotLocalized(
            f"every compared intermediate is within the rule, covering every computing node "
            f"the outputs depend on, yet the program's outputs are off the rule "
            f"({_statistics(comparison)['error']['margin']}); no runtime op ran after the "
            f"last compared value ({follows['node']}) to blame")
    return {"node": None, "target": added[0].name, "inputs": [], "source": None,
            "module": None, **_statistics(comparison), "added": True, "after": follows,
            "method": METHOD, "localized": True}


def _user_outputs_eagerly(exported: Any, eager: dict) -> list:
    """The exported program's user outputs, from its eager intermediates."""
    output = next(n for n in exported.graph.nodes if n.op == "output")
    values = pytree.tree_leaves(output.args[0])
    kinds = [spec.kind.name for spec in exported.graph_signature.output_specs]
    found = [eager.get(v.name) if isinstance(v, torch.fx.Node) else v
             for v, kind in zip(values, kinds, strict=False) if kind == "USER_OUTPUT"]
    return [v for v in found if isinstance(v, torch.Tensor)]


# How many nodes a reason names, at most.
NAMED = 5


def _note(matches: dict, judged: dict) -> None:
    """Keep how each compared node was matched: {"name": [nodes], "source": [nodes]}."""
    known = matches.setdefault(judged["how"], [])
    known += [name for name in judged["nodes"] if name not in known]


def _nothing_off_the_rule(target: Target, events: int, compared: int, covered: set,
                          matches: dict, started: float) -> dict:
    """Every compared intermediate within the rule: "not localized" only when they
    covered every computing node the outputs depend on; otherwise, and when nothing was
    compared, "could not compare" (the next method is tried: `could_not_compare`)."""
    needed = output_ancestors(target.exported)
    missing = [name for name in needed if name not in covered]
    if compared == 0:
        why = (f"no runtime intermediate was matched to a node of the exported program "
               f"({events} logged, {target.lineage.edge_ops} edge ops with a debug handle, "
               f"matched by name along their provenance or by source line)")
    elif missing:
        shown = ", ".join(missing[:NAMED]) + (", ..." if len(missing) > NAMED else "")
        why = (f"{compared} intermediates compared, all within the rule, but {len(missing)} "
               f"of the {len(needed)} computing nodes the outputs depend on were not "
               f"({shown})")
    else:
        text = (f"all {compared} compared intermediates are within the rule, covering all "
                f"{len(needed)} computing nodes the outputs depend on")
        if _reference(target.exported).startswith("fake-quantized"):
            text = QUANTIZATION_ERROR.format(text)
        return {**not_localized(text, started, compared), "matches": matches}
    return {**could_not_compare(why, started, compared), "matches": matches,
            "uncovered": len(missing)}


COULD_NOT_COMPARE = "could not compare: "


def could_not_compare(why: str, started: float, compared: int = 0,
                      method: str = METHOD) -> dict:
    """No verdict from nothing: the intermediates did not cover the failure, and the
    next method may."""
    return {"method": method, "localized": False, "reason": f"{COULD_NOT_COMPARE}{why}",
            "compared": compared, "seconds": round(time.monotonic() - started, 3)}


def _uncompared_before(exported: Any, judged: dict, covered: set) -> list[str]:
    """The computing nodes the value just found off the rule depends on that no compared
    intermediate covered (nodes inside its own delegate call count as covered)."""
    nodes = [n for n in exported.graph.nodes if n.name in set(judged["nodes"])]
    before = output_ancestors(exported, nodes)
    return [name for name in before if name not in covered]


# Ops whose output is their input's value, which a lowering may drop without a runtime op
# of their own: never "not compared".
IDENTITIES = frozenset({"aten.clone.default", "aten.alias.default", "aten.detach.default",
                        "aten.dropout.default", "aten.contiguous.default",
                        "aten.lift_fresh_copy.default"})


def output_ancestors(exported: Any, ends: list | None = None) -> list[str]:
    """The exported program's computing nodes the user outputs (or the nodes `ends`,
    themselves left out) depend on, in graph order: call_function nodes with a tensor
    value, other than quantize/dequantize, getitem, identities and the ops on constants
    only (a weight's reshape)."""
    if ends is None:
        signature = exported.graph_signature
        user = {spec.arg.name for spec in signature.output_specs
                if spec.kind.name == "USER_OUTPUT" and hasattr(spec.arg, "name")}
        output = next(n for n in exported.graph.nodes if n.op == "output")
        stack = [n for n in output.all_input_nodes if n.name in user]
    else:
        stack = [n for end in ends for n in end.all_input_nodes]
    seen: set = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.all_input_nodes)
    constants = _constant_nodes(exported)
    return [n.name for n in exported.graph.nodes if n in seen and n.op == "call_function"
            and n.target is not operator.getitem and not _is_qdq(n) and n not in constants
            and str(n.target) not in IDENTITIES
            and any(isinstance(v, torch.Tensor) for v in flatten_tensors(n.meta.get("val")))]


def _reference(exported: Any) -> str:
    """What each node was judged against: a quantized flow's exported program holds its
    quantize and dequantize ops, so run eagerly it is the fake-quantized model, and a node
    is blamed for the backend's error, not for the quantization the recipe asked for."""
    quantized = any(n.op == "call_function" and _namespace(n) in UNJUDGED_NAMESPACES
                    for n in exported.graph.nodes)
    return "fake-quantized exported program, run eagerly" if quantized \
        else "exported program, run eagerly"


def _repro(repro: Callable[..., dict], node: torch.fx.Node, eager: dict, deadline: float) -> dict:
    try:
        return repro(node, eager, deadline)
    except Exception as error:  # noqa: BLE001 - the localization stands without it
        return {"op": str(node.target), "reproduces": None,
                "error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}


@dataclass
class _TimeLimit:
    """Localization's time limit (--localize-seconds). Its reason still says "budget of N s
    spent": a record's words, kept as they were."""

    seconds: float
    started: float

    def check(self, where: str) -> None:
        if time.monotonic() - self.started > self.seconds:
            raise NotLocalized(f"budget of {self.seconds:g} s spent (at {where})")


def eager_intermediates(exported: Any, inputs: list, earlier: list | tuple = ()) -> dict:
    """Every node's output of the exported graph run eagerly on the flat program inputs,
    by node name. The model's parameters, buffers and constants come as `nn.Parameter`
    (not trainable): the minimal repro keeps them as its module's weights (repro.OneOp).
    A stateful program runs the `earlier` steps' inputs first, each step's buffer
    mutations (outputs of the functional graph) becoming the next step's buffers."""
    signature = exported.graph_signature
    state = {spec.target: _weight(exported.state_dict[spec.target])
             for spec in signature.input_specs if spec.kind.name in ("PARAMETER", "BUFFER")
             and spec.target in exported.state_dict}
    values: dict = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node: torch.fx.Node) -> Any:
            value = super().run_node(node)
            if node.op in ("call_function", "placeholder"):
                values[node.name] = value
            return value

    for step in [*earlier, inputs]:
        values.clear()
        user = iter(step)
        args = []
        for spec in signature.input_specs:
            if spec.kind.name == "USER_INPUT":
                args.append(next(user))
            elif spec.target in state:
                args.append(state[spec.target])
            elif spec.target in exported.constants:
                args.append(_weight(exported.constants[spec.target]))
            else:
                raise NotLocalized(f"no value for the exported program's input "
                                   f"{spec.arg.name}")
        with torch.no_grad():
            outputs = Recorder(exported.graph_module).run(*args)
        for spec, value in zip(signature.output_specs, pytree.tree_leaves(outputs), strict=False):
            if spec.kind.name == "BUFFER_MUTATION":
                state[spec.target] = _weight(value)
    return values


def _weight(value: Any) -> Any:
    """A model's tensor as a non-trainable `nn.Parameter` (other values as they are)."""
    if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
        return torch.nn.Parameter(value, requires_grad=False)
    return value


@dataclass
class RuntimeEvent:
    """One op's outputs as the runtime logged them, in execution order."""

    handles: tuple
    outputs: list
    delegate: str | None     # the backend of a delegate call
    name: str = ""           # the runtime's name of the op, e.g. `native_call_flip.out`


@dataclass
class RuntimeRun:
    """What the ETDump run gave: its events (an op with no debug handle, which no node of
    the edge program made, has `handles` ()), and the program's outputs."""

    events: list
    outputs: list


def runtime_intermediates(target: Target, inputs: list,
                          earlier: list | tuple = ()) -> list[RuntimeEvent]:
    """The events of `runtime_run`."""
    return runtime_run(target, inputs, earlier).events


def runtime_run(target: Target, inputs: list, earlier: list | tuple = ()) -> RuntimeRun:
    """Run the program with ETDump intermediate outputs on (after the `earlier` steps, on
    the same loaded method, for a stateful program); the last event of each set of debug
    handles (an op decomposed into several keeps its final value), and every op without
    one, in execution order, and the program's outputs."""
    from executorch.devtools import Inspector
    from executorch.devtools.etrecord import ETRecord
    from executorch.runtime import Runtime

    size = _buffer_size(target.exported)
    program = Runtime.get().load_program(target.pte, enable_etdump=True, debug_buffer_size=size)
    method = program.load_method("forward")
    outputs: list = []
    for step in [*earlier, inputs]:
        outputs = list(method.execute(step))
    with tempfile.TemporaryDirectory(prefix="etsuite-localize-") as folder:
        etdump, debug = os.path.join(folder, "run.etdp"), os.path.join(folder, "debug.bin")
        program.write_etdump_result_to_file(etdump, debug)
        # An ETRecord as a saved one reads: the maps' keys as JSON strings. Built in memory,
        # which spares serializing the programs.
        record = ETRecord(
            edge_dialect_program=target.edge_program,
            _debug_handle_map=_json(target.maps.debug_handles),
            _delegate_map=_json(target.maps.delegates),
            _instruction_id_to_num_outs_map=_json(target.maps.outputs))
        try:
            with _last_iteration_only(bool(earlier)):
                inspector = Inspector(etdump_path=etdump, debug_buffer_path=debug,
                                      etrecord=record)
        except NotLocalized:
            raise
        except Exception as error:  # noqa: BLE001 - said per op, and the next method goes on
            raise Unreadable(target.exported, error) from error
    last: dict[tuple, tuple[int, RuntimeEvent]] = {}
    position = 0
    for block in inspector.event_blocks:
        for event in block.events:
            position += 1
            if event.name == "OPERATOR_CALL" or not event.debug_data or event.is_delegated_op:
                continue
            handles = () if event.debug_handles is None \
                else (event.debug_handles,) if isinstance(event.debug_handles, int) \
                else tuple(event.debug_handles)
            delegate = event.delegate_backend_name if event.name == "DELEGATE_CALL" else None
            values = list(event.debug_data)
            if delegate is not None:  # a delegate call logs its inputs, then its outputs
                values = values[len(values) - event.num_outputs:]
            key = handles or ("no handle", position)
            last[key] = (position, RuntimeEvent(handles, values, delegate, str(event.name)))
    return RuntimeRun([event for _, event in sorted(last.values(), key=lambda pair: pair[0])],
                      outputs)


@contextlib.contextmanager
def _last_iteration_only(wanted: bool) -> Iterator[None]:
    """The Inspector takes repeated executions of a method (one ETDump run each) as
    iterations that must log the same values; a step sequence's steps log different
    values, and the last step's are wanted. While `wanted`, the ETDump it reads keeps its
    last run only (through the private loader it calls, checked on executorch 1.5.1;
    another version may lack it)."""
    if not wanted:
        yield
        return
    from executorch.devtools.inspector import _inspector

    original = getattr(_inspector, "gen_etdump_object", None)
    if original is None:
        raise NotLocalized("this executorch's Inspector cannot read one step of several")

    def last_run(*args: Any, **kwargs: Any) -> Any:
        etdump = original(*args, **kwargs)
        etdump.run_data = etdump.run_data[-1:]
        return etdump

    _inspector.gen_etdump_object = last_run
    try:
        yield
    finally:
        _inspector.gen_etdump_object = original


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _buffer_size(exported: Any) -> int:
    total = 0
    for node in exported.graph.nodes:
        for value in flatten_tensors(node.meta.get("val")):
            if isinstance(value, torch.Tensor):
                try:
                    total += int(value.numel()) * value.element_size()
                except Exception:  # noqa: BLE001 - a symbolic size: counted at its hint below
                    total += value.element_size() * 4096
    size = BUFFER_FACTOR * total + BUFFER_SLACK
    if size > BUFFER_CAP:
        raise NotLocalized(f"the intermediates need about {size / 2**20:.0f} MB of debug "
                           f"buffer, more than {BUFFER_CAP / 2**20:.0f} MB")
    return size


def _judge_event(event: RuntimeEvent, lineage: Lineage, nodes: dict, order: dict,
                 eager: dict, rules: RuleBook | Tolerance) -> dict | None:
    """Judge one runtime event against the eager value of the node it came from; None when
    it has no exported node to compare with."""
    if event.delegate is not None:
        return _judge_delegate(event, lineage, nodes, order, eager, rules)
    if lineage.delegated(event.handles):
        return None
    names = sorted({name for h in event.handles for name in lineage.nodes_of_handle.get(h, [])
                    if name in eager}, key=order.__getitem__)
    if not names:
        return None
    node = nodes[names[-1]]  # several exported nodes fused into one op: the last one's value
    if _namespace(node) in UNJUDGED_NAMESPACES:
        return None
    expected = [t for t in flatten_tensors(eager[node.name]) if isinstance(t, torch.Tensor)]
    actual = [t for t in event.outputs if isinstance(t, torch.Tensor)]
    actual = actual[len(actual) - len(expected):]
    if not expected or len(actual) != len(expected) \
            or any(e.shape != a.shape for e, a in zip(expected, actual, strict=True)):
        return None  # not this node's value (an op the lowering added under its handle)
    comparison = compare_outputs(expected, actual, rules)
    found = {**_describe(node, comparison), "matched_by": lineage.how(event.handles, [node.name])}
    return {"matched": comparison.matched, "found": found, "nodes": [node.name],
            "covers": names, "how": found["matched_by"]}


def _judge_delegate(event: RuntimeEvent, lineage: Lineage, nodes: dict, order: dict,
                    eager: dict, rules: RuleBook | Tolerance) -> dict | None:
    call = _call_of(event, lineage)
    if call is None or len(call.output_handles) != len(event.outputs):
        return None
    expected, actual, compared = [], [], []
    for handle, output in zip(call.output_handles, event.outputs, strict=True):
        names = [n for n in lineage.nodes_of_handle.get(handle, []) if n in eager]
        if not names:
            return None
        node = nodes[_output_node(names, output, eager, order)]
        compared.append(node.name)
        value = eager[node.name]
        if _is_quantize(node) and isinstance(output, torch.Tensor) \
                and not output.is_floating_point():
            # A call that ends in a quantize (one node per call of a quantized graph)
            # returns integers: both sides dequantized with that quantize's parameters are
            # what the flow's rule judges (in steps of the quantized range).
            value, output = _dequantized(node, value, eager), _dequantized(node, output, eager)
        expected.append(value)
        actual.append(output)
    comparison = compare_outputs(expected, actual, rules)
    ran = frozenset(event.handles)  # the ops the call ran (its graph may name a neighbour's)
    inside = sorted({name for h in ran for name in lineage.nodes_of_handle.get(h, [])
                     if name in order}, key=order.__getitem__)
    found = {"delegate": call.backend,
             "boundary": {"first": inside[0] if inside else None,
                          "last": inside[-1] if inside else None, "nodes": len(inside)},
             "node": None, **_statistics(comparison)}
    computing = [name for name in call.computing if name in nodes]
    how = lineage.how(call.output_handles, compared)
    found[INSIDE] = [*computing, *(n for n in inside if n not in computing)]
    if len(computing) == 1:  # a call of one op (besides q/dq): that op is the node
        found.update(_describe(nodes[computing[0]], comparison))
        found["boundary"] = {"first": computing[0], "last": computing[0], "nodes": 1}
    found["matched_by"] = how
    # its outputs right: the nodes it computes are, on these inputs
    return {"matched": comparison.matched, "found": found, "nodes": compared,
            "covers": [*compared, *computing, *inside], "how": how}


def _output_node(names: list, output: Any, eager: dict, order: dict) -> str:
    """Of the exported nodes a delegate output's handle came from (a fused op and its
    quantize and dequantize share one), the last whose eager value has the output's dtype;
    the last of all when none has."""
    dtype = getattr(output, "dtype", None)
    same = [n for n in names if getattr(eager[n], "dtype", None) == dtype]
    return max(same or names, key=order.__getitem__)


def _is_quantize(node: torch.fx.Node) -> bool:
    return _namespace(node) in UNJUDGED_NAMESPACES and ".quantize_per" in str(node.target)


def _dequantized(quantize: torch.fx.Node, value: torch.Tensor, eager: dict) -> torch.Tensor:
    """`value` dequantized by the dequantize that mirrors `quantize` (same parameters)."""
    dequantize = resolve(str(quantize.target).replace(".quantize_per", ".dequantize_per"))
    parameters = [eager[a.name] if isinstance(a, torch.fx.Node) else a
                  for a in quantize.args[1:]]
    return dequantize(value, *parameters)


def resolve(name: str) -> Any:
    """`aten.sin.default` -> torch.ops.aten.sin.default."""
    return functools.reduce(getattr, name.split("."), torch.ops)


def _call_of(event: RuntimeEvent, lineage: Lineage) -> DelegateCall | None:
    """The delegate call a DELEGATE_CALL event is: the one whose handles are the event's,
    else the one that holds them and whose outputs are among them (a call's graph may
    carry the handle of the node that feeds it, so neighbours' handle sets overlap)."""
    ran = frozenset(event.handles)
    exact = [c for c in lineage.delegates if c.handles == ran]
    if exact:
        return exact[0]
    holding = [c for c in lineage.delegates if ran <= c.handles
               and set(c.output_handles) <= ran]
    return holding[0] if len(holding) == 1 else None


def _namespace(node: torch.fx.Node) -> str:
    """`aten`, `quantized_decomposed`, ...: of an ATen op or an edge dialect op alike."""
    namespace = getattr(node.target, "namespace", None)  # OpOverload and EdgeOpOverload
    return namespace if isinstance(namespace, str) else str(node.target).split(".", 1)[0]


def _describe(node: torch.fx.Node, comparison: Comparison) -> dict:
    return {**describe(node), **_statistics(comparison)}


def describe(node: torch.fx.Node) -> dict:
    """A node as the record names it: name, op, input shapes and dtypes, where it came
    from in the user's code."""
    inputs = []
    for value in pytree.tree_leaves((node.args, node.kwargs)):
        fake = value.meta.get("val") if isinstance(value, torch.fx.Node) else None
        if isinstance(fake, torch.Tensor):
            inputs.append({"shape": [int(d) if isinstance(d, int) else str(d) for d in fake.shape],
                           "dtype": str(fake.dtype).removeprefix("torch.")})
    return {"node": node.name, "target": str(node.target), "inputs": inputs,
            "source": source_location(node.meta.get("stack_trace")),
            "module": module_path(node.meta.get("nn_module_stack"))}


def _statistics(comparison: Comparison) -> dict:
    """The deciding output's error against its bound, as the record's outputs say it."""
    judged = [s for s in comparison.statistics if s.judged]
    worst = max(judged, key=lambda s: float("inf") if s.error_ratio is None else s.error_ratio,
                default=None)
    return {"error": {**(worst.to_dict() if worst is not None else {}),
                      "margin": comparison.margin or comparison.message}}


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def source_location(stack_trace: str | None) -> str | None:
    """`file:line` of the innermost frame of the user's code in a node's stack trace
    (frames of torch itself are passed over)."""
    frames = _FRAME.findall(stack_trace or "")
    own = [(path, line) for path, line in frames if f"{os.sep}torch{os.sep}" not in path]
    if not own:
        return None
    path, line = own[-1]
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive
        shown = path
    return f"{path if shown.startswith('..') else shown}:{line}"


def module_path(nn_module_stack: dict | None) -> str | None:
    """The module a node was traced in, e.g. `layers.0.attention` ("" at the top)."""
    if not nn_module_stack:
        return None
    path, _ = list(nn_module_stack.values())[-1]
    return re.sub(r"L\['self'\]\.?|\._modules\['([^']+)'\]", r"\1", str(path)).strip(".") or None
