"""The documentation holds together: README.md is a short front door, every relative link
in it and in docs/ resolves (files and #anchors, by GitHub's heading slugs), every docs
page is reachable from docs/README.md, every `make <target>` named exists in the
Makefile, the reference names every Make target, pytest option and ini key there is, and
the architecture page every module. No torch needed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
INDEX = DOCS / "README.md"
MAX_README_LINES = 150

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
# `make [VAR=value ...] target`; a target may hold a placeholder (`test-<backend>`)
MAKE = re.compile(r"\bmake\s+((?:[A-Z_]+=\S+\s+)*)([a-z.][\w./%<>-]*)")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose_and_code(path: Path) -> tuple[list[str], list[str]]:
    """The lines outside fenced code blocks, and those inside."""
    prose, code, fenced = [], [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but - and spaces dropped,
    spaces to -. Inline code and link markup count by their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in prose_and_code(path)[0]:
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(1))
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def links(path: Path) -> list[str]:
    """Relative link targets outside code (inline code spans removed first)."""
    targets = []
    for line in prose_and_code(path)[0]:
        line = re.sub(r"`[^`]*`", "", line)
        targets += [t for t in LINK.findall(line) if not re.match(r"^[a-z]+:", t)]
    return targets


def resolve(source: Path, target: str) -> tuple[Path, str]:
    file_part, _, anchor = target.partition("#")
    path = (source.parent / file_part).resolve() if file_part else source
    return path, anchor


def broken_links(paths: list[Path], root: Path = ROOT) -> list[str]:
    """One line per relative link of `paths` whose file or #anchor does not exist."""
    problems = []
    for source in paths:
        for target in links(source):
            path, anchor = resolve(source, target)
            where = f"{source.relative_to(root)}: {target}"
            if not path.exists():
                problems.append(f"{where}: no such file")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                problems.append(f"{where}: no heading with anchor #{anchor}")
    return problems


def unreachable(index: Path, pages: list[Path]) -> list[Path]:
    """The pages no chain of links from `index` reaches."""
    reached, todo = {index.resolve()}, [index]
    while todo:
        page = todo.pop()
        for target in links(page):
            path, _ = resolve(page, target)
            if path.suffix == ".md" and path.exists() and path not in reached:
                reached.add(path)
                todo.append(path)
    return [p for p in pages if p.resolve() not in reached]


def makefile_targets(makefile: Path) -> set[str]:
    text = makefile.read_text(encoding="utf-8")
    variables = dict(re.findall(r"^([A-Z_]+)\s*:?=\s*(\S+)\s*$", text, re.MULTILINE))

    def expand(name: str) -> str:
        for _ in range(5):
            name = re.sub(r"\$\(([A-Z_]+)\)", lambda m: variables.get(m.group(1), m.group(0)), name)
        return name

    targets = set()
    for m in re.finditer(r"^([^\s#:=][^:=]*?):(?!=)", text, re.MULTILINE):
        targets.update(expand(t) for t in m.group(1).split())
    return targets


def commands(path: Path) -> list[str]:
    """The code of a page: fenced blocks' lines and inline code spans (prose says "make"
    as a verb too, so only code names targets)."""
    prose, code = prose_and_code(path)
    return code + [span for line in prose for span in re.findall(r"`([^`]+)`", line)]


def make_targets_named(paths: list[Path], root: Path = ROOT) -> dict[str, list[str]]:
    """{target: [where]} for every `make <target>` in the code of `paths`."""
    named: dict[str, list[str]] = {}
    for path in paths:
        for line in commands(path):
            for m in MAKE.finditer(line):
                target = m.group(2).rstrip(".,;:")
                named.setdefault(target, []).append(str(path.relative_to(root)))
    return named


