"""Real fixture reports (test/data/reports) edited the way the harness writes them since
records name their [[fail]] entry and the facts their seed policy: close-to-bound passes,
non-strict declared cases, a pinned seed. Editing real reports keeps every other field as
the harness wrote it; the summary and page tests read the edited files like any input.
"""

import dataclasses
import json
from pathlib import Path

from etsuite.backends.harness.contract.facts import SessionFacts
from etsuite.backends.harness.contract.report import facts_of_report, put_facts, put_records, records_of_test

REPO = Path(__file__).resolve().parent.parent
SHARD1 = "test/data/reports/xnnpack-shard1.json"
PIPELINE = "test/data/reports/pipeline.json"
ADD = "backends/suite/operators/test_add.py::"
CASES = "test/data/reports/src/pipeline_cases.py::"

# The edits of `scenario`: worst error ratios of passing subtests (node id, subtest).
RATIOS = {
    (ADD + "test_add_same_shape[xnnpack_static_int8_per_tensor]", 0): 0.9,
    (ADD + "test_add_same_shape[xnnpack_static_int8_per_channel]", 0): 0.5,
    (ADD + "test_add_broadcast[xnnpack_static_int8_per_tensor]", 1): 0.8,
    (ADD + "test_add_broadcast[xnnpack_dynamic_int8_per_channel]", 0): 0.7,
}
FAILING_AT = (ADD + "test_add_broadcast[xnnpack_static_int8_per_channel]", 0)  # made a mismatch
NON_STRICT_XFAIL = CASES + "test_known_gap[faulty_mismatch]"
NON_STRICT_PASS = CASES + "test_known_gap[xnnpack]"
STRICT_XPASS = CASES + "test_add[faulty_fixed]"
ENTRIES = {NON_STRICT_XFAIL: "backends/faulty/expectations.toml:12",
           NON_STRICT_PASS: "backends/xnnpack/expectations.toml:30",
           STRICT_XPASS: "backends/faulty/expectations.toml:4"}


def read(source: str) -> dict:
    return json.loads((REPO / source).read_text(encoding="utf-8"))


