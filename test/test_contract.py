"""The contract's formats on disk: the typed payloads read back to exactly the JSON they
were read from, for the reports of every earlier version the fixtures hold; where records
and facts sit in a pytest-json-report is pinned here, literally; a malformed payload is
refused with the part it got wrong; the package still offers every name for vendors."""

import dataclasses
import json
import re
import types
from pathlib import Path

import pytest

import etsuite.backends.harness.contract as contract
from etsuite.backends.harness.contract import (
    durations,
    facts,
    nodeids,
    record,
    report,
    shapes,
    statuses,
    stream,
)
from etsuite.backends.harness.contract.facts import FactsError, FlowFacts, RunFacts, SessionFacts
from etsuite.backends.harness.contract.record import RecordError, SubtestRecord
from etsuite.backends.harness.contract.report import (
    facts_of_report,
    put_facts,
    put_records,
    records_of_test,
)

DATA = Path(__file__).resolve().parent / "data" / "reports"
REPORTS = sorted(p for p in DATA.rglob("*.json") if "artifacts" not in p.parts)
STREAMS = sorted(DATA.rglob("*.partial.jsonl"))


def stored_facts_and_records() -> list[tuple[Path, dict, list[dict]]]:
    """(file, its facts, its record dicts) of every fixture report and stream."""
    found = []
    for path in REPORTS:
        data = json.loads(path.read_text())
        found.append((path, facts_of_report(data),
                      [r for test in data["tests"] for r in records_of_test(test)]))
    for path in STREAMS:
        entries = stream.stream_entries(path.read_text())
        records = [r for entry in entries[1:] if stream.STREAM_REPORT in entry
                   for r in entry[stream.STREAM_REPORT]["records"]]
        found.append((path, stream.facts_of_header(stream.header_of(entries)), records))
    return found


STORED = stored_facts_and_records()
RECORDS = [r for _, _, records in STORED for r in records]


def test_every_stored_payload_reads_back_to_its_json():
    kinds = set()
    for stored in RECORDS:
        typed = SubtestRecord.from_dict(stored)
        assert json.dumps([o.to_dict() for o in typed.outputs]) == json.dumps(stored["outputs"])
        assert json.dumps(typed.rerun.to_dict() if typed.rerun else None) == \
            json.dumps(stored.get("rerun"))
        kinds |= {tuple(o) for o in stored["outputs"]} | ({"rerun"} if typed.rerun else set())
    # what the fixtures hold: outputs before rules had names, outputs a rule judged, reruns
    assert {("max_abs_error", "mean_abs_error", "sqnr_db"), "rerun",
            ("max_abs_error", "mean_abs_error", "sqnr_db", "error_ratio", "rule")} <= kinds


def keeps(written, stored, ordered: bool = True) -> bool:
    """Whether `written` holds every key of `stored` with its value (and, `ordered`, in
    its order); a key `stored` lacks, an older writer's gap, may be added."""
    if isinstance(stored, dict):
        order = [k for k in written if k in stored] if isinstance(written, dict) else None
        return order is not None and (order == list(stored) if ordered else set(order) == set(stored)) \
            and all(keeps(written[k], v, ordered) for k, v in stored.items())
    return json.dumps(written) == json.dumps(stored)


def test_a_stored_record_reads_back_with_every_field_it_had():
    assert keeps({"a": 1, "b": {"c": 2}}, {"b": {"c": 2}}) and not keeps({"b": 1, "a": 1}, {"a": 1, "b": 1})
    fields = set(record.RECORD_FIELDS)
    assert any(set(r) < fields for r in RECORDS) and any(len(r) > 25 for r in RECORDS)
    for stored in RECORDS:
        written = SubtestRecord.from_dict(stored).to_dict()
        # records of the oldest fixtures had `params` after `status`: field order, not theirs
        assert keeps(written, stored, ordered=False) and list(written) == list(record.RECORD_FIELDS)
        assert SubtestRecord.from_dict(written).to_dict() == written


def test_stored_facts_read_back_with_every_key_they_had():
    stored_facts = [stored for _, stored, _ in STORED if stored is not None]
    assert any("run" in f for f in stored_facts) and any("run" not in f for f in stored_facts)
    for stored in stored_facts:
        written = SessionFacts.from_dict(stored).to_dict()
        assert keeps(written, stored)
        assert list(written["flows"]["portable"]) == [f.name for f in dataclasses.fields(FlowFacts)]


def test_older_facts_read_as_not_said():
    older = SessionFacts.from_dict(facts_of_report(json.loads((DATA / "portable.json").read_text())))
    assert older.run is None and older.seed_policy is None and older.seed == 1234
    assert older.flows["portable"].backend == "portable"
    assert older.flows["portable"].delegates is None and "run" not in older.to_dict()


def test_where_records_and_facts_sit_in_a_report():
    entry = {"nodeid": "t.py::test[portable]", "metadata": {"owner": "me"}}
    put_records(entry, [{"status": "pass"}])
    assert entry["metadata"] == {"owner": "me", "subtests": [{"status": "pass"}]}
    assert records_of_test(entry) == [{"status": "pass"}]
    copy = dict(entry)
    put_records(copy, [])
    assert records_of_test(entry) == [{"status": "pass"}]  # the copy has metadata of its own
    assert records_of_test({"nodeid": "t.py::plain"}) == []

    facts_written = SessionFacts(seed=7, versions={"torch": None}, flows={},
                                 run=RunFacts("local", "all flows"))
    data = {}
    put_facts(data, facts_written)
    assert list(data) == ["etsuite"] and facts_of_report(data) == facts_written.to_dict()
    assert data["etsuite"]["run"] == {"id": "local", "selection": "all flows", "shard": None,
                                      "shards": None, "plan": None}


