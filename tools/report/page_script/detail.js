// detail: the panel that opens one result (test, repro, records), and tables whose rows open one.
const detail = (() => {
  const { $, data, statuses, grid, fieldIndex, resultDetails, view } = shared;
  const { esc, seconds, bytes, num, badge, flowName, backendName, recordValue } = format;

  // A table whose rows open a result's detail, as the changes' tables do.
  function linkedRows(id, head, rows) {
    $(id).innerHTML = `<thead><tr>${head.map((h) => `<th class="name">${h}</th>`).join("")}</tr></thead>` +
      `<tbody>${rows.map(([ri, cells]) => `<tr class="link" data-result="${ri}">${cells.map((c) => `<td class="name">${c}</td>`).join("")}</tr>`).join("")}</tbody>`;
    $(id).addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-result]");
      if (row) show(Number(row.dataset.result));
    });
  }

  function histogram(ops) {
    const entries = Object.entries(ops || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    if (!entries.length) return "–";
    return `<table>${entries.map(([op, n]) => `<tr><td class="mono">${esc(op)}</td><td>×${esc(n)}</td></tr>`).join("")}</table>`;
  }

  function outputsTable(outputs) {
    if (!outputs || !outputs.length) return "–";
    const keys = [...new Set(outputs.flatMap((o) => Object.keys(o || {})))];
    return `<table><tr><th>output</th>${keys.map((k) => `<th>${esc(k)}</th>`).join("")}</tr>` +
      outputs.map((o, i) => `<tr><td>${i}</td>${keys.map((k) => `<td>${num((o || {})[k])}</td>`).join("")}</tr>`).join("") + `</table>`;
  }

  function timingsTable(timings) {
    const entries = Object.entries(timings || {});
    if (!entries.length) return "–";
    entries.sort((a, b) => (data.stages.indexOf(a[0]) + 99) % 99 - (data.stages.indexOf(b[0]) + 99) % 99);
    const total = entries.reduce((sum, [, v]) => sum + (v || 0), 0);
    return `<table>${entries.map(([stage, v]) => `<tr><td>${esc(stage)}</td><td>${seconds(v)}</td></tr>`).join("")}` +
      `<tr><th>total</th><th>${seconds(total)}</th></tr></table>`;
  }

  // How each contract field is shown; a field without an entry (a newer contract) is shown as JSON.
  const FIELD_VIEW = {
    test_id: null, test_case: null, backend: null, flow: null, subtest: null, repro: null,
    status: (v) => badge(statuses.findIndex((s) => s.name === v)),
    stage: (v) => esc(v ?? "–"),
    error: (v) => (v ? `<pre class="error">${esc(v)}</pre>` : "–"),
    seed: (v) => esc(v ?? "–"),
    params: (v) => (v && Object.keys(v).length ? `<code>${esc(JSON.stringify(v))}</code>` : "–"),
    suite: (v) => esc(v ?? "–"),
    timings: timingsTable,
    delegated_nodes: (v) => esc(v ?? "–"),
    undelegated_nodes: (v) => esc(v ?? "–"),
    delegated_ops: histogram,
    undelegated_ops: histogram,
    pte_size: (v) => (v == null ? "–" : `${bytes(v)} <span class="note">(${esc(v)} bytes)</span>`),
    outputs: outputsTable,
    runtime: (v) => esc(v ?? "–"),
  };
  const FIELD_LABEL = { pte_size: ".pte size", outputs: "error statistics", delegated_ops: "delegated ops",
                        undelegated_ops: "undelegated ops", delegated_nodes: "delegated nodes",
                        undelegated_nodes: "undelegated nodes" };

  function recordHtml(rec) {
    const parts = data.fields.map((name) => {
      const shown = name in FIELD_VIEW ? FIELD_VIEW[name] : (v) => `<code>${esc(JSON.stringify(v))}</code>`;
      return shown ? `<dt>${esc(FIELD_LABEL[name] || name)}</dt><dd data-field="${name}">${shown(rec[fieldIndex[name]])}</dd>` : "";
    });
    return `<div class="record"><h3>subtest ${esc(recordValue(rec, "subtest"))}</h3><dl>${parts.join("")}</dl></div>`;
  }

  async function show(ri) {
    view.selected = ri;
    const res = await resultDetails(ri);
    if (view.selected !== ri) return;  // another cell was opened meanwhile
    const run = data.runs[res.run];
    const f = grid.flow[ri];
    const records = res.records;
    const longrepr = res.longrepr
      ? `<h3>pytest says (${esc(res.phase || res.outcome)})</h3><pre>${esc(res.longrepr.slice(-4000))}</pre>` : "";
    $("detail-body").innerHTML =
      `<h2 class="mono">${esc(res.nodeid)}</h2>` +
      `<dl><dt>status</dt><dd id="detail-status">${badge(grid.status[ri])}</dd>` +
      `<dt>flow</dt><dd>${esc(flowName(f))} <span class="note">(${esc(backendName(f))}${data.flows[f].description ? ": " + esc(data.flows[f].description) : ""})</span></dd>` +
      `<dt>pytest outcome</dt><dd>${esc(res.outcome)}${res.phase ? " in " + esc(res.phase) : ""}</dd>` +
      `<dt>duration</dt><dd>${seconds(res.duration)}</dd>` +
      `<dt>run</dt><dd class="mono">${esc(run.path)} <span class="note">torch ${esc(run.torch ?? "?")}, executorch ${esc(run.executorch ?? "?")}, seed ${esc(run.seed ?? "?")} (seed policy ${esc(run.seed_policy)})</span></dd></dl>` +
      `<h3>Reproduce</h3><div class="repro"><pre id="repro-text">${esc(res.repro)}</pre>` +
      `<button id="copy-repro" class="copy">copy</button></div>` +
      longrepr + (records.length ? records.map(recordHtml).join("") : `<p class="note">No subtest record.</p>`);
    $("detail").hidden = false;
    $("copy-repro").addEventListener("click", () => copy(res.repro, $("copy-repro")));
    for (const cell of $("grid-body").querySelectorAll(".cell.selected")) cell.classList.remove("selected");
    const cell = $("grid-body").querySelector(`.cell[data-result="${ri}"]`);
    if (cell) cell.classList.add("selected");
  }

  function hide() {
    $("detail").hidden = true;
    view.selected = -1;
    for (const cell of $("grid-body").querySelectorAll(".cell.selected")) cell.classList.remove("selected");
  }

  function copy(text, button) {
    const done = (ok) => {
      button.textContent = ok ? "copied" : "select and copy";
      button.classList.toggle("done", ok);
      setTimeout(() => { button.textContent = "copy"; button.classList.remove("done"); }, 2000);
    };
    const fallback = () => {
      // file:// pages may lack the async clipboard: copy through a selected text area.
      const area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (error) { ok = false; }
      area.remove();
      done(ok);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => done(true), fallback);
    } else fallback();
  }

  function wire() {
    $("detail-close").addEventListener("click", hide);
    document.addEventListener("keydown", (e) => { if (e.key === "Escape") hide(); });
  }

  return { show, hide, wire, linkedRows };
})();
