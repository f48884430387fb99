// format: how values enter the page's HTML: the one escape, figures, badges, names.
const format = (() => {
  const { data, statuses, fieldIndex } = shared;
  const LIST_WITHOUT_CLICK = 10;  // a longer list of cases goes behind a click

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
    const s = statuses[si];
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
  const flowName = (f) => data.flows[f].flow ?? "(no flow)";
  const backendName = (f) => data.flows[f].backend ?? "(none)";
  const recordValue = (rec, name) => (name in fieldIndex ? rec[fieldIndex[name]] : undefined);

  return { LIST_WITHOUT_CLICK, esc, seconds, bytes, num, percent, badge, firstLine, distinct, flowName,
           backendName, recordValue };
})();