def write(data: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def entry_of(data: dict, nodeid: str) -> dict:
    return next(t for t in data["tests"] if t["nodeid"] == nodeid)


def record(data: dict, nodeid: str, subtest: int = 0) -> dict:
    return records_of_test(entry_of(data, nodeid))[subtest]


def set_ratio(found: dict, ratio: float) -> None:
    """The worst output at `ratio` of its bound, and a margin that says so."""
    found["outputs"][0]["error_ratio"] = ratio
    found["margin"] = f"SQNR 30.0 dB, needs 20; max error {ratio * 32:.3g} steps, bound 32"


def declare(found: dict, entry: str, strict: bool) -> None:
    """What expectations.judge writes on a declared case's records."""
    found["declared_by"], found["declared_strict"] = entry, strict
    if found["status"] == "xfail":
        found["observed_status"] = "fail_mismatch"


def pin_seed(data: dict, policy: str | None) -> None:
    """The facts as the harness writes them with a seed policy."""
    facts = SessionFacts.from_dict(facts_of_report(data))
    put_facts(data, dataclasses.replace(facts, seed_policy=policy))


def close_passes(data: dict) -> None:
    for (nodeid, subtest), ratio in RATIOS.items():
        set_ratio(record(data, nodeid, subtest), ratio)
    failing = record(data, *FAILING_AT)
    set_ratio(failing, 1.5)
    failing.update(status="fail_mismatch", stage="compare", error="outputs differ")
    entry_of(data, FAILING_AT[0])["outcome"] = "failed"
    # Outputs without a ratio (an exact rule that failed, no statistics) are not a ratio.
    record(data, ADD + "test_add_same_shape[xnnpack]")["outputs"] = [
        {"max_abs_error": 1.0, "error_ratio": None}, {"max_abs_error": 0.0}]


def declared_cases(data: dict) -> None:
    for nodeid, entry in ENTRIES.items():
        for found in records_of_test(entry_of(data, nodeid)):
            declare(found, entry, strict=nodeid == STRICT_XPASS)


def scenario(folder: Path, policy: str | None = "pinned") -> list[Path]:
    """Two reports of one run: XNNPACK passes close to their bound (RATIOS) and one that
    failed beyond it; the pipeline's cases with a non-strict xfail, a non-strict pass and
    a strict xpass. Both say `policy` as their seed policy."""
    shard, pipeline = read(SHARD1), read(PIPELINE)
    close_passes(shard)
    declared_cases(pipeline)
    for data in (shard, pipeline):
        pin_seed(data, policy)
    return [write(shard, folder / "xnnpack-shard1.json"),
            write(pipeline, folder / "pipeline.json")]


def many_close_passes(folder: Path, copies: int) -> tuple[Path, list[float]]:
    """xnnpack-shard1's tests repeated under new node ids, every passing subtest between
    0.7 and 1 of its bound, all ratios different: returns the report and the ratios."""
    data = read(SHARD1)
    tests, ratios = [], []
    for copy in range(copies):
        for test in data["tests"]:
            nodeid = test["nodeid"].replace("::test_", f"::test_{copy}_")
            records = []
            for found in records_of_test(test):
                found = dict(found, test_id=nodeid, test_case=nodeid.split("[")[0],
                             outputs=[dict(o) for o in found["outputs"]],
                             repro=found["repro"].replace(test["nodeid"], nodeid))
                ratio = round(0.7 + 0.299 * (len(ratios) * 7919 % 1000) / 1000, 6)
                set_ratio(found, ratio)
                ratios.append(ratio)
                records.append(found)
            tests.append(dict(test, nodeid=nodeid))
            put_records(tests[-1], records)
    data["tests"] = tests
    return write(data, folder / "many.json"), ratios


# ---------------------------------------------------------------- where it breaks

MODELS = "backends/suite/models/test_small_models.py::"
EXAMPLES = "backends/suite/examples/test_example_models.py::"
ADD_OP = "aten.add.Tensor"


def localized_at(target: str, source: str, module: str | None = None) -> dict:
    """A localization as case/localize.py writes it when it names a node."""
    return {"method": "intermediates", "localized": True, "node": target.split(".")[1],
            "target": target, "inputs": [{"shape": [1, 8], "dtype": "float32"}] * 2,
            "source": source, "module": module, "compared": 3, "seconds": 0.4,
            "error": {"max_abs_error": 0.5, "error_ratio": 3.1, "rule": "fp32"}}


def not_localized(why: str) -> dict:
    return {"method": "intermediates", "localized": False, "reason": f"not localized: {why}",
            "seconds": 0.2}


def fail_with(test: dict, localization: dict) -> None:
    """A passing test made a localized fail_mismatch, every other field as written."""
    test["outcome"] = "failed"
    test["call"] = dict(test["call"], outcome="failed", longrepr="E   outputs differ")
    for found in records_of_test(test):
        found.update(status="fail_mismatch", stage="compare", error="outputs differ",
                     localization=localization)


def renamed(test: dict, nodeid: str, suite: str) -> dict:
    """A copy of a test entry under another node id and suite (a model's, an example's)."""
    copy = dict(test, nodeid=nodeid, call=dict(test["call"]))
    records = [dict(found, test_id=nodeid, test_case=nodeid.split("[")[0], suite=suite,
                    repro=found["repro"].replace(test["nodeid"], nodeid))
               for found in records_of_test(test)]
    put_records(copy, records)
    return copy


def where_it_breaks(folder: Path) -> Path:
    """xnnpack-shard1 with localized failures (as `--localize` writes them). Flow xnnpack:
    the operator test test_add_same_shape, a model test and an example test all break at
    aten.add.Tensor. Flow xnnpack_static_int8_per_tensor: a model test breaks there, the
    flow's operator tests pass. Flow xnnpack_static_int8_per_channel: the operator test
    test_add_broadcast fails but could not be localized (its graph holds the add), a model
    test breaks at the add."""
    data = read(SHARD1)
    tests = {test["nodeid"]: test for test in data["tests"]}
    fail_with(tests[ADD + "test_add_same_shape[xnnpack]"],
              localized_at(ADD_OP, "backends/suite/operators/test_add.py:20"))
    fail_with(tests[ADD + "test_add_broadcast[xnnpack_static_int8_per_channel]"],
              not_localized("the delegate call could not be split"))
    source = "backends/suite/models/test_small_models.py:41"
    for flow in ("xnnpack", "xnnpack_static_int8_per_tensor", "xnnpack_static_int8_per_channel"):
        model = renamed(tests[ADD + f"test_add_broadcast[{flow}]"],
                        MODELS + f"test_residual_block[{flow}]", "models")
        fail_with(model, localized_at(ADD_OP, source, "block.skip"))
        data["tests"].append(model)
    example = renamed(tests[ADD + "test_add_broadcast[xnnpack]"],
                      EXAMPLES + "test_example_model[xnnpack-resnet18]", "examples")
    fail_with(example, localized_at(ADD_OP, "torchvision/models/resnet.py:102", "layer1.0"))
    data["tests"].append(example)
    return write(data, folder / "where.json")
