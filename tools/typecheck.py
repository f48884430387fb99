"""mypy over the harness and the report tools, by their import names.

`etsuite.backends.harness` and `etsuite.tools` exist only in an installed distribution
(setup.py maps the folders `backends/` and `tools/` to them), and the lint env installs
nothing of the project so that it needs no torch. So this lays out `etsuite/` as symlinks
to the folders, points MYPYPATH at it, and rewrites the paths mypy prints back to the
repository's own (`backends/harness/pipeline.py:12: error: ...`).

    python tools/typecheck.py [--layout DIR] [--root DIR] [mypy options]

Run by the tox env `lint` (`make lint`); exits with mypy's status."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("backends", "tools")  # setup.py: <folder> is installed as etsuite.<folder>
PACKAGES = ("etsuite.backends.harness", "etsuite.tools")


def lay_out(root: Path, layout: Path) -> Path:
    """`layout/etsuite/<folder>` -> `root/<folder>`; returns `layout/etsuite`."""
    package = layout / "etsuite"
    package.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        link = package / folder
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(root / folder, target_is_directory=True)
    return package


def repository_paths(text: str, package: Path, root: Path) -> str:
    """mypy names files through the symlinks, absolute or relative to the working
    folder: name them from the repository root (relative to the working folder)."""
    where = os.path.relpath(root)
    prefix = "" if where == "." else where + os.sep
    for seen in {str(package.resolve()), str(package.absolute()), os.path.relpath(package)}:
        text = text.replace(seen + os.sep, prefix)
    return text


def run(root: Path, layout: Path, options: list[str]) -> int:
    from mypy import api  # only the lint env has mypy

    package = lay_out(root, layout)
    os.environ["MYPYPATH"] = str(layout)
    arguments = ["--config-file", str(root / "pyproject.toml"), *options]
    for name in PACKAGES:
        arguments += ["-p", name]
    stdout, stderr, status = api.run(arguments)
    sys.stdout.write(repository_paths(stdout, package, root))
    sys.stderr.write(repository_paths(stderr, package, root))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository to check (default: this file's)")
    parser.add_argument("--layout", type=Path,
                        help="where to lay out etsuite/ (default: a temporary folder); a "
                             "folder kept between runs keeps mypy's cache valid")
    options, rest = parser.parse_known_args(argv)
    root = options.root.resolve()
    if options.layout is not None:
        return run(root, options.layout, rest)
    with tempfile.TemporaryDirectory(prefix="etsuite-mypy-") as scratch:
        return run(root, Path(scratch), rest)


if __name__ == "__main__":
    sys.exit(main())
