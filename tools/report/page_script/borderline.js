// borderline: passes that used most of their bound (all of them; the markdown lists the first 50).
const borderline = (() => {
  const { $, data, grid } = shared;
  const { esc, flowName } = format;

  function draw() {
    const passes = data.borderline;
    if (!passes) return;
    $("borderline-section").hidden = false;
    const perFlow = passes.flows.map(([f, n]) => `${esc(flowName(f))} ${n}`).join(" · ");
    $("borderline-note").innerHTML = (passes.rows.length ? `${passes.rows.length} passing subtest${passes.rows.length === 1 ? "" : "s"} whose worst ` +
      `output's max error reached ${passes.ratio}x of its rule's bound or more (1x is the bound): the passes most likely ` +
      `to fail at another seed, closest first. A click opens the record.` :
      `No passing subtest reached ${passes.ratio}x of its rule's bound.`) + ` Per flow: ${perFlow}.`;
    $("borderline").hidden = !passes.rows.length;
    detail.linkedRows("borderline", ["test case", "flow", "worst error/bound", "margin", "rule", "repro"],
      passes.rows.map(([ri, subtestNumber, ratio, margin, rule, repro]) => {
        const subtest = subtestNumber != null ? ` (subtest ${esc(subtestNumber)})` : "";
        return [ri, [`<span class="mono">${esc(data.cases[grid.case[ri]])}${subtest}</span>`, esc(flowName(grid.flow[ri])),
          `${typeof ratio === "number" ? ratio.toFixed(2) : esc(ratio)}x`, esc(margin ?? "–"),
          esc(rule ?? "–"), `<span class="mono">${esc(repro)}</span>`]];
      }));
  }

  return { draw };
})();
