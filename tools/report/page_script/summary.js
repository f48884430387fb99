// summary: the header's facts and the results per backend and flow.
const summary = (() => {
  const { $, data, statuses, resultCount, view } = shared;
  const { esc, seconds, percent, distinct } = format;

  function drawFacts() {
    $("title").textContent = data.title;
    document.title = data.title;
    const incomplete = data.runs.filter((r) => !r.finished).length;
    $("facts").innerHTML = [
      `${resultCount} tests in ${data.runs.length} run${data.runs.length === 1 ? "" : "s"}` +
        (incomplete ? ` (<b>${incomplete} incomplete</b>)` : ""),
      `torch ${esc(distinct(data.runs.map((r) => r.torch)))}`,
      `executorch ${esc(distinct(data.runs.map((r) => r.executorch)))}`,
      seedFacts(data.runs),
      startedRange(data.runs.map((r) => r.started).filter(Boolean).sort()),
    ].filter(Boolean).join(" · ");
  }

  // Each run's seed with where it came from; runs that share both are said once.
  function seedFacts(runs) {
    const counts = new Map();
    for (const r of runs) {
      const said = `seed ${r.seed ?? "unknown"}, seed policy ${r.seed_policy}`;
      counts.set(said, (counts.get(said) || 0) + 1);
    }
    const groups = [...counts];
    if (groups.length <= 1) return esc(groups.length ? groups[0][0] : "seed unknown");
    return groups.map(([said, n]) => `${n} run${n === 1 ? "" : "s"}: ${esc(said)}`).join("; ");
  }

  function startedRange(times) {
    if (!times.length) return "";
    const last = times[times.length - 1];
    return times[0] === last ? `started ${esc(last)}` : `started ${esc(times[0])} to ${esc(last)}`;
  }

  // Results at a glance: one row per flow under a row per backend, which says once why
  // its flows did not run here (the whole reason and how to enable it behind a click).
  // Only the statuses that occur get a column; when the table would still be wider than
  // the page, the passes (counted as correct and delegated) lose theirs and the failures
  // share the failing column, which names them.
  function draw() {
    const present = statuses.map((_, i) => i).filter((i) => data.summary.total.counts[i]);
    const table = $("summary");
    table.innerHTML = summaryHtml(present, false);
    if (table.offsetWidth > $("summary-section").clientWidth) {
      table.innerHTML = summaryHtml(present.filter((i) => statuses[i].kind !== "passing" && statuses[i].kind !== "failing"), true);
      table.classList.add("folded");
    }
    table.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-flow]");
      if (!link) return;
      const f = Number(link.dataset.flow);
      view.backend = data.flows[f].backend ?? "";
      view.flow = String(f);
      controls.sync();
      matrix.update();
    });
  }

  const wrapAtUnderscores = (name) => esc(name).replace(/_/g, "_<wbr>");

  function summaryHtml(shown, folded) {
    const head = [["flow", "name"], ["tests", ""], ["correct", ""], ["delegated", ""], ["failing", ""],
                  ...shown.map((i) => [`<span class="swatch" style="background:${statuses[i].color}"></span>${wrapAtUnderscores(statuses[i].name)}`, "status"]),
                  ["pass rate", "rate"], ["test time", ""]];
    const width = head.length;
    const failingCell = (r) => {
      if (!folded || !r.failing) return r.failing ? `${r.failing}` : `<span class="zero">0</span>`;
      const named = Object.entries(r.counts).filter(([i]) => statuses[i].kind === "failing")
        .map(([i, n]) => `${esc(statuses[i].name.replace(/^fail_/, ""))} ${n}`);
      return `${r.failing}<div class="den">${named.join(", ")}</div>`;
    };
    const line = (r, cls, name) => {
      const rate = r.passing + r.failing ? r.passing / (r.passing + r.failing) : null;
      const cells = shown.map((i) => r.counts[i] ? `<td class="count">${r.counts[i]}</td>` : `<td class="count zero">0</td>`);
      const delegated = r.delegates ? r.delegated : `<span class="zero" title="portable kernels: nothing to delegate">–</span>`;
      return `<tr class="${cls}">${name}<td class="count">${r.total}</td><td class="count">${r.passing}</td>` +
        `<td class="count">${delegated}</td><td class="count">${failingCell(r)}</td>${cells.join("")}` +
        `<td class="count rate"><span class="share">${percent(rate)}</span> <span class="den">${esc(r.verdict)}</span></td>` +
        `<td class="count">${seconds(r.duration)}</td></tr>`;
    };
    const notes = Object.fromEntries(data.backends.map((b) => [b.name, b]));
    let previous;
    const body = [];
    data.summary.rows.forEach((r, f) => {
      if (r.backend !== previous || f === 0) {
        previous = r.backend;
        const b = notes[r.backend];
        const note = b && b.note ? (b.note === b.note_full ? `<span class="backend-note">${esc(b.note)}</span>` :
          `<details class="backend-note"><summary>${esc(b.note)}</summary><div>${esc(b.note_full)}</div></details>`) : "";
        body.push(`<tr class="backend-row${b && !b.ran ? " did-not-run" : ""}" data-backend="${esc(r.backend ?? "")}"><th colspan="${width}" class="name">` +
          `<span class="backend-name">${esc(r.backend ?? "(no backend)")}</span>${note}</th></tr>`);
      }
      body.push(line(r, "", `<td class="name"><a href="#matrix-section" data-flow="${f}">${esc(r.flow ?? "(no flow)")}</a></td>`));
    });
    if (data.summary.rows.length > 1) body.push(line(data.summary.total, "total", `<td class="name">all</td>`));
    return `<thead><tr>${head.map(([h, cls]) => `<th class="${cls}">${h}</th>`).join("")}</tr></thead><tbody>${body.join("")}</tbody>`;
  }

  return { drawFacts, draw };
})();
