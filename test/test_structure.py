"""The seams the project grows along: module dependencies run one way (no import cycle),
the report tools use nothing of the harness but its contract and never import torch, and
the installed distribution claims only import names of its own."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Repository folder -> import name of the installed distribution (see setup.py).
PACKAGES = {"backends": "etsuite.backends", "tools": "etsuite.tools"}
CONTRACT = "etsuite.backends.harness.contract"


def in_contract(module: str) -> bool:
    return module == CONTRACT or module.startswith(CONTRACT + ".")


def project_modules() -> dict[str, Path]:
    modules = {}
    for folder, name in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT / folder).with_suffix("")
            if "suite" in relative.parts or "test" in relative.parts:
                continue  # test modules, imported by pytest, never by the project
            parts = [p for p in relative.parts if p != "__init__"]
            modules[".".join([name, *parts])] = path
    return modules


def type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:`: imports for annotations only, which
    never run, so they are no dependency."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def imports_of(path: Path, known: set[str], type_only: bool = False) -> set[str]:
    """Project modules a file imports, at any depth (a lazy import is a dependency too;
    an import under `if TYPE_CHECKING:` is one only with `type_only`)."""
    found = set()
    tree = ast.parse(path.read_text())
    skipped = set() if type_only else type_checking_blocks(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name in known:
                found.add(name)
    return found


def dependency_graph(type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports; with `type_only`, its imports under
    `if TYPE_CHECKING:` too."""
    modules = project_modules()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        targets = imports_of(path, known, type_only) - {name}
        # `from pkg import module` names the module; the bare package is then redundant.
        graph[name] = {t for t in targets if not any(o.startswith(t + ".") for o in targets)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def import_circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that import each other, at any remove (each a strongly
    connected component of more than one module)."""
    groups = []
    placed: set[str] = set()
    for start in sorted(graph):
        if start in placed:
            continue
        group = {node for node in _reachable(graph, start) if start in _reachable(graph, node)}
        placed |= group
        if len(group) > 1:
            groups.append(group)
    return groups


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per group of modules that import each other, from its first module by
    name (breaking it may leave another in the same group)."""
    return [find_cycle({n: graph[n] & group for n in group}) or sorted(group)
            for group in import_circles(graph)]


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_type_only_imports_are_no_dependency(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nimport a\nif TYPE_CHECKING:\n    import b\n")
    assert imports_of(module, {"a", "b"}) == {"a"}
    assert imports_of(module, {"a", "b"}, type_only=True) == {"a", "b"}


def test_the_checker_finds_every_cycle():
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"a"}}
    assert find_cycles(graph) == [["a", "b", "a"], ["c", "d", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_among_project_modules():
    graph = dependency_graph()
    assert "etsuite.backends.harness.plugin" in graph and "etsuite.tools.report.summary" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_no_import_cycle_in_the_harness_and_tools_not_even_for_annotations():
    """A cycle through imports under `if TYPE_CHECKING:` runs nowhere, but it still ties
    the modules together: neither can be read, moved or typed without the other. The
    harness and the tools import one way, annotations included."""
    rooms = ("etsuite.backends.harness.", "etsuite.tools.")
    graph = {name: targets for name, targets in dependency_graph(type_only=True).items()
             if name.startswith(rooms)}
    assert "etsuite.backends.harness.state" in graph and "etsuite.tools.files" in graph
    circles = import_circles(graph)
    assert circles == [], "import cycles:\n" + "\n".join(
        f"{' -> '.join(cycle)}  (in a circle: {', '.join(sorted(group))})"
        for cycle, group in zip(find_cycles(graph), circles, strict=True))


def test_tools_and_harness_share_only_the_contract():
    graph = dependency_graph()
    for module, targets in graph.items():
        if module.startswith("etsuite.tools."):
            harness = {t for t in targets if t.startswith("etsuite.backends.")}
            assert all(in_contract(t) or t == "etsuite.backends.harness" for t in harness), \
                (module, harness)
        if module.startswith("etsuite.backends."):
            assert not any(t.startswith("etsuite.tools") for t in targets), module
    contract = [module for module in graph if in_contract(module)]
    assert len(contract) > 1  # the package and its modules
    for module in contract:
        assert all(in_contract(t) or t == "etsuite.backends.harness" for t in graph[module]), \
            (module, graph[module])


def names_taken_from_the_contract_package(path: Path) -> list[str]:
    """Names a file imports from the contract package itself rather than from the module
    that defines them (`from ...contract import stream` names a module: allowed)."""
    modules = {p.stem for p in (ROOT / "backends" / "harness" / "contract").glob("*.py")}
    return [alias.name for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.module == CONTRACT
            for alias in node.names if alias.name not in modules]


def test_modules_import_the_contract_module_that_defines_a_name(tmp_path):
    """The package re-exports every name for vendors; the project's own modules and tests
    name the format they use, so each format's readers and writers can be found."""
    vendor = tmp_path / "vendor.py"
    vendor.write_text(f"from {CONTRACT} import Status, stream\n")
    assert names_taken_from_the_contract_package(vendor) == ["Status"]
    files = [*project_modules().values(), *(ROOT / "test").rglob("*.py")]
    assert {str(p.relative_to(ROOT)): names for p in files
            if (names := names_taken_from_the_contract_package(p))} == {}


def test_the_contract_needs_only_the_standard_library():
    code = ("import sys; before = set(sys.modules); import etsuite.backends.harness.contract; "
            "print(sorted({m.split('.')[0] for m in set(sys.modules) - before}"
            " - set(sys.stdlib_module_names) - {'etsuite'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_contract_and_tools_import_no_torch():
    code = ("import sys, etsuite.tools.report.summary, etsuite.backends.harness.contract; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'executorch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("generic", ["backends", "tools"])
def test_installed_distribution_claims_no_generic_name(tmp_path, generic):
    """Outside the checkout, only `etsuite` is importable: no top-level `tools`."""
    code = (f"import importlib.util as u; print(u.find_spec({generic!r}) is None, "
            f"u.find_spec('etsuite.{generic}') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.split() == ["True", "True"]


UPKEEP = "etsuite.backends.harness.upkeep"


def test_test_time_code_imports_nothing_of_the_offline_upkeep():
    """Sweeps and the updater are offline tools: the reader and judge of expectations, the
    plugin and every backend work without them (and a session does not load them)."""
    graph = dependency_graph()
    assert {m for m in graph if m.startswith(UPKEEP + ".")} >= {
        f"{UPKEEP}.entries_from_sweeps", f"{UPKEEP}.sweeps"}
    importers = {module: sorted(t for t in targets if t.startswith(UPKEEP))
                 for module, targets in graph.items() if not module.startswith(UPKEEP)}
    assert {m: t for m, t in importers.items() if t} == {}
    code = ("import sys, etsuite.backends.harness.plugin, etsuite.backends.harness.verdicts; "
            f"print(sorted(m for m in sys.modules if m.startswith({UPKEEP!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_harness_names_no_backend():
    """The core is backend-agnostic: backends are found (registry.py) and their data read
    (e.g. the warm process's PRIMING groups), never imported by name."""
    graph = dependency_graph()
    backend_packages = {f"etsuite.backends.{p.name}" for p in (ROOT / "backends").iterdir()
                        if (p / "flows.py").is_file()}
    assert {"etsuite.backends.portable", "etsuite.backends.xnnpack"} <= backend_packages
    named = {module: sorted(t for t in targets if any(
                 t == b or t.startswith(b + ".") for b in backend_packages))
             for module, targets in graph.items()
             if module.startswith("etsuite.backends.harness") or module.startswith("etsuite.tools")}
    assert {m: t for m, t in named.items() if t} == {}


HARNESS = ROOT / "backends" / "harness"
MAX_TOP_MODULES = 20


def test_the_harness_top_holds_the_plugin_and_few_modules():
    """The top of the harness is the pytest plugin's modules; everything they use sits in
    a room (docs/explanation/architecture.md), so the top stays short enough to read."""
    top = sorted(p.name for p in HARNESS.glob("*.py"))
    assert "plugin.py" in top
    assert len(top) <= MAX_TOP_MODULES, top
    rooms = {p.name for p in HARNESS.iterdir() if (p / "__init__.py").is_file()}
    assert rooms >= {"flows", "case", "remote", "warm", "upkeep", "contract"}


TOOLS = ROOT / "tools"
MAX_TOOLS_TOP_MODULES = 6
# room of tools/ -> the rooms of tools/ it may import ("" is the shared helpers on top)
TOOLS_ROOMS = {
    "report": {"report", ""},
    "bench": {"bench", "report", ""},
    "upkeep": {"upkeep", "report", ""},
    "": {""},
}


def tools_room(module: str) -> str:
    """`etsuite.tools.report.tally` -> "report"; a helper on top (`etsuite.tools.files`) -> ""."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 else ""


def test_the_tools_top_holds_few_modules_and_the_rooms():
    """tools/ is in rooms by job (docs/explanation/architecture.md): the report, measuring
    the suite, upkeep from reports; on top only the helpers several of them use."""
    top = sorted(p.name for p in TOOLS.glob("*.py"))
    assert len(top) <= MAX_TOOLS_TOP_MODULES, top
    rooms = {p.name for p in TOOLS.iterdir() if (p / "__init__.py").is_file()}
    assert rooms == set(TOOLS_ROOMS) - {""}
    assert {p.relative_to(TOOLS).parts[0] for p in TOOLS.rglob("*.py") if p.parent != TOOLS} <= rooms


MAX_TOOLS_MODULE_LINES = 600


def test_no_module_of_the_tools_is_over_600_lines():
    """A module of tools/ is one job a newcomer reads through: the report is one module
    per section (`report/sections/`), so a new section is a new module, not more lines
    in a long one."""
    assert (TOOLS / "report" / "sections" / "header.py").is_file()
    long = {str(p.relative_to(ROOT)): n for p in sorted(TOOLS.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_TOOLS_MODULE_LINES}
    assert long == {}


def test_the_tools_rooms_depend_one_way():
    """The report needs nothing of the measurements or of upkeep (a summary never loads the
    benchmark), and the helpers on top need no room."""
    graph = dependency_graph()
    assert "etsuite.tools.bench.benchmark" in graph and "etsuite.tools.upkeep.update_durations" in graph
    crossing = {module: sorted(t for t in targets if t.startswith("etsuite.tools.")
                               and tools_room(t) not in TOOLS_ROOMS[tools_room(module)])
                for module, targets in graph.items() if module.startswith("etsuite.tools.")}
    assert {m: t for m, t in crossing.items() if t} == {}


def test_only_the_test_runner_module_is_named_runner():
    """"runner" is where a program runs (remote/); the test runner a test calls lives in
    the one module named runner.py."""
    named = sorted(p.relative_to(HARNESS).as_posix() for p in HARNESS.rglob("runner*.py"))
    assert named == ["case/runner.py"]
    assert "class TestRunner" in (HARNESS / "case" / "runner.py").read_text()


def test_the_state_module_is_a_leaf_of_the_plugin():
    """Every plugin object can name the session state's type: state.py imports none of
    the plugin's modules at run time."""
    graph = dependency_graph()
    plugin_modules = {f"etsuite.backends.harness.{p.stem}" for p in HARNESS.glob("*.py")
                      if p.stem not in ("__init__", "state")}
    assert graph["etsuite.backends.harness.state"] & plugin_modules == set()


def suite_modules_importing_the_installed_name(suite: Path) -> list[str]:
    """Modules of the suites that import a sibling as `etsuite.backends.suite...`."""
    found = []
    for path in sorted(suite.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n == "etsuite.backends.suite" or n.startswith("etsuite.backends.suite.")
                   for n in names):
                found.append(f"{path.relative_to(suite.parent.parent)}:{node.lineno}")
    return found


def test_suite_modules_import_their_siblings_relatively(tmp_path):
    """pytest imports the suites by their folder (`backends.suite...`); a suite module that
    imports a sibling as `etsuite.backends.suite...` loads the suite package a second time,
    and with it a second torchvision stand-in (backends/suite/torchvision_ops.py), which
    made every transformers model fail where torchvision is installed."""
    assert suite_modules_importing_the_installed_name(ROOT / "backends" / "suite") == []
    planted = tmp_path / "backends" / "suite" / "operators"
    planted.mkdir(parents=True)
    (planted / "test_x.py").write_text("import torch\n"
                                       "from etsuite.backends.suite.operators.op_modules import W\n")
    assert suite_modules_importing_the_installed_name(tmp_path / "backends" / "suite") == [
        "backends/suite/operators/test_x.py:2"]
