// history: per flow and run, correct / delegated / tests and trends; the changes since the baseline.
const history = (() => {
  const { $, data, statuses } = shared;
  const { esc, percent, badge, firstLine } = format;

  function draw() {
    const historyData = data.history;
    if (!historyData) return;
    $("history-section").hidden = false;
    const points = historyData.points;
    const flows = [];
    points.slice().reverse().forEach((p) => Object.keys(p.flows).forEach((f) => { if (!flows.includes(f)) flows.push(f); }));
    const head = points.map((p) => `<th>${esc(p.label)}<br><span class="note">${esc(p.started ?? "")}</span><br>` +
      `<span class="note">${p.versions.map((v) => `torch ${esc(v.torch ?? "?")}, executorch ${esc(v.executorch ?? "?")}`).join("<br>")}</span></th>`);
    const body = flows.map((f) => {
      const series = points.map((p) => p.flows[f] || null);
      const cells = series.map((c, k) => {
        if (!c) return `<td class="zero">–</td>`;
        const before = k ? series[k - 1] : null;
        const delta = (now, was) => {
          if (!before) return "";
          const d = now - was;
          return d ? ` <span class="${d > 0 ? "up" : "down"}">${d > 0 ? "+" : ""}${d}</span>` : "";
        };
        return `<td title="correct / delegated / tests">${c.passing}${delta(c.passing, before?.passing)} / ` +
          `${c.delegated}${delta(c.delegated, before?.delegated)} / ${c.total}</td>`;
      });
      const backend = series.find(Boolean)?.backend ?? "";
      const rate = series.map((c) => (c ? c.pass_rate : null));
      const runtime = series.map((c) => (c ? c.median_runtime : null));
      return `<tr data-flow="${esc(f)}"><td class="name">${esc(backend)}</td><td class="name">${esc(f || "(no flow)")}</td>${cells.join("")}<td>${spark(series)}</td>` +
        `<td>${trend("trend-rate", rate, points, 1, percent)}</td>` +
        `<td>${trend("trend-runtime", runtime, points, null, (v) => `${(v * 1e3).toFixed(3)} ms`)}</td></tr>`;
    });
    $("history").innerHTML = `<thead><tr><th class="name">backend</th><th class="name">flow</th>${head.join("")}<th>trend</th>` +
      `<th>pass rate</th><th>median time per call</th></tr></thead><tbody>${body.join("")}</tbody>`;
    drawReview(historyData.changes);
    drawChanges(historyData.changes);
  }

  function spark(series) {
    const w = 120, h = 28, max = Math.max(1, ...series.map((c) => (c ? c.total : 0)));
    const line = (key, color) => {
      const pts = series.map((c, k) => c ? `${(series.length === 1 ? w / 2 : (k * (w - 4)) / (series.length - 1) + 2).toFixed(1)},${(h - 2 - (c[key] / max) * (h - 4)).toFixed(1)}` : null).filter(Boolean);
      return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(" ")}"/>` +
        pts.map((p) => `<circle r="2" fill="${color}" cx="${p.split(",")[0]}" cy="${p.split(",")[1]}"/>`).join("");
    };
    return `<svg class="spark" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" aria-label="correct (light) and delegated (dark) over runs">` +
      line("passing", "#84caa0") + line("delegated", "#14532d") + "</svg>";
  }

  // One flow's values across the runs as a small line chart: a point per run that has one
  // (hover: the run and the value), from 0 to `top` (null: the series' own highest).
  function trend(cls, values, points, top, show) {
    const w = 140, h = 32, known = values.filter((v) => v != null);
    if (!known.length) return `<span class="zero">–</span>`;
    const max = top ?? (Math.max(...known) * 1.1 || 1);
    const x = (k) => (values.length === 1 ? w / 2 : 4 + (k * (w - 8)) / (values.length - 1));
    const y = (v) => h - 3 - (v / max) * (h - 6);
    const at = values.map((v, k) => (v == null ? null : [x(k), y(v), v, k])).filter(Boolean);
    return `<svg class="trend ${cls}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img">` +
      `<line class="axis" x1="0" x2="${w}" y1="${h - 3}" y2="${h - 3}"/>` +
      `<polyline fill="none" stroke="#1849a9" stroke-width="1.5" points="${at.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" ")}"/>` +
      at.map(([px, py, v, k]) => `<circle class="point" r="2.5" fill="#1849a9" cx="${px.toFixed(1)}" cy="${py.toFixed(1)}">` +
        `<title>${esc(points[k].label)}: ${esc(show(v))}</title></circle>`).join("") +
      `</svg> <span class="note">${esc(show(known[known.length - 1]))}</span>`;
  }

  // The baseline comparison as one list a reviewer scans, worst first (page.py's
  // REVIEW_ORDER); each row opens its case's record.
  function drawReview(changes) {
    if (!changes) return;
    const factor = (x) => (x == null ? "" : typeof x !== "number" ? esc(x) : `${Math.max(x, 1 / x).toFixed(2)}x`);
    const rows = changes.review.map((r) => {
      const name = r.result != null ? `<a href="#detail" class="mono" data-result="${r.result}">${esc(r.nodeid)}</a>` :
        `<span class="mono">${esc(r.nodeid)}</span>`;
      return `<tr class="${r.result != null ? "link" : ""} ${r.worse ? "worse" : ""}"${r.result != null ? ` data-result="${r.result}"` : ""}>` +
        `<td class="name">${esc(r.kind)}</td><td class="name">${esc(r.metric)}</td><td class="name">${name}</td>` +
        `<td>${esc(r.subtest ?? "")}</td><td class="name">${esc(r.flow ?? "")}</td><td>${esc(r.was ?? "–")}</td>` +
        `<td>${esc(r.now ?? "–")}</td><td>${factor(r.factor)}</td></tr>`;
    });
    $("review-wrap").innerHTML = `<h3>Since the baseline, worst first (${rows.length})</h3>` +
      (rows.length ? `<p class="note">Status regressions and lost delegation first, then each subtest metric ` +
        `that drifted past its noise floor, most times worse first; then other status changes, what got better, and fixes. ` +
        `A click opens the case.</p><div class="table-wrap"><table id="review" class="numbers changes-list"><thead><tr>` +
        ["change", "metric", "test", "subtest", "flow", "was", "now", "factor"].map((h) => `<th class="name">${h}</th>`).join("") +
        `</tr></thead><tbody>${rows.join("")}</tbody></table></div>` : `<p class="note">Nothing changed beyond its threshold.</p>`);
    $("review-wrap").addEventListener("click", (event) => {
      const row = event.target.closest("[data-result]");
      if (!row) return;
      event.preventDefault();
      detail.show(Number(row.dataset.result));
    });
  }

  function drawChanges(changes) {
    if (!changes) return;
    const statusIndex = Object.fromEntries(statuses.map((s, i) => [s.name, i]));
    const table = (title, items, id) => {
      if (!items.length) return `<h3>${title}: none</h3>`;
      const body = items.map((c) => {
        const target = c.result != null ? ` class="link" data-result="${c.result}"` : "";
        const side = (x) => (x ? badge(statusIndex[x.status]) : "–");
        const error = firstLine((c.now && c.now.error) || (c.was && c.was.error));
        return `<tr${target}><td class="name mono" title="${esc(c.nodeid)}">${esc(c.nodeid)}</td><td>${esc(c.flow ?? "")}</td>` +
          `<td>${side(c.was)}</td><td>${side(c.now)}</td><td class="name">${esc(error)}</td></tr>`;
      });
      return `<h3>${title} (${items.length})</h3><div class="table-wrap"><table id="${id}" class="numbers changes-list">` +
        `<thead><tr><th class="name">test</th><th>flow</th><th>was</th><th>now</th><th class="name">error</th></tr></thead>` +
        `<tbody>${body.join("")}</tbody></table></div>`;
    };
    const lost = changes.lost_delegation;
    $("changes").innerHTML = `<p class="note">Since ${esc(changes.against.join(", "))}: ${changes.regressions.length} regressions, ` +
      `${lost.length} lost delegation, ` +
      `${changes.fixes.length} fixes, ${changes.other.length} other status changes, ${changes.new.length} new, ${changes.removed.length} removed tests.</p>` +
      table("Regressions (passed before, fail now)", changes.regressions, "regressions") +
      table("Lost delegation (passed delegated before, pass undelegated now)", lost, "lost-delegation") +
      table("Fixes (failed before, pass now)", changes.fixes, "fixes") +
      `<details><summary>Other changes, new and removed tests</summary>` +
      table("Other status changes", changes.other, "other-changes") + table("New tests", changes.new, "new-tests") +
      table("Removed tests", changes.removed, "removed-tests") + `</details>`;
    $("changes").addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-result]");
      if (row) detail.show(Number(row.dataset.result));
    });
  }

  return { draw };
})();
