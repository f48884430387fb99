// shared: the data and state all parts use; a backend's details are unpacked on first use.
const shared = await (async () => {
  const $ = (id) => document.getElementById(id);

  // Base64 -> bytes -> gunzip (DecompressionStream) -> JSON.
  async function unpack(id) {
    const text = $(id).textContent;
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }
  // A column of page.py's _column: the values, or interned text {strings, index}.
  function column(c) {
    return Array.isArray(c) ? c : c.index.map((i) => (i < 0 ? null : c.strings[i]));
  }

  const data = await unpack("etsuite-data");  // page.py's core
  const statuses = data.statuses;  // in the contract's order, with their look
  const grid = data.grid;  // columns, one entry per result (ri)
  const resultCount = grid.status.length;
  const fieldIndex = Object.fromEntries(data.fields.map((name, i) => [name, i]));  // in a record

  // Each result's backend (the part of the details holding it) and its place there.
  const placeInBackend = new Int32Array(resultCount);
  {
    const next = new Array(data.backends.length).fill(0);
    for (let ri = 0; ri < resultCount; ri++) placeInBackend[ri] = next[data.flows[grid.flow[ri]].backend_index]++;
  }
  const loaded = new Map();  // backend index -> Promise of its results' details
  function backendDetails(b) {
    if (!loaded.has(b)) loaded.set(b, unpack(`etsuite-details-${b}`).then((part) => {
      const r = Object.fromEntries(Object.entries(part.results).map(([k, c]) => [k, column(c)]));
      const cols = data.fields.map((name) => column(part.records[name]));
      const out = [];
      let k = 0;
      for (let i = 0; i < r.nodeid.length; i++) {
        const records = [];
        for (let j = 0; j < r.records[i]; j++, k++) records.push(cols.map((c) => c[k]));
        out.push({ nodeid: r.nodeid[i], outcome: r.outcome[i], phase: r.phase[i], duration: r.duration[i],
                   run: r.run[i], longrepr: r.longrepr[i], repro: r.repro[i], records });
      }
      return out;
    }));
    return loaded.get(b);
  }
  const backendOf = (ri) => data.flows[grid.flow[ri]].backend_index;
  async function resultDetails(ri) { return (await backendDetails(backendOf(ri)))[placeInBackend[ri]]; }

  // One row per case, its result per flow (-1: none); hay: what a text filter searches.
  const rows = data.cases.map((name, i) => ({ i, name, cells: new Int32Array(data.flows.length).fill(-1),
                                           hay: null }));
  for (let ri = 0; ri < resultCount; ri++) rows[grid.case[ri]].cells[grid.flow[ri]] = ri;
  const statusCounts = new Array(statuses.length).fill(0);
  for (let ri = 0; ri < resultCount; ri++) statusCounts[grid.status[ri]]++;

  // What the reader chose and sees (selected: the result in the detail panel).
  const view = { backend: "", flow: "", text: "", statuses: new Set(statuses.map((_, i) => i)),
                 sort: "name", dir: 1, columns: [], visible: [], selected: -1 };

  return { $, data, statuses, grid, resultCount, fieldIndex, placeInBackend, backendDetails, backendOf,
           resultDetails, rows, statusCounts, view };
})();
