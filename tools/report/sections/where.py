"""Where it breaks: the localized failures (`--localize`) grouped per flow by the op they
start at, with the operator tests failing on the same op, and the failures that could not
be localized. The summary's section, the failure blocks' "breaks at" and the page's
section use the same grouping (`places`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from etsuite.tools.report import tally
from etsuite.tools.report.formatting import code, listed, plural, table
from etsuite.tools.report.loading import Merged, TestResult
from etsuite.tools.report.sections.common import result_index
from etsuite.tools.report.size_limit import Section


def by_place(failures: list[tally.Failure]) -> list[tally.Group]:
    """Localized failures keyed (flow, place), most frequent first: which op breaks how
    many tests of a flow."""
    localized = [f for f in failures if f.place is not None]
    groups = tally.grouped(localized, _place_key)
    return sorted(groups, key=lambda g: (-g.count, g.key))


OPERATORS = "operators"   # the suite of one-op tests (backends/suite/operators/)


def suite_of(result: TestResult) -> str:
    """The test's suite as its records say (operators, models, examples, a backend's own
    `<backend>/test`: the harness derives it from the node id's folder); "?" when no
    record says (a test that failed before its first subtest)."""
    return next((r.suite for r in result.records if r.suite), "?")


def suites_of(group: tally.Group) -> Counter:
    """Tests of a group per suite (operators, models, ...), from the records."""
    return Counter({f.result.nodeid: suite_of(f.result) for f in group.failures}.values())


@dataclass
class Places:
    """Where a run's failures break, for the summary and the page alike: the localized
    failures by (flow, place) (`by_place`), the failures whose localization could not
    place them (the record's `reason` says why), and per (flow, op) the operator tests
    that fail on that op, so a model failure localized to an op can say that the op
    fails alone too."""

    groups: list[tally.Group]
    not_localized: list[tally.Failure]
    operator_tests: dict[tuple[str, str], list[TestResult]]

    @property
    def shown(self) -> bool:
        """Localization was asked of some failure (--localize): there is something to say."""
        return bool(self.groups or self.not_localized)

    def also_as_operator_test(self, failure: tally.Failure) -> list[TestResult]:
        """For a failure outside the operator suite localized to a node: the operator
        tests of that node's op failing on the same flow ([] otherwise)."""
        if failure.place is None or not (failure.localization or {}).get("node") \
                or suite_of(failure.result) == OPERATORS:
            return []
        return [result for result in self.operator_tests.get(_place_key(failure), [])
                if result is not failure.result]


def _place_key(failure: tally.Failure, op: str | None = None) -> tuple[str, str]:
    """(flow, place) of a failure, or (flow, op) of one of its ops."""
    return (failure.result.flow or "(no flow)", str(failure.place if op is None else op))


def _operator_ops(failure: tally.Failure) -> set[str]:
    """The ops an operator-suite failure is a failure of: the op it was localized to, or,
    when it was not localized to a node, every op of its lowered graph (an operator test's
    graph is its op, with little around it; a failure before lowering names none)."""
    if (failure.localization or {}).get("node") and failure.place is not None:
        return {failure.place}
    return set(failure.ops)


def places(failures: list[tally.Failure]) -> Places:
    """Where the failures (in the summary's order) break: `Places`."""
    operator_tests: dict[tuple[str, str], dict[int, TestResult]] = {}
    for failure in failures:
        if suite_of(failure.result) == OPERATORS:
            for op in sorted(_operator_ops(failure)):
                operator_tests.setdefault(_place_key(failure, op), {}).setdefault(
                    id(failure.result), failure.result)
    return Places(by_place(failures),
                  [f for f in failures if f.localization and f.place is None],
                  {key: list(found.values()) for key, found in operator_tests.items()})


def markdown(places: Places) -> list[Section]:
    """Localized failures grouped by the op they start at, per flow (--localize), with the
    operator tests that fail on the same op; absent when no failure was localized or tried."""
    if not places.shown:
        return []
    also = {id(g): _also_in(places, g.failures) for g in places.groups}
    also_column = any(also.values())

    def render(groups: list) -> tuple[str, list[str]]:
        return table(["flow", "where it breaks", "failures", "tests"]
                     + ["also fails as an operator test"] * also_column + ["example"], [
            [code(g.key[0]), code(g.key[1]), g.count,
             ", ".join(f"{n} {suite}" for suite, n in sorted(suites_of(g).items()))]
            + [listed([code(tally.test_name(r)) for r in also[id(g)]], 3) or "–"] * also_column
            + [code(g.failures[0].result.nodeid)] for g in groups])

    not_localized = len(places.not_localized)
    intro = ("The op each localized failure starts at: for a mismatch, the first node whose "
             "runtime output left the flow's rule, or the delegate call that holds it; for "
             "a failure to lower, serialize, load or run, the last node of the smallest "
             "prefix of the graph that fails the same way."
             + (" A model or example failure whose op fails as an operator test of the same "
                "flow too names that test." if also_column else "")
             + (f" {plural(not_localized, 'failure')} could not be localized (the record's "
                f"`localization` says why)." if not_localized else ""))
    return [Section(heading="## Where it breaks\n", intro=intro, items=places.groups,
                    render_items=render, empty="No failure was localized.\n", unit="places")]


def _also_in(places: Places, failures: list[tally.Failure]) -> list[TestResult]:
    """The operator tests the failures' op also fails in, each once, in order."""
    found: dict[int, TestResult] = {}
    for failure in failures:
        for result in places.also_as_operator_test(failure):
            found.setdefault(id(result), result)
    return list(found.values())


def page(merged: Merged, order: list[tally.FlowKey],
         flow_index: dict[tally.FlowKey, int]) -> dict | None:
    """Where the failures break (`places`, as the summary's section): per localized
    place {flow, place, what it breaks in words, failures (subtests), tests: [result, its
    subtests that break there (None: the test has one), [[operator test's result, its
    name], ...] the op also fails in]}, and the failures localization could not place,
    [result, subtest, the record's reason] each. None when no failure was localized or
    tried (the section is not shown)."""
    failures = [f for _, found in tally.failing_tests(merged, order) for f in found]
    found = places(failures)
    if not found.shown:
        return None
    index = result_index(merged)

    def subtest(failure: tally.Failure) -> int | None:
        return failure.subtest if len(failure.result.records) > 1 else None

    def tests(group: tally.Group) -> list:
        by_result: dict[int, list] = {}
        for failure in group.failures:
            also = [[index[id(r)], tally.test_name(r)]
                    for r in found.also_as_operator_test(failure)]
            entry = by_result.setdefault(index[id(failure.result)],
                                     [index[id(failure.result)], [], also])
            if subtest(failure) is not None:
                entry[1].append(subtest(failure))
        return [[ri, subtests or None, also] for ri, subtests, also in by_result.values()]

    return {"groups": [{"flow": flow_index[tally.flow_key(g.failures[0].result)],
                        "place": g.key[1], "breaks": suite_words(suites_of(g)),
                        "failures": g.count, "tests": tests(g)} for g in found.groups],
            "not_localized": [[index[id(f.result)], subtest(f),
                               (f.localization or {}).get("reason")]
                              for f in found.not_localized]}


def suite_words(suites: Mapping[str, int]) -> str:
    """Tests per suite in words, "3 model tests and 4 operator tests": a suite's folder
    name made singular (a backend's own `xnnpack/test` stays as it is)."""
    words = [f"{n} {suite.removesuffix('s') if '/' not in suite else suite} "
             f"test{'' if n == 1 else 's'}" for suite, n in sorted(suites.items())]
    return " and ".join(filter(None, [", ".join(words[:-1]), words[-1]])) if words else ""
