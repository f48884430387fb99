// matrix: a row per case, a column per flow; only the rows in view are in the DOM.
const matrix = (() => {
  const { $, data, statuses, grid, rows, view } = shared;
  const { esc, flowName, backendName } = format;
  const { searchable, computeColumns, rowMatches, sortRows } = filters;
  const ROW = 26;  // px per row, as page.css's --row
  const OVERSCAN = 12;  // rows drawn beyond the view on each side

  let updates = 0;
  async function update() {
    const ticket = ++updates;
    view.columns = computeColumns();
    if (view.text) {
      $("shown").textContent = "searching…";
      await searchable([...new Set(view.columns.map((c) => data.flows[c].backend_index))]);
      if (ticket !== updates) return;  // a newer update took over
    }
    view.visible = sortRows(rows.filter(rowMatches));
    for (const chip of $("legend").querySelectorAll("button[data-status]")) {
      chip.classList.toggle("off", !view.statuses.has(Number(chip.dataset.status)));
    }
    $("sort").value = view.sort;
    $("shown").textContent = `${view.visible.length} of ${rows.length} cases · ${view.columns.length} of ${data.flows.length} flows`;
    drawHead();
    $("grid-body").style.height = view.visible.length * ROW + "px";
    $("grid").scrollTop = 0;
    drawRows();
  }

  function drawHead() {
    const template = `var(--case-w) repeat(${view.columns.length}, var(--cell-w))`;
    $("grid").style.setProperty("--cols", template);
    const groups = [];
    for (const c of view.columns) {
      const b = backendName(c);
      if (groups.length && groups[groups.length - 1].b === b) groups[groups.length - 1].n++;
      else groups.push({ b, n: 1 });
    }
    const arrow = view.dir > 0 ? "▲" : "▼";
    const sorted = (key) => (view.sort === key ? ` sorted" data-arrow="${arrow}` : "");
    $("grid-head").innerHTML =
      `<div class="backends" style="grid-template-columns:${template}"><div class="hcell corner"></div>` +
      groups.map((g) => `<div class="hcell" style="grid-column:span ${g.n}"><span>${esc(g.b)}</span></div>`).join("") + `</div>` +
      `<div class="flows" style="grid-template-columns:${template}"><div class="hcell corner${sorted("name")}" data-sort="name">test case</div>` +
      view.columns.map((c) => `<div class="hcell${sorted(String(c))}" data-sort="${c}" title="${esc(data.flows[c].description ?? "")} — click to sort">${esc(flowName(c))}</div>`).join("") +
      `</div>`;
  }

  function cellHtml(ri) {
    if (ri < 0) return `<div class="cell empty"></div>`;
    const s = statuses[grid.status[ri]];
    const delegated = grid.delegated[ri], total = grid.nodes[ri], count = grid.subtests[ri];
    const delegates = data.flows[grid.flow[ri]].delegates !== false;
    const nodes = delegated >= 0 && delegates && (s.kind === "passing" || s.name === "lowered_not_run") ? ` ${delegated}/${total}` : "";
    const subtests = count > 1 ? ` ×${count}` : "";
    const classes = ["cell", s.name === "pass_undelegated" ? "undelegated" : "", view.statuses.has(grid.status[ri]) ? "" : "dim",
                     ri === view.selected ? "selected" : ""].filter(Boolean).join(" ");
    const title = `${s.name}${nodes ? ` · delegated nodes${nodes}` : ""} · ${data.cases[grid.case[ri]]} · ${flowName(grid.flow[ri])}`;
    return `<div class="${classes}" data-result="${ri}" data-status="${s.name}" tabindex="-1" ` +
      `style="background-color:${s.color};color:${s.text}" title="${esc(title)}">${esc(s.label)}${nodes}${subtests}</div>`;
  }

  function drawRows() {
    const box = $("grid");
    const top = Math.max(0, box.scrollTop - $("grid-head").offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(view.visible.length, Math.ceil((top + box.clientHeight) / ROW) + OVERSCAN);
    const html = [];
    for (let k = first; k < last; k++) {
      const row = view.visible[k];
      html.push(`<div class="grid-row" style="top:${k * ROW}px;grid-template-columns:var(--cols)" data-case="${row.i}">` +
        `<div class="case mono" title="${esc(row.name)}">${esc(row.name)}</div>` +
        view.columns.map((c) => cellHtml(row.cells[c])).join("") + `</div>`);
    }
    $("grid-body").innerHTML = html.join("");
  }

  function wire() {
    let pending = false;
    $("grid").addEventListener("scroll", () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; drawRows(); });
    });
    window.addEventListener("resize", () => drawRows());
    $("grid-head").addEventListener("click", (e) => {
      const h = e.target.closest("[data-sort]");
      if (!h) return;
      const key = h.dataset.sort;
      view.dir = view.sort === key ? -view.dir : 1;
      view.sort = key;
      update();
    });
    $("grid-body").addEventListener("click", (e) => {
      const cell = e.target.closest(".cell[data-result]");
      if (cell) detail.show(Number(cell.dataset.result));
    });
  }

  return { update, wire };
})();
