"""Fuzzing the expectations and budgets readers: files assembled by hypothesis from the
pieces such files are made of (headers of every kind, as tables or arrays of tables, the
keys of every kind with values of any TOML type, wildcard patterns, stray bytes), and the
real backends' files cut short or garbled. Each is read by both loaders and, once read,
checked per flow as collection checks it; the only error either may raise is
ExpectationsError (BudgetsError is one), one line naming the file. Any other traceback
fails the target."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from etsuite.backends.harness.flows import budgets as bd
from etsuite.backends.harness.flows import expectations as ex
from etsuite.backends.harness.flows.tolerance import FP32, INT8
from fuzzing import counted, fuzz_settings

REPO = Path(__file__).resolve().parent.parent
REAL = [(REPO / "backends" / name).read_bytes() for name in (
    "xnnpack/expectations.toml", "portable/expectations.toml", "xnnpack/budgets.toml")]

KEYS = ("flows", "case", "reason", "status", "strict", "catch_all", "dtype", "host",
        *ex.OVERRIDE_FIELDS, *bd.LIMITS, "colour")
HEADERS = (*ex.KINDS, bd.KIND, "xfail")
PATTERNS = st.sampled_from(["*", "*::*", "x", "x*", "a.py::t", "a.py::*", "?", "", "**"]) \
    | st.text(alphabet="ax*?:.[]", max_size=8)


def _toml(value) -> str:
    """A Python value as a TOML value (JSON strings are TOML basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


SCALARS = st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | PATTERNS \
    | st.sampled_from(["fail_run", "fail_mismatch", "fail_crash", "fail_infra", "pass",
                       "float16", "flaot16", "ci"]) | st.text(max_size=10)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2), max_leaves=5)
# A whole entry, mostly well formed (the keys of its kind), so that the checks past the
# first (shadowing, catch-alls, the per-flow checks) are reached too.
OPTIONAL = {
    "fail": {"status": st.sampled_from(["fail_run", "fail_crash", "fail_budget"]),
             "strict": st.booleans(), "catch_all": st.booleans()},
    "skip": {"catch_all": st.booleans()},
    "must_delegate": {},
    "tolerance": {"dtype": st.sampled_from(["float16", "int8"]), "rtol": st.floats(0, 2),
                  "steps": st.integers(0, 300), "bound_scale": st.floats(0, 10),
                  "catch_all": st.booleans()},
    "budget": {"max_pte_bytes": st.integers(0, 9), "min_delegation_share": st.floats(0, 1),
               "host": st.just("ci"), "max_ms_per_call": st.floats(0, 5)},
}
ENTRIES = st.sampled_from(sorted(OPTIONAL)).flatmap(lambda kind: st.fixed_dictionaries(
    {"flows": st.lists(PATTERNS, min_size=1, max_size=2), "case": PATTERNS,
     "reason": st.just("r")}, optional=OPTIONAL[kind]).map(
    lambda entry: "\n".join([f"[[{kind}]]"] + [f"{k} = {_toml(v)}" for k, v in entry.items()])))
LINES = st.one_of(
    st.sampled_from(HEADERS).map(lambda kind: f"[[{kind}]]"),
    st.sampled_from(HEADERS).map(lambda kind: f"[{kind}]"),
    st.tuples(st.sampled_from(KEYS), VALUES).map(lambda kv: f"{kv[0]} = {_toml(kv[1])}"),
    st.tuples(st.sampled_from(HEADERS), VALUES).map(lambda kv: f"{kv[0]} = {_toml(kv[1])}"),
    st.just(""), st.just("# a comment"), st.text(max_size=12))



def read_both(path: Path) -> None:
    """Both loaders over one file; what loads is checked for a flow as collection does."""
    for loader in (ex.load, bd.load):
        try:
            loaded = loader(path, "fuzzed.toml")
        except ex.ExpectationsError as error:
            message = str(error)
            assert message.startswith("fuzzed.toml") and "\n" not in message.strip(), message
            continue
        if isinstance(loaded, ex.Expectations):
            for base in (FP32, INT8):
                try:
                    ex.check_for_flow(loaded, "x", base)
                except ex.ExpectationsError as error:
                    assert str(error).startswith("fuzzed.toml"), str(error)


@fuzz_settings(examples_per_second=30)
@given(lines=st.lists(LINES, max_size=14))
@counted
def test_a_file_of_any_pieces_is_read_or_refused_in_one_line(lines, tmp_path):
    path = tmp_path / "fuzzed.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    read_both(path)


@fuzz_settings(examples_per_second=30)
@given(entries=st.lists(ENTRIES, max_size=6), noise=st.lists(LINES, max_size=1),
       budgets=st.booleans())
@counted
def test_a_file_of_entries_is_read_or_refused_in_one_line(entries, noise, budgets, tmp_path):
    """Mostly well-formed entries of one file's kinds, now and then a stray piece."""
    keep = [e for e in entries if budgets == e.startswith("[[budget]]")] + noise
    path = tmp_path / "fuzzed.toml"
    path.write_text("\n\n".join(keep) + "\n", encoding="utf-8", errors="surrogatepass")
    read_both(path)


@fuzz_settings(examples_per_second=10)
@given(real=st.sampled_from(range(len(REAL))), cut=st.integers(0, 1 << 20),
       at=st.integers(0, 1 << 20), noise=st.binary(max_size=8))
@counted
def test_a_real_file_cut_or_garbled_is_read_or_refused_in_one_line(real, cut, at, noise,
                                                                    tmp_path):
    text = REAL[real][:cut % (len(REAL[real]) + 1)]
    at %= len(text) + 1
    path = tmp_path / "fuzzed.toml"
    path.write_bytes(text[:at] + noise + text[at:])
    read_both(path)
