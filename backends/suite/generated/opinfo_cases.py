"""The generated tier's cases: PyTorch's OpInfo sample inputs for the core ATen ops.

A case is one OpInfo sample, named `<opinfo>-<dtype>-<index>` (`add-float32-2`,
`div.floor_rounding-int32-0`): the OpInfo's name (with its variant after a dot), the dtype
its samples were asked for, and the sample's index in `opinfo.sample_inputs("cpu", dtype)`.
With torch seeded as the harness seeds a test, the id regenerates the sample exactly
(`build_case`): shapes and arguments come from the OpInfo, values from torch's RNG.

Which cases exist is data, `opinfo_cases.toml` beside this module, written by
`python -m etsuite.backends.suite.generated.opinfo_cases` (`make generated-cases`):
importing PyTorch's OpInfo database takes seconds, so collection reads the file and never
imports it, and a change of OpInfo cannot break collection. The file also says, for every
OpInfo or sample left out, why. `test/test_generated_cases.py` checks it against the
installed torch.

The choice is bounded and fixed: OpInfos whose name (or `aten_name`) is a core ATen op of
the installed torch, the dtypes in `DTYPES` each OpInfo supports, and at most
`SAMPLES_PER_DTYPE` samples per OpInfo and dtype, spread evenly over its usable samples.
The picks do not depend on the session seed, so a case id means the same at every seed
and expectations can name it; the seed decides the values.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils import _pytree as pytree

DATA_FILE = Path(__file__).resolve().with_name("opinfo_cases.toml")
DTYPES = ("float32", "int32")
SAMPLES_PER_DTYPE = 2
# Sampled with this seed when the case list is built: which samples are usable (their
# structure, not their values) does not depend on it.
SELECTION_SEED = 0

# OpInfos left out by name: what their outputs are cannot be compared with a program's.
UNCOMPARABLE_OPINFOS = {
    "empty": "its output is uninitialized memory: no two runs agree",
    "empty_strided": "its output is uninitialized memory: no two runs agree",
    "randn": "random: the program's draws are not eager's (test_random.py checks its contract)",
}


@dataclass(frozen=True)
class CaseId:
    """What regenerates a case: the OpInfo, the dtype, the sample's index."""

    opinfo: str
    dtype: str
    index: int

    def __str__(self) -> str:
        return f"{self.opinfo}-{self.dtype}-{self.index}"

    @classmethod
    def parse(cls, text: str) -> CaseId:
        opinfo, dtype, index = text.rsplit("-", 2)
        return cls(opinfo, dtype, int(index))


def opinfo_name(opinfo) -> str:
    """The OpInfo's name with its variant (`div.floor_rounding`): unique in op_db."""
    return f"{opinfo.name}.{opinfo.variant_test_name}" if opinfo.variant_test_name else opinfo.name


@functools.cache
def _op_db() -> dict:
    """PyTorch's OpInfo database by name, imported on first use (seconds: never at
    collection)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {opinfo_name(opinfo): opinfo for opinfo in op_db}


def warm() -> None:
    """Import the OpInfo database now (conftest.py: in the parent, before forking)."""
    _op_db()
    _descriptions()


def load_case_ids() -> list[str]:
    """The case ids of the data file, in its order: what collection parametrizes."""
    return list(_descriptions())


def samples(opinfo, dtype: str) -> list:
    """Every sample the OpInfo gives for `dtype` on the CPU, drawn from torch's RNG as it
    stands (the caller seeds it). `set_seed=False`: by default OpInfo reseeds torch,
    random and numpy with one fixed seed before each sample, so every session seed would
    get the same values."""
    return list(opinfo.sample_inputs("cpu", getattr(torch, dtype), set_seed=False))


def build_case(case: str) -> tuple[torch.nn.Module, tuple]:
    """The module and inputs of a case id, drawn from torch's RNG as it stands (the test
    runner fixture has seeded it from the session seed and the case). Raises when the
    installed OpInfo no longer gives the sample the data file describes."""
    wanted = CaseId.parse(case)
    opinfo = _op_db().get(wanted.opinfo)
    if opinfo is None:
        raise LookupError(f"{case}: torch has no OpInfo {wanted.opinfo!r} any more; "
                          "regenerate the case list (make generated-cases)")
    drawn = samples(opinfo, wanted.dtype)
    if wanted.index >= len(drawn):
        raise LookupError(f"{case}: OpInfo {wanted.opinfo!r} gives {len(drawn)} samples "
                          f"for {wanted.dtype}; regenerate the case list (make generated-cases)")
    sample = drawn[wanted.index]
    described = _descriptions().get(case)
    if described is not None and _tensors_of(describe(sample)) != _tensors_of(described):
        raise LookupError(f"{case}: the OpInfo's sample is now {describe(sample)}, the case "
                          f"list says {described}; regenerate it (make generated-cases)")
    return SampleModule(opinfo.op, sample), SampleModule.inputs_of(sample)


@functools.cache
def _descriptions() -> dict[str, str]:
    """Each case id of the data file with its sample's description."""
    with open(DATA_FILE, "rb") as handle:
        return tomllib.load(handle)["cases"]


