// The support-matrix page: unpacks the data tools/page.py embedded, draws the summary,
// the history and the matrix. The data is gzip-compressed JSON in base64: the core (the
// summary, and the matrix as columns of small integers) is unpacked at start; each
// backend's details (node ids, errors, records) only when a cell of it is opened or a
// text filter needs them. The matrix is virtualised (only rows in view are in the DOM),
// so 40,000 tests stay responsive. No framework, no network.
"use strict";
(async function () {
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

  const D = await unpack("etsuite-data");
  const ROW = 26;
  const WHERE_OPEN = 10;  // tests a place of "Where it breaks" lists without a click
  const OVERSCAN = 12;
  const S = D.statuses;
  const G = D.grid;
  const N = G.status.length;
  const FI = Object.fromEntries(D.fields.map((name, i) => [name, i]));

  // Each result's backend (the part of the details holding it) and its place there.
  const place = new Int32Array(N);
  {
    const next = new Array(D.backends.length).fill(0);
    for (let ri = 0; ri < N; ri++) place[ri] = next[D.flows[G.flow[ri]].backend_index]++;
  }
  const loaded = new Map();  // backend index -> Promise of its results' details
  function details(b) {
    if (!loaded.has(b)) loaded.set(b, unpack(`etsuite-details-${b}`).then((part) => {
      const r = Object.fromEntries(Object.entries(part.results).map(([k, c]) => [k, column(c)]));
      const cols = D.fields.map((name) => column(part.records[name]));
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
  const backendOf = (ri) => D.flows[G.flow[ri]].backend_index;
  async function result(ri) { return (await details(backendOf(ri)))[place[ri]]; }

  // ------------------------------------------------------------ small helpers
  // The one way text from the data enters HTML: every value a report can set goes
  // through esc (or textContent); only the page's own markup and computed numbers do not.
  function esc(value) {
    return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;",
      ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  // The figure helpers below return HTML: a value that is not a number (a report
  // the loader let through, or a newer field) is shown as escaped text, never raw.
  function seconds(value) {
    if (value == null) return "–";
    if (typeof value !== "number") return esc(value);
    if (value < 60) return value.toFixed(value < 1 ? 3 : 1) + " s";
    const m = Math.floor(value / 60), s = Math.round(value % 60);
    return m < 60 ? `${m} m ${String(s).padStart(2, "0")} s` : `${Math.floor(m / 60)} h ${m % 60} m`;
  }
  function bytes(value) {
    if (value == null) return "–";
    if (typeof value !== "number") return esc(value);
    if (value < 1024) return value + " B";
    if (value < 1024 * 1024) return (value / 1024).toFixed(1) + " KiB";
    return (value / 1024 / 1024).toFixed(2) + " MiB";
  }
  function num(value) {
    if (typeof value !== "number") return esc(value ?? "–");
    if (value === 0 || Number.isInteger(value)) return String(value);
    return Math.abs(value) < 1e-3 || Math.abs(value) >= 1e6 ? value.toExponential(3) : value.toPrecision(5);
  }
  function percent(share) { return share == null ? "n/a" : (100 * share).toFixed(1) + " %"; }
  function badge(si) {
    const s = S[si];
    return `<span class="badge ${s.name === "pass_undelegated" ? "undelegated" : ""}" style="background:${s.color};color:${s.text}">${esc(s.name)}</span>`;
  }
  function firstLine(text) {
    const lines = String(text || "").split("\n").map((l) => l.trim()).filter(Boolean);
    const e = lines.find((l) => l.startsWith("E "));
    return e ? e.slice(2) : (lines[0] || "");
  }
  function distinct(values) {
    const seen = [...new Set(values.map((v) => v ?? "unknown"))];
    return seen.join(", ") || "unknown";
  }
  const flowName = (f) => D.flows[f].flow ?? "(no flow)";
  const backendName = (f) => D.flows[f].backend ?? "(none)";
  const recordValue = (rec, name) => (name in FI ? rec[FI[name]] : undefined);

  // ------------------------------------------------------------ the matrix model
  const rows = D.cases.map((name, i) => ({ i, name, cells: new Int32Array(D.flows.length).fill(-1),
                                           hay: null }));
  for (let ri = 0; ri < N; ri++) rows[G.case[ri]].cells[G.flow[ri]] = ri;
  const statusCounts = new Array(S.length).fill(0);
  for (let ri = 0; ri < N; ri++) statusCounts[G.status[ri]]++;

  // What a text filter searches: the case name, its records' errors and pytest's first
  // line. The errors are in the details, unpacked for the backends shown on first use.
  async function searchable(backends) {
    const parts = await Promise.all(backends.map((b) => details(b)));
    for (let ri = 0; ri < N; ri++) {
      const row = rows[G.case[ri]];
      if (row.hay === null) row.hay = row.name.toLowerCase();
      if (!backends.includes(backendOf(ri)) || row.searched?.has(ri)) continue;
      (row.searched ??= new Set()).add(ri);
      const res = parts[backends.indexOf(backendOf(ri))][place[ri]];
      const errors = res.records.map((rec) => recordValue(rec, "error")).filter(Boolean);
      if (res.longrepr) errors.push(firstLine(res.longrepr));
      if (errors.length) row.hay += "\n" + errors.join("\n").toLowerCase();
    }
  }

  const state = { backend: "", flow: "", text: "", statuses: new Set(S.map((_, i) => i)),
                  sort: "name", dir: 1, columns: [], visible: [], selected: -1 };

  // ------------------------------------------------------------ header facts and summary
  function drawFacts() {
    $("title").textContent = D.title;
    document.title = D.title;
    const incomplete = D.runs.filter((r) => !r.finished).length;
    $("facts").innerHTML = [
      `${N} tests in ${D.runs.length} run${D.runs.length === 1 ? "" : "s"}` +
        (incomplete ? ` (<b>${incomplete} incomplete</b>)` : ""),
      `torch ${esc(distinct(D.runs.map((r) => r.torch)))}`,
      `executorch ${esc(distinct(D.runs.map((r) => r.executorch)))}`,
      seedFacts(D.runs),
      startedRange(D.runs.map((r) => r.started).filter(Boolean).sort()),
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
  function drawSummary() {
    const present = S.map((_, i) => i).filter((i) => D.summary.total.counts[i]);
    const table = $("summary");
    table.innerHTML = summaryHtml(present, false);
    if (table.offsetWidth > $("summary-section").clientWidth) {
      table.innerHTML = summaryHtml(present.filter((i) => S[i].kind !== "passing" && S[i].kind !== "failing"), true);
      table.classList.add("folded");
    }
    table.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-flow]");
      if (!link) return;
      const f = Number(link.dataset.flow);
      state.backend = D.flows[f].backend ?? "";
      state.flow = String(f);
      syncControls();
      update();
    });
  }

  const wrapAtUnderscores = (name) => esc(name).replace(/_/g, "_<wbr>");

  function summaryHtml(shown, folded) {
    const head = [["flow", "name"], ["tests", ""], ["correct", ""], ["delegated", ""], ["failing", ""],
                  ...shown.map((i) => [`<span class="swatch" style="background:${S[i].color}"></span>${wrapAtUnderscores(S[i].name)}`, "status"]),
                  ["pass rate", "rate"], ["test time", ""]];
    const width = head.length;
    const failingCell = (r) => {
      if (!folded || !r.failing) return r.failing ? `${r.failing}` : `<span class="zero">0</span>`;
      const named = Object.entries(r.counts).filter(([i]) => S[i].kind === "failing")
        .map(([i, n]) => `${esc(S[i].name.replace(/^fail_/, ""))} ${n}`);
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
    const notes = Object.fromEntries(D.backends.map((b) => [b.name, b]));
    let previous;
    const body = [];
    D.summary.rows.forEach((r, f) => {
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
    if (D.summary.rows.length > 1) body.push(line(D.summary.total, "total", `<td class="name">all</td>`));
    return `<thead><tr>${head.map(([h, cls]) => `<th class="${cls}">${h}</th>`).join("")}</tr></thead><tbody>${body.join("")}</tbody>`;
  }

  // ------------------------------------------------------------ verdicts to watch
  // A table whose rows open a result's detail, as the changes' tables do.
  function linkedRows(id, head, rows) {
    $(id).innerHTML = `<thead><tr>${head.map((h) => `<th class="name">${h}</th>`).join("")}</tr></thead>` +
      `<tbody>${rows.map(([ri, cells]) => `<tr class="link" data-result="${ri}">${cells.map((c) => `<td class="name">${c}</td>`).join("")}</tr>`).join("")}</tbody>`;
    $(id).addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-result]");
      if (row) showDetail(Number(row.dataset.result));
    });
  }

  // Passes that used most of their bound (all of them; the markdown lists the first 50).
  function drawBorderline() {
    const B = D.borderline;
    if (!B) return;
    $("borderline-section").hidden = false;
    const perFlow = B.flows.map(([f, n]) => `${esc(flowName(f))} ${n}`).join(" · ");
    $("borderline-note").innerHTML = (B.rows.length ? `${B.rows.length} passing subtest${B.rows.length === 1 ? "" : "s"} whose worst ` +
      `output's max error reached ${B.ratio}x of its rule's bound or more (1x is the bound): the passes most likely ` +
      `to fail at another seed, closest first. A click opens the record.` :
      `No passing subtest reached ${B.ratio}x of its rule's bound.`) + ` Per flow: ${perFlow}.`;
    $("borderline").hidden = !B.rows.length;
    linkedRows("borderline", ["test case", "flow", "worst error/bound", "margin", "rule", "repro"],
      B.rows.map(([ri, subtestNumber, ratio, margin, rule, repro]) => {
        const subtest = subtestNumber != null ? ` (subtest ${esc(subtestNumber)})` : "";
        return [ri, [`<span class="mono">${esc(D.cases[G.case[ri]])}${subtest}</span>`, esc(flowName(G.flow[ri])),
          `${typeof ratio === "number" ? ratio.toFixed(2) : esc(ratio)}x`, esc(margin ?? "–"),
          esc(rule ?? "–"), `<span class="mono">${esc(repro)}</span>`]];
      }));
  }

  // Per flow, N of M core ATen overloads held by operator tests' lowered graphs, with
  // the covered ones (test cases each), those held only by model tests and those no test
  // holds behind a click each.
  function drawCoreAten() {
    const C = D.core_aten;
    if (!C) return;
    $("core-aten-section").hidden = false;
    $("core-aten-note").textContent = `Of the ${C.total} overloads the installed torch tags core ATen, ` +
      `those the lowered graphs of operator tests held, per flow (a view's _copy and ExecuTorch's dim order ` +
      `ops count as the core op they replace). backends/suite/core_aten.toml says why each one no operator test ` +
      `covers is left out.`;
    const ops = (list) => (list.length ? `<details><summary>${list.length}</summary>` +
      `<span class="mono">${list.map(esc).join(", ")}</span></details>` : "0");
    // "N of M", opening each covered op with its operator test cases (and how many delegated it).
    const coveredCell = (covered, delegates) => `<details><summary>${covered.length} of ${C.total}</summary>` +
      `<span class="mono">${covered.map(([op, cases, inDelegate]) => `${esc(op)} ×${cases}` +
        (delegates ? ` (delegated ${inDelegate})` : "")).join(", ")}</span></details>`;
    $("core-aten").innerHTML = `<thead><tr>${["backend", "flow", "core ATen ops covered", "delegated in a case",
      "only in model tests", "not covered"].map((h) => `<th class="name">${h}</th>`).join("")}</tr></thead><tbody>` +
      C.flows.map(([f, covered, delegated, models, missing]) => `<tr><td class="name">${esc(backendName(f))}</td>` +
        `<td class="name">${esc(flowName(f))}</td><td class="name">${coveredCell(covered, delegated != null)}</td>` +
        `<td class="name">${delegated == null ? "–" : delegated}</td><td class="name">${ops(models)}</td>` +
        `<td class="name">${ops(missing)}</td></tr>`).join("") + `</tbody>`;
  }

  // Cases a non-strict [[fail]] entry declares: their pass is no fix, their xfail no real failure.
  function drawNonStrict() {
    const NS = D.non_strict;
    if (!NS.length) return;
    $("non-strict-section").hidden = false;
    const kinds = NS.map(([ri]) => S[G.status[ri]]);
    const failed = kinds.filter((s) => s.name === "xfail").length, passed = kinds.filter((s) => s.kind === "passing").length;
    $("non-strict-note").textContent = `${NS.length} test${NS.length === 1 ? "" : "s"} of cases declared by a non-strict ` +
      `[[fail]] entry (input-dependent: each may fail with the declared status or pass, and neither fails the run): ` +
      `${failed} failed as declared (xfail), ${passed} passed (counted as correct).`;
    linkedRows("non-strict", ["test case", "flow", "this run", "entry"], NS.map(([ri, entry, observed]) => {
      return [ri, [`<span class="mono">${esc(D.cases[G.case[ri]])}</span>`, esc(flowName(G.flow[ri])),
        badge(G.status[ri]) + (observed ? ` <span class="note">the pipeline said ${esc(observed)}</span>` : ""),
        `<span class="mono">${esc(entry ?? "–")}</span>`]];
    }));
  }

  // Localized failures per flow, grouped by the op they start at (tally.places, as the
  // summary's section); a model failure whose op fails as an operator test too says so.
  // Every case is a link that opens its record.
  function drawWhere() {
    const W = D.where;
    if (!W) return;
    $("where-section").hidden = false;
    const failures = (n) => `${n} failure${n === 1 ? "" : "s"}`;
    const subtests = (list) => (list && list.length ? ` <span class="note">subtest${list.length === 1 ? "" : "s"} ${list.map(esc).join(", ")}</span>` : "");
    const link = (ri, text, list) => `<a href="#detail" class="mono" data-result="${ri}">${esc(text)}</a>${subtests(list)}`;
    const localized = W.groups.reduce((n, g) => n + g.failures, 0);
    $("where-note").innerHTML = `${failures(localized)} localized to the op they start at: the first node whose runtime ` +
      `output left the flow's rule, or the delegate call that holds it. A click opens the record.` +
      (W.not_localized.length ? ` ${failures(W.not_localized.length)} could not be localized: the record's ` +
        `<code>localization</code> says why (listed below).` : "");
    const flows = [...new Set(W.groups.map((g) => g.flow))].sort((a, b) => a - b);
    const html = flows.map((f) => {
      const groups = W.groups.map((g, k) => [g, k]).filter(([g]) => g.flow === f);
      return `<div class="where-flow"><h3>on ${esc(flowName(f))} <span class="note">(${esc(backendName(f))})</span></h3><ul>` +
        groups.map(([g, k]) => {
          const cases = `<ul>${g.tests.map(([ri, list, also]) => `<li>${link(ri, D.cases[G.case[ri]], list)}` +
            (also.length ? ` <span class="also">· also fails as an operator test: ` +
              also.map(([oi, name]) => link(oi, name)).join(", ") + `</span>` : "") + `</li>`).join("")}</ul>`;
          // A place that breaks many tests lists them behind a click.
          const listed = g.tests.length > WHERE_OPEN ? `<details><summary>its ${g.tests.length} tests</summary>${cases}</details>` : cases;
          return `<li class="where-place" id="where-${k}"><code>${esc(g.place)}</code> breaks ${esc(g.breaks)}${listed}</li>`;
        }).join("") + `</ul></div>`;
    });
    if (W.not_localized.length) {
      html.push(`<details class="where-unplaced"><summary>${failures(W.not_localized.length)} not localized</summary><ul>` +
        W.not_localized.map(([ri, subtest, reason]) => `<li>${link(ri, D.cases[G.case[ri]], subtest == null ? null : [subtest])} ` +
          `<span class="note">${esc(flowName(G.flow[ri]))}: ${esc(reason ?? "no reason recorded")}</span></li>`).join("") +
        `</ul></details>`);
    }
    $("where").innerHTML = html.join("");
    $("where").addEventListener("click", (event) => {
      const found = event.target.closest("a[data-result]");
      if (!found) return;
      event.preventDefault();
      showDetail(Number(found.dataset.result));
    });
  }

  // ------------------------------------------------------------ cost charts
  // Per flow, two sorted column charts drawn as inline SVG: each case's delegated share,
  // lowest first, and its time per call over the portable flow's, slowest first. Every
  // bar names its case and figures on hover and opens its record on a click.
  const CHART = { width: 560, height: 120, left: 44, right: 8, top: 8, bottom: 18, maxBar: 24 };

  function chartFrame(count) {
    const inner = CHART.width - CHART.left - CHART.right;
    const step = count ? Math.min(CHART.maxBar, inner / count) : 0;
    return { step, bar: Math.max(step * 0.8, 0.5), plot: CHART.height - CHART.top - CHART.bottom };
  }

  function gridLine(y, label) {
    return `<line class="axis" x1="${CHART.left}" x2="${CHART.width - CHART.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>` +
      `<text class="tick" x="${CHART.left - 4}" y="${(y + 4).toFixed(1)}" text-anchor="end">${esc(label)}</text>`;
  }

  function svgChart(cls, label, body) {
    return `<svg class="chart ${cls}" width="${CHART.width}" height="${CHART.height}" viewBox="0 0 ${CHART.width} ${CHART.height}" ` +
      `role="img" aria-label="${esc(label)}">${body}</svg>`;
  }

  function shareChart(rows) {
    const { step, bar, plot } = chartFrame(rows.length);
    const y = (share) => CHART.top + plot * (1 - share);
    const bars = rows.map(([ri, share], k) => {
      const height = Math.max(plot * share, 2);  // a share of 0 still shows, as a red line
      const color = share < 0.5 ? (share === 0 ? "#d92d20" : "#f79009") : "#1f8a4c";
      return `<rect class="bar" data-result="${ri}" x="${(CHART.left + k * step).toFixed(2)}" y="${(y(0) - height).toFixed(2)}" ` +
        `width="${bar.toFixed(2)}" height="${height.toFixed(2)}" fill="${color}"><title>${esc(D.cases[G.case[ri]])}: ` +
        `${percent(share)} of its computing nodes delegated</title></rect>`;
    });
    const under = rows.filter(([, share]) => share < 0.5).length;
    return svgChart("share-chart", "delegated share per case, lowest first",
      gridLine(y(1), "100 %") + gridLine(y(0.5), "50 %") + gridLine(y(0), "0 %") + bars.join("") +
      `<text class="tick" x="${CHART.left}" y="${CHART.height - 4}">${rows.length} case${rows.length === 1 ? "" : "s"}, ` +
      `${under} under half delegated</text>`);
  }

  // Ratios on a log scale, from 1/RANGE to RANGE times portable's time; beyond, clamped.
  const RANGE = 16;
  function runtimeChart(rows) {
    const { step, bar, plot } = chartFrame(rows.length);
    const y = (ratio) => {
      const clamped = Math.min(Math.max(ratio, 1 / RANGE), RANGE);
      return CHART.top + plot * (1 - (Math.log2(clamped) + Math.log2(RANGE)) / (2 * Math.log2(RANGE)));
    };
    const one = y(1);
    const bars = rows.map(([ri, said, secondsHere, secondsPortable, basis], k) => {
      const ratio = typeof said === "number" ? said : RANGE;  // "inf": portable took no measurable time
      const top = Math.min(y(ratio), one), height = Math.max(Math.abs(y(ratio) - one), 2);
      const color = ratio > 1 ? "#d92d20" : ratio < 1 ? "#1f8a4c" : "#98a2b3";  // grey: as fast
      return `<rect class="bar" data-result="${ri}" x="${(CHART.left + k * step).toFixed(2)}" y="${(ratio > 1 ? top : one - 1).toFixed(2)}" ` +
        `width="${bar.toFixed(2)}" height="${height.toFixed(2)}" fill="${color}" opacity="${basis === "one call" ? 0.6 : 1}">` +
        `<title>${esc(D.cases[G.case[ri]])}: ${typeof said === "number" ? said.toFixed(2) : esc(said)}x portable's time per call ` +
        `(${(secondsHere * 1e3).toFixed(3)} ms vs ${(secondsPortable * 1e3).toFixed(3)} ms, ${esc(basis)})</title></rect>`;
    });
    const slower = rows.filter(([, said]) => typeof said !== "number" || said > 1).length;
    return svgChart("runtime-chart", "time per call relative to portable, slowest first",
      gridLine(y(RANGE), `${RANGE}x`) + gridLine(y(4), "4x") + gridLine(one, "1x") + gridLine(y(1 / 4), "1/4x") +
      gridLine(y(1 / RANGE), `1/${RANGE}x`) + bars.join("") +
      `<text class="tick" x="${CHART.left}" y="${CHART.height - 4}">${rows.length} case${rows.length === 1 ? "" : "s"}, ` +
      `${slower} slower than portable</text>`);
  }

  function unmatchedNote(list) {
    if (!list.length) return "";
    const names = list.map((ri) => `<a href="#detail" class="mono" data-result="${ri}">${esc(D.cases[G.case[ri]])}</a>`).join(", ");
    const said = `${list.length} timed case${list.length === 1 ? " has" : "s have"} no portable counterpart ` +
      `(not in the portable run, or measured differently) and ${list.length === 1 ? "is" : "are"} not plotted`;
    return `<p class="note unmatched">${said}: ${list.length > WHERE_OPEN ? `<details><summary>show them</summary>${names}</details>` : names}</p>`;
  }

  function drawCosts() {
    const C = D.costs;
    if (!C) return;
    $("costs-section").hidden = false;
    const shares = new Map(C.shares.map(([f, rows]) => [f, rows]));
    const runtime = new Map(C.runtime.map(([f, rows, unmatched]) => [f, [rows, unmatched]]));
    const flows = [...new Set([...shares.keys(), ...C.timed_flows])].sort((a, b) => a - b);
    const noPortable = `<p class="note no-portable">No portable run in these reports: there is nothing to ` +
      `compare this flow's time per call with. Merge a portable run of the same tests (<code>make test-portable</code>) to see it.</p>`;
    const charts = (f) => {
      const share = shares.has(f) ? shareChart(shares.get(f)) :
        `<p class="note">${D.flows[f].delegates === false ? "Portable kernels only: nothing to delegate." : "No case was lowered."}</p>`;
      let time;
      if (!C.portable) time = noPortable;
      else if (!runtime.has(f)) time = `<p class="note">No call of this flow was timed.</p>`;
      else {
        const [rows, unmatched] = runtime.get(f);
        time = (rows.length ? runtimeChart(rows) : `<p class="note">No case has a portable counterpart.</p>`) + unmatchedNote(unmatched);
      }
      return `<figure><figcaption>Delegated share per case</figcaption>${share}</figure>` +
        `<figure><figcaption>Time per call beside portable</figcaption>${time}</figure>`;
    };
    // A flow's charts are drawn when they come near the view: at 40,000 tests and twenty
    // flows they are tens of thousands of bars the first screen does not need.
    $("costs").innerHTML = flows.map((f) => `<div class="cost-flow" data-flow="${f}"><h3>${esc(flowName(f))} ` +
      `<span class="note">(${esc(backendName(f))})</span></h3><div class="charts" style="min-height:${CHART.height + 20}px"></div></div>`).join("");
    const draw = (box) => {
      const target = box.querySelector(".charts");
      if (!target.dataset.drawn) { target.dataset.drawn = "1"; target.innerHTML = charts(Number(box.dataset.flow)); }
    };
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) if (entry.isIntersecting) { draw(entry.target); observer.unobserve(entry.target); }
    }, { rootMargin: "400px" });
    for (const box of $("costs").querySelectorAll(".cost-flow")) observer.observe(box);
    $("costs").addEventListener("click", (event) => {
      const found = event.target.closest("[data-result]");
      if (!found) return;
      event.preventDefault();
      showDetail(Number(found.dataset.result));
    });
  }

  // ------------------------------------------------------------ history
  function drawHistory() {
    const H = D.history;
    if (!H) return;
    $("history-section").hidden = false;
    const points = H.points;
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
    drawReview(H.changes);
    drawChanges(H.changes);
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
  function drawReview(C) {
    if (!C) return;
    const factor = (x) => (x == null ? "" : typeof x !== "number" ? esc(x) : `${Math.max(x, 1 / x).toFixed(2)}x`);
    const rows = C.review.map((r) => {
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
      showDetail(Number(row.dataset.result));
    });
  }

  function drawChanges(C) {
    if (!C) return;
    const statusIndex = Object.fromEntries(S.map((s, i) => [s.name, i]));
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
    const lost = C.lost_delegation;
    $("changes").innerHTML = `<p class="note">Since ${esc(C.against.join(", "))}: ${C.regressions.length} regressions, ` +
      `${lost.length} lost delegation, ` +
      `${C.fixes.length} fixes, ${C.other.length} other status changes, ${C.new.length} new, ${C.removed.length} removed tests.</p>` +
      table("Regressions (passed before, fail now)", C.regressions, "regressions") +
      table("Lost delegation (passed delegated before, pass undelegated now)", lost, "lost-delegation") +
      table("Fixes (failed before, pass now)", C.fixes, "fixes") +
      `<details><summary>Other changes, new and removed tests</summary>` +
      table("Other status changes", C.other, "other-changes") + table("New tests", C.new, "new-tests") +
      table("Removed tests", C.removed, "removed-tests") + `</details>`;
    $("changes").addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-result]");
      if (row) showDetail(Number(row.dataset.result));
    });
  }

  // ------------------------------------------------------------ controls
  function drawControls() {
    const backends = [...new Set(D.flows.map((f) => f.backend ?? ""))];
    $("filter-backend").innerHTML = `<option value="">all backends</option>` +
      backends.map((b) => `<option value="${esc(b)}">${esc(b || "(none)")}</option>`).join("");
    fillFlows();
    $("sort").innerHTML = `<option value="name">case name</option><option value="fail">most failures first</option>` +
      `<option value="undelegated">most undelegated first</option>` +
      D.flows.map((f, i) => `<option value="${i}">status in ${esc(f.flow ?? "(no flow)")}</option>`).join("");
    const chips = S.map((s, i) => statusCounts[i] ? `<button class="chip ${s.name === "pass_undelegated" ? "undelegated" : ""}" data-status="${i}" ` +
      `style="background:${s.color};color:${s.text}" title="${esc(s.name)}: show or hide">${esc(s.name)}<span class="n">${statusCounts[i]}</span></button>` : "");
    $("legend").innerHTML = chips.join("") + `<button class="chip action" data-action="all">all statuses</button>` +
      `<button class="chip action" data-action="failing">failing only</button>`;

    $("filter-backend").addEventListener("change", (e) => { state.backend = e.target.value; state.flow = ""; fillFlows(); update(); });
    $("filter-flow").addEventListener("change", (e) => { state.flow = e.target.value; update(); });
    let typing = 0;
    $("filter-text").addEventListener("input", (e) => {
      clearTimeout(typing);
      typing = setTimeout(() => { state.text = e.target.value.trim().toLowerCase(); update(); }, 120);
    });
    $("sort").addEventListener("change", (e) => { state.sort = e.target.value; state.dir = 1; update(); });
    $("legend").addEventListener("click", (e) => {
      const chip = e.target.closest("button");
      if (!chip) return;
      if (chip.dataset.action === "all") state.statuses = new Set(S.map((_, i) => i));
      else if (chip.dataset.action === "failing") state.statuses = new Set(S.map((s, i) => (s.kind === "failing" ? i : -1)).filter((i) => i >= 0));
      else {
        const i = Number(chip.dataset.status);
        state.statuses.has(i) ? state.statuses.delete(i) : state.statuses.add(i);
      }
      update();
    });
  }

  function fillFlows() {
    const options = D.flows.map((f, i) => [f, i]).filter(([f]) => !state.backend || (f.backend ?? "") === state.backend);
    $("filter-flow").innerHTML = `<option value="">all flows</option>` +
      options.map(([f, i]) => `<option value="${i}">${esc(f.flow ?? "(no flow)")}</option>`).join("");
  }

  function syncControls() {
    $("filter-backend").value = state.backend;
    fillFlows();
    $("filter-flow").value = state.flow;
  }

  // ------------------------------------------------------------ filtering and sorting
  function computeColumns() {
    const cols = D.flows.map((_, i) => i).filter((i) =>
      (!state.backend || (D.flows[i].backend ?? "") === state.backend) && (state.flow === "" || String(i) === state.flow));
    const firstSeen = [];
    cols.forEach((i) => { const b = backendName(i); if (!firstSeen.includes(b)) firstSeen.push(b); });
    return cols.sort((a, b) => firstSeen.indexOf(backendName(a)) - firstSeen.indexOf(backendName(b)) || a - b);
  }

  function rowMatches(row) {
    let any = false;
    for (const c of state.columns) {
      const ri = row.cells[c];
      if (ri >= 0 && state.statuses.has(G.status[ri])) { any = true; break; }
    }
    return any && (!state.text || row.hay.includes(state.text));
  }

  function countKind(row, test) {
    let n = 0;
    for (const c of state.columns) {
      const ri = row.cells[c];
      if (ri >= 0 && test(S[G.status[ri]])) n++;
    }
    return n;
  }

  function sortRows(list) {
    const key = state.sort;
    let score;
    if (key === "fail") score = (row) => -countKind(row, (s) => s.kind === "failing");
    else if (key === "undelegated") score = (row) => -countKind(row, (s) => s.name === "pass_undelegated");
    else if (key !== "name") {
      const f = Number(key);
      score = (row) => (row.cells[f] >= 0 ? G.status[row.cells[f]] : S.length);
    }
    const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    list.sort(score ? (a, b) => state.dir * (score(a) - score(b)) || byName(a, b) : (a, b) => state.dir * byName(a, b));
    return list;
  }

  let updates = 0;
  async function update() {
    const ticket = ++updates;
    state.columns = computeColumns();
    if (state.text) {
      $("shown").textContent = "searching…";
      await searchable([...new Set(state.columns.map((c) => D.flows[c].backend_index))]);
      if (ticket !== updates) return;  // a newer update took over
    }
    state.visible = sortRows(rows.filter(rowMatches));
    for (const chip of $("legend").querySelectorAll("button[data-status]")) {
      chip.classList.toggle("off", !state.statuses.has(Number(chip.dataset.status)));
    }
    $("sort").value = state.sort;
    $("shown").textContent = `${state.visible.length} of ${rows.length} cases · ${state.columns.length} of ${D.flows.length} flows`;
    drawHead();
    $("grid-body").style.height = state.visible.length * ROW + "px";
    $("grid").scrollTop = 0;
    drawRows();
  }

  // ------------------------------------------------------------ the virtualised grid
  function drawHead() {
    const template = `var(--case-w) repeat(${state.columns.length}, var(--cell-w))`;
    $("grid").style.setProperty("--cols", template);
    const groups = [];
    for (const c of state.columns) {
      const b = backendName(c);
      if (groups.length && groups[groups.length - 1].b === b) groups[groups.length - 1].n++;
      else groups.push({ b, n: 1 });
    }
    const arrow = state.dir > 0 ? "▲" : "▼";
    const sorted = (key) => (state.sort === key ? ` sorted" data-arrow="${arrow}` : "");
    $("grid-head").innerHTML =
      `<div class="backends" style="grid-template-columns:${template}"><div class="hcell corner"></div>` +
      groups.map((g) => `<div class="hcell" style="grid-column:span ${g.n}"><span>${esc(g.b)}</span></div>`).join("") + `</div>` +
      `<div class="flows" style="grid-template-columns:${template}"><div class="hcell corner${sorted("name")}" data-sort="name">test case</div>` +
      state.columns.map((c) => `<div class="hcell${sorted(String(c))}" data-sort="${c}" title="${esc(D.flows[c].description ?? "")} — click to sort">${esc(flowName(c))}</div>`).join("") +
      `</div>`;
  }

  function cellHtml(ri) {
    if (ri < 0) return `<div class="cell empty"></div>`;
    const s = S[G.status[ri]];
    const delegated = G.delegated[ri], total = G.nodes[ri], count = G.subtests[ri];
    const delegates = D.flows[G.flow[ri]].delegates !== false;
    const nodes = delegated >= 0 && delegates && (s.kind === "passing" || s.name === "lowered_not_run") ? ` ${delegated}/${total}` : "";
    const subtests = count > 1 ? ` ×${count}` : "";
    const classes = ["cell", s.name === "pass_undelegated" ? "undelegated" : "", state.statuses.has(G.status[ri]) ? "" : "dim",
                     ri === state.selected ? "selected" : ""].filter(Boolean).join(" ");
    const title = `${s.name}${nodes ? ` · delegated nodes${nodes}` : ""} · ${D.cases[G.case[ri]]} · ${flowName(G.flow[ri])}`;
    return `<div class="${classes}" data-result="${ri}" data-status="${s.name}" tabindex="-1" ` +
      `style="background-color:${s.color};color:${s.text}" title="${esc(title)}">${esc(s.label)}${nodes}${subtests}</div>`;
  }

  function drawRows() {
    const grid = $("grid");
    const top = Math.max(0, grid.scrollTop - $("grid-head").offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(state.visible.length, Math.ceil((top + grid.clientHeight) / ROW) + OVERSCAN);
    const html = [];
    for (let k = first; k < last; k++) {
      const row = state.visible[k];
      html.push(`<div class="grid-row" style="top:${k * ROW}px;grid-template-columns:var(--cols)" data-case="${row.i}">` +
        `<div class="case mono" title="${esc(row.name)}">${esc(row.name)}</div>` +
        state.columns.map((c) => cellHtml(row.cells[c])).join("") + `</div>`);
    }
    $("grid-body").innerHTML = html.join("");
  }

  function wireGrid() {
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
      state.dir = state.sort === key ? -state.dir : 1;
      state.sort = key;
      update();
    });
    $("grid-body").addEventListener("click", (e) => {
      const cell = e.target.closest(".cell[data-result]");
      if (cell) showDetail(Number(cell.dataset.result));
    });
    $("detail-close").addEventListener("click", hideDetail);
    document.addEventListener("keydown", (e) => { if (e.key === "Escape") hideDetail(); });
  }

  // ------------------------------------------------------------ the record detail
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
    entries.sort((a, b) => (D.stages.indexOf(a[0]) + 99) % 99 - (D.stages.indexOf(b[0]) + 99) % 99);
    const total = entries.reduce((sum, [, v]) => sum + (v || 0), 0);
    return `<table>${entries.map(([stage, v]) => `<tr><td>${esc(stage)}</td><td>${seconds(v)}</td></tr>`).join("")}` +
      `<tr><th>total</th><th>${seconds(total)}</th></tr></table>`;
  }

  // How each contract field is shown; a field without an entry (a newer contract) is shown as JSON.
  const FIELD_VIEW = {
    test_id: null, test_case: null, backend: null, flow: null, subtest: null, repro: null,
    status: (v) => badge(S.findIndex((s) => s.name === v)),
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
    const parts = D.fields.map((name) => {
      const view = name in FIELD_VIEW ? FIELD_VIEW[name] : (v) => `<code>${esc(JSON.stringify(v))}</code>`;
      return view ? `<dt>${esc(FIELD_LABEL[name] || name)}</dt><dd data-field="${name}">${view(rec[FI[name]])}</dd>` : "";
    });
    return `<div class="record"><h3>subtest ${esc(recordValue(rec, "subtest"))}</h3><dl>${parts.join("")}</dl></div>`;
  }

  async function showDetail(ri) {
    state.selected = ri;
    const res = await result(ri);
    if (state.selected !== ri) return;  // another cell was opened meanwhile
    const run = D.runs[res.run];
    const f = G.flow[ri];
    const records = res.records;
    const longrepr = res.longrepr
      ? `<h3>pytest says (${esc(res.phase || res.outcome)})</h3><pre>${esc(res.longrepr.slice(-4000))}</pre>` : "";
    $("detail-body").innerHTML =
      `<h2 class="mono">${esc(res.nodeid)}</h2>` +
      `<dl><dt>status</dt><dd id="detail-status">${badge(G.status[ri])}</dd>` +
      `<dt>flow</dt><dd>${esc(flowName(f))} <span class="note">(${esc(backendName(f))}${D.flows[f].description ? ": " + esc(D.flows[f].description) : ""})</span></dd>` +
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

  function hideDetail() {
    $("detail").hidden = true;
    state.selected = -1;
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

  // ------------------------------------------------------------ start
  drawFacts();
  drawSummary();
  drawWhere();
  drawBorderline();
  drawNonStrict();
  drawCoreAten();
  drawCosts();
  drawHistory();
  drawControls();
  wireGrid();
  await update();
  // For tests and load-time measurement: set once the page is usable.
  window.etsuiteReady = { ms: performance.now(), results: N, cases: rows.length };
  document.documentElement.dataset.ready = "1";
})();
