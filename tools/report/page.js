// The support-matrix page's script. page.py inlines it as one script inside one async
// function: the parts in page_script/ (in SCRIPT_PARTS order, each one `const <part>` the
// later ones use), then this file, which draws the page. No framework, no network.
summary.drawFacts();
summary.draw();
where.draw();
borderline.draw();
nonStrict.draw();
coreAten.draw();
costs.draw();
history.draw();
controls.draw();
matrix.wire();
detail.wire();
await matrix.update();
// For tests and load-time measurement: set once the page is usable.
window.etsuiteReady = { ms: performance.now(), results: shared.resultCount, cases: shared.rows.length };
document.documentElement.dataset.ready = "1";
