// where: localized failures per flow, grouped by the op they start at (tally.places, as the
// summary's section); a model failure whose op fails as an operator test too says so.
// Every case is a link that opens its record.
const where = (() => {
  const { $, data, grid } = shared;
  const { LIST_WITHOUT_CLICK, esc, flowName, backendName } = format;

  function draw() {
    const places = data.where;
    if (!places) return;
    $("where-section").hidden = false;
    const failures = (n) => `${n} failure${n === 1 ? "" : "s"}`;
    const subtests = (list) => (list && list.length ? ` <span class="note">subtest${list.length === 1 ? "" : "s"} ${list.map(esc).join(", ")}</span>` : "");
    const link = (ri, text, list) => `<a href="#detail" class="mono" data-result="${ri}">${esc(text)}</a>${subtests(list)}`;
    const localized = places.groups.reduce((n, g) => n + g.failures, 0);
    $("where-note").innerHTML = `${failures(localized)} localized to the op they start at: the first node whose runtime ` +
      `output left the flow's rule, or the delegate call that holds it. A click opens the record.` +
      (places.not_localized.length ? ` ${failures(places.not_localized.length)} could not be localized: the record's ` +
        `<code>localization</code> says why (listed below).` : "");
    const flows = [...new Set(places.groups.map((g) => g.flow))].sort((a, b) => a - b);
    const html = flows.map((f) => {
      const groups = places.groups.map((g, k) => [g, k]).filter(([g]) => g.flow === f);
      return `<div class="where-flow"><h3>on ${esc(flowName(f))} <span class="note">(${esc(backendName(f))})</span></h3><ul>` +
        groups.map(([g, k]) => {
          const cases = `<ul>${g.tests.map(([ri, list, also]) => `<li>${link(ri, data.cases[grid.case[ri]], list)}` +
            (also.length ? ` <span class="also">· also fails as an operator test: ` +
              also.map(([oi, name]) => link(oi, name)).join(", ") + `</span>` : "") + `</li>`).join("")}</ul>`;
          // A place that breaks many tests lists them behind a click.
          const listed = g.tests.length > LIST_WITHOUT_CLICK ? `<details><summary>its ${g.tests.length} tests</summary>${cases}</details>` : cases;
          return `<li class="where-place" id="where-${k}"><code>${esc(g.place)}</code> breaks ${esc(g.breaks)}${listed}</li>`;
        }).join("") + `</ul></div>`;
    });
    if (places.not_localized.length) {
      html.push(`<details class="where-unplaced"><summary>${failures(places.not_localized.length)} not localized</summary><ul>` +
        places.not_localized.map(([ri, subtest, reason]) => `<li>${link(ri, data.cases[grid.case[ri]], subtest == null ? null : [subtest])} ` +
          `<span class="note">${esc(flowName(grid.flow[ri]))}: ${esc(reason ?? "no reason recorded")}</span></li>`).join("") +
        `</ul></details>`);
    }
    $("where").innerHTML = html.join("");
    $("where").addEventListener("click", (event) => {
      const found = event.target.closest("a[data-result]");
      if (!found) return;
      event.preventDefault();
      detail.show(Number(found.dataset.result));
    });
  }

  return { draw };
})();
