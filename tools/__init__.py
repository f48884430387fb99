"""The tools beside the harness, in rooms by job: `report/` (reports in, the markdown
summary and the HTML page out), `bench/` (measuring the suite itself) and `upkeep/` (data
the tests read, written from reports). On top, what is no one room's: `files`
(atomic writes), `headless` (headless Chromium) and `typecheck` (mypy by import names)."""
