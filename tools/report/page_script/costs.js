// costs: per flow, two sorted column charts drawn as inline SVG: each case's delegated share,
// lowest first, and its time per call over the portable flow's, slowest first. Every
// bar names its case and figures on hover and opens its record on a click.
const costs = (() => {
  const { $, data, grid } = shared;
  const { LIST_WITHOUT_CLICK, esc, percent, flowName, backendName } = format;

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
        `width="${bar.toFixed(2)}" height="${height.toFixed(2)}" fill="${color}"><title>${esc(data.cases[grid.case[ri]])}: ` +
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
        `<title>${esc(data.cases[grid.case[ri]])}: ${typeof said === "number" ? said.toFixed(2) : esc(said)}x portable's time per call ` +
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
    const names = list.map((ri) => `<a href="#detail" class="mono" data-result="${ri}">${esc(data.cases[grid.case[ri]])}</a>`).join(", ");
    const said = `${list.length} timed case${list.length === 1 ? " has" : "s have"} no portable counterpart ` +
      `(not in the portable run, or measured differently) and ${list.length === 1 ? "is" : "are"} not plotted`;
    return `<p class="note unmatched">${said}: ${list.length > LIST_WITHOUT_CLICK ? `<details><summary>show them</summary>${names}</details>` : names}</p>`;
  }

  function draw() {
    const costsData = data.costs;
    if (!costsData) return;
    $("costs-section").hidden = false;
    const shares = new Map(costsData.shares.map(([f, rows]) => [f, rows]));
    const runtime = new Map(costsData.runtime.map(([f, rows, unmatched]) => [f, [rows, unmatched]]));
    const flows = [...new Set([...shares.keys(), ...costsData.timed_flows])].sort((a, b) => a - b);
    const noPortable = `<p class="note no-portable">No portable run in these reports: there is nothing to ` +
      `compare this flow's time per call with. Merge a portable run of the same tests (<code>make test-portable</code>) to see it.</p>`;
    const charts = (f) => {
      const share = shares.has(f) ? shareChart(shares.get(f)) :
        `<p class="note">${data.flows[f].delegates === false ? "Portable kernels only: nothing to delegate." : "No case was lowered."}</p>`;
      let time;
      if (!costsData.portable) time = noPortable;
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
      detail.show(Number(found.dataset.result));
    });
  }

  return { draw };
})();
