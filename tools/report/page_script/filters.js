// filters: which flows and cases the matrix shows for the choices in `view`, in what order.
const filters = (() => {
  const { data, statuses, grid, resultCount, placeInBackend, backendDetails, backendOf, rows, view } = shared;
  const { firstLine, backendName, recordValue } = format;

  // What a text filter searches: the case name, its records' errors and pytest's first
  // line. The errors are in the details, unpacked for the backends shown on first use.
  async function searchable(backends) {
    const parts = await Promise.all(backends.map((b) => backendDetails(b)));
    for (let ri = 0; ri < resultCount; ri++) {
      const row = rows[grid.case[ri]];
      if (row.hay === null) row.hay = row.name.toLowerCase();
      if (!backends.includes(backendOf(ri)) || row.searched?.has(ri)) continue;
      (row.searched ??= new Set()).add(ri);
      const res = parts[backends.indexOf(backendOf(ri))][placeInBackend[ri]];
      const errors = res.records.map((rec) => recordValue(rec, "error")).filter(Boolean);
      if (res.longrepr) errors.push(firstLine(res.longrepr));
      if (errors.length) row.hay += "\n" + errors.join("\n").toLowerCase();
    }
  }

  function computeColumns() {
    const cols = data.flows.map((_, i) => i).filter((i) =>
      (!view.backend || (data.flows[i].backend ?? "") === view.backend) && (view.flow === "" || String(i) === view.flow));
    const firstSeen = [];
    cols.forEach((i) => { const b = backendName(i); if (!firstSeen.includes(b)) firstSeen.push(b); });
    return cols.sort((a, b) => firstSeen.indexOf(backendName(a)) - firstSeen.indexOf(backendName(b)) || a - b);
  }

  function rowMatches(row) {
    let any = false;
    for (const c of view.columns) {
      const ri = row.cells[c];
      if (ri >= 0 && view.statuses.has(grid.status[ri])) { any = true; break; }
    }
    return any && (!view.text || row.hay.includes(view.text));
  }

  function countKind(row, test) {
    let n = 0;
    for (const c of view.columns) {
      const ri = row.cells[c];
      if (ri >= 0 && test(statuses[grid.status[ri]])) n++;
    }
    return n;
  }

  function sortRows(list) {
    const key = view.sort;
    let score;
    if (key === "fail") score = (row) => -countKind(row, (s) => s.kind === "failing");
    else if (key === "undelegated") score = (row) => -countKind(row, (s) => s.name === "pass_undelegated");
    else if (key !== "name") {
      const f = Number(key);
      score = (row) => (row.cells[f] >= 0 ? grid.status[row.cells[f]] : statuses.length);
    }
    const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    list.sort(score ? (a, b) => view.dir * (score(a) - score(b)) || byName(a, b) : (a, b) => view.dir * byName(a, b));
    return list;
  }

  return { searchable, computeColumns, rowMatches, sortRows };
})();
