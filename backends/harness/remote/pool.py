"""A pool of runner devices shared by every process of a run (xdist workers and their
forked test children): at most one program per device at a time, a test waits for a
free device, and a device that stops answering is taken out for the rest of the run.

The state is files, so that it needs no server and survives any process. A device's
lock is `fcntl.flock` on `<device>.lock` in one folder per user and host
(`device_lock_folder()`), so every session of the user takes turns on a device, not only
the processes of one run; the kernel releases a lock when its holder dies, even by SIGKILL
at a time limit. That folder must be this user's only and a lock a regular file of its
own (private_paths: another user could otherwise hold or redirect them). A lost device is
a file `<device>.lost` holding the reason, in the run's
own folder (a device lost in one run is tried afresh by the next), which every process of
the run reads before it picks one. Torch-free.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from typing import Iterator, Sequence

from etsuite.backends.harness import confinement
from etsuite.backends.harness.private_paths import open_lock, private_folder


class PoolExhausted(RuntimeError):
    """Every device of the pool is lost: nothing is left to run on."""


def device_file(name: str) -> str:
    """A device's name (`ssh://mac1:22`) as a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:120] or "device"


# Overrides where device locks live (tests give each of their runs a folder of its own).
LOCKS_ENV = "ETSUITE_DEVICE_LOCKS"


def device_lock_folder() -> str:
    """The folder of device locks shared by every session of this user on this host:
    $ETSUITE_DEVICE_LOCKS, else $XDG_RUNTIME_DIR/etsuite-devices, else
    <tmp>/etsuite-devices-<uid>."""
    if os.environ.get(LOCKS_ENV):
        return os.environ[LOCKS_ENV]
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and os.path.isdir(runtime_dir):
        return os.path.join(runtime_dir, "etsuite-devices")
    # The session's, not a test's scratch folder: every test shares the locks.
    return os.path.join(confinement.session_tmp(), f"etsuite-devices-{os.getuid()}")


class DevicePool:
    """`folder`: the run's lost marks; `lock_folder`: the user's device locks."""

    def __init__(self, folder: str, lock_folder: str | None = None):
        self.folder = folder
        self.lock_folder = lock_folder or device_lock_folder()

    def _path(self, name: str, suffix: str) -> str:
        folder = self.lock_folder if suffix == "lock" else self.folder
        return os.path.join(folder, f"{device_file(name)}.{suffix}")

    def _read_lost(self, path: str) -> tuple[str, str] | None:
        """(device name, reason) from a lost mark: its first line and the rest."""
        try:
            with open(path, encoding="utf-8") as handle:
                name, _, reason = handle.read().partition("\n")
        except FileNotFoundError:
            return None
        return name, reason.strip() or "lost"

    def lost(self, name: str) -> str | None:
        """Why this device was taken out of the pool, or None."""
        found = self._read_lost(self._path(name, "lost"))
        return found[1] if found else None

    def mark_lost(self, name: str, reason: str) -> None:
        """Written whole, then renamed: a reader never sees half of it."""
        os.makedirs(self.folder, exist_ok=True)
        path = self._path(name, "lost")
        partial = f"{path}.{os.getpid()}"
        with open(partial, "w", encoding="utf-8") as handle:
            handle.write(f"{name}\n{reason}")
        os.replace(partial, path)

    def lost_devices(self) -> dict[str, str]:
        """{device: reason} for every device lost in this run."""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return {}
        found = (self._read_lost(os.path.join(self.folder, n)) for n in names if n.endswith(".lost"))
        return dict(entry for entry in found if entry)

    @contextlib.contextmanager
    def acquire(self, names: Sequence[str], exclusive: bool = True,
                poll: float = 0.05) -> Iterator[tuple[str, float]]:
        """Yields (the device to run on, seconds waited for it): the first device that is
        neither lost nor busy, trying them in the pool's order. Waits while all are busy
        (the test's time limit bounds the wait); raises PoolExhausted when all are lost.
        Without `exclusive` (a fresh local process per program) nothing is locked."""
        started = time.monotonic()
        os.makedirs(self.folder, exist_ok=True)
        if exclusive:
            os.makedirs(os.path.dirname(os.path.abspath(self.lock_folder)), exist_ok=True)
            private_folder(self.lock_folder)  # shared by this user's sessions, no one else's
        while True:
            live = [name for name in names if self.lost(name) is None]
            if not live:
                reasons = "; ".join(f"{name}: {self.lost(name)}" for name in names)
                raise PoolExhausted(f"every runner of the pool is lost ({reasons})")
            if not exclusive:
                yield live[0], 0.0
                return
            for name in live:
                handle = open(open_lock(self._path(name, "lock")), "r+b")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                try:
                    if self.lost(name) is None:  # lost while we waited for its lock
                        yield name, round(time.monotonic() - started, 4)
                        return
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
                    handle.close()
            time.sleep(poll)
            poll = min(poll * 1.5, 0.5)
