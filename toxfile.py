"""tox plugin, loaded by tox from this file: one tox environment per backend folder.

Every `backends/<name>/flows.py` makes `tox -e <name>` exist (configured by `[testenv]`
in tox.ini), with the extra packages of `backends/<name>/requirements.txt` when the
backend has one. So a new backend is its folder and nothing else.

It also hands pip's configured find-links to uv (which tox-uv installs with and which
does not read pip's configuration), so a machine whose pip finds local wheels (e.g. a CPU
build of torch) gives uv the same ones, however tox is started."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from tox.config.loader.memory import MemoryLoader
from tox.plugin import impl

BACKENDS_DIR = Path(__file__).resolve().parent / "backends"


def _pip_find_links() -> str:
    try:
        found = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


if not os.environ.get("UV_FIND_LINKS"):
    _links = _pip_find_links()
    if _links:
        os.environ["UV_FIND_LINKS"] = _links


def backend_names() -> list[str]:
    return sorted(path.parent.name for path in BACKENDS_DIR.glob("*/flows.py"))


def _summary_line(flows_file: Path) -> str:
    docstring = ast.get_docstring(ast.parse(flows_file.read_text())) or ""
    return docstring.strip().splitlines()[0] if docstring.strip() else ""


@impl
def tox_extend_envs():
    return backend_names()


@impl
def tox_add_env_config(env_conf, state):
    name = env_conf.name
    if name not in backend_names():
        return
    folder = BACKENDS_DIR / name
    settings = {"description": f"{name}: {_summary_line(folder / 'flows.py')}"}
    requirements = folder / "requirements.txt"
    if requirements.is_file():
        settings["deps"] = f"-r {requirements}"
    env_conf.loaders.insert(0, MemoryLoader(**settings))
