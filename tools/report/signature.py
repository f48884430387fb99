"""Error signatures: one line per error that stays the same when only the details
change, so that fifty tests failing for one reason show up as one row, not fifty.

The message line is the exception line of a record's error, or the first `E ` line of
a pytest traceback. Normalizing replaces what differs between otherwise equal errors:
addresses, absolute paths and numbers (shapes, counts, node ids). Digits inside names
(`int8`, `conv2d`) are kept: they tell errors apart.
"""

from __future__ import annotations

import re

SIGNATURE_LIMIT = 160
NO_TEXT = "(no error text)"

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.+\-]+)+[/\\]?")
_NUMBER = re.compile(r"(?<![A-Za-z_\d])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s+")


def message_line(text: str | None) -> str:
    """The line of an error text that names the problem."""
    if not text:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("E ") or line == "E":
            return line[1:].strip()
    return lines[0] if lines else ""


def normalize(line: str) -> str:
    line = _HEX.sub("<address>", line)
    line = _PATH.sub("<path>", line)
    line = _NUMBER.sub("N", line)
    return _SPACE.sub(" ", line).strip()


def signature(text: str | None) -> str:
    line = normalize(message_line(text))
    if not line:
        return NO_TEXT
    return line if len(line) <= SIGNATURE_LIMIT else line[:SIGNATURE_LIMIT - 1] + "…"
