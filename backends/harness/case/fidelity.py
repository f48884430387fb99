"""Two answers for a quantizing flow: is the backend faithful to its own quantized
program, and is that program (the recipe's quantization) accurate enough against fp32.

The *quantized reference* is the program the partitioner receives (PT2E after convert,
before partitioning) run eagerly in PyTorch: its quantize and dequantize ops are
PyTorch's own, so it computes what the recipe asked for without the backend. We run it
eagerly rather than through ExecuTorch's portable and quantized kernels because it needs
nothing lowered (a program the portable kernels cannot load still has a reference) and
because localization already judges each node against the same eager run.

*Backend fidelity* counts each output's error against that reference in steps of the
output's own quantization (scale and zero point of the graph's last dequantize), with
three tests a zero-point or requantization bug cannot pass and a healthy kernel's
rounding does: every element within a few steps, the mean signed error (bias) near zero,
and the slope of backend against reference (gain) near one. The bias and gain tests need
their figure to be both over the rule's bound and clear of the noise of a few elements
(three standard errors), so a four-element output with one rounding difference passes.

*Recipe accuracy* is today's rule against fp32 eager (output_match.py). A backend that
is faithful but whose recipe loses too much gets `fail_recipe_accuracy`; an unfaithful
one `fail_mismatch`. Where no quantized reference exists the record says why, and the
fp32-eager rule alone decides, as before.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from etsuite.backends.harness.case.output_match import Comparison, compare_outputs, flatten_tensors
from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.tolerance import (
    DTYPE_RULES,
    FP32,
    RuleBook,
    Tolerance,
    dtype_name,
)

QUANTIZED_REFERENCE = "quantized program (PT2E convert, before partitioning) run eagerly"
FP32_EAGER = "fp32 eager"
# How many standard errors a bias or a gain must stand clear of before it counts.
SIGNIFICANCE = 3.0
# A gain counts only when it moves the outputs farthest from their mean by at least this
# many units (steps): a slope fitted over a narrow span of codes (a few dozen steps
# wide) wanders by a per cent with a handful of rounding flips, and a
# gain that moves no element by a step is not told apart from rounding (the per-element
# bound judges those elements anyway).
GAIN_MATERIAL_UNITS = 1.0
# Ops between the last dequantize and an output that move values without changing them:
# the output keeps that dequantize's grid.
_GRID_KEEPING = ("view", "reshape", "_unsafe_view", "permute", "transpose", "clone",
                 "squeeze", "unsqueeze", "flatten", "expand", "contiguous", "slice",
                 "select", "alias", "t", "cat", "max_pool2d", "getitem")


@dataclass(frozen=True)
class OutputQuantization:
    """One output's own quantization: the parameters of the dequantize that made it."""

    scale: float
    zero_point: int
    qmin: int
    qmax: int


@dataclass
class QuantizedReference:
    """The quantized program run eagerly, and each flat output's quantization (None: the
    output is computed in float after the last dequantize, or is not a float)."""

    outputs: Any                       # as the calls' reference() returns them
    quantization: list
    module: Any = None                 # runs the quantized program on other inputs
    why_not: str | None = None         # set instead of the rest when none could be built

    @property
    def description(self) -> str:
        return QUANTIZED_REFERENCE if self.why_not is None else f"{FP32_EAGER} ({self.why_not})"


def _op_name(node: Any) -> str:
    target = node.target
    name = getattr(target, "__name__", str(target))
    return name.split(".")[0]


def _constant(node: Any, exported: Any) -> float | None:
    """A dequantize argument: a number, or a scalar tensor the program holds."""
    if isinstance(node, (int, float)):
        return float(node)
    if getattr(node, "op", None) == "get_attr":
        value = getattr(exported.graph_module, str(node.target), None)
    elif getattr(node, "op", None) == "placeholder":
        signature = exported.graph_signature
        key = (signature.inputs_to_buffers.get(node.name)
               or signature.inputs_to_parameters.get(node.name)
               or signature.inputs_to_lifted_tensor_constants.get(node.name))
        value = exported.state_dict.get(key) if key in exported.state_dict \
            else exported.constants.get(key)
    else:
        return None
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.reshape(()))
    return None


