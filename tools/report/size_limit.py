"""Keeping the markdown under a size limit (`--size-limit`).

A CI step summary is refused above 1 MiB, and a summary of thousands of failures is
read by nobody past its first screens anyway. So the document is made of sections, and
the long ones (`Section.items`: table rows, failure blocks) can be cut. When the whole
document is over the limit, every cuttable section gives up items in proportion to its
size, each cut section says so, and the caller writes the uncut version beside it.

Sizes are measured in UTF-8 bytes, what the limit counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


def size(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass
class Section:
    """Heading, intro, then items rendered by `render_items(items) -> (head, pieces)`
    (a table's header lines and one line per row, or one block per failure: one piece
    per item), then the outro. A cut shows the first pieces of the full rendering."""

    heading: str
    intro: str = ""
    items: list = field(default_factory=list)
    render_items: Callable[[list], tuple[str, list[str]]] | None = None
    outro: str = ""
    empty: str = ""          # said instead of the items when there are none
    unit: str = "rows"
    cuttable: bool = True
    # The rendering of all items, made once: planning a cut needs the full text and its
    # piece sizes, and the uncut version is written too; at 40,000 tests the support
    # matrix alone is 750,000 cells to format, which must not be paid three times.
    _full: tuple[str, list[str]] | None = field(default=None, init=False, repr=False,
                                                compare=False)

    def text(self, keep: int | None = None, full_name: str | None = None) -> str:
        """The section's markdown with at most `keep` items (all when None); its parts
        are separated by blank lines, as markdown wants around tables and fences."""
        parts = [self.heading, self.intro]
        shown = self.items if keep is None else self.items[:keep]
        if not self.items:
            parts.append(self.empty)
        elif shown:
            head, pieces = self._render(shown)
            parts.append(head + "".join(pieces))
        if len(shown) < len(self.items):
            parts.append(self.cut_note(len(shown), full_name))
        parts.append(self.outro)
        return "\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n"

    def _render(self, items: list) -> tuple[str, list[str]]:
        """The rendering of the first `len(items)` items: the full one's head and its
        first pieces. A cut keeps the full table's column widths, which is what its size
        was planned from, and costs no second formatting of 100,000s of cells."""
        if self.render_items is None:  # only a section without items may leave it out
            raise ValueError(f"section {self.heading!r} has items but no render_items")
        if self._full is None:
            self._full = self.render_items(self.items)
        head, pieces = self._full
        return (head, pieces) if len(items) == len(self.items) else (head, pieces[:len(items)])

    def cut_note(self, shown: int, full_name: str | None) -> str:
        # Its words ("size budget") are the summary's format, kept as they were.
        where = f"; all of them are in `{full_name}`" if full_name else ""
        return (f"_Cut to fit the size budget: {shown} of {len(self.items)} {self.unit} "
                f"shown{where}._")

    def piece_sizes(self) -> list[int]:
        """What each item adds to the section; the first also brings the head (a
        table's header lines) and the blank line before it."""
        if not self.items:
            return []
        head, pieces = self._render(self.items)
        sizes = [size(p) for p in pieces]
        sizes[0] += size(head) + 2
        return sizes


def assemble(sections: list[Section], keeps: dict | None = None, full_name: str | None = None,
             banner: str = "") -> str:
    keeps = keeps or {}
    texts = [s.text(keeps.get(i), full_name) for i, s in enumerate(sections)]
    if banner and texts:
        texts.insert(1, banner)
    return "\n".join(texts)


def truncation_banner(limit: int, full_name: str | None) -> str:
    where = f" The full report is `{full_name}`." if full_name else ""
    return (f"> **This summary was cut to fit {format_size(limit)}:** the long sections "
            f"list only their first items.{where}\n")


def fit(sections: list[Section], limit: int, full_name: str | None) -> tuple[str, bool]:
    """(markdown within `limit` bytes, whether anything was cut)."""
    full = assemble(sections)
    if size(full) <= limit:
        return full, False
    banner = truncation_banner(limit, full_name)
    cuttable = [i for i, s in enumerate(sections) if s.cuttable and s.items]
    sizes = {i: sections[i].piece_sizes() for i in cuttable}
    nothing = assemble(sections, {i: 0 for i in cuttable}, full_name, banner)
    slack = 24 * len(cuttable)  # the cut notes' numbers grow with what is kept
    available = limit - size(nothing) - slack
    keeps = _share(sizes, available)
    text = assemble(sections, keeps, full_name, banner)
    if size(text) > limit:
        text = _hard_cut(text, limit)
    return text, True


def _share(sizes: dict[int, list[int]], available: int) -> dict[int, int]:
    """Items kept per section: each gets room in proportion to its full size, then
    whatever room is left goes to the sections in document order."""
    total = sum(sum(s) for s in sizes.values())
    keeps, used = {}, 0
    for index, pieces in sizes.items():
        room = max(available, 0) * sum(pieces) // total if total else 0
        keeps[index], spent = _count_within(pieces, room)
        used += spent
    for index, pieces in sizes.items():
        kept, spent = _count_within(pieces[keeps[index]:], max(available - used, 0))
        keeps[index] += kept
        used += spent
    return keeps


def _count_within(pieces: list[int], room: int) -> tuple[int, int]:
    spent = 0
    for count, piece in enumerate(pieces):
        if spent + piece > room:
            return count, spent
        spent += piece
    return len(pieces), spent


def _hard_cut(text: str, limit: int) -> str:
    """Last resort when even the uncuttable parts exceed the limit (a tiny limit). The
    note still says "size budget": the summary's words stay as they were (issue 55)."""
    note = "\n_[cut: the size budget is smaller than the summary's fixed parts]_\n"
    room = max(limit - size(note), 0)
    head = text.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    if "\n" in head:
        head = head[:head.rindex("\n") + 1]
    return head + note if size(head + note) <= limit else head


def format_size(count: int) -> str:
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


_SIZE = re.compile(r"^(\d+)\s*(b|bytes|kb|kib|mb|mib)?$", re.IGNORECASE)
_UNITS = {"b": 1, "bytes": 1, "kb": 1000, "kib": 1024, "mb": 1000 ** 2, "mib": 1024 ** 2}


def parse_size(text: str) -> int:
    """'900KiB', '1 MiB', '2000' -> bytes (for --size-limit)."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ValueError(f"not a size: {text!r} (e.g. 900KiB, 1MiB, 2000)")
    return int(match.group(1)) * _UNITS[(match.group(2) or "b").lower()]
