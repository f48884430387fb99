"""Every declared verdict that depends on the input values comes from a sweep: the
strict fail_mismatch and [[tolerance]] entries of the backends whose flows run on a Linux
CPU host record a sweep of at least ten seeds (`seeds_swept`). The entries that predate
the rule are listed in test/data/unswept-entries.txt; no entry joins that list, and an
entry swept since leaves it."""

from pathlib import Path

from etsuite.backends.harness.contract.statuses import Status
from etsuite.backends.harness.flows.expectations import Expectation, Expectations, load
from etsuite.backends.harness.upkeep.unswept import depends_on_values, label, unswept

ROOT = Path(__file__).resolve().parent.parent
KNOWN = Path(__file__).parent / "data" / "unswept-entries.txt"
BACKENDS = ("portable", "xnnpack", "openvino", "arm")


def unswept_now() -> list[str]:
    found = []
    for backend in BACKENDS:
        path = ROOT / "backends" / backend / "expectations.toml"
        found += [label(backend, e) for e in unswept(load(path))]
    return sorted(found)


def test_no_value_dependent_entry_is_added_without_a_sweep():
    known = sorted(line for line in KNOWN.read_text(encoding="utf-8").splitlines()
                   if line and not line.startswith("#"))
    now = unswept_now()
    added = sorted(set(now) - set(known))
    assert not added, (
        "these entries depend on the input values but record no sweep of ten seeds: "
        "sweep them (make sweep BACKEND=<b> SEEDS='<10 seeds>' ARGS='-k <test>') and "
        "rewrite them (make update-expectations BACKEND=<b> "
        "UPDATE_FROM='reports/sweep/<b>-seed*.json'):\n" + "\n".join(added))
    swept = sorted(set(known) - set(now))
    assert not swept, f"swept since (or gone): remove them from {KNOWN.name}:\n" + "\n".join(swept)
    assert len(now) == len(known), f"an entry is listed twice in {KNOWN.name} or in a file"


def fail(statuses=(Status.FAIL_MISMATCH,), strict=True, swept=None) -> Expectation:
    return Expectation("fail", ("f",), "c", "r", statuses, strict=strict,
                       seeds_failed=swept and 1, seeds_swept=swept)


def test_what_depends_on_values_and_what_counts_as_swept():
    assert depends_on_values(fail())
    assert depends_on_values(fail(statuses=()))  # covers any failure, a mismatch too
    assert depends_on_values(fail(statuses=(Status.FAIL_LOWER, Status.FAIL_MISMATCH)))
    assert not depends_on_values(fail(statuses=(Status.FAIL_LOWER,)))
    assert not depends_on_values(fail(statuses=(Status.FAIL_SERIALIZE, Status.FAIL_RUN)))
    assert not depends_on_values(fail(strict=False))
    assert depends_on_values(Expectation("tolerance", ("f",), "c", "r", rule=(("bits", 4),)))
    assert not depends_on_values(Expectation("skip", ("f",), "c", "r"))
    entries = Expectations((fail(), fail(swept=3), fail(swept=10),
                            fail(statuses=(Status.FAIL_LOWER,))))
    assert [e.seeds_swept for e in unswept(entries)] == [None, 3]
