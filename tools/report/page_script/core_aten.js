// coreAten: per flow, N of M core ATen overloads held by operator tests' lowered graphs, with
// the covered ones (test cases each), those held only by model tests and those no test
// holds behind a click each.
const coreAten = (() => {
  const { $, data } = shared;
  const { esc, flowName, backendName } = format;

  function draw() {
    const coverage = data.core_aten;
    if (!coverage) return;
    $("core-aten-section").hidden = false;
    $("core-aten-note").textContent = `Of the ${coverage.total} overloads the installed torch tags core ATen, ` +
      `those the lowered graphs of operator tests held, per flow (a view's _copy and ExecuTorch's dim order ` +
      `ops count as the core op they replace). backends/suite/core_aten.toml says why each one no operator test ` +
      `covers is left out.`;
    const ops = (list) => (list.length ? `<details><summary>${list.length}</summary>` +
      `<span class="mono">${list.map(esc).join(", ")}</span></details>` : "0");
    // "N of M", opening each covered op with its operator test cases (and how many delegated it).
    const coveredCell = (covered, delegates) => `<details><summary>${covered.length} of ${coverage.total}</summary>` +
      `<span class="mono">${covered.map(([op, cases, inDelegate]) => `${esc(op)} ×${cases}` +
        (delegates ? ` (delegated ${inDelegate})` : "")).join(", ")}</span></details>`;
    $("core-aten").innerHTML = `<thead><tr>${["backend", "flow", "core ATen ops covered", "delegated in a case",
      "only in model tests", "not covered"].map((h) => `<th class="name">${h}</th>`).join("")}</tr></thead><tbody>` +
      coverage.flows.map(([f, covered, delegated, models, missing]) => `<tr><td class="name">${esc(backendName(f))}</td>` +
        `<td class="name">${esc(flowName(f))}</td><td class="name">${coveredCell(covered, delegated != null)}</td>` +
        `<td class="name">${delegated == null ? "–" : delegated}</td><td class="name">${ops(models)}</td>` +
        `<td class="name">${ops(missing)}</td></tr>`).join("") + `</tbody>`;
  }

  return { draw };
})();