# Marks where a forward input goes among the sample's arguments (None is an argument).
_INPUT = object()


class SampleModule(torch.nn.Module):
    """`op(sample.input, *sample.args, **sample.kwargs)` as a program: every tensor of
    the sample (tensor lists included) is a forward input, in pytree order; every other
    argument is a constant the module holds. A named tuple or list output becomes a
    tuple."""

    def __init__(self, op, sample):
        super().__init__()
        self.op = op
        leaves, self.spec = pytree.tree_flatten(_call_arguments(sample))
        self.constants = [_INPUT if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]

    @staticmethod
    def inputs_of(sample) -> tuple[torch.Tensor, ...]:
        """The sample's tensors, contiguous: export keeps a non-contiguous input's dim
        order in the program (a channels-last sample of cat gave a channels-last input),
        while the harness hands the runtime contiguous tensors, so the program would
        read them in the wrong order (cat-float32-8 came out wrong on portable)."""
        leaves = pytree.tree_leaves(_call_arguments(sample))
        return tuple(leaf.contiguous() for leaf in leaves if isinstance(leaf, torch.Tensor))

    def forward(self, *tensors):
        given = iter(tensors)
        leaves = [next(given) if constant is _INPUT else constant for constant in self.constants]
        first, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        out = self.op(first, *args, **kwargs)
        return tuple(out) if isinstance(out, (tuple, list)) else out


def _call_arguments(sample) -> tuple:
    return (sample.input, tuple(sample.args), dict(sample.kwargs))


def describe(sample) -> str:
    """The sample in one line (`float32[5,5], float32[5], alpha=2`): tensors by dtype and
    shape (`noncontiguous` when so), other arguments by repr. Stored per case, so a reader
    sees what a case is and a changed OpInfo is noticed."""
    first, args, kwargs = _call_arguments(sample)
    parts = [_describe_value(first)] + [_describe_value(a) for a in args]
    parts += [f"{key}={_describe_value(value)}" for key, value in kwargs.items()]
    return ", ".join(parts)


def _tensors_of(description: str) -> list[str]:
    """The tensors of a description (`float32[5,5]`), in order: what a sample is, whatever
    the seed. Its numbers may be drawn from the RNG (full_like's fill value)."""
    return re.findall(r"\b[a-z0-9]+\[[0-9,]*\]", description)


def _describe_value(value) -> str:
    if isinstance(value, torch.Tensor):
        shape = ",".join(str(size) for size in value.shape)
        layout = "" if value.is_contiguous() else " noncontiguous"
        return f"{str(value.dtype).removeprefix('torch.')}[{shape}]{layout}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe_value(item) for item in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def unusable_reason(opinfo, sample) -> str | None:
    """Why a sample cannot be a program whose outputs are compared with eager's, or
    None. Runs the op eagerly twice on copies of the sample."""
    arguments = _call_arguments(sample)
    tensors = [leaf for leaf in pytree.tree_leaves(arguments) if isinstance(leaf, torch.Tensor)]
    if not tensors:
        return "no tensor argument: the program would have no input"
    if any(t.is_complex() for t in tensors):
        return "complex tensors: ExecuTorch has no complex dtype"
    if any(t.layout != torch.strided for t in tensors):
        return "sparse or other non-strided tensors"
    before = [t.clone() for t in tensors]
    try:
        first = _eager(opinfo, arguments)
        second = _eager(opinfo, pytree.tree_map(
            lambda x: x.clone() if isinstance(x, torch.Tensor) else x, arguments))
    except Exception as error:  # noqa: BLE001 - an OpInfo's error-input samples raise
        return f"eager raises {type(error).__name__}"
    if any(not torch.equal(b, t) for b, t in zip(before, tensors, strict=True)):
        return "mutates an input: the program's functional copy is compared with nothing"
    outputs = first if isinstance(first, tuple) else (first,)
    if not outputs or not all(isinstance(out, torch.Tensor) for out in outputs):
        return "an output is not a tensor"
    if any(out.is_complex() for out in outputs):
        return "complex output: ExecuTorch has no complex dtype"
    again = second if isinstance(second, tuple) else (second,)
    if not all(_same(a, b) for a, b in zip(outputs, again, strict=True)):
        return "two eager calls disagree (random or uninitialized output)"
    return None


