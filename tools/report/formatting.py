"""Markdown text and tables, the small formatters every markdown the tools write is made
of: the summary (`markdown.py`) and the shard balance (`shard_balance.py`) use the same
cells, durations and counts."""

from __future__ import annotations

import contextlib
from typing import Iterator

import tabulate as tabulate_module


def table(headers: list[str], rows: list[list]) -> tuple[str, list[str]]:
    """tabulate's GitHub table, split into (header lines, one line per row) for the
    size limit. Wide-character handling is off so the padding does not depend on whether
    wcwidth happens to be installed."""
    with _narrow_chars():
        text = tabulate_module.tabulate(
            [[cell(v) for v in row] for row in rows], headers=[cell(h) for h in headers],
            tablefmt="github", disable_numparse=True)
    lines = [line + "\n" for line in text.split("\n")]
    return "".join(lines[:2]), lines[2:]


@contextlib.contextmanager
def _narrow_chars() -> Iterator[None]:
    saved = tabulate_module.WIDE_CHARS_MODE
    tabulate_module.WIDE_CHARS_MODE = False
    try:
        yield
    finally:
        tabulate_module.WIDE_CHARS_MODE = saved


def cell(value: object) -> str:
    """A table cell: one line, pipes escaped."""
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def prose(text: str) -> str:
    """Text from a report put in a markdown line as it is: `$...$` would be read as math
    by GitHub and `<sdk folder>` as an HTML tag, both hiding the words."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code span, escape it all
        parts = [text]
    return "`".join(part if index % 2 else part.replace("$", "\\$").replace("<", "&lt;")
                    for index, part in enumerate(parts))


def fenced(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}\n"


def shorten(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f} %"


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 60:
        return f"{value:.1f} s"
    minutes, rest = divmod(int(round(value)), 60)
    if minutes < 60:
        return f"{minutes} m {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} m"


def in_words(found: list[tuple[str, int]]) -> str:
    """(label, count) pairs in words: "20 not run, 1 skipped"."""
    return ", ".join(f"{count} {label}" for label, count in found)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def listed(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" +{len(names) - limit} more" if len(names) > limit else "")
