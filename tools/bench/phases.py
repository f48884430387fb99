"""Where a pytest run's wall time goes, from the times `bench_probe` notes in every process
of the run (the xdist controller included): one row of phases per run in `make bench`'s
output, so a regression shows as a phase that grew, not only as a ratio."""

from __future__ import annotations

from statistics import median

from tabulate import tabulate

PHASES = ("start-up", "controller ready", "worker start", "collection", "tests",
          "idle in tests", "session end", "total")


def phases_of(probes: list[dict]) -> dict[str, float]:
    """Seconds per phase of one pytest run, from the probe's times (bench_probe.py), the
    controller's process start being 0: `start-up` until the first test starts anywhere
    (`controller ready`: the controller's imports and configuration; `worker start`: the
    median worker's from its own start to its first test, `collection` part of it);
    `tests` from the first test's start to the last one's end; `idle in tests` the
    worker-seconds inside that span in which a worker had no test (not yet started or
    already done); `session end` from the last test's end to the controller's unconfigure
    (reports written, workers stopped); `total` the controller's life to then. Empty when
    a process did not report its times."""
    controller = next((p for p in probes if p.get("worker") == "main"), None)
    workers = [p for p in probes if p.get("worker") != "main"] or probes
    needed = ("started", "configured", "collected", "first_test", "last_test")
    if controller is None or any(key not in p.get("times", {}) for p in workers for key in needed) \
            or not {"started", "configured", "unconfigured"} <= set(controller.get("times", {})):
        return {}
    zero = controller["times"]["started"]
    first = min(p["times"]["first_test"] for p in workers)
    last = max(p["times"]["last_test"] for p in workers)
    idle = sum((p["times"]["first_test"] - first) + (last - p["times"]["last_test"])
               for p in workers)
    return {
        "start-up": first - zero,
        "controller ready": controller["times"]["configured"] - zero,
        "worker start": median([p["times"]["first_test"] - p["times"]["started"] for p in workers]),
        "collection": median([p["times"]["collected"] - p["times"]["configured"] for p in workers]),
        "tests": last - first,
        "idle in tests": idle,
        "session end": controller["times"]["unconfigured"] - last,
        "total": controller["times"]["unconfigured"] - zero,
    }


def phase_table(runs: list[tuple[str, int, float, dict[str, float]]]) -> str:
    """One row per run (label, workers, measured wall, phases_of), phases in columns;
    runs without phases are left out."""
    rows = [[label, workers, wall, *(phases.get(name) for name in PHASES)]
            for label, workers, wall, phases in runs if phases]
    return tabulate(rows, headers=["run", "workers", "wall s", *PHASES], floatfmt=".1f",
                    tablefmt="github", missingval="")