def _quantization_of(node: Any, exported: Any, depth: int = 0) -> OutputQuantization | None:
    if depth > 16 or getattr(node, "op", None) != "call_function":
        return None
    target = str(node.target)
    if "dequantize_per_tensor" in target:
        scale, zero_point = (_constant(a, exported) for a in node.args[1:3])
        if scale is None or zero_point is None or not scale > 0:
            return None
        return OutputQuantization(scale, int(zero_point), int(node.args[3]), int(node.args[4]))
    if _op_name(node) in _GRID_KEEPING and node.args:
        first = node.args[0]
        if isinstance(first, (list, tuple)):  # cat: every input on the same grid
            grids = {_quantization_of(a, exported, depth + 1) for a in first}
            return grids.pop() if len(grids) == 1 else None
        return _quantization_of(first, exported, depth + 1)
    return None


def output_quantization(exported: Any) -> list:
    """Each flat output's quantization, read from the quantized program's graph."""
    output = next(n for n in exported.graph.nodes if n.op == "output")
    return [_quantization_of(arg, exported) for arg in flatten_tensors(output.args[0])
            if arg is None or hasattr(arg, "op")]


def build_reference(exported: Any, run: Callable[[Any], Any]) -> QuantizedReference:
    """The quantized reference of a quantized exported program (or a dict of them, one
    per method): `run` calls a module (or a dict of modules) as the test's calls do.
    Never raises: a reference that cannot be built says why."""
    try:
        programs = exported if isinstance(exported, dict) else {"forward": exported}
        modules = {name: copy.deepcopy(p).module() for name, p in programs.items()}
        module = modules if isinstance(exported, dict) else modules["forward"]
        with torch.no_grad():
            outputs = run(module)
        quantization = output_quantization(exported) if not isinstance(exported, dict) \
            else [None] * len(flatten_tensors(outputs))
    except Exception as error:  # noqa: BLE001 - the fp32-eager rule still judges
        return QuantizedReference(None, [], why_not=f"the quantized program did not run "
                                  f"eagerly: {type(error).__name__}: {str(error)[:200]}")
    return QuantizedReference(outputs, quantization, module)


def rerun_reference(reference: QuantizedReference, inputs: tuple) -> QuantizedReference:
    """The same quantized program on other inputs (a failure's rerun)."""
    try:
        with torch.no_grad():
            outputs = reference.module(*inputs)
    except Exception as error:  # noqa: BLE001 - then the fp32-eager rule judges alone
        return QuantizedReference(None, [], why_not=f"the quantized program did not run on "
                                  f"the rerun's inputs: {type(error).__name__}")
    return QuantizedReference(outputs, reference.quantization, reference.module)


@dataclass
class FidelityJudged:
    """The backend against its quantized reference, per flat output."""

    passed: bool
    text: str                                    # the deciding output's figures
    outputs: list = field(default_factory=list)  # one dict per output (the record's)


def _slope(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float] | None:
    """Least-squares slope of y on x and its standard error; None when x is constant."""
    n = x.numel()
    if n < 3:
        return None
    xc = x - x.mean()
    spread = float((xc * xc).sum())
    if spread <= 0:
        return None
    slope = float((xc * (y - y.mean())).sum()) / spread
    residual = y - y.mean() - slope * xc
    error = math.sqrt(float((residual * residual).sum()) / (n - 2) / spread)
    return slope, error


