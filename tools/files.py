"""Writing the tools' output files: every CLI that writes a file a reader may open while
it is written (the summary, the page, a durations file) writes it here, the same way."""

from __future__ import annotations

import os
import tempfile


def _default_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: str, text: str) -> None:
    """Write a temporary file beside `path`, then rename it over `path`: a reader sees
    the old file or the new one, never half of one."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=folder, prefix=f".{os.path.basename(path)}.",
        suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(text)
        os.chmod(handle.name, _default_file_mode())  # not the temporary file's 0600
        os.replace(handle.name, path)
    except BaseException:
        os.unlink(handle.name)
        raise
