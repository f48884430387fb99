"""Folders, sockets and lock files that this user's processes share on a host other users
share too (/tmp): made so that only this user can reach them, and refused when someone
else made them first. Whoever can reach a relay's or the warm process's socket, or swap a
lock file for a link, can forge verdicts or run code as this user (docs/explanation/
runners.md). Standard library only: the relay runs it as part of a script."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct


class NotPrivate(PermissionError):
    """A shared path that another user owns or may write; the message names it."""


def private_folder(path: str) -> str:
    """`path`, made with mode 0700 if missing (its parent must exist); refused unless it
    is a folder (not a link to one) that this user owns and no one else may enter."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise NotPrivate(f"{path} is not a folder of this user's only (mode "
                         f"{stat.filemode(info.st_mode)}, owner {info.st_uid})")
    return path


def open_lock(path: str) -> int:
    """A lock file's descriptor, for flock: created 0600, never through a link, and
    refused unless it is a regular file of this user's."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise NotPrivate(f"lock file {path}: {error.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        raise NotPrivate(f"lock file {path} is not a regular file of this user's")
    return fd


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end of a unix socket (SO_PEERCRED: the
    kernel's word, not the peer's). Where the platform has no SO_PEERCRED (macOS), this
    user's: the private folder the socket is in is the check there."""
    if not hasattr(socket, "SO_PEERCRED"):
        return os.getuid()
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                        struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid


def check_peer(connection: socket.socket, what: str) -> None:
    """NotPrivate unless the other end of `connection` runs as this user."""
    uid = peer_uid(connection)
    if uid != os.getuid():
        raise NotPrivate(f"{what} is held by uid {uid}, not this user ({os.getuid()})")