def _eager(opinfo, arguments):
    first, args, kwargs = arguments
    with torch.no_grad():
        out = opinfo.op(first, *args, **kwargs)
    return tuple(out) if isinstance(out, (tuple, list)) else out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        torch.equal(a, b) or (a.is_floating_point() and torch.allclose(a, b, 0, 0, equal_nan=True)))


def spread(count: int, cap: int) -> list[int]:
    """Up to `cap` positions out of `count`, evenly spread, first and last included."""
    if count <= cap:
        return list(range(count))
    return sorted({round(k * (count - 1) / (cap - 1)) for k in range(cap)}) if cap > 1 else [0]


def core_op_names() -> set[str]:
    """The op names (`add`, not `add.Tensor`) torch tags core ATen."""
    from etsuite.backends.harness.case.delegation import core_aten_overloads

    return {overload.split(".")[1] for overload in core_aten_overloads()}


def select_cases() -> tuple[dict[str, str], dict[str, str]]:
    """Every case with its description, and every OpInfo, dtype or sample left out with
    why: what the data file holds. Deterministic: torch is seeded per OpInfo and dtype."""
    with torch.random.fork_rng(devices=[]):  # seeds per OpInfo, leaves the caller's RNG
        return _select_cases(core_op_names())


def _select_cases(core: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    cases: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for name, opinfo in sorted(_op_db().items()):
        if opinfo.name not in core and opinfo.aten_name not in core:
            continue
        if name in UNCOMPARABLE_OPINFOS:
            left_out[name] = UNCOMPARABLE_OPINFOS[name]
            continue
        if opinfo.name.endswith("_backward"):
            left_out[name] = "a backward op: inference programs never hold it"
            continue
        supported = opinfo.supported_dtypes("cpu")
        for dtype in DTYPES:
            if getattr(torch, dtype) not in supported:
                continue
            torch.manual_seed(SELECTION_SEED)
            drawn = samples(opinfo, dtype)
            usable = []
            unusable: dict[str, list[int]] = {}
            for index, sample in enumerate(drawn):
                reason = unusable_reason(opinfo, sample)
                if reason is None:
                    usable.append(index)
                else:
                    unusable.setdefault(reason, []).append(index)
            if not drawn:
                left_out[f"{name}-{dtype}"] = "the OpInfo gives no sample"
            elif unusable:
                left_out[f"{name}-{dtype}"] = "; ".join(
                    f"{_index_list(indices)} of {len(drawn)} samples: {reason}"
                    for reason, indices in unusable.items())
            for index in spread(len(usable), SAMPLES_PER_DTYPE):
                cases[str(CaseId(name, dtype, usable[index]))] = describe(drawn[usable[index]])
    return cases, left_out


def _index_list(indices: list[int]) -> str:
    """`#0-26` for a run of consecutive indices, else `#1, #4, #7`."""
    if len(indices) > 2 and indices == list(range(indices[0], indices[-1] + 1)):
        return f"#{indices[0]}-{indices[-1]}"
    return ", ".join(f"#{index}" for index in indices)


def render(cases: dict[str, str], left_out: dict[str, str]) -> str:
    """The data file's text."""
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "# The generated tier's cases (backends/suite/generated/opinfo_cases.py): PyTorch's",
        "# OpInfo samples for the core ATen ops. Written by `make generated-cases`; do not edit.",
        "",
        "[snapshot]",
        f"torch = {quoted(torch.__version__.split('+')[0])}",
        f"dtypes = [{', '.join(quoted(d) for d in DTYPES)}]",
        f"samples_per_dtype = {SAMPLES_PER_DTYPE}",
        "",
        "# case id = OpInfo name (.variant), dtype, sample index: what the sample looks like",
        "[cases]",
    ]
    lines += [f"{quoted(case)} = {quoted(text)}" for case, text in cases.items()]
    lines += ["", "# OpInfos, and samples of an OpInfo and dtype, not used: why", "[left_out]"]
    lines += [f"{quoted(key)} = {quoted(text)}" for key, text in left_out.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DATA_FILE)
    options = parser.parse_args(argv)
    cases, left_out = select_cases()
    options.output.write_text(render(cases, left_out))
    print(f"{len(cases)} cases, {len(left_out)} left out -> {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
