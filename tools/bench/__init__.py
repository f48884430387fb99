"""Measuring the suite itself, never part of a run: the benchmark against ExecuTorch's own
suite (`benchmark`, its probe `bench_probe`, `inner_loop`), the page at scale
(`page_scale`), the run-to-run spread drift's floors come from (`drift_spread`) and how
well shards balance (`shard_balance`). Each is a command line; docs/measurements.md logs
what they measured."""
