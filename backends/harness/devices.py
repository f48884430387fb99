"""The plugin object of runners (`--runner`, remote/placement.py): what people see of
them, a header line per runner choice the selected flows use and at the end the devices
the run lost, and the removal of the run's pool folder by the process that made it."""

from __future__ import annotations

import fnmatch
import os
import shutil

import pytest

from etsuite.backends.harness import workers
from etsuite.backends.harness.remote import resident
from etsuite.backends.harness.remote.pool import DevicePool
from etsuite.backends.harness.state import SessionState


class RunnerSession:
    """What people see of runners: a header line per runner choice used by the selected
    flows, and at the end the devices the run lost. Removes the pool folder it owns."""

    def __init__(self, state: SessionState):
        self.state = state

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        for choice in self.state.runners:
            flows = [f.name for f in self.state.selected
                     if fnmatch.fnmatchcase(f.name, choice.pattern)]
            if not flows:
                continue
            names = ", ".join(spec.name for spec in choice.specs)
            pool = f" (a pool of {len(choice.specs)}, one program per device at a time)" \
                if len(choice.specs) > 1 else ""
            lines.append(f"etsuite: flows {', '.join(flows)} execute on runner {names}{pool} "
                         f"(from {choice.source})")
        return lines

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        folder = self.state.runner_folder
        if folder is None or workers.is_xdist_worker(terminalreporter.config):
            return
        for device, reason in DevicePool(folder).lost_devices().items():
            terminalreporter.write_line(
                f"etsuite: runner {device} was lost during the run and taken out of its "
                f"pool: {reason}")

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        folder = self.state.runner_folder
        if folder and self.state.owns_runner_folder and os.path.isdir(folder):
            resident.stop_relays(folder)  # (they would go within a second anyway)
            shutil.rmtree(folder, ignore_errors=True)
