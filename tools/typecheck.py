"""mypy over the harness and the report tools, by their import names.

`etsuite.backends.harness` and `etsuite.tools` exist only in an installed distribution
(setup.py maps the folders `backends/` and `tools/` to them), and the lint env installs
nothing of the project so that it needs no torch. So this lays out `etsuite/` as symlinks
to the folders, points MYPYPATH at it, and rewrites the paths mypy prints back to the
repository's own (`backends/harness/case/pipeline.py:12: error: ...`).

    python tools/typecheck.py [--root DIR] [mypy options]

Run by the tox env `lint` (`make lint`); exits with mypy's status."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("backends", "tools")  # setup.py: <folder> is installed as etsuite.<folder>
PACKAGES = ("etsuite.backends.harness", "etsuite.tools")


def lay_out(root: Path, layout: Path) -> None:
    """`layout/etsuite/<folder>` -> `root/<folder>`."""
    package = layout / "etsuite"
    package.mkdir()
    for folder in FOLDERS:
        (package / folder).symlink_to(root / folder, target_is_directory=True)


def repository_paths(text: str, root: Path) -> str:
    """mypy names a file by where it found it: in the layout, or in an earlier run's
    layout when it repeats a finding from its cache. Name it from the repository root
    instead (relative to the working folder, as mypy does)."""
    where = os.path.relpath(root)
    prefix = "" if where == "." else where + "/"
    folders = "|".join(FOLDERS)
    return re.sub(rf"^(?:[^\s:]*/)?etsuite/({folders})/", rf"{prefix}\1/", text, flags=re.M)


def run(root: Path, layout: Path, options: list[str]) -> int:
    from mypy import api  # only the lint env has mypy

    lay_out(root, layout)
    os.environ["MYPYPATH"] = str(layout)
    arguments = ["--config-file", str(root / "pyproject.toml"), *options]
    for name in PACKAGES:
        arguments += ["-p", name]
    stdout, stderr, status = api.run(arguments)
    sys.stdout.write(repository_paths(stdout, root))
    sys.stderr.write(repository_paths(stderr, root))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository to check (default: this file's)")
    options, rest = parser.parse_known_args(argv)
    # mypy's cache stays valid across layouts: it knows the modules by name and content.
    with tempfile.TemporaryDirectory(prefix="etsuite-mypy-") as scratch:
        return run(options.root.resolve(), Path(scratch), rest)


if __name__ == "__main__":
    sys.exit(main())