def _saturation(ref_steps: torch.Tensor, got_steps: torch.Tensor,
                quantization: OutputQuantization) -> list[str]:
    """Where the reference sits on an end of the output's integer range, a backend that
    saturates there gives the same code; one that stops a code short (a range narrowed
    by one) differs at most of them, by one step inward. Needs two such elements."""
    problems = []
    codes = torch.round(ref_steps) + quantization.zero_point
    for end, inward in ((quantization.qmax, -1.0), (quantization.qmin, 1.0)):
        at_end = codes == end
        count = int(at_end.sum())
        if count < 2:
            continue
        moved = ((got_steps - ref_steps)[at_end] * inward) > 0.5
        if int(moved.sum()) * 2 > count:
            problems.append(f"{int(moved.sum())} of {count} elements at code {end} come "
                            f"back short of it: the range saturates early")
    return problems


def _significant(value: float, bound: float, standard_error: float) -> bool:
    return abs(value) > bound and abs(value) > SIGNIFICANCE * standard_error


def _judge_one(expected: torch.Tensor, reference: torch.Tensor, actual: torch.Tensor,
               quantization: OutputQuantization | None, rule: Tolerance,
               trends: bool = True) -> dict:
    # A float tail's floor is the float rule of the dtype it is computed in: a bf16
    # output may differ from PyTorch's bf16 by bf16 rounding whatever the quantization.
    float_rule = DTYPE_RULES.get(dtype_name(reference.dtype), FP32)
    ref = reference.detach().to(torch.float64)
    got = actual.detach().to(torch.float64)
    fp32 = expected.detach().to(torch.float64)
    finite = torch.isfinite(ref) & torch.isfinite(got)
    same_special = ((torch.isnan(ref) & torch.isnan(got))
                    | ((ref == got) & ~torch.isfinite(ref)))
    special = int((~finite & ~same_special).sum())
    ref, got, fp32 = ref[finite], got[finite], fp32[finite]
    if quantization is not None:
        unit, unit_name = quantization.scale, "steps"
        bound = rule.fidelity_steps or 0.0
        slack = torch.zeros_like(ref)
    else:  # a float tail: in units of the reference's own quantization error
        own_error = (ref - fp32).abs()
        unit = float(own_error.pow(2).mean().sqrt()) if own_error.numel() else 0.0
        unit_name = "x the reference's rms quantization error"
        value_range = float(ref.max() - ref.min()) if ref.numel() else 0.0
        slack = (float_rule.atol + float_rule.rtol * ref.abs() + float_rule.range_fraction
                 * value_range + rule.fidelity_tail * own_error.max()
                 if own_error.numel() else torch.zeros_like(ref))
        bound = 0.0
    error = got - ref
    scale = unit if unit > 0 else 1.0
    steps = error / scale
    # An element exactly on the bound must not count as beyond it: two float32 values
    # whole steps apart differ by those steps give or take their own rounding, which
    # grows with their magnitude (1.5 and 1.5 + 2 steps of 0.0146 differ by 2.000004
    # steps), so the margin is a few of the output dtype's ulps of each value.
    representation = 2 * torch.finfo(actual.dtype).eps * (ref.abs() + got.abs())
    over = error.abs() > (bound * unit + slack) * (1 + 1e-6) + representation + 1e-12
    result: dict[str, Any] = {
        "unit": unit_name, "elements": int(ref.numel()),
        "max": round(float(steps.abs().max()), 4) if steps.numel() else 0.0,
        "bias": round(float(steps.mean()), 4) if steps.numel() else 0.0,
        "gain": None,
    }
    if quantization is not None:
        result["scale"], result["zero_point"] = quantization.scale, quantization.zero_point
    problems = []
    if int(over.sum()):
        problems.append(f"{int(over.sum())} of {ref.numel()} elements beyond "
                        + (f"{bound:g} steps" if quantization is not None
                           else f"{rule.fidelity_tail:g}x the reference's own error"))
    if special:
        problems.append(f"{special} nan/inf elements differ")
    if quantization is not None:
        problems += _saturation(ref / unit, got / unit, quantization)
    if trends and unit > 0 and steps.numel() >= 2:
        sem = float(steps.std()) / math.sqrt(steps.numel())
        bias_bound = rule.fidelity_bias_steps if quantization is not None \
            else rule.fidelity_tail_bias
        if _significant(result["bias"], bias_bound, sem):
            problems.append(f"bias {result['bias']:+.3g} {unit_name} (bound "
                            f"{bias_bound:g}): an offset, e.g. a zero point off")
        fit = _slope(ref / scale, got / scale)
        if fit is not None:
            result["gain"] = round(fit[0], 5)
            reach = float(((ref - ref.mean()) / scale).abs().max())
            if _significant(fit[0] - 1.0, rule.fidelity_gain, fit[1]) \
                    and abs(fit[0] - 1.0) * reach >= GAIN_MATERIAL_UNITS:
                problems.append(f"gain {fit[0]:.4f} (bound 1 +- {rule.fidelity_gain:g}): a "
                                f"scale, e.g. a requantization multiplier off")
    result["passed"] = not problems
    result["problems"] = problems
    return result


