// controls: the choices above the matrix and its status chips; each change updates the matrix.
const controls = (() => {
  const { $, data, statuses, statusCounts, view } = shared;
  const { esc } = format;
  const { update } = matrix;

  function draw() {
    const backends = [...new Set(data.flows.map((f) => f.backend ?? ""))];
    $("filter-backend").innerHTML = `<option value="">all backends</option>` +
      backends.map((b) => `<option value="${esc(b)}">${esc(b || "(none)")}</option>`).join("");
    fillFlows();
    $("sort").innerHTML = `<option value="name">case name</option><option value="fail">most failures first</option>` +
      `<option value="undelegated">most undelegated first</option>` +
      data.flows.map((f, i) => `<option value="${i}">status in ${esc(f.flow ?? "(no flow)")}</option>`).join("");
    const chips = statuses.map((s, i) => statusCounts[i] ? `<button class="chip ${s.name === "pass_undelegated" ? "undelegated" : ""}" data-status="${i}" ` +
      `style="background:${s.color};color:${s.text}" title="${esc(s.name)}: show or hide">${esc(s.name)}<span class="n">${statusCounts[i]}</span></button>` : "");
    $("legend").innerHTML = chips.join("") + `<button class="chip action" data-action="all">all statuses</button>` +
      `<button class="chip action" data-action="failing">failing only</button>`;

    $("filter-backend").addEventListener("change", (e) => { view.backend = e.target.value; view.flow = ""; fillFlows(); update(); });
    $("filter-flow").addEventListener("change", (e) => { view.flow = e.target.value; update(); });
    let typing = 0;
    $("filter-text").addEventListener("input", (e) => {
      clearTimeout(typing);
      typing = setTimeout(() => { view.text = e.target.value.trim().toLowerCase(); update(); }, 120);
    });
    $("sort").addEventListener("change", (e) => { view.sort = e.target.value; view.dir = 1; update(); });
    $("legend").addEventListener("click", (e) => {
      const chip = e.target.closest("button");
      if (!chip) return;
      if (chip.dataset.action === "all") view.statuses = new Set(statuses.map((_, i) => i));
      else if (chip.dataset.action === "failing") view.statuses = new Set(statuses.map((s, i) => (s.kind === "failing" ? i : -1)).filter((i) => i >= 0));
      else {
        const i = Number(chip.dataset.status);
        view.statuses.has(i) ? view.statuses.delete(i) : view.statuses.add(i);
      }
      update();
    });
  }

  function fillFlows() {
    const options = data.flows.map((f, i) => [f, i]).filter(([f]) => !view.backend || (f.backend ?? "") === view.backend);
    $("filter-flow").innerHTML = `<option value="">all flows</option>` +
      options.map(([f, i]) => `<option value="${i}">${esc(f.flow ?? "(no flow)")}</option>`).join("");
  }

  function sync() {
    $("filter-backend").value = view.backend;
    fillFlows();
    $("filter-flow").value = view.flow;
  }

  return { draw, sync };
})();
