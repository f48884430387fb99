"""A runner spec: the text that names one device (`ssh://mac1?python=...`), as the
`RunnerSpec` its kind's parse makes of it (remote/kinds.py), and the parsing every kind
shares (options, addresses). Parsing is strict: a malformed spec is a `SpecError` that
names it and says what is expected, which the session makes a usage error. Torch-free.

The types a spec is read into live here together, so that nothing imports in a circle: a
spec holds its kind, and a kind makes specs. `RunnerKind` is the shape of a kind (its
implementations and the registry are remote/kinds.py's), `Reply` what its exchange
brings back, `RunnerChoice` one `--runner PATTERN=SPECS` line (remote/placement.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl

DEFAULT_TIMEOUT = 240.0        # seconds one exchange may take before the device is lost
MAX_SECONDS = 7 * 24 * 3600.0  # the most a seconds option may say (a finite deadline)
# Options every kind understands, besides its own: numbers of seconds.
SECONDS_OPTIONS = ("timeout", "connect_timeout")


class SpecError(ValueError):
    """A malformed runner spec; the message names it and says what is expected."""


@dataclass(frozen=True)
class RunnerSpec:
    """One device: its kind, how to reach it (`user`, `host`, `port`, `command`) and its
    options (`?key=value&...`). `text` is the spec as given (for the repro command);
    `name` is what records show (no options: they may hold paths to keys)."""

    text: str
    kind: str                  # the kind's name: process | ssh | adb | cmd | a plugin's
    name: str
    host: str = ""             # ssh host, adb serial
    user: str = ""
    port: int | None = None
    command: str = ""          # cmd: the template
    options: tuple = ()        # sorted (key, value) pairs
    runner_kind: RunnerKind | None = field(default=None, compare=False, repr=False)

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    @property
    def timeout(self) -> float:
        return float(self.option("timeout", DEFAULT_TIMEOUT))

    @property
    def exclusive(self) -> bool:
        """One program at a time on this device (a fresh local process runs many)."""
        return self.runner_kind.exclusive if self.runner_kind is not None else True


class RunnerKind(Protocol):
    """What a runner kind provides. `name` is what a spec's `kind` says; `form` shows
    its spec in messages; `exclusive`: a device runs one program at a time (False only
    for a kind that starts a fresh local process per program); `takes_rest`: a spec of
    this kind is the whole `--runner` value, commas included (no pool)."""

    @property
    def name(self) -> str: ...

    @property
    def form(self) -> str: ...

    @property
    def exclusive(self) -> bool: ...

    @property
    def takes_rest(self) -> bool: ...

    def claims(self, text: str) -> bool:
        """Whether a spec text is of this kind (e.g. starts with `ssh://`)."""
        ...

    def parse(self, text: str) -> RunnerSpec:
        """The spec, or a SpecError that names it and says what is expected."""
        ...

    def exchange(self, spec: RunnerSpec, files: dict[str, bytes]) -> Reply:
        """Send the job's files, run it, bring the outputs back; DeviceLost when the
        device does not answer."""
        ...


@dataclass
class Reply:
    """What came back from one exchange: the output folder (a local temp folder) and
    how long the exchange took on the host's clock."""

    folder: str
    seconds: float
    exit_detail: str = ""       # how the executing process ended, when not cleanly
    crashed_by: str | None = None  # the signal that killed it, if one did
    scratch: str | None = None  # the folder to remove once read (default: `folder`)


@dataclass(frozen=True)
class RunnerChoice:
    """One `PATTERN=SPECS` line: the flows it names, its devices, where it came from."""

    pattern: str
    specs: tuple
    text: str      # as given: the repro command passes it on
    source: str    # "--runner" or "etsuite_runners in <ini file>"


def parse_options(text: str, query: str, allowed: frozenset[str], kind: str) -> tuple:
    """`key=value&...` as sorted pairs; an unknown key or a bad number of seconds is a
    SpecError naming `text`."""
    try:
        options = tuple(sorted(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))))
    except ValueError:
        raise SpecError(f"runner {text!r}: options go as ?key=value&key=value") from None
    unknown = sorted({key for key, _ in options} - allowed)
    if unknown:
        raise SpecError(f"runner {text!r}: unknown option(s) {', '.join(unknown)}; "
                        f"{kind} takes {', '.join(sorted(allowed)) or 'none'}")
    for key, value in options:
        if key in SECONDS_OPTIONS:
            try:
                ok = 0 < float(value) <= MAX_SECONDS
            except ValueError:
                ok = False
            if not ok:
                raise SpecError(f"runner {text!r}: {key} wants a positive number of seconds, "
                                f"at most {MAX_SECONDS:g}, got {value!r}")
    return options


def parse_address(text: str, scheme: str) -> tuple[str, str, int | None, str]:
    """`scheme://[user@]host[:port][/][?query]` -> (user, host, port, query)."""
    base, _, query = text.partition("?")
    match = re.fullmatch(rf"{re.escape(scheme)}://(?:([^@/:]+)@)?([^@/:]+)(?::(\d+))?/?", base)
    if not match:
        raise SpecError(f"runner {text!r}: expected {scheme}://[user@]host[:port]")
    user, host, port = match.groups()
    if host.startswith("-") or (user or "").startswith("-"):
        raise SpecError(f"runner {text!r}: a host or user cannot start with '-' "
                        f"(it would be read as an option)")
    return user or "", host, int(port) if port else None, query
