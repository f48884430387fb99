"""Offline upkeep of the data the tests read that needs the report reader: a backend's
`durations.json` from its reports (`update_durations`). The upkeep that needs the harness
(expectations, budgets, sweeps) is in `backends/harness/upkeep/`: the two sides share only
the contract, so each side's upkeep lives with the reader it uses."""
