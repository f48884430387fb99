// nonStrict: cases a non-strict [[fail]] entry declares: their pass is no fix, their xfail no real failure.
const nonStrict = (() => {
  const { $, data, statuses, grid } = shared;
  const { esc, flowName, badge } = format;

  function draw() {
    const tests = data.non_strict;
    if (!tests.length) return;
    $("non-strict-section").hidden = false;
    const kinds = tests.map(([ri]) => statuses[grid.status[ri]]);
    const failed = kinds.filter((s) => s.name === "xfail").length, passed = kinds.filter((s) => s.kind === "passing").length;
    $("non-strict-note").textContent = `${tests.length} test${tests.length === 1 ? "" : "s"} of cases declared by a non-strict ` +
      `[[fail]] entry (input-dependent: each may fail with the declared status or pass, and neither fails the run): ` +
      `${failed} failed as declared (xfail), ${passed} passed (counted as correct).`;
    detail.linkedRows("non-strict", ["test case", "flow", "this run", "entry"], tests.map(([ri, entry, observed]) => {
      return [ri, [`<span class="mono">${esc(data.cases[grid.case[ri]])}</span>`, esc(flowName(grid.flow[ri])),
        badge(grid.status[ri]) + (observed ? ` <span class="note">the pipeline said ${esc(observed)}</span>` : ""),
        `<span class="mono">${esc(entry ?? "–")}</span>`]];
    }));
  }

  return { draw };
})();
