"""Offline upkeep of the data the tests read: seed sweeps read back (`sweeps`), what to
declare from them and the expectations file written back (`entries_from_sweeps`), and their command
lines (`stability_report`, `update_expectations`). Nothing that runs at test time imports
this package (test/test_structure.py holds that)."""
