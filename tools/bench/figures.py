"""The benchmark's headline figures as data, so that the next regression names itself.

`make bench` prints them as a fenced `bench-figures` block (JSON) at the end of its
output and writes them to reports/bench/figures.json; the block is what goes into the
measurements log with the run's entry. `make bench ARGS=--check` then compares a run with
the last block in docs/measurements.md of the same selection and names every figure that
moved by more than a sixth, the phase that grew among them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

FENCE = "bench-figures"
LOG = Path("docs/measurements.md")
OUTPUT = Path("reports/bench/figures.json")
# A figure that moved by more than this share of its logged value is named: run to run on
# one machine the bench's wall times spread by about a tenth (docs/measurements.md).
MOVED = 1 / 6

_BLOCK = re.compile(r"^```" + FENCE + r"\n(.*?)\n```$", re.M | re.S)


@dataclass(frozen=True)
class Figures:
    """What was selected (operator modules, flows, workers, warm or not) and the figures:
    name -> number (ratios, efficiency, seconds per phase)."""

    selection: dict
    values: dict

    def block(self) -> str:
        body = json.dumps({"selection": self.selection, "values": self.values}, indent=1,
                          sort_keys=True)
        return f"```{FENCE}\n{body}\n```"

    def write(self, path: Path = OUTPUT) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"selection": self.selection, "values": self.values},
                                   indent=1, sort_keys=True) + "\n", encoding="utf-8")


class LogError(ValueError):
    """A `bench-figures` block the check cannot read."""


def logged(text: str) -> list[Figures]:
    """Every `bench-figures` block of a log, in order."""
    found = []
    for number, match in enumerate(_BLOCK.finditer(text), 1):
        try:
            data = json.loads(match.group(1))
            selection, values = data["selection"], data["values"]
        except (ValueError, KeyError, TypeError) as error:
            raise LogError(f"bench-figures block {number} is not readable: {error}") from None
        if not isinstance(selection, dict) or not isinstance(values, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
            raise LogError(f"bench-figures block {number} is not a selection and numbers")
        found.append(Figures(selection, values))
    return found


def check(now: Figures, log_text: str) -> list[str]:
    """Lines comparing `now` with the last logged block of the same selection: one per
    figure that moved by more than MOVED (or is new or gone), or one saying all held."""
    same = [f for f in logged(log_text) if f.selection == now.selection]
    if not same:
        return [f"- no logged figures of this selection ({json.dumps(now.selection, sort_keys=True)})"
                f" in {LOG}: paste this run's bench-figures block into its entry"]
    before = same[-1].values
    lines = []
    for name in sorted(set(before) | set(now.values)):
        old, new = before.get(name), now.values.get(name)
        if old is None or new is None:
            lines.append(f"- {name}: {'new' if old is None else 'gone'} "
                         f"({new if old is None else old:.3g})")
        elif old and abs(new - old) / abs(old) > MOVED:
            direction = "up" if new > old else "down"
            lines.append(f"- {name}: {old:.3g} -> {new:.3g} ({direction} "
                         f"{100 * abs(new - old) / abs(old):.0f} %)")
    if not lines:
        return [f"- all {len(now.values)} figures within {100 * MOVED:.0f} % of the last "
                f"logged ones"]
    return [f"- {len(lines)} of {len(set(before) | set(now.values))} figures moved by more "
            f"than {100 * MOVED:.0f} % (or are new or gone) since the last logged ones:",
            *("  " + line for line in lines)]
