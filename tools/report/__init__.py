"""The report: JSON reports and results streams in, the markdown summary and the HTML page
out. `summary` is the command line; `loading` reads and merges, `classify` and `tally`
count what every section shares, `sections/` holds one module per section (its numbers,
its markdown, its part of the page), `markdown` and `page` assemble them. Imports nothing
of the harness but its contract, and no torch (test/test_structure.py holds both)."""
