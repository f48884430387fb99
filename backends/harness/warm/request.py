"""One request to the warm server (warm/server.py), read a piece at a time as it arrives,
so that a slow or silent client never holds up the others, and checked before the server
acts on it: a JSON object whose `op` is known, whose fields have their types, and with
exactly the file descriptors that op takes. Whatever is wrong, the descriptors that came
with it are closed.

A request is one JSON line; the client's stdin, stdout and stderr ride along with its
first bytes (SCM_RIGHTS, warm/client.send_message).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from typing import Any

MAX_BYTES = 1 << 22  # a run's argv, sys.path and environment fit many times over
TIMEOUT_S = 30.0  # from connect to the end of the request line
STREAMS = 3  # stdin, stdout, stderr

def _text(value: Any) -> bool:
    return isinstance(value, str)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _environment(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str) and isinstance(text, str) for name, text in value.items())


# What each op must carry: field -> the check of its value.
FIELDS = {
    "run": {"argv": _texts, "cwd": _text, "path": _texts, "env": _environment},
    "worker": {"code": _text, "cwd": _text, "env": _environment},
    "stop": {},
}


class BadRequest(ValueError):
    """The request cannot be served; the text says why, for the server's log."""


class PendingRequest:
    """A connection whose request line has not all arrived. `read` takes what is there
    now (the socket is non-blocking) and gives the checked request and its descriptors
    once the line is complete; `close` gives back whatever was received."""

    def __init__(self, conn: socket.socket):
        conn.setblocking(False)
        self.conn = conn
        self.data = b""
        self.fds: list[int] = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def read(self) -> tuple[dict, list[int]] | None:
        """The request and its descriptors once complete, None while more is to come.
        Raises BadRequest (the connection closed early, too long, malformed)."""
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.conn, 65536, STREAMS)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as error:
            raise BadRequest(f"reading the request: {error}") from None
        self.fds.extend(fds)
        if not data:
            raise BadRequest("connection closed mid-request" if self.data
                             else "connection closed before a request")
        self.data += data
        if len(self.data) > MAX_BYTES:
            raise BadRequest(f"request longer than {MAX_BYTES} bytes")
        if not self.data.endswith(b"\n"):
            return None
        request = checked(self.data, len(self.fds))
        fds, self.fds = self.fds, []
        self.conn.setblocking(True)
        return request, fds

    def close(self) -> None:
        close_fds(self.fds)
        self.fds = []
        self.conn.close()


def checked(line: bytes, fd_count: int) -> dict:
    """The request `line` as a dict, if it is one the server serves; else BadRequest."""
    try:
        request = json.loads(line)
    except ValueError as error:
        raise BadRequest(f"not JSON: {error}") from None
    if not isinstance(request, dict):
        raise BadRequest(f"not a JSON object but a {type(request).__name__}")
    op = request.get("op")
    if not isinstance(op, str) or op not in FIELDS:
        raise BadRequest(f"unknown op {op!r}, known: {', '.join(FIELDS)}")
    for name, valid in FIELDS[op].items():
        if not valid(request.get(name)):
            raise BadRequest(f"op {op}: field {name!r} missing or of the wrong type")
    if op != "stop" and fd_count != STREAMS:  # (a stop's are closed, whatever they are)
        raise BadRequest(f"op {op} takes {STREAMS} file descriptors, got {fd_count}")
    return request


def close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