def judge_fidelity(expected: list, reference: list, actual: list, quantization: list,
                   rules: RuleBook, trends: bool = True) -> FidelityJudged:
    """The backend's flat output tensors against the quantized reference's, one by one.
    Integer and bool outputs must be equal; shapes and dtypes are judged by the
    fp32-eager comparison, which runs beside this one."""
    outputs: list[dict | None] = []
    problems: list[str] = []
    if not len(expected) == len(reference) == len(actual):
        return FidelityJudged(False, f"{len(actual)} outputs, the quantized program gives "
                              f"{len(reference)} and eager {len(expected)}", [])
    for index, (want, ref, got) in enumerate(zip(expected, reference, actual, strict=True)):
        if ref.shape != got.shape or ref.dtype != got.dtype:
            outputs.append(None)
            problems.append(f"output {index}: {tuple(got.shape)} {got.dtype} where the "
                            f"quantized program gives {tuple(ref.shape)} {ref.dtype}")
            continue
        if not ref.is_floating_point():
            differ = int((ref != got).sum())
            judged = {"unit": "exact", "elements": ref.numel(), "differ": differ,
                      "passed": differ == 0,
                      "problems": [f"{differ} of {ref.numel()} elements differ"] if differ else []}
        else:
            q = quantization[index] if index < len(quantization) else None
            # Eager may give the same values in another rank (a 0-d result the program
            # returns as [1]): its shape is the program's business, judged beside this.
            want = want.reshape(ref.shape) if want.numel() == ref.numel() else ref
            judged = _judge_one(want, ref, got, q, rules.for_dtype(ref.dtype), trends)
        outputs.append(judged)
        problems += [f"output {index}: {p}" for p in judged["problems"]]
    judged_outputs: list[dict] = [o for o in outputs if o is not None]
    if problems:
        return FidelityJudged(False, "; ".join(problems), outputs)
    worst = max(judged_outputs, key=lambda o: o.get("max", 0.0), default=None)
    text = "no output judged" if worst is None else _summary(worst)
    return FidelityJudged(True, text, outputs)


def _summary(judged: dict) -> str:
    if judged["unit"] == "exact":
        return "integer outputs equal"
    gain = "" if judged.get("gain") is None else f", gain {judged['gain']:.4f}"
    return f"max {judged['max']:.3g} {judged['unit']}, bias {judged['bias']:+.3g}{gain}"


def _tensors(values: Any) -> list:
    """The tensors of flat outputs (a program may also return numbers)."""
    return [t for t in values if isinstance(t, torch.Tensor)]