def missing_targets(named: dict[str, list[str]], targets: set[str]) -> list[str]:
    """`make <target>` lines naming no target; a placeholder (`<backend>`) must fit a
    pattern rule (`test-%`)."""
    patterns = [re.compile(re.escape(t).replace("%", ".+") + "$") for t in targets if "%" in t]
    return [f"make {t} (in {', '.join(sorted(set(w)))})" for t, w in sorted(named.items())
            if t not in targets
            and not any(p.match(re.sub(r"<[^>]*>", "x", t)) for p in patterns)]


# ---------------------------------------------------------------- the checks

def too_long(path: Path) -> str | None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    return f"{path.name} has {lines} lines, more than {MAX_README_LINES}" \
        if lines > MAX_README_LINES else None


def test_readme_is_a_short_front_door():
    assert too_long(README) is None


def test_every_relative_link_and_anchor_resolves():
    assert broken_links(markdown_files()) == []


def test_every_docs_page_is_reachable_from_the_index():
    pages = sorted(DOCS.rglob("*.md"))
    assert pages, "no docs pages"
    assert [str(p.relative_to(ROOT)) for p in unreachable(INDEX, pages)] == []


def test_every_make_target_named_exists():
    named = make_targets_named(markdown_files())
    assert "test" in named, "README.md must name `make test`"
    assert missing_targets(named, makefile_targets(ROOT / "Makefile")) == []


def test_readme_keeps_make_test_as_its_test_command():
    assert "make test" in README.read_text(encoding="utf-8")


# ---------------------------------------------------------------- each check can fail

@pytest.fixture
def shelf(tmp_path):
    docs = tmp_path / "docs"
    (docs / "how-to").mkdir(parents=True)
    (docs / "README.md").write_text("# Shelf\n\n- [a page](how-to/page.md)\n")
    (docs / "how-to" / "page.md").write_text("# A page: `make` it, please!\n\n## Second one\n")
    return docs


def test_slug_follows_githubs_rule():
    assert slug("A page: `make` it, please!") == "a-page-make-it-please"
    assert slug("Make targets, tox environments") == "make-targets-tox-environments"
    assert slug("`fail_infra`") == "fail_infra"


def test_a_broken_link_is_found(shelf):
    page = shelf / "how-to" / "page.md"
    assert broken_links([shelf / "README.md", page], shelf) == []
    page.write_text(page.read_text() + "\nSee [gone](../nowhere.md).\n")
    assert broken_links([page], shelf) == ["how-to/page.md: ../nowhere.md: no such file"]


def test_a_broken_anchor_is_found(shelf):
    index = shelf / "README.md"
    index.write_text("- [ok](how-to/page.md#second-one)\n- [bad](how-to/page.md#third-one)\n"
                     "- [self](#nothing-here)\n")
    assert broken_links([index], shelf) == [
        "README.md: how-to/page.md#third-one: no heading with anchor #third-one",
        "README.md: #nothing-here: no heading with anchor #nothing-here"]


def test_an_unreachable_page_is_found(shelf):
    orphan = shelf / "reference" / "orphan.md"
    orphan.parent.mkdir()
    orphan.write_text("# Orphan\n")
    assert unreachable(shelf / "README.md", sorted(shelf.rglob("*.md"))) == [orphan]