def test_the_stream_header_carries_the_facts():
    written = SessionFacts(seed=3, versions={}, flows={"portable": FlowFacts("portable")})
    header = stream.stream_header(written, 1.5, ["-k", "add"])
    assert list(header) == ["etsuite_stream", "facts", "started", "args"]
    assert stream.header_of([header, {"start": "x"}]) is header
    assert stream.header_of([{"start": "x"}]) is None and stream.header_of([]) is None
    assert SessionFacts.from_dict(stream.facts_of_header(header)) == written


def one_record(**changes) -> dict:
    stored = next(r for r in RECORDS if r.get("rerun"))
    return dict(stored, **changes)


@pytest.mark.parametrize("changes, message", [
    ({"outputs": "none"}, "outputs must be a list, got str"),
    ({"outputs": [3.0]}, "an output's statistics must be an object, got float"),
    ({"rerun": {"same_inputs": "pass", "other_seed": 1}}, "a rerun without 'other_inputs'"),
    ({"rerun": {"same_inputs": "pass", "other_inputs": "meh", "other_seed": 1}},
     "a rerun with an unknown status ('pass', 'meh')"),
])
def test_a_malformed_payload_is_refused(changes, message):
    with pytest.raises(RecordError, match="^" + re.escape(message)):
        SubtestRecord.from_dict(one_record(**changes))


@pytest.mark.parametrize("stored, message", [
    ([], "the session facts must be an object, got list"),
    ({"flows": ["portable"]}, "facts.flows must be an object or null, got a list"),
    ({"flows": {"portable": "yes"}}, "facts.flows['portable'] must be an object, got text"),
    ({"run": 3}, "facts.run must be an object or null, got a number: 3"),
    ({"seed": "1"}, "facts.seed must be an integer or null, got text: '1'"),
    ({"versions": {"torch": ["2"]}}, "facts.versions['torch'] must be text or null, got a list"),
])
def test_malformed_facts_are_refused(stored, message):
    with pytest.raises(FactsError, match="^" + re.escape(message)):
        SessionFacts.from_dict(stored)


def test_the_package_offers_every_name_of_its_modules():
    """A vendor's `from etsuite.backends.harness.contract import Status` keeps working."""
    offered = 0
    for module in (durations, facts, nodeids, record, report, shapes, statuses, stream):
        for name, value in vars(module).items():
            outside = getattr(value, "__module__", module.__name__) or ""
            if name.startswith("_") or isinstance(value, types.ModuleType) or \
                    not outside.startswith(contract.__name__):
                continue
            assert getattr(contract, name, None) is value, (module.__name__, name)
            offered += 1
    assert offered > 40 and contract.Status is statuses.Status


def test_facts_carry_the_core_aten_denominator():
    written = SessionFacts(seed=1, versions={}, flows={},
                           core_aten_ops=["aten.add.Tensor", "aten.mul.Tensor"])
    assert SessionFacts.from_dict(written.to_dict()) == written
    assert "core_aten_ops" not in SessionFacts(seed=1, versions={}, flows={}).to_dict()
    with pytest.raises(FactsError, match="core_aten_ops"):
        SessionFacts.from_dict({"core_aten_ops": "aten.add.Tensor"})


def _walk_passes(value, shape) -> bool:
    try:
        shapes.walk(value, shape, "v")
        return True
    except shapes.ShapeError:
        return False


def _variants(value):
    """`value` and copies with one part replaced by a value of another JSON type."""
    yield value
    others = ("text", 3, 2.5, True, None, [1], {"k": 1}, float("nan"), float("inf"))
    if isinstance(value, dict):
        for key in list(value)[:60]:
            for other in others:
                yield {**value, key: other}
    elif isinstance(value, list) and value:
        for other in others:
            yield [other, *value[1:]]
    else:
        yield from others


def test_the_fast_shape_answer_agrees_with_the_walk():
    """`check` trusts a fast predicate when it says yes and walks the value otherwise: it
    must never say yes where the walk finds a wrong part, and must say yes for a real
    record (or 40,000 of them would each be walked)."""
    record_shape = shapes.Fields(record.RECORD_SHAPES)
    cases = [(record_shape, stored) for stored in RECORDS[:200]]
    cases += [(report.TEST_SHAPE, test) for path in REPORTS[:3]
              for test in json.loads(path.read_text())["tests"][:50]]
    cases += [(shape, value) for name, shape in record.RECORD_SHAPES.items()
              for stored in RECORDS[:200] if name in stored for value in [stored[name]]]
    tried = 0
    for shape, value in cases:
        assert shapes.surely_holds(value, shape), value  # real values take the fast path
        for variant in _variants(value):
            tried += 1
            if shapes.surely_holds(variant, shape):
                assert _walk_passes(variant, shape), (shape, variant)
            else:  # check still decides the same as the walk
                try:
                    shapes.check(variant, shape, "v")
                    assert _walk_passes(variant, shape)
                except shapes.ShapeError:
                    assert not _walk_passes(variant, shape)
    assert tried > 10_000