def _values_only(want: list, got: list) -> bool:
    """Whether flat outputs differ from eager only in float values: the same count,
    shapes and dtypes, and integer and bool outputs equal."""
    if len(want) != len(got):
        return False
    for a, b in zip(want, got, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not a.is_floating_point() and not torch.equal(a, b):
            return False
    return True


@dataclass
class OutputJudgement:
    """The judgement of one subtest's outputs (a compared subtest): its status and what
    the record keeps of it."""

    status: Status
    comparison: Comparison               # the fp32-eager comparison (statistics, rule)
    message: str = ""
    fidelity: FidelityJudged | None = None


def judge(expected: Any, actual: list, rules: RuleBook | Tolerance,
          reference: QuantizedReference | None, trends: bool = True) -> OutputJudgement:
    """The status of one call's outputs: the fp32-eager rule, and for a quantizing flow
    with a quantized reference, backend fidelity first (see the module's docstring).
    `trends=False` leaves out the bias and gain tests (a step sequence judges those over
    all its steps at once: `judge_trends`)."""
    book = rules if isinstance(rules, RuleBook) else RuleBook(rules)
    accuracy = compare_outputs(expected, actual, book)
    if reference is None or reference.why_not is not None \
            or book.base.fidelity_steps is None:
        status = Status.PASS if accuracy.matched else Status.FAIL_MISMATCH
        return OutputJudgement(status, accuracy, accuracy.message)
    want, got = _tensors(flatten_tensors(expected)), _tensors(actual)
    fidelity = judge_fidelity(want, _tensors(flatten_tensors(reference.outputs)), got,
                              reference.quantization, book, trends)
    if not fidelity.passed:
        message = f"backend fidelity (against its {QUANTIZED_REFERENCE}): {fidelity.text}"
        if not accuracy.matched:
            message += f"; against fp32 eager: {accuracy.message}"
        return OutputJudgement(Status.FAIL_MISMATCH, accuracy, message, fidelity)
    if not accuracy.matched and not _values_only(want, got):
        # A count, shape, dtype or integer value that differs from eager is a wrong
        # answer whatever the quantized program says: the fp32-eager rule decides alone.
        return OutputJudgement(Status.FAIL_MISMATCH, accuracy, accuracy.message, fidelity)
    if not accuracy.matched:
        message = (f"recipe accuracy: {accuracy.message}; the backend matches its quantized "
                   f"program ({fidelity.text}): the loss is the recipe's quantization")
        return OutputJudgement(Status.FAIL_RECIPE_ACCURACY, accuracy, message, fidelity)
    return OutputJudgement(Status.PASS, accuracy, "", fidelity)


def judge_trends(expected: list, actual: list, rules: RuleBook | Tolerance,
                 reference: QuantizedReference) -> FidelityJudged | None:
    """A step sequence's bias and gain, each output's elements of every step pooled: a
    kernel's zero point or multiplier acts at every step, while one step's slope over a
    narrow span of codes wanders with its rounding (tested step by step, a healthy
    XNNPACK int8 Llama failed one decode step of nine at a gain of 1.016). None when the
    steps' outputs do not line up (the step-by-step judgement says so)."""
    book = rules if isinstance(rules, RuleBook) else RuleBook(rules)
    per_step = [(_tensors(flatten_tensors(w)), _tensors(flatten_tensors(r)), _tensors(g))
                for w, r, g in zip(expected, reference.outputs, actual, strict=True)]
    counts = {(len(w), len(r), len(g)) for w, r, g in per_step}
    if len(counts) != 1 or len(set(next(iter(counts)))) != 1:
        return None
    pooled: list[list] = [[], [], []]
    for index in range(next(iter(counts))[0]):
        parts = [[w[index], r[index], g[index]] for w, r, g in per_step]
        if any(r.dtype != g.dtype or r.numel() != g.numel() or r.numel() != w.numel()
               for w, r, g in parts):
            return None
        for slot in range(3):
            pooled[slot].append(torch.cat([p[slot].reshape(-1) for p in parts]))
    return judge_fidelity(pooled[0], pooled[1], pooled[2], reference.quantization, book)