def test_an_unknown_make_target_is_found(tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text("TOOLS := .tools\nTOX := $(TOOLS)/bin/tox\n$(TOX):\n\ttrue\n"
                        "test: $(TOX)\n\ttrue\ntest-%: $(TOX)\n\ttrue\nFOO ?= bar\n")
    page = tmp_path / "page.md"
    page.write_text("Run `make test`, `make test-xnnpack SHARD=1/2`, `make .tools/bin/tox`;\n"
                    "make it so (prose, not a command).\n"
                    "```sh\nmake SUITE=llm test-portable\nmake tset\n"
                    "make test-<backend>\nmake sweep-<b>\n```\n")
    targets = makefile_targets(makefile)
    assert {"test", "test-%", ".tools/bin/tox"} <= targets
    named = make_targets_named([page], tmp_path)
    assert set(named) == {"test", "test-xnnpack", ".tools/bin/tox", "test-portable", "tset",
                          "test-<backend>", "sweep-<b>"}
    assert missing_targets(named, targets) == ["make sweep-<b> (in page.md)",
                                               "make tset (in page.md)"]


def test_a_long_readme_is_found(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("line\n" * MAX_README_LINES)
    assert too_long(readme) is None
    readme.write_text("line\n" * (MAX_README_LINES + 1))
    assert too_long(readme) == f"README.md has {MAX_README_LINES + 1} lines, more than {MAX_README_LINES}"


COMMAND_LINE = DOCS / "reference" / "command-line.md"
ARCHITECTURE = DOCS / "explanation" / "architecture.md"


def plugin_options_and_ini_keys(cwd: Path) -> tuple[set[str], set[str]]:
    """What the installed plugin registers, read from `pytest --help` (the plugin's group
    and the ini keys it adds), so a new option is found without a list to keep."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
                         cwd=cwd, capture_output=True, text=True, check=True).stdout
    group = out.split("ExecuTorch backend test suite:", 1)[1].split("\n\n", 1)[0]
    options = set(re.findall(r"^ {2}(--[a-z][\w-]*)", group, re.M))
    ini = set(re.findall(r"^ {2}(etsuite_\w+) \(", out, re.M))
    return options, ini


def test_the_reference_names_every_target_option_and_ini_key(tmp_path):
    reference = COMMAND_LINE.read_text(encoding="utf-8")
    options, ini = plugin_options_and_ini_keys(tmp_path)
    assert {"--backend", "--declared", "--runner"} <= options and "etsuite_runners" in ini
    targets = {t for t in makefile_targets(ROOT / "Makefile") if re.fullmatch(r"[a-z][\w-]*", t)}
    assert {"test", "check-declared", "summary"} <= targets
    missing = sorted(t for t in targets if f"make {t}" not in reference)
    missing += sorted(o for o in options if f"`{o}" not in reference)
    missing += sorted(k for k in ini if f"`{k}`" not in reference)
    assert missing == [], f"not in {COMMAND_LINE.relative_to(ROOT)}: {missing}"


def modules_missing_from(page: Path, root: Path = ROOT) -> list[str]:
    """Modules of the harness and of tools/ that `page` does not name by their path in
    the harness (`case/pipeline.py`) or the repository (`tools/report/markdown.py`)."""
    text = page.read_text(encoding="utf-8")
    harness = root / "backends" / "harness"
    missing = []
    for path in sorted([*harness.rglob("*.py"), *(root / "tools").rglob("*.py")]):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        name = path.relative_to(harness if path.is_relative_to(harness) else root).as_posix()
        if f"`{name}`" not in text:
            missing.append(name)
    return missing


def test_the_architecture_page_names_every_module():
    """Each module of the harness and of tools/ is on the architecture page, in its room,
    so a newcomer finds what it does and a new module is placed in a room."""
    assert len(list((ROOT / "backends" / "harness").rglob("*.py"))) > 40
    assert modules_missing_from(ARCHITECTURE) == []


def test_a_module_missing_from_the_architecture_page_is_found(tmp_path):
    (tmp_path / "backends" / "harness" / "case").mkdir(parents=True)
    (tmp_path / "tools" / "report").mkdir(parents=True)
    for name in ("backends/harness/plugin.py", "backends/harness/case/pipeline.py",
                 "backends/harness/case/__init__.py", "tools/report/markdown.py",
                 "tools/files.py"):
        (tmp_path / name).write_text("")
    page = tmp_path / "page.md"
    page.write_text("`plugin.py` and `pipeline.py` (no room) and `tools/report/markdown.py`\n")
    assert modules_missing_from(page, tmp_path) == ["case/pipeline.py", "tools/files.py"]
